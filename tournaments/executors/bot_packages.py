"""Shipping bots to Dask workers: folders packed on the host, unpacked and built once per worker machine.

The host packs every entrant that is a folder into a tar archive made the same
way every time (sorted names, no owners, no times), so its SHA-256 names its
content. A worker machine keeps one unpacked, built copy per hash in its bot
cache (``FAMIGLIA_BOT_CACHE``, default ``/var/tmp/famiglia-bots``): the first
worker process of the machine that needs it unpacks it and runs its ``build``
command, in the bot's sandbox (``referee.build.build_bot``), under a file lock;
the others wait on the lock and use it. A failed build is kept too (with its
reason), so the machine does not build a broken bot once per worker process.

An entrant given as a command line is not shipped: its program must exist on
the workers (``resolve_on_worker`` says which one is missing where).
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import sys
import tarfile
from pathlib import Path

import msgspec

from referee.bots import BotBuildFailed, BotSpec, BotSpecError, load_bot, resolve_program
from referee.build import build_bot, check_sandbox_view
from referee.settings import RefereeSettings

__all__ = ["MAX_PACKAGE_BYTES", "ShippedBot", "cache_root", "is_folder_bot", "pack_folder", "ready_on_worker"]

MAX_PACKAGE_BYTES = 256 << 20
"""The largest bot folder the host ships (packed); a bigger one is refused with a clear error."""
_SKIPPED = {"__pycache__", ".git", ".mypy_cache", ".pytest_cache"}
_BUILT = ".famiglia-built"
_FAILED = ".famiglia-build-failed"


class ShippedBot(msgspec.Struct, frozen=True, kw_only=True):
    """How a worker gets an entrant's bot: a package (by hash) for a folder, else the host's command."""

    name: str
    spec: BotSpec
    """The host's spec (its command and folder as the host resolved them)."""
    package: str | None = None
    """The SHA-256 of the packed folder, or None for a command line that must exist on the workers."""
    host_python: str = ""
    """The host's interpreter: a command that starts with it means "python" (the worker's own)."""


def is_folder_bot(spec: BotSpec) -> bool:
    """Whether ``spec`` was given as a folder with bot.toml (not a command line run in some folder)."""
    manifest = Path(spec.cwd) / "bot.toml"
    if not manifest.is_file():
        return False
    try:
        from_folder = load_bot(spec.cwd, check_program=False)
    except BotSpecError:
        return False
    return from_folder.command == spec.command


def pack_folder(folder: Path) -> tuple[str, bytes]:
    """(sha256, tar bytes) of a bot folder, the same bytes for the same content."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path in sorted(_walk(folder)):
            info = archive.gettarinfo(str(path), arcname=str(path.relative_to(folder)))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            if info.isfile():
                with path.open("rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)
            if buffer.tell() > MAX_PACKAGE_BYTES:
                raise BotSpecError(
                    f"{folder}: over {MAX_PACKAGE_BYTES >> 20} MiB packed; ship a smaller bot folder "
                    "(leave data and build outputs out of it)"
                )
    data = buffer.getvalue()
    return hashlib.sha256(data).hexdigest(), data


def _walk(folder: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in _SKIPPED]
        here = Path(root)
        found.extend(here / d for d in dirs)
        found.extend(here / f for f in files)
    return found


def cache_root() -> Path:
    """This machine's bot cache: traversable by the bots' own uids (0711), listable by its owner only."""
    root = Path(os.environ.get("FAMIGLIA_BOT_CACHE") or "/var/tmp/famiglia-bots")
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o711)
    return root


def ready_on_worker(shipped: ShippedBot, package: bytes | None, settings: RefereeSettings) -> BotSpec:
    """The entrant's bot ready to start on this worker; BotSpecError or BotBuildFailed saying why not."""
    if shipped.package is None:
        spec = _command_on_worker(shipped)
        check_sandbox_view(spec, settings)
        return spec
    assert package is not None
    folder = _unpacked_and_built(shipped.package, package, shipped, settings)
    spec = load_bot(str(folder), check_program=False)
    command = resolve_program(spec.command, folder, shipped.name)
    ready = msgspec.structs.replace(spec, name=shipped.name, command=command, build=None)
    check_sandbox_view(ready, settings)
    return ready


def _command_on_worker(shipped: ShippedBot) -> BotSpec:
    spec = shipped.spec
    argv = list(spec.command)
    if argv and argv[0] == shipped.host_python:
        argv[0] = sys.executable  # "python" on the host means this worker's own interpreter
    cwd = Path(spec.cwd)
    if not cwd.is_dir():
        raise BotSpecError(f"{spec.name}: its working folder {cwd} does not exist on this worker")
    return msgspec.structs.replace(spec, command=resolve_program(argv, cwd, spec.name))


def _unpacked_and_built(digest: str, package: bytes, shipped: ShippedBot, settings: RefereeSettings) -> Path:
    root = cache_root()
    folder = root / digest
    with (root / f"{digest}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one unpack and one build per machine
        if (folder / _FAILED).is_file():
            raise BotBuildFailed((folder / _FAILED).read_text(encoding="utf-8", errors="replace"))
        if (folder / _BUILT).is_file():
            return folder
        if hashlib.sha256(package).hexdigest() != digest:
            raise BotSpecError(f"{shipped.name}: its package does not match its hash {digest[:12]}")
        shutil.rmtree(folder, ignore_errors=True)  # what a worker killed mid-build left
        folder.mkdir(mode=0o755)
        with tarfile.open(fileobj=io.BytesIO(package), mode="r:") as archive:
            # The data filter refuses absolute names, links out of the folder and device files.
            archive.extractall(folder, filter="data")
        _readable_by_bots(folder)
        spec = load_bot(str(folder), check_program=False)
        spec = msgspec.structs.replace(spec, name=shipped.name)
        try:
            build_bot(spec, settings)
        except (BotBuildFailed, BotSpecError) as exc:
            (folder / _FAILED).write_text(str(exc), encoding="utf-8")
            raise
        (folder / _BUILT).write_text(digest, encoding="utf-8")
        return folder


def _readable_by_bots(folder: Path) -> None:
    """Folders 0755 and files o+r: a bot runs as a uid of its own and must read its own folder."""
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            os.chmod(Path(root) / name, 0o755)
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                os.chmod(path, (path.stat().st_mode & 0o777) | 0o644)
