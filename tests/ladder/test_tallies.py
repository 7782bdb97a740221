"""The store's tallies (ladder.tallies) and the reads made fast for a large contest answer what the slow ones did.

Each test plays a small ladder through the store's own writers (tables dealt,
games started, finished, failed, cancelled, requeued, put back; versions
replaced and retired) and compares the fast answer with the query the store
made before: counting seats per version, games per state, pairing an entrant's
seats with its games' other seats, every rating step, every game as a row.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from ladder.history import rating_histories, sample_indices, version_matchups
from ladder.store import LadderStore, fit_input, new_token
from ladder.views import entrant_view, fit_standings, standings
from ladder.web.charts import MOST_POINTS, rating_chart
from tests.ladder.test_store import PRIOR, record

# The reads the store made before its tallies, kept here as the reference the fast ones must equal.
SLOW_GAMES = (
    "SELECT v.id, (SELECT COUNT(*) FROM seat s JOIN game g ON g.id = s.game WHERE s.version = v.id "
    "AND g.state = 'done') FROM version v ORDER BY v.id"
)
SLOW_COUNTS = "SELECT state, COUNT(*) FROM game GROUP BY state"
SLOW_MATCHUPS = (
    "SELECT oe.name, COUNT(*), SUM(me.rank < them.rank), SUM(me.rank > them.rank) "
    "FROM seat me JOIN version mv ON mv.id = me.version JOIN entrant e ON e.id = mv.entrant "
    "JOIN seat them ON them.game = me.game AND them.seat != me.seat "
    "JOIN version ov ON ov.id = them.version JOIN entrant oe ON oe.id = ov.entrant "
    "WHERE e.name = ? AND oe.name != e.name GROUP BY oe.name ORDER BY oe.name"
)
SLOW_VERSION_MATCHUPS = (
    "SELECT mv.number, oe.name, COUNT(*), SUM(me.rank < them.rank), SUM(me.rank > them.rank) "
    "FROM seat me JOIN version mv ON mv.id = me.version JOIN entrant e ON e.id = mv.entrant "
    "JOIN seat them ON them.game = me.game AND them.seat != me.seat "
    "JOIN version ov ON ov.id = them.version JOIN entrant oe ON oe.id = ov.entrant "
    "WHERE e.name = ? AND oe.name != e.name GROUP BY mv.number, oe.name ORDER BY mv.number DESC, oe.name"
)
NAMES = ("ann", "bob", "cat", "dan", "eve")


def accept(store: LadderStore, entrant: int, digest: str) -> int:
    version = store.add_version(entrant, digest, PRIOR, per_hour=100)
    store.decide(version.id, accepted=True, reason="ok", report="{}")
    return version.id


def play_a_ladder(store: LadderStore, rng: random.Random, tables: int) -> None:
    """``tables`` tables of 2 to 4 seats, each game finished, failed, left pending, running or cancelled; new
    versions replace old ones between tables (their pending games cancelled), and now and then a table seats
    two versions of one entrant (a pair the tallies must not count as a matchup)."""
    entrants = [store.add_entrant(name, new_token()) for name in NAMES]
    active = {e: accept(store, e, f"{e}-1") for e in entrants}
    for number in range(tables):
        if rng.random() < 0.15:
            entrant = rng.choice(entrants)
            active[entrant] = accept(store, entrant, f"{entrant}-{number}")
        members = rng.sample(list(active.values()), rng.choice((2, 3, 4)))
        if rng.random() < 0.1:
            retired = [v for v in store.versions(states=("retired",)) if v.id not in members]
            if retired:
                members[-1] = retired[0].id  # a second version of one entrant may sit with the first
        table = store.add_table(rng.getrandbits(62), members, [members[i:] + members[:i] for i in range(len(members))])
        while (started := store.start_next()) is not None:
            game, _, seating = started
            fate = rng.random()
            if fate < 0.8:
                ranks = list(range(1, len(seating) + 1))
                rng.shuffle(ranks)
                store.finish(game, record(ranks))
            elif fate < 0.9:
                store.fail(game, "the harness failed it")
            else:
                store.put_back(game)  # a cluster went away: pending again, played at the next start
                break
        assert table > 0
    last = list(active.values())[:3]
    store.add_table(rng.getrandbits(62), last, [last, last[1:] + last[:1]])  # left pending, one started
    assert store.start_next() is not None
    store.reset_running()  # a restart: the running game is pending again


@pytest.fixture
def played(tmp_path: Path) -> LadderStore:
    store = LadderStore(tmp_path / "ladder.sqlite")
    play_a_ladder(store, random.Random(7), tables=40)
    return store


def test_a_version_counts_its_finished_games_as_the_seat_join_did(played: LadderStore) -> None:
    slow = dict(played.db.execute(SLOW_GAMES).fetchall())
    assert {v.id: v.games for v in played.versions()} == slow
    assert sum(slow.values()) > 100  # the ladder played: the counts compared are not all zero


def test_games_by_state_are_the_group_by_the_store_made(played: LadderStore) -> None:
    slow = dict(played.db.execute(SLOW_COUNTS).fetchall())
    assert played.counts() == slow
    assert {"done", "failed", "pending"} <= set(slow)  # each way a game moves was taken
    # A requeued failed game moves back to pending, and the tally with it.
    failed = played.failed_games()[0].id
    played.db.execute("UPDATE version SET state = 'active'")  # every version plays again, so it may be requeued
    played.requeue(failed)
    assert played.counts() == dict(played.db.execute(SLOW_COUNTS).fetchall())


def test_matchups_are_the_pairs_the_self_join_counted(played: LadderStore) -> None:
    for name in NAMES:
        slow = [(o, n, a or 0, b or 0) for o, n, a, b in played.db.execute(SLOW_MATCHUPS, (name,))]
        assert played.matchups(name) == slow
        slow_versions = [
            (v, o, n, a or 0, b or 0) for v, o, n, a, b in played.db.execute(SLOW_VERSION_MATCHUPS, (name,))
        ]
        fast = [(m.version, m.opponent, m.games, m.ahead, m.behind) for m in version_matchups(played, name)]
        assert fast == slow_versions
    assert played.matchups("ann")  # ann met others: the lists compared are not empty


def test_the_fit_reads_the_games_it_fitted_before(played: LadderStore) -> None:
    """``rated_games`` and ``fit_input`` (its own connection) give what every finished game's row gave."""
    slow = [([s.version for s in row.seats], [s.rank for s in row.seats]) for row in played.games(limit=-1)]
    assert played.rated_games() == slow
    games, versions = fit_input(played.path)
    assert games == slow and versions == played.versions()
    assert fit_standings(games, versions) == fit_standings(slow, played.versions())


