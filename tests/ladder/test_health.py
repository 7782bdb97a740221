"""Health per version (issue 40 item 1): own faults counted, a failing version suspended, lifted, replaced.

The store's rules, with records made by hand: which seat's termination counts, when the window
suspends, which version plays instead, and what lifts it. The same rules with a real server and a
real bot that passes check-bot and then times out in every ladder game: test_health_served.py.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ladder.health import HealthRule
from ladder.store import LadderStore, new_token
from ladder.views import entrant_view, standings
from protocol.messages import Result, Termination
from referee.match import MatchRecord, SeatTiming

PRIOR = (25.0, 25.0 / 3)
RULE = HealthRule(window=6, failed_fraction=0.5)  # suspended at 3 faults among the last 6 games


def record(terminations: dict[int, str]) -> MatchRecord:
    """A 3-seat game in which the seats named in ``terminations`` ended by that kind, and came last."""
    ranks = [3 if seat in terminations else 1 + seat for seat in range(3)]
    timing = SeatTiming(decisions=1, total_ms=1.0, max_ms=1.0, bank_left_ms=0.0)
    result = Result(
        ranks=ranks,
        scores=[0, 0, 0],
        winners=[ranks.index(min(ranks))],
        forfeited=list(terminations),
        ended_by="finished",
        terminations=[Termination(seat=s, kind=k, reason="r") for s, k in terminations.items()],  # type: ignore[arg-type]
    )
    return MatchRecord(
        match="m",
        game="vendetta",
        seed=1,
        variants={},
        names=["a"] * 3,
        result=result,
        timings=[timing] * 3,
        seconds=1.0,
    )


@pytest.fixture
def store(tmp_path: Path) -> LadderStore:
    return LadderStore(tmp_path / "ladder.sqlite")


def accept(store: LadderStore, name: str, digest: str) -> int:
    entrant = store.entrant(name)
    entrant_id = entrant.id if entrant else store.add_entrant(name, new_token())
    version = store.add_version(entrant_id, digest, PRIOR, per_hour=50)
    store.decide(version.id, accepted=True, reason="ok", report="{}")
    return version.id


def play(store: LadderStore, seating: list[int], terminations: dict[int, str]) -> list[int]:
    """One game of ``seating`` recorded; the ids of the versions it suspended."""
    store.add_table(1, seating, [seating])
    started = store.start_next()
    assert started is not None
    return [s.version for s in store.finish(started[0], record(terminations), RULE)]


def test_only_the_failing_seats_own_termination_counts_by_kind(store: LadderStore) -> None:
    ann, bob, cat = (accept(store, n, n * 8) for n in ("ann", "bob", "cat"))
    play(store, [ann, bob, cat], {0: "timeout"})
    play(store, [bob, ann, cat], {1: "crash"})
    play(store, [cat, bob, ann], {2: "stall"})
    play(store, [ann, bob, cat], {1: "illegal", 2: "protocol"})
    play(store, [ann, bob, cat], {0: "resigned"})  # a person's choice, not a fault
    rows = {row.entrant: row for row in standings(store)}
    assert rows["ann"].health.timeout == 1 and rows["ann"].health.crash == 2 and rows["ann"].health.failed == 3
    assert rows["bob"].health.illegal == 1 and rows["bob"].health.failed == 1
    assert rows["cat"].health.protocol == 1 and rows["cat"].health.failed == 1
    view = entrant_view(store, "ann", owner=False)
    assert view is not None and view.versions[0].health == rows["ann"].health  # the page and the board agree


def test_a_version_failing_beyond_the_window_is_suspended_with_its_games_cancelled(store: LadderStore) -> None:
    ann, bob, cat = (accept(store, n, n * 8) for n in ("ann", "bob", "cat"))
    assert play(store, [ann, bob, cat], {0: "timeout"}) == []
    assert play(store, [ann, bob, cat], {}) == []
    assert play(store, [bob, ann, cat], {1: "timeout"}) == []
    store.add_table(2, [ann, bob, cat], [[ann, bob, cat], [bob, cat, ann]])  # pending, to be cancelled
    started = store.start_next()
    assert started is not None
    assert [s.version for s in store.finish(started[0], record({0: "crash"}), RULE)] == [ann]
    assert store.version(ann).state == "suspended"
    assert "3 of its last 4 games" in store.version(ann).suspension
    assert store.counts().get("cancelled") == 1 and store.start_next() is None
    row = next(r for r in standings(store) if r.entrant == "ann")
    assert row.state == "suspended" and row.rank is None and row.health.failed == 3
    view = entrant_view(store, "ann", owner=False)
    assert view is not None and view.state == "suspended"
    assert view.versions[0].failing_games == [started[0], 3, 1]  # linked on its page, newest first


def test_a_suspension_reinstates_the_version_it_replaced_not_one_the_host_retired(store: LadderStore) -> None:
    old = accept(store, "ann", "a" * 8)
    new = accept(store, "ann", "b" * 8)
    bob, cat = accept(store, "bob", "c" * 8), accept(store, "cat", "d" * 8)
    for _ in range(3):
        play(store, [new, bob, cat], {0: "timeout"})
    assert store.version(new).state == "suspended" and store.version(old).state == "active"
    assert next(r for r in standings(store) if r.entrant == "ann").version == 1  # the old one is ranked again
    # The host retires the reinstated one; when a third version is suspended, nothing comes back.
    store.retire("ann")
    third = accept(store, "ann", "e" * 8)
    assert store.version(new).state == "retired"  # the accepted resubmission ended its suspension
    for _ in range(3):
        play(store, [third, bob, cat], {0: "crash"})
    assert store.version(third).state == "suspended"
    assert [v.state for v in store.versions(entrant="ann")] == ["retired", "retired", "suspended"]


def test_a_lift_plays_the_suspended_version_again_and_counts_its_faults_afresh(store: LadderStore) -> None:
    old = accept(store, "ann", "a" * 8)
    new = accept(store, "ann", "b" * 8)
    bob, cat = accept(store, "bob", "c" * 8), accept(store, "cat", "d" * 8)
    for _ in range(3):
        play(store, [new, bob, cat], {0: "timeout"})
    assert store.lift("ann") == 2
    assert store.version(new).state == "active" and store.version(old).state == "retired"
    assert store.version(new).suspension == ""
    # Its three old faults no longer count: two more are not enough, a third is.
    assert play(store, [new, bob, cat], {0: "timeout"}) == []
    assert play(store, [new, bob, cat], {0: "timeout"}) == []
    assert play(store, [new, bob, cat], {0: "timeout"}) == [new]
    with pytest.raises(ValueError, match="no suspended version"):
        store.lift("bob")
    with pytest.raises(ValueError, match="no entrant named"):
        store.lift("nobody")


def test_a_rejected_resubmission_leaves_the_suspension_in_place(store: LadderStore) -> None:
    ann = accept(store, "ann", "a" * 8)
    bob, cat = accept(store, "bob", "c" * 8), accept(store, "cat", "d" * 8)
    for _ in range(3):
        play(store, [ann, bob, cat], {0: "timeout"})
    entrant = store.entrant("ann")
    assert entrant is not None
    again = store.add_version(entrant.id, "f" * 8, PRIOR, per_hour=50)
    store.decide(again.id, accepted=False, reason="check-bot: timeout", report="{}")
    assert store.version(ann).state == "suspended"
    assert next(r for r in standings(store) if r.entrant == "ann").state == "suspended"


def test_two_versions_checked_at_once_and_decided_out_of_order_leave_the_newer_playing(store: LadderStore) -> None:
    entrant = store.add_entrant("ann", new_token())
    first = store.add_version(entrant, "a" * 8, PRIOR, per_hour=50)
    second = store.add_version(entrant, "b" * 8, PRIOR, per_hour=50)
    store.decide(second.id, accepted=True, reason="ok", report="{}")
    store.decide(first.id, accepted=True, reason="ok", report="{}")
    assert store.version(second.id).state == "active" and store.version(first.id).state == "retired"


def test_every_entrant_is_on_the_board_with_its_state_and_the_rating_is_its_intervals_low_end(
    store: LadderStore,
) -> None:
    ann, bob, cat = (accept(store, n, n * 8) for n in ("ann", "bob", "cat"))
    play(store, [ann, bob, cat], {})
    store.add_entrant("dan", new_token())  # no version yet
    eve = store.add_entrant("eve", new_token())
    store.decide(store.add_version(eve, "e" * 8, PRIOR, per_hour=5).id, accepted=False, reason="x", report="")
    fay = store.add_entrant("fay", new_token())
    store.add_version(fay, "f" * 8, PRIOR, per_hour=5)  # queued: being checked
    store.retire("cat")
    rows = standings(store)
    assert [(r.entrant, r.state, r.rank) for r in rows] == [
        ("ann", "active", 1),
        ("bob", "active", 2),
        ("fay", "checking", None),
        ("eve", "rejected", None),
        ("cat", "retired", None),
        ("dan", "no version yet", None),
    ]
    for row in rows[:2]:
        assert row.rating is not None and row.low is not None and row.high is not None and row.mu is not None
        assert row.rating == row.low and row.low < row.mu < row.high


def test_a_store_made_before_health_is_migrated_with_its_faults_counted(tmp_path: Path) -> None:
    path = tmp_path / "ladder.sqlite"
    store = LadderStore(path)
    ann, bob, cat = (accept(store, n, n * 8) for n in ("ann", "bob", "cat"))
    play(store, [ann, bob, cat], {0: "timeout"})
    store.close()
    # What an older famiglia's store lacks: drop it again, as if this version never ran.
    db = sqlite3.connect(path)
    db.executescript(
        "DROP INDEX seat_version_game; DROP TABLE version_fault; "
        "ALTER TABLE version DROP COLUMN suspension; ALTER TABLE version DROP COLUMN health_since; "
        "ALTER TABLE version DROP COLUMN retired_by;"
    )
    db.close()
    again = LadderStore(path)
    assert next(r for r in standings(again) if r.entrant == "ann").health.timeout == 1
    assert again.version(ann).state == "active" and again.version(ann).suspension == ""


def test_a_resubmission_inherits_its_entrants_recent_faults_and_one_more_suspends_it(store: LadderStore) -> None:
    # An entrant who resubmits its failing bot again and again, to be dealt a clean window each time.
    bob, cat = accept(store, "bob", "c" * 8), accept(store, "cat", "d" * 8)
    first = accept(store, "ann", "a" * 8)
    for _ in range(3):
        play(store, [first, bob, cat], {0: "timeout"})
    assert store.version(first).state == "suspended"
    for digest in ("b", "e", "f"):
        again = accept(store, "ann", digest * 8)  # passes check-bot, ends the suspension by replacing it
        assert store.version(again).state == "active"
        assert play(store, [again, bob, cat], {0: "timeout"}) == [again]  # its very first fault suspends it
        assert "by the entrant's earlier versions" in store.version(again).suspension
    assert sum(v.games for v in store.versions(entrant="ann")) == 6  # one game per resubmission, not three


def test_a_fixed_resubmission_is_not_suspended_by_its_predecessors_faults_alone(store: LadderStore) -> None:
    bob, cat = accept(store, "bob", "c" * 8), accept(store, "cat", "d" * 8)
    first = accept(store, "ann", "a" * 8)
    for _ in range(3):
        play(store, [first, bob, cat], {0: "timeout"})
    fixed = accept(store, "ann", "b" * 8)
    for _ in range(6):  # clean games push the old faults out of its window
        assert play(store, [fixed, bob, cat], {}) == []
    # A window of its own now: one fault, then a second, do not suspend it; only the threshold does.
    assert play(store, [fixed, bob, cat], {0: "timeout"}) == []
    assert play(store, [fixed, bob, cat], {0: "timeout"}) == []
    assert store.version(fixed).state == "active"


def test_a_reinstated_version_is_not_judged_by_the_faults_of_the_newer_one_that_failed(store: LadderStore) -> None:
    bob, cat = accept(store, "bob", "c" * 8), accept(store, "cat", "d" * 8)
    good = accept(store, "ann", "a" * 8)
    bad = accept(store, "ann", "b" * 8)
    for _ in range(3):
        play(store, [bad, bob, cat], {0: "timeout"})
    assert store.version(good).state == "active"
    assert play(store, [good, bob, cat], {0: "timeout"}) == []  # one fault of its own, not four
    assert store.version(good).state == "active"


def test_a_hosts_lift_clears_the_record_a_later_resubmission_would_inherit(store: LadderStore) -> None:
    bob, cat = accept(store, "bob", "c" * 8), accept(store, "cat", "d" * 8)
    first = accept(store, "ann", "a" * 8)
    for _ in range(3):
        play(store, [first, bob, cat], {0: "timeout"})
    assert store.lift("ann") == 1  # the host vouches for it: its window starts afresh
    second = accept(store, "ann", "b" * 8)
    assert play(store, [second, bob, cat], {0: "timeout"}) == []  # one fault of its own, none inherited
    assert play(store, [second, bob, cat], {0: "timeout"}) == []
    assert play(store, [second, bob, cat], {0: "timeout"}) == [second]
