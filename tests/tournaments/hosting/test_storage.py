"""The one SQLite floor under both stores: private, WAL, a busy timeout, one transaction."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ladder.store import LadderStore
from tournaments.hosting.storage import (
    BUSY_TIMEOUT_MS,
    Transaction,
    database_files,
    open_private_database,
    tighten_database,
)
from tournaments.store import Store, StoreError


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("open_umask")
def test_a_database_is_the_owners_alone_under_umask_0_with_its_wal_files(tmp_path: Path) -> None:
    path = tmp_path / "new" / "folder" / "x.db"
    db = open_private_database(path)
    db.execute("CREATE TABLE t (x INTEGER)")
    db.execute("INSERT INTO t VALUES (1)")
    try:
        for part in database_files(path):
            assert part.exists(), part
            assert _mode(part) == 0o600, part
        assert _mode(path.parent) == 0o700
    finally:
        db.close()


def test_a_database_is_in_wal_with_foreign_keys_and_the_stores_busy_timeout(tmp_path: Path) -> None:
    db = open_private_database(tmp_path / "x.db")
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS == 5000
    finally:
        db.close()


def test_tighten_closes_what_was_opened_and_names_the_old_mode(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    open_private_database(path).close()
    assert tighten_database(path) == []
    path.chmod(0o644)
    assert tighten_database(path) == [(path, 0o644)]
    assert _mode(path) == 0o600


def test_a_transaction_commits_what_it_wrote(tmp_path: Path) -> None:
    db = open_private_database(tmp_path / "x.db")
    db.execute("CREATE TABLE t (x INTEGER)")
    with Transaction(db):
        db.execute("INSERT INTO t VALUES (1)")
    assert not db.in_transaction
    assert db.execute("SELECT x FROM t").fetchall() == [(1,)]
    db.close()


def test_a_transaction_rolls_back_on_any_error_and_lets_it_go_on(tmp_path: Path) -> None:
    db = open_private_database(tmp_path / "x.db")
    db.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(RuntimeError, match="halfway"), Transaction(db):
        db.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError("halfway")
    assert not db.in_transaction
    assert db.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0
    db.close()


def test_a_write_lock_held_by_another_connection_waits_then_fails_as_locked(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    holder = open_private_database(path)
    holder.execute("CREATE TABLE t (x INTEGER)")
    waiter = open_private_database(path, busy_timeout_ms=300)
    try:
        with Transaction(holder):
            holder.execute("INSERT INTO t VALUES (1)")
            began = time.monotonic()
            with pytest.raises(sqlite3.OperationalError, match="database is locked"), Transaction(waiter):
                pass
            assert time.monotonic() - began >= 0.25
        with Transaction(waiter):  # free again once the holder committed
            waiter.execute("INSERT INTO t VALUES (2)")
        assert waiter.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 2
    finally:
        holder.close()
        waiter.close()


def test_the_results_store_says_a_locked_database_as_it_did(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    store = Store(path)
    store.db.execute("PRAGMA busy_timeout=200")  # not the 5 s a real writer waits
    holder = open_private_database(path)
    try:
        with Transaction(holder), pytest.raises(StoreError, match=r"results\.db: cannot write: database is locked"):
            store.settle_versions([])
    finally:
        holder.close()
        store.close()


def test_the_ladder_store_lets_a_locked_database_error_go_up_as_it_did(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    store = LadderStore(path)
    store.db.execute("PRAGMA busy_timeout=200")
    holder = open_private_database(path)
    try:
        with Transaction(holder), pytest.raises(sqlite3.OperationalError, match="database is locked"):
            store.set_paused(True)
        assert not store.paused()
    finally:
        holder.close()
        store.close()


@pytest.mark.usefixtures("open_umask")
def test_both_stores_are_private_files_on_this_floor(tmp_path: Path) -> None:
    for store in (Store(tmp_path / "t.db"), LadderStore(tmp_path / "l.db")):
        try:
            assert _mode(store.path) == 0o600
            assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert isinstance(
                store.transaction() if isinstance(store, LadderStore) else store._transaction(), Transaction
            )
        finally:
            store.close()
