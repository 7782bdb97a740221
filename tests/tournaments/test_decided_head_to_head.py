"""A head-to-head whose test has decided reads as decided in every command, not as a tournament left unfinished.

The store is filled with made-up results (A last in every game of its own, B
first in every twin), so the test decides after a few pairs without a bot
being started; then the commands are run through famiglia's entry point.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from protocol.messages import Result
from referee.match import MatchRecord, SeatTiming
from tests.conftest import TEST_BOTS
from tournaments.cli import app
from tournaments.config.tournament import parse_tournament
from tournaments.hosting.schedule import ScheduledGame
from tournaments.hosting.sprt import Sprt, elo_estimate_words
from tournaments.lifecycle.opening import open_tournament
from tournaments.report.standings import head_to_head_status
from tournaments.store import Store

runner = CliRunner()
PASSER = str(TEST_BOTS / "passer")
BODY = (
    '[tournament]\nname = "duel"\ngame = "vendetta"\nformat = "head-to-head"\na = "p0"\nb = "p1"\n'
    "table_size = 3\nmax_games = 396\nseed = 4\n"
)


def _record(game: ScheduledGame) -> MatchRecord:
    """A's games rank A last; B's twins rank B first: A loses every pair."""
    seats = len(game.seating)
    order = sorted(range(seats), key=lambda seat: (game.seating[seat] != 1, game.seating[seat] == 0, seat))
    ranks = [0] * seats
    for place, seat in enumerate(order, start=1):
        ranks[seat] = place
    return MatchRecord(
        match=f"m{game.index}", game="vendetta", seed=game.seed, variants={}, names=[f"p{e}" for e in game.seating],
        result=Result(ranks=ranks, scores=[0] * seats, winners=[order[0]], forfeited=[], ended_by="round_limit"),
        timings=[SeatTiming(decisions=1, total_ms=1.0, max_ms=1.0, bank_left_ms=0.0)] * seats, seconds=0.01,
    )  # fmt: skip


@pytest.fixture
def decided(tmp_path: Path) -> tuple[Path, Path]:
    """A tournament file and its store, where the test decided "not stronger" after 8 pairs of 198 scheduled."""
    file = tmp_path / "duel.toml"
    bots = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(4))
    file.write_text(BODY + bots)
    config = parse_tournament(tomllib.loads(file.read_text()), base=tmp_path)
    db = tmp_path / "duel.sqlite"
    store = Store(db)
    open_tournament(store, config)
    for game in store.schedule():
        status = head_to_head_status(store)
        assert status is not None
        if status.finished:
            break
        store.record(game, _record(game))
    status = head_to_head_status(store)
    assert status is not None and status.decision == "not stronger" and status.pairs == 8
    store.close()
    return file, db


def test_standings_say_decided_and_ask_for_no_more_games(decided: tuple[Path, Path]) -> None:
    _, db = decided
    result = runner.invoke(app, ["standings", "--db", str(db)])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "16 games; decided: p0 not stronger than p1, the other 380 scheduled games not needed" in out
    assert " of 396" not in out and " of 198" not in out  # nor any entrant as behind
    assert "games_per_entrant" not in out and "has decided, so it plays no more games" in out
    assert "head-to-head: decided: p0 not stronger than p1 after 8 pairs" in out and "no games left to play" in out
    assert "-2400" not in out and "no lower bound" in out


def test_the_game_list_says_the_test_decided(decided: tuple[Path, Path]) -> None:
    _, db = decided
    result = runner.invoke(app, ["games", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "head-to-head: decided: p0 not stronger than p1" in " ".join(result.output.split())


def test_a_rerun_says_decided_and_plays_nothing(decided: tuple[Path, Path]) -> None:
    file, db = decided
    result = runner.invoke(app, ["tournament", "run", str(file), "--db", str(db), "--workers", "1"])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "'duel': 16 games; decided: p0 not stronger than p1" in out and "nothing left to play" in out
    assert "resuming" not in out and "games/s" not in out


def test_the_html_report_says_decided_without_a_clamped_interval(decided: tuple[Path, Path], tmp_path: Path) -> None:
    _, db = decided
    page = tmp_path / "duel.html"
    result = runner.invoke(app, ["report", "--db", str(db), "--out", str(page)])
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert "16 games; decided: p0 not stronger than p1" in text
    assert "-2400" not in text and "no lower bound" in text


def test_an_interval_the_pairs_cannot_bound_is_said_open_not_clamped() -> None:
    test = Sprt(0, 50)
    for _ in range(13):
        test.update(0.0)
    status = test.status()
    assert status.elo == status.elo_lower == -math.inf and math.isfinite(status.elo_upper)
    assert elo_estimate_words(status, "greedy").startswith("greedy lost every pair (at most ")


def test_a_budget_between_whole_deals_runs_out_where_the_schedule_ends(tmp_path: Path) -> None:
    # 40 games at tables of 3 schedule 3 deals of 12 games: 18 pairs, so the test stops there, not at 20.
    file = tmp_path / "budget.toml"
    bots = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(4))
    file.write_text(BODY.replace("max_games = 396", "max_games = 40") + bots)
    config = parse_tournament(tomllib.loads(file.read_text()), base=tmp_path)
    store = Store(tmp_path / "budget.sqlite")
    open_tournament(store, config)
    for game in store.schedule():
        # Every pair drawn: the test never decides.
        store.record(game, _record(game) if game.index % 2 else _record_b_first(game))
    status = head_to_head_status(store)
    assert status is not None and status.pairs == 18 and status.exhausted and status.finished


def _record_b_first(game: ScheduledGame) -> MatchRecord:
    """A's game with A first: paired with B first in the twin, the pair is a draw."""
    record = _record(game)
    seat_a = game.seating.index(0)
    ranks = [1 if seat == seat_a else rank + (rank < record.result.ranks[seat_a]) for seat, rank in
             enumerate(record.result.ranks)]  # fmt: skip
    return MatchRecord(
        match=record.match, game=record.game, seed=record.seed, variants={}, names=record.names,
        result=Result(ranks=ranks, scores=record.result.scores, winners=[seat_a], forfeited=[],
                      ended_by="round_limit"),
        timings=record.timings, seconds=record.seconds,
    )  # fmt: skip
