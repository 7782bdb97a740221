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

Schema versions are each store's own (only the results file records one); the
lock that keeps a second tournament run out is the tournament's
(``tournaments.store.hold_store``).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from referee.private import create_private, make_private_dirs, tighten

__all__ = [
    "BUSY_TIMEOUT_MS",
    "StorageError",
    "Transaction",
    "database_files",
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
