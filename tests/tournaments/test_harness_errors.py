"""No game can block a tournament: a hostile entrant costs its own seats, a harness bug one game.

A harness error (an unexpected exception while refereeing a game) is recorded
with its traceback, listed, left out of the ratings, not played again on
resume, and makes the run end with exit 1 and a count.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from referee.match.conversation import _Match
from tests.conftest import ROOT, TEST_BOTS
from tournaments.cli import app
from tournaments.config.tournament import load_tournament
from tournaments.lifecycle.plan import build_schedule
from tournaments.report.standings import game_rows, standings
from tournaments.runner import run_pending
from tournaments.store import Store

pytestmark = pytest.mark.slow

SAMPLES = ROOT / "sample_bots"
FAULTY_GAME = 3


def tournament_file(folder: Path, hostile: str | None = None) -> Path:
    """Three entrants at a 3-player Vendetta table (6 games), short games: two sample bots and one more."""
    third = f'"{TEST_BOTS / "hostile" / hostile}"' if hostile else f'"{TEST_BOTS / "passer"}"'
    entrants = [("greedy", f'"{SAMPLES / "greedy_py"}"'), ("random", f'"{SAMPLES / "random_py"}"'),
                ("third", third)]  # fmt: skip
    body = '[tournament]\nname = "t"\ngame = "vendetta"\ntable_size = 3\nseed = 5\n[tournament.variants]\nround_limit = "3"\n'
    body += "".join(f'\n[[entrant]]\nname = "{n}"\nbot = {b}\n' for n, b in entrants)
    path = folder / "t.toml"
    path.write_text(body)
    return path


async def play_all(toml: Path, db: Path, workers: int) -> tuple[Store, int]:
    config = load_tournament(toml)
    store = Store(db)
    store.begin(config, build_schedule(config))
    played = await run_pending(config, store, concurrency=4, workers=workers, on_result=lambda g, r: None)
    return store, played


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("bot", ["deep_nesting", "bad_utf8_action"])
async def test_a_hostile_entrant_costs_its_own_seats_and_every_game_is_recorded(
    tmp_path: Path, workers: int, bot: str
) -> None:
    store, played = await play_all(tournament_file(tmp_path, bot), tmp_path / "t.sqlite", workers)
    assert played == 6 and store.counts() == (6, 6) and store.harness_errors() == []
    hostile_seats = [s for game in store.finished() for s in game.seats if s.entrant == 2]
    assert len(hostile_seats) == 6
    assert all(s.termination == "protocol" for s in hostile_seats)
    others = [s for game in store.finished() for s in game.seats if s.entrant != 2]
    assert all(s.termination is None for s in others)


def break_game(monkeypatch: Any, game: int) -> None:
    """Make the referee raise an unexpected exception in one game (a harness bug)."""
    real = _Match.play_decision

    async def play_decision(self: _Match) -> bool:
        if self.spec.match.endswith(f"#{game}") and self.request_id > 5:
            raise RuntimeError("an injected harness bug")
        return await real(self)

    monkeypatch.setattr(_Match, "play_decision", play_decision)


def assert_one_harness_error(store: Store) -> None:
    assert store.counts() == (5, 6)
    [error] = store.harness_errors()
    assert error.game == FAULTY_GAME and error.error == "RuntimeError: an injected harness bug"
    assert "Traceback" in error.traceback and "play_decision" in error.traceback
    assert store.pending() == []
    assert FAULTY_GAME not in {game.game for game in store.finished()}
    assert standings(store).games == 5
    [row] = game_rows(store, termination="harness")
    assert row.game == FAULTY_GAME and row.ended_by == "harness error" and row.error == error.error
    assert [r.game for r in game_rows(store)] == list(range(6))


async def test_a_harness_bug_costs_one_game_recorded_as_such_and_resume_does_not_replay_it(
    tmp_path: Path, monkeypatch: Any
) -> None:
    break_game(monkeypatch, FAULTY_GAME)
    toml, db = tournament_file(tmp_path), tmp_path / "t.sqlite"
    store, played = await play_all(toml, db, workers=1)
    assert played == 5
    assert_one_harness_error(store)
    store, played = await play_all(toml, db, workers=1)
    assert played == 0


async def test_a_harness_bug_in_a_worker_process_costs_one_game(tmp_path: Path, monkeypatch: Any) -> None:
    # The workers are other processes: the fault is injected at their start-up.
    (tmp_path / "inject").mkdir()
    (tmp_path / "inject" / "sitecustomize.py").write_text(
        "import os\n"
        "if os.environ.get('FAMIGLIA_TEST_BREAK_GAME'):\n"
        "    from referee.match.conversation import _Match\n"
        "    real = _Match.play_decision\n"
        "    async def play_decision(self):\n"
        "        if self.spec.match.endswith('#' + os.environ['FAMIGLIA_TEST_BREAK_GAME']) and self.request_id > 5:\n"
        "            raise RuntimeError('an injected harness bug')\n"
        "        return await real(self)\n"
        "    _Match.play_decision = play_decision\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path / "inject"), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("FAMIGLIA_TEST_BREAK_GAME", str(FAULTY_GAME))
    store, played = await play_all(tournament_file(tmp_path), tmp_path / "t.sqlite", workers=2)
    assert played == 5
    assert_one_harness_error(store)


def test_the_run_ends_non_zero_and_says_how_many_games_hit_a_harness_error(tmp_path: Path, monkeypatch: Any) -> None:
    break_game(monkeypatch, FAULTY_GAME)
    toml, db = tournament_file(tmp_path), tmp_path / "t.sqlite"
    command = ["tournament", "run", str(toml), "--db", str(db), "--workers", "1"]
    for _ in range(2):  # the run, then a resume that plays nothing
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 1, result.output
        assert "1 game hit a harness error" in result.output and f"game {FAULTY_GAME};" in result.output
        assert "Traceback" not in result.output
    listing = CliRunner().invoke(app, ["games", "--db", str(db), "--termination", "harness"])
    assert listing.exit_code == 0 and "harness error" in listing.output and "injected harness bug" in listing.output
