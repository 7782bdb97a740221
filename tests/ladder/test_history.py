"""An entrant's past as the store keeps it: each version's rating and band after each game, matchups per
version, and the games behind one matchup cell."""

from __future__ import annotations

import datetime
import sqlite3
from pathlib import Path

import pytest

from ladder.history import rating_histories, version_matchups
from ladder.store import LadderStore
from ladder.views import entrant_view
from tests.ladder.helpers import accepted_version, play_recorded

START = datetime.datetime(2026, 12, 1, 9, 0, tzinfo=datetime.UTC)


@pytest.fixture
def store(tmp_path: Path) -> LadderStore:
    return LadderStore(tmp_path / "ladder.sqlite")


def test_every_version_keeps_its_mu_and_sigma_after_each_game_with_when_it_ended(store: LadderStore) -> None:
    ann1 = accepted_version(store, "ann", "a" * 64)
    bob, cat = accepted_version(store, "bob", "b" * 64), accepted_version(store, "cat", "c" * 64)
    for i in range(3):
        play_recorded(store, [ann1, bob, cat], [1, 2, 3], START + datetime.timedelta(hours=i))
    ann2 = accepted_version(store, "ann", "d" * 64)  # ann1 retired from here
    play_recorded(store, [ann2, bob, cat], [3, 1, 2], START + datetime.timedelta(hours=5))

    first, second = rating_histories(store, "ann")
    assert (first.number, first.state, second.number, second.state) == (1, "retired", 2, "active")
    assert [s.finished for s in first.steps] == [(START + datetime.timedelta(hours=i)).isoformat() for i in range(3)]
    mus = [s.mu for s in first.steps]
    assert mus == sorted(mus) and mus[0] > 25  # first every time: it only rose
    sigmas = [s.sigma for s in first.steps]
    assert all(s is not None for s in sigmas) and sigmas == sorted(sigmas, reverse=True)  # and grew surer
    (only,) = second.steps
    version = store.version(ann2)
    assert (only.mu, only.sigma) == (version.mu, version.sigma)  # the row after its last game is the version's now
    assert only.mu < 25  # last in its only game


def test_matchups_are_counted_per_version_and_each_cell_s_games_are_exactly_those(store: LadderStore) -> None:
    ann1, bob, cat = (accepted_version(store, n, n[0] * 64) for n in ("ann", "bob", "cat"))
    dan = accepted_version(store, "dan", "d" * 64)
    play_recorded(store, [ann1, bob, cat], [1, 2, 3])
    play_recorded(store, [ann1, bob, dan], [3, 1, 2])
    ann2 = accepted_version(store, "ann", "e" * 64)
    with_bob = play_recorded(store, [ann2, bob, cat], [2, 3, 1])
    play_recorded(store, [bob, cat, dan], [1, 2, 3])  # not ann's

    cells = {(m.version, m.opponent): (m.games, m.ahead, m.behind) for m in version_matchups(store, "ann")}
    assert cells == {
        (2, "bob"): (1, 1, 0),
        (2, "cat"): (1, 0, 1),
        (1, "bob"): (2, 1, 1),
        (1, "cat"): (1, 1, 0),
        (1, "dan"): (1, 0, 1),
    }
    assert [m.version for m in version_matchups(store, "ann")] == [2, 2, 1, 1, 1]  # newest version first
    assert [g.id for g in store.games(entrant="ann", version_number=2, opponent="bob")] == [with_bob]
    assert len(store.games(entrant="ann", version_number=1, opponent="bob")) == 2
    assert len(store.games(entrant="ann", opponent="dan")) == 1
    assert len(store.games(entrant="ann")) == 3
    assert store.games(entrant="ann", version_number=7) == []

    view = entrant_view(store, "ann", owner=False)
    assert view is not None
    assert {(m.version, m.opponent) for m in view.version_matchups} == set(cells)
    assert [v.number for v in view.ratings] == [1, 2]


def test_a_store_made_before_sigma_was_kept_gets_the_column_and_its_old_games_no_band(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    store = LadderStore(path)
    ann, bob, cat = (accepted_version(store, n, n[0] * 64) for n in ("ann", "bob", "cat"))
    store.close()
    # The store as an older famiglia left it: no sigma_after column, and a game that famiglia recorded.
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE seat DROP COLUMN sigma_after")
    db.execute("INSERT INTO tables (seed, members) VALUES (1, '[]')")
    db.execute(
        "INSERT INTO game (table_id, seating, state, finished) VALUES (1, ?, 'done', ?)",
        (f"[{ann}, {bob}, {cat}]", START.isoformat()),
    )
    for seat, version in enumerate((ann, bob, cat)):
        db.execute("INSERT INTO seat VALUES (1, ?, ?, ?, 0, NULL, NULL, 26.0)", (seat, version, seat + 1))
    db.commit()
    db.close()

    reopened = LadderStore(path)
    play_recorded(reopened, [ann, bob, cat], [1, 2, 3], START + datetime.timedelta(hours=1))
    (history,) = rating_histories(reopened, "ann")
    assert (history.steps[0].mu, history.steps[0].sigma) == (26.0, None)
    assert history.steps[1].sigma is not None
