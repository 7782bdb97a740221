"""Building a bot before its first game: a stranger's code, contained as the bot is.

A build command runs anything (a Makefile, a shell line), so it is treated as
an entrant's process like the bot itself (``referee.sandbox.prepare``):

- it never runs in the bot's own folder: the folder is packed, and the build
  runs in an unpacked copy in this machine's build cache, the only place it
  may write, named by the package's SHA-256 (the same content is built once);
- as root it runs as a uid of its own, so nothing it makes belongs to root;
  without root, as the user's uid in a user namespace;
- in a session of its own with no terminal (standard input is /dev/null,
  its output is captured), no network, no capability, ``no_new_privs``, the
  bot's limits;
- afterwards every entry of the copy is made the referee's user's, with no
  set-id bit and readable by all (``referee.bot_folder.make_safe_for_host``),
  and the cache's records of what happened live beside the copy, where the
  build could not write, and are opened without following links;
- what it writes into the copy is measured while it runs and once it has
  ended, and held to ``build_mb`` (``referee.build_space``): past it the build
  is stopped, the copy removed, and the build refused;
- the cache as a whole is kept within the size the host sets, the least
  recently used copies going first and never one in use (``referee.cache_space``).

Whatever a build does costs only its own entrant: ``BotBuildFailed`` with a
one-line reason.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import msgspec

from protocol.untrusted import bounded
from referee import cache_space
from referee.bot_folder import make_safe_for_host, pack_folder, remove_tree, unpack_package
from referee.bots import BotBuildFailed, BotSpec, BotSpecError, load_bot, resolve_program
from referee.build_space import Unmeasurable, folder_bytes, watch
from referee.pinning import BotChangedDuringRun
from referee.sandbox import prepare
from referee.sandbox.view import foreign_program, unreadable_by_others
from referee.settings import DEFAULT_SETTINGS, RefereeSettings

__all__ = [
    "build_bot",
    "build_cache",
    "build_output",
    "build_package",
    "check_sandbox_view",
    "read_record",
    "release_build",
    "without_cache_path",
]

_BUILD_TIMEOUT_S = 300.0
OUTPUT_ENDS = 32 << 10
"""What is kept of a build's output for its author: its first and its last 32 KiB, a line between them
saying how much was left out (the first error and the last words are what an author acts on)."""


def _cache_place() -> Path:
    """Where the build cache is, whether or not it is usable there."""
    chosen = os.environ.get("FAMIGLIA_BOT_CACHE")
    if chosen:
        return Path(chosen)
    if os.geteuid() == 0:
        return Path("/var/cache/famiglia/bots")
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "famiglia" / "bots"


def build_cache() -> Path:
    """This machine's build cache: ``FAMIGLIA_BOT_CACHE``, else root's ``/var/cache/famiglia/bots``
    or the user's ``$XDG_CACHE_HOME/famiglia/bots``; created 0700 and checked to be ours alone.

    The bots' uids never need to enter it: the sandbox mounts a bot's folder
    from it as root. BotSpecError when the folder is someone else's or open to
    other users (a local user could otherwise plant links in it).
    """
    root = _cache_place()
    root.parent.mkdir(parents=True, exist_ok=True)
    try:
        root.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = root.lstat()
    if not root.is_dir() or root.is_symlink() or info.st_uid != os.geteuid():
        raise BotSpecError(
            f"the bot build cache {root} is not a folder of this user's; remove it, or set FAMIGLIA_BOT_CACHE"
        )
    os.chmod(root, 0o700)
    return root


def without_cache_path(text: str) -> str:
    """``text`` with this machine's build cache named by what it holds, not where it is.

    A reason shown to an entrant (a ladder's verdict on an upload) names the
    folder its bot was unpacked and built in; the host's paths are not the
    entrant's to read. An entry of the cache reads ``<upload>``, anything else
    under it ``<build cache>``.
    """
    root = _cache_place()  # not build_cache(): a reason is shown even when the cache is unusable
    for place in dict.fromkeys((str(root), os.path.realpath(root))):
        text = re.sub(re.escape(place) + r"/[0-9a-f]{64}-[a-z]+", "<upload>", text)
        text = text.replace(place, "<build cache>")
    return text


def read_record(path: Path, limit: int = 64 << 10) -> str | None:
    """The text of one of the cache's own records (its first ``limit`` bytes), never through a link; None
    when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link where a record should be: not ours, not read
            os.unlink(path)
            return None
        raise
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit).decode("utf-8", "replace")


def _write_record(path: Path, text: str) -> None:
    """Replace a record atomically, never writing through a link someone left at its name."""
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode("utf-8"))
    os.replace(partial, path)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # one unpack and one build per machine
        yield
    finally:
        os.close(fd)


