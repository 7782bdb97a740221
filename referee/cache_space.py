"""The build cache kept within a size the host sets: the least recently used copies go, never one in use.

Every built copy (``<key>/``, ``referee.build``) has three records of this
module's beside it, where no build can write:

- ``<key>.size``: the bytes it takes (``referee.build_space``), written when it is made;
- ``<key>.use``: its last use (the file's time, renewed at every use), and its
  holds: a process that has been handed the copy holds a shared lock on this
  file until it lets the copy go (``release``) or ends. A copy someone holds is
  in use: a bot may be started from it at any moment, so it is never removed.

After each new copy, ``keep_within`` removes the least recently used copies that
nobody holds and no build is writing (each one's build lock taken without
waiting) until the cache is within ``FAMIGLIA_BOT_CACHE_MB`` (default
``DEFAULT_CACHE_MB``; 0: no bound). A copy removed is built again when it is next
asked for. Copies in use stay, even past the bound: the cache then holds what is
in use and nothing more. Folders no record calls built (left by a failed or
killed build) are removed too, once no build holds their lock.
"""

from __future__ import annotations

import fcntl
import os
import re
import threading
from pathlib import Path

from referee.bot_folder import remove_tree
from referee.bots import BotSpecError
from referee.build_space import Unmeasurable, folder_bytes

__all__ = ["CACHE_MB_VARIABLE", "DEFAULT_CACHE_MB", "cache_bound", "hold", "keep_within", "record_size", "release"]

CACHE_MB_VARIABLE = "FAMIGLIA_BOT_CACHE_MB"
"""The environment variable that sets the build cache's size, in MiB."""

DEFAULT_CACHE_MB = 4096
"""The build cache's size when the host sets none: four of the largest builds ``build_mb`` allows by default."""

_KEY = re.compile(r"[0-9a-f]{64}-[a-z]+")
"""A copy's name: its package's SHA-256 and the sandbox level it was built at."""

_RECORD_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC

_held: dict[Path, int] = {}  # each copy this process holds: its .use file's descriptor, locked shared
_held_lock = threading.Lock()  # builds run in worker threads (a ladder's intake, check-bot)


def cache_bound() -> int:
    """The build cache's size in bytes (0: no bound); BotSpecError with the fix for a value that is not one."""
    given = os.environ.get(CACHE_MB_VARIABLE, "").strip()
    if not given:
        return DEFAULT_CACHE_MB << 20
    if not given.isdigit() or len(given) > 9:
        raise BotSpecError(
            f"{CACHE_MB_VARIABLE}={given[:40]!r}: give the build cache's size in MiB, a whole number "
            f"(0: no bound; unset: {DEFAULT_CACHE_MB})"
        )
    return int(given) << 20


def hold(root: Path, key: str) -> None:
    """This process uses the copy ``root/key`` (call it under the copy's build lock): it stays until ``release``
    or the end of the process, and its last use is now."""
    entry = root / key
    with _held_lock:
        fd = _held.get(entry)
        if fd is None:
            fd = os.open(root / f"{key}.use", _RECORD_FLAGS, 0o600)
            fcntl.flock(fd, fcntl.LOCK_SH)  # never waits: an evicter holds it only under the build lock we hold
            _held[entry] = fd
        os.utime(fd)


def release(folder: Path) -> None:
    """This process no longer uses the copy at ``folder`` (a submission refused, say): it may be evicted."""
    with _held_lock:
        fd = _held.pop(Path(folder), None)
    if fd is not None:
        os.close(fd)


def record_size(root: Path, key: str, size: int) -> None:
    """Note the bytes the new copy ``root/key`` takes."""
    partial = root / f"{key}.size.partial"
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(str(size))
    os.replace(partial, root / f"{key}.size")


def keep_within(root: Path, bound: int) -> list[str]:
    """Remove copies nobody holds, least recently used first, until the cache is within ``bound`` bytes
    (0: no bound); the keys removed. Folders without a built record go first, whatever the bound."""
    removed = [key for key in _unfinished(root) if _remove_if_free(root, key)]
    if bound <= 0:
        return removed
    copies = []  # (last use, key, size)
    for built in root.glob("*.built"):
        key = built.name.removesuffix(".built")
        if _KEY.fullmatch(key) and os.path.isdir(root / key) and not os.path.islink(root / key):
            copies.append((_last_use(root, key), key, _size(root, key)))
    total = sum(size for _, _, size in copies)
    for _, key, size in sorted(copies):
        if total <= bound:
            break
        if _remove_if_free(root, key):
            total -= size
            removed.append(key)
    return removed


def _unfinished(root: Path) -> list[str]:
    """Copies no record calls built: what a build that failed or was killed left."""
    with os.scandir(root) as entries:
        return [
            entry.name for entry in entries
            if _KEY.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False)
            and not (root / f"{entry.name}.built").exists()
        ]  # fmt: skip


def _last_use(root: Path, key: str) -> float:
    try:
        return os.lstat(root / f"{key}.use").st_mtime
    except FileNotFoundError:
        return os.lstat(root / f"{key}.built").st_mtime  # made before uses were recorded


def _size(root: Path, key: str) -> int:
    try:
        return int((root / f"{key}.size").read_text(encoding="ascii"))
    except (FileNotFoundError, ValueError):
        pass
    try:
        size = folder_bytes(root / key)  # made before sizes were recorded: measured once
    except (Unmeasurable, OSError):
        return 0
    record_size(root, key, size)
    return size


def _remove_if_free(root: Path, key: str) -> bool:
    """Remove the copy ``key`` and its records if no build writes it and nobody holds it; whether it was."""
    if root / key in _held:
        return False
    build_lock = os.open(root / f"{key}.lock", _RECORD_FLAGS, 0o600)
    try:
        try:
            fcntl.flock(build_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # being built or looked up right now
        use = os.open(root / f"{key}.use", _RECORD_FLAGS, 0o600)
        try:
            try:
                fcntl.flock(use, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # in use by a process
            (root / f"{key}.built").unlink(missing_ok=True)  # first: a copy half removed is never called built
            remove_tree(root / key)
            for suffix in (".size", ".use", ".output"):  # .output: what its build said (referee.build)
                (root / f"{key}{suffix}").unlink(missing_ok=True)
            return True
        finally:
            os.close(use)
    finally:
        os.close(build_lock)
