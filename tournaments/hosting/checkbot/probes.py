"""What check-bot looks at outside the conversation: the bot's folder and its processes.

``folder_snapshot`` and ``changed_files`` watch the bot's folder for writes;
``bot_processes`` and ``ignoring_sigterm`` read Linux's /proc for what the bot
left running and what would outlive it; ``held_output`` reads what an exited
bot's stdout still held. Each looks and judges nothing: the verdicts do.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import trio

from protocol.codec import ProtocolViolation
from referee.bot_folder import walk_entries
from referee.pipe import StreamClosed
from referee.process import BotProcess

__all__ = [
    "WATCHED_FILES",
    "bot_processes",
    "changed_files",
    "folder_snapshot",
    "held_output",
    "ignoring_sigterm",
]

Snapshot = dict[str, tuple[int, int]]
"""Each file under a folder, by its path inside it: its size and modification time."""


WATCHED_FILES = 5000
"""A bot folder with more files than this is not watched (a command line run from a big folder)."""


def folder_snapshot(folder: Path) -> Snapshot | None:
    """Every file under the bot's folder: size and modification time.

    Python's bytecode caches are left out: the interpreter writes them on its
    own, and skips them silently where the folder is read-only.
    """
    found = {}
    try:
        # Links are not followed (a link's own size and time are watched) and the
        # walk is not recursive: a folder nested deeper than Python's recursion
        # limit is walked like any other.
        for path, info in walk_entries(folder, skip=frozenset({"__pycache__"})):
            if stat.S_ISDIR(info.st_mode):
                continue
            found[str(Path(path).relative_to(folder))] = (info.st_size, info.st_mtime_ns)
            if len(found) > WATCHED_FILES:
                return None
    except OSError:
        return None
    return found


def changed_files(before: Snapshot, after: Snapshot) -> list[str]:
    """The files written, made or removed between two snapshots, sorted."""
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


_SIGTERM_BIT = 1 << (15 - 1)


def ignoring_sigterm(folder: Path, leader: int) -> list[str]:
    """The bot's processes working in ``folder`` that ignore SIGTERM (from /proc/PID/status), by pid and command."""
    found = []
    for pid in bot_processes(folder, leader):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            ignored = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:")), 16)
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, StopIteration, ValueError):
            continue
        if ignored & _SIGTERM_BIT:
            found.append(f"{pid} ({command.strip()[:60]})")
    return found


def _session_and_namespace(pid: int) -> tuple[int, str]:
    """A process's session id and PID namespace; OSError when it is gone."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    session = int(stat[stat.rindex(")") + 2 :].split()[3])
    return session, os.readlink(f"/proc/{pid}/ns/pid")


def bot_processes(folder: Path, leader: int) -> list[int]:
    """The processes of the bot started as ``leader``: in its session (the bot leads
    one of its own), or in a PID namespace one of them lives in (a sandbox's). The
    person's shell in the same folder is neither."""
    ours = os.readlink("/proc/self/ns/pid")
    found: dict[int, tuple[int, str]] = {}
    for pid in _processes_in(folder):
        try:
            found[pid] = _session_and_namespace(pid)
        except (OSError, ValueError, IndexError):
            continue
    namespaces = {ns for session, ns in found.values() if session == leader and ns != ours}
    return [pid for pid, (session, ns) in found.items() if session == leader or ns in namespaces]


def _processes_in(folder: Path) -> list[int]:
    """Live processes working in ``folder`` (Linux /proc): what a bot left behind."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == folder:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


async def held_output(process: BotProcess) -> bytes:
    """What the exited bot's stdout still delivers: whole lines and an unfinished one, up to 64 KiB."""
    held = bytearray()
    with trio.move_on_after(0.5):
        while len(held) < 65536:
            try:
                held += await process.reader.readline() + b"\n"
            except StreamClosed as closed:
                # The last line never got its newline: its bytes are in the message only as a count.
                if "middle of a line" in str(closed):
                    held += f"<{str(closed).rsplit('(', 1)[-1].rstrip(')')} of an unfinished line>".encode()
                break
            except (ProtocolViolation, trio.BrokenResourceError, trio.ClosedResourceError):
                break
    return bytes(held)
