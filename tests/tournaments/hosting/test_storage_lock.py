"""The floor's store lock (``tournaments.hosting.storage.hold_store``): one writer per database.

The lock is a flock on ``<db>.lock``: the kernel drops it with its process, so
a process killed with SIGKILL blocks nothing. The runs of a tournament and a
ladder's server that meet it are tested with them (tests/tournaments/test_store_lock.py,
tests/ladder/test_ladder_cli.py).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tournaments.hosting.storage import StorageError, StoreBusy, hold_store, lock_path


def test_a_second_holder_is_refused_naming_the_first_and_can_take_it_once_released(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    first = hold_store(db)
    assert lock_path(db) == tmp_path / "t.sqlite.lock"
    assert lock_path(db).read_text() == f"{os.getpid()}\n"
    assert stat.S_IMODE(lock_path(db).stat().st_mode) == 0o600
    # flock belongs to an open file: a second open in this very process is a second holder.
    with pytest.raises(StoreBusy) as refused:
        hold_store(db)
    message = str(refused.value)
    assert refused.value.pid == os.getpid() and f"process {os.getpid()} (" in message
    assert "wait for that run to end, or stop it" in message and "\n" not in message
    # Its command line as the process list shows it (pytest, or a pytest-xdist worker: python -c ...).
    own = Path("/proc/self/cmdline").read_bytes().split(b"\0")[0].decode()
    assert refused.value.command is not None and refused.value.command.startswith(own)
    first.release()
    first.release()  # a second release does nothing
    assert not lock_path(db).exists(), "a clean release leaves no lock file behind"
    with hold_store(db) as again:
        assert again.held
    assert not again.held


def test_a_lock_file_left_by_a_killed_run_is_taken_over(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    lock_path(db).write_text("999999999\n")  # what a run killed with SIGKILL leaves: its file, not its lock
    with hold_store(db):
        assert lock_path(db).read_text() == f"{os.getpid()}\n"


def test_every_spelling_of_one_database_meets_the_same_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path)
    with hold_store(Path("real/t.sqlite")), pytest.raises(StoreBusy):
        hold_store(tmp_path / "link" / "t.sqlite")


def test_the_lock_file_is_never_a_symlink_it_would_follow(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    lock_path(tmp_path / "t.sqlite").symlink_to(target)
    with pytest.raises(StorageError, match="is a symbolic link"):
        hold_store(tmp_path / "t.sqlite")
    assert not target.exists()


def test_missing_folders_of_the_database_are_made_private(tmp_path: Path) -> None:
    with hold_store(tmp_path / "new" / "t.sqlite"):
        assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700
