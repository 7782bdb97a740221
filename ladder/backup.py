"""``famiglia ladder backup``: a consistent copy of a ladder, taken while its server runs.

``cp`` of a serving ladder's store copies the main file without what the
write-ahead log still holds (0 of 46 games once). SQLite's online backup reads
one snapshot of the store whatever the server writes meanwhile; the data
folder is copied after it, so every replay and upload the snapshot names was
already on disk (the server writes a file before the row that names it).
Files written after the snapshot are copied too, and simply not named.

The copy is a ladder of its own: ``DEST/club.toml``, ``DEST/club.sqlite`` and
``DEST/club-data/``, private to its owner as the original is. To restore,
stop the server and serve the copy, or put its three entries back where the
ladder was (docs/ladder.md).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import msgspec

from ladder.config import LadderPaths, load_ladder

__all__ = ["BackupFailed", "BackupMade", "backup_ladder"]


class BackupFailed(OSError):
    """A fault of the machine while copying (a full disk, a folder not writable): one line, exit 1."""


class BackupMade(msgspec.Struct, frozen=True, kw_only=True):
    """What a backup copied: the new ladder file, its games by state, and the data folder's files."""

    config: Path
    games: dict[str, int]
    files: int
    bytes: int


def backup_ladder(ladder: Path, dest: Path) -> BackupMade:
    """Copy ``ladder`` (its file, store and data folder) into the new folder ``dest``; ValueError (one line)
    when it cannot start, before anything is written; BackupFailed when the copy fails midway (a full disk),
    with ``dest`` removed."""
    load_ladder(ladder)
    source = LadderPaths.beside(ladder)
    if not source.db.is_file():
        raise ValueError(f"{ladder}: no ladder store beside it yet ({source.db.name}): nothing to back up")
    inside = dest.resolve()
    if inside == source.data or source.data in inside.parents:
        # A copy of the data folder inside itself would copy its own copy without end.
        raise ValueError(f"{dest} is inside the ladder's data folder {source.data}; name a folder outside it")
    if dest.exists():
        raise ValueError(f"{dest} exists already; name a new folder (a backup never overwrites)")
    if not dest.parent.is_dir():
        raise ValueError(f"{dest.parent}: no such folder; create it first, or name a folder in one that exists")
    dest.mkdir(mode=0o700)
    copy = LadderPaths.beside(dest / source.config.name)
    try:
        games = _copy_store(source.db, copy.db)
        files, size = _copy_data(source.data, copy.data)
        shutil.copy2(source.config, copy.config)  # last: a folder with the ladder file is a whole copy
    except BaseException as exc:
        # Half a backup kept beside whole ones could be restored by mistake: nothing of it stays. The
        # copy's own files only: the ladder it copies is read, never written.
        shutil.rmtree(dest, ignore_errors=True)
        if isinstance(exc, (OSError, sqlite3.Error)):
            raise BackupFailed(f"{dest}: the backup failed and nothing of it was kept ({_why(exc)}); "
                               "make room or name another folder, then run it again") from None  # fmt: skip
        raise
    return BackupMade(config=copy.config, games=games, files=files, bytes=size)


def _copy_store(db: Path, to: Path) -> dict[str, int]:
    # One step (pages=-1): the backup holds one read snapshot from start to end, so the server's
    # writes meanwhile neither restart it nor leak half into it.
    fd = os.open(to, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    source = sqlite3.connect(db, timeout=60)
    target = sqlite3.connect(to)
    try:
        source.backup(target, pages=-1)
        games = dict(target.execute("SELECT state, COUNT(*) FROM game GROUP BY state ORDER BY state").fetchall())
    finally:
        target.close()
        source.close()
    return games


def _copy_data(data: Path, to: Path) -> tuple[int, int]:
    copied = [0, 0]

    def copy_one(source: str, target: str) -> object:
        try:
            shutil.copy2(source, target, follow_symlinks=False)
        except FileNotFoundError:
            return target  # a partial replay the server removed meanwhile (an interrupted attempt)
        copied[0] += 1
        copied[1] += os.lstat(target).st_size
        return target

    if data.is_dir():
        # Links are copied as links: a bot folder's link never makes the copy read outside it.
        shutil.copytree(data, to, symlinks=True, copy_function=copy_one)
    return copied[0], copied[1]


def _why(exc: OSError | sqlite3.Error) -> str:
    """What went wrong, in a line: the first file's fault of a data folder's copy (which gathers them all)."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        source, _, why = exc.args[0][0]
        more = len(exc.args[0]) - 1
        return f"{source}: {why}" + (f", and {more} more files" if more else "")
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc)
