"""The ladder store: tokens kept only as hashes, versions in their states, games recorded once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ladder.store import LadderStore, RateLimited, new_token
from protocol.messages import Result
from referee.match import MatchRecord, SeatTiming

PRIOR = (25.0, 25.0 / 3)


def record(ranks: list[int]) -> MatchRecord:
    n = len(ranks)
    timing = SeatTiming(decisions=1, total_ms=1.0, max_ms=1.0, bank_left_ms=0.0)
    result = Result(ranks=ranks, scores=[0] * n, winners=[ranks.index(1)], forfeited=[], ended_by="finished")
    return MatchRecord(
        match="m",
        game="vendetta",
        seed=1,
        variants={},
        names=["a"] * n,
        result=result,
        timings=[timing] * n,
        seconds=1.0,
    )


@pytest.fixture
def store(tmp_path: Path) -> LadderStore:
    return LadderStore(tmp_path / "ladder.sqlite")


def three_active(store: LadderStore) -> list[int]:
    versions = []
    for name in ("ann", "bob", "cat"):
        entrant = store.add_entrant(name, new_token())
        version = store.add_version(entrant, name * 10, PRIOR, per_hour=5)
        store.decide(version.id, accepted=True, reason="ok", report="{}")
        versions.append(version.id)
    return versions


def test_a_token_is_stored_only_as_a_hash_and_finds_its_own_entrant(store: LadderStore, tmp_path: Path) -> None:
    token = new_token()
    store.add_entrant("ann", token)
    store.add_entrant("bob", new_token())
    assert token.encode() not in (tmp_path / "ladder.sqlite").read_bytes()
    found = store.entrant_for_token(token)
    assert found is not None and found.name == "ann"
    assert store.entrant_for_token(token[:-1]) is None
    assert store.entrant_for_token("") is None


def test_a_name_is_registered_once(store: LadderStore) -> None:
    store.add_entrant("ann", new_token())
    with pytest.raises(ValueError, match="already registered"):
        store.add_entrant("ann", new_token())


@pytest.mark.parametrize("other", ["ANN", "Ann", "aNn"])
def test_a_name_differing_only_in_case_is_refused_as_taken(store: LadderStore, other: str) -> None:
    store.add_entrant("ann", new_token())
    with pytest.raises(
        ValueError, match=f"'ann' is already registered.*differ only in case.*'{other}'.*choose another"
    ):
        store.add_entrant(other, new_token())
    assert [entrant.name for entrant in store.entrants()] == ["ann"]


def test_an_accepted_version_retires_the_active_one_and_a_rejected_one_changes_nothing(store: LadderStore) -> None:
    entrant = store.add_entrant("ann", new_token())
    first = store.add_version(entrant, "a" * 64, PRIOR, per_hour=5)
    store.decide(first.id, accepted=True, reason="ok", report="{}")
    broken = store.add_version(entrant, "b" * 64, PRIOR, per_hour=5)
    store.decide(broken.id, accepted=False, reason="check-bot: startup", report="{}")
    assert [(v.number, v.state) for v in store.versions(entrant="ann")] == [(1, "active"), (2, "rejected")]
    second = store.add_version(entrant, "c" * 64, PRIOR, per_hour=5)
    store.decide(second.id, accepted=True, reason="ok", report="{}")
    assert [v.state for v in store.versions(entrant="ann")] == ["retired", "rejected", "active"]


def test_submissions_past_the_hourly_limit_are_refused(store: LadderStore) -> None:
    entrant = store.add_entrant("ann", new_token())
    for _ in range(2):
        store.add_version(entrant, "a" * 64, PRIOR, per_hour=2)
    with pytest.raises(RateLimited, match="at most 2 submissions an hour"):
        store.add_version(entrant, "a" * 64, PRIOR, per_hour=2)


def test_a_finished_game_is_recorded_once_with_its_ratings(store: LadderStore) -> None:
    versions = three_active(store)
    store.add_table(1, versions, [versions])
    started = store.start_next()
    assert started is not None and started[2] == versions
    store.finish(started[0], record([1, 2, 3]))
    with pytest.raises(ValueError, match="not recorded again"):
        store.finish(started[0], record([1, 2, 3]))
    (game,) = store.games()
    assert [seat.rank for seat in game.seats] == [1, 2, 3]
    ann, _, cat = (store.version(v) for v in versions)
    assert ann.games == 1 and ann.mu > PRIOR[0] > cat.mu
    assert store.matchups("ann") == [("bob", 1, 1, 0), ("cat", 1, 1, 0)]


def test_a_store_made_when_its_tables_were_named_tbl_keeps_its_tables_and_games(tmp_path: Path) -> None:
    path = tmp_path / "ladder.sqlite"
    store = LadderStore(path)
    versions = three_active(store)
    table = store.add_table(1, versions, [versions, versions[::-1]])
    started = store.start_next()
    assert started is not None
    store.finish(started[0], record([1, 2, 3]))
    # What an older famiglia made: the same rows, under the old names (SQLite renames the references too).
    store.db.execute("ALTER TABLE tables RENAME TO tbl")
    store.db.execute("ALTER TABLE game RENAME COLUMN table_id TO tbl")
    store.close()
    for opened in range(1, 3):  # renamed at the first open, left alone at the next
        again = LadderStore(path)
        assert [(g.id, g.table, g.state) for g in again.games(limit=-1)] == [(started[0], table, "done")]
        assert again.counts() == {"done": 1, "pending": opened} and not again.table_finished(table)
        assert again.add_table(2, versions, [versions]) == table + opened
        again.close()
    with sqlite3.connect(path) as connection:
        columns = [row[1] for row in connection.execute("PRAGMA table_info(game)")]
        assert "table_id" in columns and "tbl" not in columns
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []


def test_a_restart_makes_running_games_pending_again(store: LadderStore) -> None:
    versions = three_active(store)
    store.add_table(1, versions, [versions, versions[::-1]])
    first = store.start_next()
    assert first is not None
    assert store.reset_running() == [first[0]]
    again = store.start_next()
    assert again is not None and again[0] == first[0]
    assert not store.table_finished(1)


def test_replacing_a_version_cancels_its_games_not_yet_started(store: LadderStore) -> None:
    versions = three_active(store)
    store.add_table(1, versions, [versions, versions[::-1]])
    entrant = store.entrant("ann")
    assert entrant is not None
    newer = store.add_version(entrant.id, "d" * 64, PRIOR, per_hour=5)
    store.decide(newer.id, accepted=True, reason="ok", report="{}")
    assert store.counts() == {"cancelled": 2}
    assert store.start_next() is None


def test_deals_differ_between_tables_and_depend_on_the_store_s_secret(tmp_path: Path) -> None:
    seeds = []
    for name in ("one", "two"):
        store = LadderStore(tmp_path / f"{name}.sqlite")
        versions = three_active(store)
        store.add_table(7, versions, [versions])
        store.add_table(7, versions, [versions])
        seeds.append([started[1] for started in (store.start_next(), store.start_next()) if started])
    assert seeds[0][0] != seeds[0][1] and seeds[0] != seeds[1]


def test_retiring_an_entrant_cancels_its_waiting_games_and_its_failed_game_cannot_be_requeued(
    store: LadderStore,
) -> None:
    versions = three_active(store)
    store.add_table(1, versions, [versions, versions[::-1]])
    started = store.start_next()
    assert started is not None
    store.fail(started[0], "RuntimeError: the harness tripped")
    assert store.retire("bob") == 1
    assert store.counts() == {"failed": 1, "cancelled": 1}
    with pytest.raises(ValueError, match="no active version"):
        store.retire("bob")
    with pytest.raises(ValueError, match="only a failed game"):
        store.requeue(started[0] + 1)
    with pytest.raises(ValueError, match="version 1 of bob is retired"):
        store.requeue(started[0])  # it would wait for ever: the loop deals active versions only
    assert store.counts() == {"failed": 1, "cancelled": 1}


def test_pausing_is_kept_in_the_store(store: LadderStore, tmp_path: Path) -> None:
    assert not store.paused()
    store.set_paused(True)
    assert LadderStore(tmp_path / "ladder.sqlite").paused()
    store.set_paused(False)
    assert not store.paused()


def test_the_fit_rates_every_version_that_played_with_an_interval(store: LadderStore) -> None:
    from ladder.views import fit_standings

    versions = three_active(store)
    store.add_table(1, versions, [versions] * 6)
    for _ in range(6):
        started = store.start_next()
        assert started is not None
        store.finish(started[0], record([1, 2, 3]))  # ann always first, cat always last
    rows = fit_standings(store.rated_games(), store.versions())
    assert [row.entrant for row in rows] == ["ann", "bob", "cat"]
    assert all(row.lower < row.rating < row.upper and row.games == 6 for row in rows)
