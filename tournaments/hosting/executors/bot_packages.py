"""Shipping bots to Dask workers: folders packed on the host, unpacked and built once per worker machine.

The host packs every bot that is a folder into a tar archive made the same
way every time (``referee.bot_folder.pack_folder``), so its SHA-256 names its
content (``package_of``); a competition that keeps its bots packed already
(the ladder's uploads) gives that archive instead. A worker machine keeps one unpacked, built copy per hash in its build
cache (``referee.build.build_package``, the same cache a host's own runs use):
the first worker process of the machine that needs it unpacks it and runs its
``build`` command, contained as the bot is, under a file lock; the others wait
on the lock and use it. A failed build is kept too (with its reason, in a
record beside the copy where the build cannot write), so the machine does not
build a broken bot once per worker process.

A bot given as a command line is not shipped: its program must exist on
the workers (``ready_on_worker`` says which one is missing where).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import msgspec

from referee.bot_folder import pack_folder
from referee.bots import BotSpec, BotSpecError, load_bot, resolve_program
from referee.build import build_package, check_sandbox_view
from referee.pinning import BotChangedDuringRun, is_folder_bot
from referee.settings import RefereeSettings

__all__ = ["ShippedBot", "package_of", "ready_on_worker"]


class ShippedBot(msgspec.Struct, frozen=True, kw_only=True):
    """How a worker gets an entrant's bot: a package (by hash) for a folder, else the host's command."""

    name: str
    spec: BotSpec
    """The host's spec (its command and folder as the host resolved them)."""
    package: str | None = None
    """The SHA-256 of the packed folder, or None for a command line that must exist on the workers."""
    host_python: str = ""
    """The host's interpreter: a command that starts with it means "python" (the worker's own)."""


def package_of(bot: BotSpec, archive: Path | None) -> tuple[str, bytes] | None:
    """(SHA-256, tar bytes) of what a worker needs of ``bot``: ``archive`` when given, else its own folder
    packed; None for a command line. Blocking (it reads the folder): run it in a thread.

    A folder is packed once per run and checked against the run's pin here: named by its content,
    the package needs no pin on a worker (BotChangedDuringRun when the folder changed since).
    """
    if archive is not None:
        data = archive.read_bytes()
        return hashlib.sha256(data).hexdigest(), data
    if not is_folder_bot(bot):
        return None
    digest, data = pack_folder(Path(bot.cwd))
    if bot.pin is not None and bot.pin != "folder:" + digest:
        raise BotChangedDuringRun(bot.name, bot.pin, "folder:" + digest)
    return digest, data


def ready_on_worker(shipped: ShippedBot, package: bytes | None, settings: RefereeSettings) -> BotSpec:
    """The entrant's bot ready to start on this worker; BotSpecError or BotBuildFailed saying why not."""
    if shipped.package is None:
        spec = _command_on_worker(shipped)
        check_sandbox_view(spec, settings)
        return spec
    assert package is not None
    if hashlib.sha256(package).hexdigest() != shipped.package:
        raise BotSpecError(f"{shipped.name}: its package does not match its hash {shipped.package[:12]}")
    # Built once per machine; a failed build is not tried again by the machine's other worker processes.
    folder = build_package(shipped.package, package, shipped.name, settings, retry_failed=False)
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