def build_package(
    digest: str,
    package: bytes,
    name: str,
    settings: RefereeSettings,
    *,
    retry_failed: bool = True,
    timeout_s: float = _BUILD_TIMEOUT_S,
) -> Path:
    """The folder of ``package`` (the bytes ``pack_folder`` made, SHA-256 ``digest``) unpacked and built.

    Built once per content and sandbox level on this machine, under a file
    lock. A failed build is remembered with its reason (its copy is removed):
    ``retry_failed`` builds it again (a host's own run), else the reason is
    raised again at once (a Dask worker's other processes). BotBuildFailed or
    BotSpecError saying why there is no folder.

    The folder is this process's to use until ``release_build`` or its end: the
    cache keeps it meanwhile, whatever its size (``referee.cache_space``).
    """
    root = build_cache()
    bound = cache_space.cache_bound()
    key = f"{digest}-{settings.sandbox}"
    entry = root / key
    built, failed, output = root / f"{key}.built", root / f"{key}.failed", root / f"{key}.output"
    with _locked(root / f"{key}.lock"):
        if read_record(built) == digest and entry.is_dir():
            cache_space.hold(root, key)
            return entry
        reason = read_record(failed)
        if reason is not None and not retry_failed:
            raise BotBuildFailed(reason)
        failed.unlink(missing_ok=True)
        built.unlink(missing_ok=True)
        output.unlink(missing_ok=True)
        remove_tree(entry)  # what a process killed mid-build left
        try:
            unpack_package(package, entry)
            spec = msgspec.structs.replace(load_bot(str(entry), check_program=False), name=name)
            if spec.build is None:
                _make_safe(entry, name)  # readable by the bot's uid, whatever modes the package carried
            else:
                _run_build(spec, settings, timeout_s, output)
            size = _measured(entry, name, settings.limits.build_mb, built=spec.build is not None)
        except (BotBuildFailed, BotSpecError) as exc:
            remove_tree(entry)  # the reason is kept; what the build wrote is not
            _write_record(failed, str(exc))
            raise
        cache_space.record_size(root, key, size)
        _write_record(built, digest)
        cache_space.hold(root, key)
    try:
        cache_space.keep_within(root, bound)
    except OSError:
        pass  # housekeeping: a copy that could not be evicted now is tried again after the next build
    return entry


def release_build(folder: Path) -> None:
    """This process no longer starts bots from ``folder`` (from ``build_package``): the cache may evict it."""
    cache_space.release(folder)


def _measured(folder: Path, name: str, build_mb: int, *, built: bool) -> int:
    """The bytes the finished copy takes (``built``: by a build; else the bot's files alone); BotBuildFailed
    past ``build_mb`` (0: no bound)."""
    try:
        size = folder_bytes(folder)
    except Unmeasurable as exc:
        raise BotBuildFailed(f"{name}: its build left a folder that could not be measured: {exc}") from None
    if 0 < build_mb and size > build_mb << 20:
        mib = f"{size / (1 << 20):,.0f} MiB"
        raise BotBuildFailed(
            _too_large(name, f"left {mib} in its folder", build_mb)
            if built
            else f"{name}: its folder takes {mib} in the build cache, more than build_mb ({build_mb:,} MiB) "
            "allows; leave data out of the bot's folder, or ask the host for a larger build_mb"
        )
    return size


def _too_large(name: str, what: str, build_mb: int) -> str:
    return (
        f"{name}: its build {what}, more than build_mb ({build_mb:,} MiB) allows; "
        "leave build outputs and data out of the bot's folder, or ask the host for a larger build_mb"
    )


def build_bot(
    spec: BotSpec, settings: RefereeSettings = DEFAULT_SETTINGS, *, timeout_s: float = _BUILD_TIMEOUT_S
) -> BotSpec:
    """The bot ready to start: ``spec`` itself when it has no build, else its built copy from the cache.

    The copy's folder replaces the bot's own (``cwd``); the bot's folder is
    never written. BotBuildFailed or BotSpecError with a one-line reason.
    """
    if spec.build is None:
        return spec
    try:
        digest, package = pack_folder(Path(spec.cwd))
    except OSError as exc:
        raise BotSpecError(f"{spec.name}: its folder {spec.cwd} could not be read: {exc.strerror or exc}") from None
    if spec.pin is not None and spec.pin != "folder:" + digest:
        raise BotChangedDuringRun(spec.name, spec.pin, "folder:" + digest)
    folder = build_package(digest, package, spec.name, settings, timeout_s=timeout_s)
    built = load_bot(str(folder), check_program=False)
    argv = resolve_program(built.command, folder, spec.name)
    # The copy is named by the content just checked: it needs no pin after this.
    return msgspec.structs.replace(spec, command=argv, cwd=str(folder), build=None, pin=None)


def build_output(digest: str, settings: RefereeSettings) -> str | None:
    """What the build of the package ``digest`` wrote when it last ran on this machine (its ends, bounded by
    ``OUTPUT_ENDS``); None when no build ran (the bot has none, or its build could not start)."""
    key = f"{digest}-{settings.sandbox}"
    return read_record(build_cache() / f"{key}.output", limit=2 * OUTPUT_ENDS + 4096)