def test_the_entrant_page_chart_is_drawn_from_its_sample_as_from_every_step(tmp_path: Path) -> None:
    """A version of more games than the chart draws: the page reads the sample only, and the chart is the same."""
    store = LadderStore(tmp_path / "ladder.sqlite")
    ann, bob, cat = (accept(store, store.add_entrant(n, new_token()), n) for n in ("ann", "bob", "cat"))
    rng = random.Random(3)
    for _ in range(MOST_POINTS // 3 + 30):  # 3 games a table: about 300 games each
        store.add_table(1, [ann, bob, cat], [[ann, bob, cat], [bob, cat, ann], [cat, ann, bob]])
        while (started := store.start_next()) is not None:
            ranks = [1, 2, 3]
            rng.shuffle(ranks)
            store.finish(started[0], record(ranks))
    every = rating_histories(store, "ann")
    sampled = rating_histories(store, "ann", MOST_POINTS)
    assert len(every[0].steps) > MOST_POINTS and len(sampled[0].steps) == MOST_POINTS
    assert sampled[0].steps == [every[0].steps[i] for i in sample_indices(len(every[0].steps), MOST_POINTS)]
    assert sampled[0].games == every[0].games == len(every[0].steps)
    assert rating_chart(sampled) == rating_chart(every)
    page = entrant_view(store, "ann", owner=False, chart_points=MOST_POINTS)
    api = entrant_view(store, "ann", owner=False)
    assert page is not None and api is not None and len(api.ratings[0].steps) == every[0].games
    assert rating_chart(page.ratings) == rating_chart(api.ratings)
    assert page.rating_history == [round(step.mu, 2) for step in sampled[0].steps]  # the page's own sample
    assert api.rating_history == [round(step.mu, 2) for step in every[0].steps]


def test_a_short_history_is_read_whole_either_way(played: LadderStore) -> None:
    for name in NAMES:
        every = rating_histories(played, name)
        sampled = rating_histories(played, name, MOST_POINTS)
        assert [(h.number, h.state, h.steps) for h in sampled] == [(h.number, h.state, h.steps) for h in every]
        page = entrant_view(played, name, owner=True, chart_points=MOST_POINTS)
        api = entrant_view(played, name, owner=True)
        assert page is not None and api is not None
        assert page.rating_history == api.rating_history and page.matchups == api.matchups


def test_a_store_made_before_the_tallies_is_counted_at_open(tmp_path: Path) -> None:
    path = tmp_path / "ladder.sqlite"
    store = LadderStore(path)
    play_a_ladder(store, random.Random(11), tables=30)
    board = standings(store)
    counts, matchups = store.counts(), {n: store.matchups(n) for n in NAMES}
    views = {n: entrant_view(store, n, owner=True) for n in NAMES}
    store.close()
    # What an older famiglia's store lacks: drop it again, as if this version never ran.
    db = sqlite3.connect(path)
    db.executescript(
        "DROP TRIGGER seat_tally_insert; DROP TRIGGER game_tally_insert; DROP TRIGGER game_tally_state; "
        "DROP TABLE game_tally; DROP TABLE version_matchup; ALTER TABLE version DROP COLUMN games; "
        "DROP INDEX game_table;"
    )
    db.close()
    again = LadderStore(path)
    assert standings(again) == board
    assert again.counts() == counts and {n: again.matchups(n) for n in NAMES} == matchups
    assert {n: entrant_view(again, n, owner=True) for n in NAMES} == views
    # And it keeps counting from there as a new store does.
    play_a_ladder_more(again)
    assert {v.id: v.games for v in again.versions()} == dict(again.db.execute(SLOW_GAMES).fetchall())
    assert again.counts() == dict(again.db.execute(SLOW_COUNTS).fetchall())


def play_a_ladder_more(store: LadderStore) -> None:
    active = [v.id for v in store.versions(states=("active",))][:3]
    store.add_table(5, active, [active])
    started = store.start_next()
    assert started is not None
    store.finish(started[0], record([2, 1, 3]))


def test_a_second_open_of_a_migrated_store_changes_nothing(played: LadderStore) -> None:
    """Opening again (the CLI beside the server) neither counts twice nor fails on what is there."""
    before = (played.counts(), [v.games for v in played.versions()], played.matchups("ann"))
    other = LadderStore(played.path)
    assert (other.counts(), [v.games for v in other.versions()], other.matchups("ann")) == before
    other.close()


def test_matchmaking_weighs_the_active_versions_with_the_numbers_of_their_rows(played: LadderStore) -> None:
    from ladder.matchmaking import Candidate

    slow = [Candidate(version=v.id, games=v.games, mu=v.mu, sigma=v.sigma) for v in played.versions(states=("active",))]
    assert played.candidates() == slow and len(slow) == len(NAMES)


def _made_before_the_tallies(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(
        "DROP TRIGGER seat_tally_insert; DROP TRIGGER game_tally_insert; DROP TRIGGER game_tally_state; "
        "DROP TABLE game_tally; DROP TABLE version_matchup; ALTER TABLE version DROP COLUMN games;"
    )
    db.close()


def test_a_migration_that_fails_half_way_leaves_the_old_store_whole_and_the_next_open_migrates_it(
    played: LadderStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server killed (or failing) while counting: one transaction, so nothing of it stays, and no count is
    ever kept without the triggers that keep it current."""
    import ladder.tallies

    counts, games = played.counts(), [v.games for v in played.versions()]
    played.close()
    _made_before_the_tallies(played.path)
    monkeypatch.setattr(ladder.tallies, "_TRIGGERS", (*ladder.tallies._TRIGGERS[:-1], "CREATE TRIGGER broken"))
    with pytest.raises(ValueError, match="cannot use as a ladder store"):
        LadderStore(played.path)
    db = sqlite3.connect(played.path)
    assert "games" not in {row[1] for row in db.execute("PRAGMA table_info(version)")}
    assert db.execute("SELECT name FROM sqlite_master WHERE name IN ('game_tally', 'version_matchup')").fetchall() == []
    db.close()
    monkeypatch.undo()
    again = LadderStore(played.path)
    assert again.counts() == counts and [v.games for v in again.versions()] == games


def test_two_processes_opening_an_old_store_at_once_count_it_once(played: LadderStore) -> None:
    """The server and a command (add-entrant) opening a store made before the tallies at the same moment."""
    import threading

    counts, games, matchups = played.counts(), [v.games for v in played.versions()], played.matchups("ann")
    played.close()
    _made_before_the_tallies(played.path)
    opened: list[LadderStore] = []
    openers = [threading.Thread(target=lambda: opened.append(LadderStore(played.path))) for _ in range(2)]
    for opener in openers:
        opener.start()
    for opener in openers:
        opener.join()
    assert len(opened) == 2
    for store in opened:
        assert store.counts() == counts and [v.games for v in store.versions()] == games
        assert store.matchups("ann") == matchups
        store.close()


def test_every_game_is_read_past_sqlites_limit_of_variables(tmp_path: Path) -> None:
    """A ladder of more than 32,766 finished games: ``games(limit=-1)`` (and so, before, the scheduled fit at
    every start, the fit API and ``famiglia ladder standings``) failed with "too many SQL variables"."""
    store = LadderStore(tmp_path / "ladder.sqlite")
    ann, bob = (accept(store, store.add_entrant(n, new_token()), n) for n in ("ann", "bob"))
    count = 33_000
    with store.transaction():  # written as finish writes them, in bulk: 33,000 games through it take minutes
        store.db.execute("INSERT INTO tables (id, seed, members) VALUES (1, 1, ?)", (f"[{ann},{bob}]",))
        store.db.executemany(
            "INSERT INTO game (id, table_id, seating, state, finished) VALUES (?, 1, ?, 'done', '2026-01-01')",
            [(game, f"[{ann},{bob}]") for game in range(1, count + 1)],
        )
        store.db.executemany(
            "INSERT INTO seat VALUES (?, ?, ?, ?, 0, NULL, NULL, 25.0, 8.0)",
            [
                (game, seat, version, 1 + (seat + game) % 2)
                for game in range(1, count + 1)
                for seat, version in enumerate((ann, bob))
            ],
        )
    rows = store.games(limit=-1)
    assert len(rows) == count and all(len(row.seats) == 2 for row in rows)
    assert [([s.version for s in row.seats], [s.rank for s in row.seats]) for row in rows] == store.rated_games()
    assert store.version(ann).games == count
