"""One SQLite database as a competition keeps it: the host's alone, WAL, a busy timeout, one transaction.

Both stores stand on this: the tournament's results file (``tournaments.store``)
and the ladder's (``ladder.store``). What it gives them:

- ``open_private_database``: the file made 0600 before SQLite opens it (its
  -wal and -shm files follow), WAL with ``synchronous=NORMAL``, foreign keys
  on, and a busy timeout: a writer that meets another's transaction waits
  that long, then fails with SQLite's "database is locked".
- ``tighten_database``: the file and its -wal and -shm made the owner's alone
  again when something opened them (an older famiglia, a host's ``chmod -R``).
- ``Transaction``: BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error; the
  write lock taken at the start, so two writers never deadlock halfway.

- ``hold_store``: the right to write one database, one process at a time (a
  ``flock`` the kernel drops with its process): a second tournament run, or a
  second server of one ladder, is refused at once, naming the holder.

Schema versions are each store's own (only the results file records one).
"""

from __future__ import annotations

import errno
import fcntl
import os
import shlex
import sqlite3
import stat
import time
from pathlib import Path
from typing import Self

from referee.private import PRIVATE_FILE, create_private, make_private_dirs, tighten

__all__ = [
    "BUSY_TIMEOUT_MS",
    "StorageError",
    "StoreBusy",
    "StoreLock",
    "Transaction",
    "database_files",
    "hold_store",
    "lock_path",
    "open_private_database",
    "tighten_database",
]

BUSY_TIMEOUT_MS = 5000
"""How long a write waits for another connection's transaction before it fails ("database is locked")."""


class StorageError(ValueError):
    """A store's database cannot be used (or at all); each store names its own (``tournaments.store.StoreError``)."""