def _run_build(spec: BotSpec, settings: RefereeSettings, timeout_s: float, keep: Path) -> None:
    """Run ``spec``'s build in its (unpacked) folder, then make the folder safe; BotBuildFailed saying why.

    Its output's ends are kept in the record ``keep`` however it ended (``build_output`` reads it).
    """
    assert spec.build is not None
    folder = Path(spec.cwd)
    launch = prepare(spec, settings, purpose="build")
    # The build's output goes to a file, not into the referee's memory: a build that
    # prints without end is stopped by its file size limit (file_mb), and only the
    # last lines are read back for the reason.
    with tempfile.TemporaryFile() as output:
        try:
            if launch.uid is not None:
                make_safe_for_host(folder, owner=launch.uid)  # the build's uid writes only here
            process: subprocess.Popen[bytes] | None = None
            try:
                process = subprocess.Popen(
                    launch.argv,
                    cwd=spec.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    env=settings.bot_environment(),
                    pass_fds=launch.pass_fds,
                    # No controlling terminal: it cannot open /dev/tty, push input into
                    # the host's terminal (TIOCSTI) or write escapes to it.
                    start_new_session=True,
                )
                # Measured while it runs: stopped once its folder holds more than build_mb.
                done = watch(process, folder, settings.limits.build_mb << 20, timeout_s)
            except FileNotFoundError:
                raise BotBuildFailed(f"{spec.name}: build command {spec.build[0]!r} not found") from None
            finally:
                # Whatever the build left, and however it ended, nothing of it runs on
                # and nothing in the folder stays its own.
                if process is not None and process.poll() is None:
                    _kill_session(process)
                launch.kill_tree()
                _make_safe(folder, spec.name)
        finally:
            launch.release()
            with contextlib.suppress(OSError):  # the record is for the author; a full disk costs it alone
                _write_record(keep, _ends(output))
        if done == "timeout":
            raise BotBuildFailed(f"{spec.name}: build took longer than {timeout_s:.0f} s")
        if done == "over":
            raise BotBuildFailed(_too_large(spec.name, "was stopped writing into its folder", settings.limits.build_mb))
        if done == "unmeasurable":
            raise BotBuildFailed(
                f"{spec.name}: its build was stopped: it kept moving or closing its folders while famiglia "
                "measured what it wrote; a build must leave its folder open to be measured"
            )
        if done != 0:
            raise BotBuildFailed(bounded(f"{spec.name}: build failed (exit {done}): {_first_error(output)}", 700))


def _kill_session(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the build's session (its chain's first processes; the sandbox's namespace dies with them)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _tail(output: IO[bytes], limit: int = 8192) -> str:
    """The last ``limit`` bytes a build wrote, as text."""
    size = output.seek(0, os.SEEK_END)
    output.seek(max(0, size - limit))
    return output.read(limit).decode("utf-8", "replace")


def _ends(output: IO[bytes]) -> str:
    """All a build wrote, or its first and last ``OUTPUT_ENDS`` bytes with a line saying what is left out."""
    size = output.seek(0, os.SEEK_END)
    output.seek(0)
    if size <= 2 * OUTPUT_ENDS:
        return output.read().decode("utf-8", "replace")
    head = output.read(OUTPUT_ENDS).decode("utf-8", "replace")
    output.seek(size - OUTPUT_ENDS)
    tail = output.read(OUTPUT_ENDS).decode("utf-8", "replace")
    left = size - 2 * OUTPUT_ENDS
    return f"{head}\n\n[... {left:,} bytes of the build's output left out here ...]\n\n{tail}"


_ERROR_LINE = re.compile(r"\b(error|fatal)\b", re.IGNORECASE)


def _first_error(output: IO[bytes]) -> str:
    """The line a failed build's reason quotes: the first that says error or fatal (a compiler's first
    real error, which later lines only follow from), else its last three lines."""
    output.seek(0)
    for raw in output.read(OUTPUT_ENDS).splitlines():
        line = raw.decode("utf-8", "replace").strip()
        if _ERROR_LINE.search(line):
            return line
    return " | ".join(_tail(output).strip().splitlines()[-3:])


def _make_safe(folder: Path, name: str) -> None:
    try:
        make_safe_for_host(folder, owner=0 if os.geteuid() == 0 else None)
    except OSError as exc:
        # The copy cannot be trusted: it goes, and the entrant's build fails.
        remove_tree(folder)
        raise BotBuildFailed(f"{name}: its build left a folder that could not be made safe: {exc}") from None


def check_sandbox_view(spec: BotSpec, settings: RefereeSettings = DEFAULT_SETTINGS) -> None:
    """BotSpecError when the sandbox could not show a bot its program, or its own uid could not read its files."""
    if settings.sandbox == "none":
        return
    foreign = foreign_program(spec)
    if foreign is not None:
        raise BotSpecError(
            f"{spec.name}: its program {foreign} lies outside its own folder, the system folders and PATH; "
            "the sandbox shows a bot only those: put the program in the bot's folder or on PATH"
        )
    blocked = unreadable_by_others(spec)
    if blocked is not None:
        raise BotSpecError(
            f"{spec.name}: {blocked} is not readable by other users, and the bot runs as a uid of its own; "
            f"chmod -R o+rX {blocked}"
        )