def open_private_database(path: Path, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """An SQLite file readable by its owner alone (made 0600 before SQLite opens it, which gives
    its -wal and -shm files the same permissions), in WAL mode with foreign keys on.

    check_same_thread=False: writes happen in a worker thread (to keep the
    referee's Trio loop free) while reads happen on the main thread; the caller
    serialises access. sqlite3.DatabaseError or OSError when it cannot be used.
    """
    make_private_dirs(path.parent)
    try:
        os.close(create_private(path))
    except FileExistsError:
        pass
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    # NORMAL under WAL: a commit appends to the -wal file without waiting
    # for the disk; SQLite syncs at checkpoints only. A killed process
    # loses nothing committed (the operating system holds the file's pages);
    # a power cut or a kernel crash may lose the last transactions, never
    # corrupt the file. Games lost that way have no result row, so the next
    # run plays them again, like any game that was not recorded. FULL
    # would wait for the disk at every commit for what only a power cut takes.
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA foreign_keys=ON")
    db.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    return db


def database_files(path: Path) -> tuple[Path, Path, Path]:
    """The files one SQLite database is made of: the file and, under WAL, its -wal and -shm beside it."""
    return path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def tighten_database(path: Path) -> list[tuple[Path, int]]:
    """The database's file and its -wal and -shm files made the owner's alone; [(path, its old mode)] if one was open."""
    opened = [mode for name in database_files(path) if (mode := tighten(name)) is not None]
    return [(path, opened[0])] if opened else []


class Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error (the error goes on)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


# --- one writer at a time --------------------------------------------------

_HOLDER_WAIT_S = 1.0
"""How long a refused run waits for the holder's pid to appear in the lock file.

The holder writes it right after it takes the lock; a run refused in between
(microseconds) would otherwise name nobody.
"""
_COMMAND_CHARS = 300
"""The most characters of the holder's command line a refusal quotes: enough to recognise it, one line."""


class StoreBusy(StorageError):
    """Another process writes the results file: a second run of the same tournament is refused at once."""

    def __init__(self, db: Path, pid: int | None, command: str | None) -> None:
        self.db = db
        self.pid = pid
        self.command = command
        if pid is None:
            holder = "another process (its pid could not be read: it runs on another machine, or has just started)"
            stop = "stop it"
        else:
            holder = f"process {pid}" + (f" ({command})" if command else "")
            stop = f"stop it (kill {pid})"
        super().__init__(
            f"{db} is being written by {holder}; wait for that run to end, or {stop} and run this command "
            "again to resume from what it recorded"
        )


def lock_path(db: Path) -> Path:
    """The lock file of results file ``db``: beside the database, with ``.lock`` added to its name.

    Beside the file ``db`` resolves to, so every spelling of one database
    (relative, absolute, through a symlink) meets the same lock.
    """
    real = Path(os.path.realpath(db))
    return real.with_name(real.name + ".lock")


class StoreLock:
    """The right to write one results file; one process holds it at a time (``hold_store``).

    An exclusive ``flock`` on the lock file beside the database. Not a lock
    file's mere existence: the kernel drops a flock when the last descriptor of
    it closes, so a run killed with SIGKILL (or a machine that lost power)
    leaves nothing to clean up by hand. The descriptor is close-on-exec, so
    neither bots nor worker processes inherit it and keep it past the run.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Give up the lock and remove the lock file (a second call does nothing).

        Removed while still locked, and only if it is still this lock's file, so
        that a run opening it meanwhile finds out (``_lock_once``) and opens anew.
        """
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if _same_file(self.path, os.fstat(fd)):
                self.path.unlink(missing_ok=True)
        except OSError:
            pass  # a folder made read-only meanwhile: the lock still goes with the descriptor
        finally:
            os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        self.release()


def hold_store(db: Path) -> StoreLock:
    """Take the right to write results file ``db`` (its folders are made if missing); StoreBusy if a run has it.

    Never waits for the holder: a second run of a tournament refused at once
    is what its user wants to hear, not a run that starts later or plays the
    same games twice. Take it before the store is opened for writing and keep it
    until the last write; reading needs no lock.
    """
    path = lock_path(db)
    make_private_dirs(path.parent)
    while True:
        lock = _lock_once(path, db)
        if lock is not None:
            return lock


def _lock_once(path: Path, db: Path) -> StoreLock | None:
    """One attempt: the lock, or None when the file was replaced under us (try again); StoreBusy if held."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, PRIVATE_FILE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StorageError(
                f"{path}: is a symbolic link; famiglia keeps its lock file there: remove the link"
            ) from None
        raise
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise StorageError(f"{path}: is not a file; famiglia keeps its lock file there: remove what is there")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(fd)
            raise StoreBusy(db, pid, _command_line(pid) if pid is not None else None) from None
        if not _same_file(path, opened):
            # The holder removed the file as it let go, after our open: this lock is
            # on a file nobody else will open. The next attempt opens the new one.
            os.close(fd)
            return None
        if opened.st_uid == os.geteuid() and stat.S_IMODE(opened.st_mode) != PRIVATE_FILE:
            os.fchmod(fd, PRIVATE_FILE)  # the umask may have taken owner bits; an older file may be open to all
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return StoreLock(path, fd)


def _same_file(path: Path, opened: os.stat_result) -> bool:
    """Whether ``path`` still names the file ``opened`` describes."""
    try:
        now = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino)


def _holder(fd: int) -> int | None:
    """The pid the holder wrote into the lock file (open as ``fd``), waiting briefly for it to appear.

    Until the holder writes its own, the file may still hold the pid of a run
    that was killed (the kernel dropped its lock, not its file): a pid of no
    live process is not the holder's.
    """
    deadline = time.monotonic() + _HOLDER_WAIT_S
    while True:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
        if text.isdigit() and _alive(int(text)):
            return int(text)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: it exists
    return True


def _command_line(pid: int) -> str | None:
    """Process ``pid``'s command line, shell-quoted and bounded; None when it cannot be read (gone, hidden)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    words = [word.decode(errors="replace") for word in raw.split(b"\0")[:-1]]
    if not words:
        return None
    text = shlex.join(words)
    return text if len(text) <= _COMMAND_CHARS else text[: _COMMAND_CHARS - 3] + "..."
