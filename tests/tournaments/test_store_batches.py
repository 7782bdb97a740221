"""Results written in groups (issue 30): one transaction for the games that arrive together, crash-safe.

The executors here are stand-ins whose games are finished the moment they are
handed out, so what is tested is the store's side: every reported game
recorded once, what a SIGKILL leaves, what a resume plays.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
import trio

from referee.match import MatchRecord
from tests.conftest import ROOT, TEST_BOTS
from tests.tournaments.store_feeder import Instant, finished
from tournaments.config.tournament import TournamentConfig, parse_tournament
from tournaments.hosting.schedule import ScheduledGame
from tournaments.lifecycle.plan import build_schedule
from tournaments.runner import GameDone, GameFailed, StoreWriter, WorkerFailed, run_pending
from tournaments.store import Store, StoreError


def config_of(repetitions: int) -> TournamentConfig:
    """Four passers at 4-player Vendetta tables: 4 games per repetition (the bots are never started here)."""
    data = {
        "tournament": {"name": "batches", "game": "vendetta", "table_size": 4, "repetitions": repetitions, "seed": 5},
        "entrant": [{"name": f"p{i}", "bot": str(TEST_BOTS / "passer")} for i in range(4)],
    }
    return parse_tournament(data, base=ROOT, source="test")


def new_store(path: Path, config: TournamentConfig) -> Store:
    store = Store(path)
    store.begin(config, build_schedule(config, store.deal_key() or b""))
    return store


def recorded_games(db: Path) -> list[int]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return [row[0] for row in connection.execute("SELECT game FROM result ORDER BY game")]


async def test_outcomes_waiting_together_are_committed_in_one_transaction(tmp_path: Path) -> None:
    store = new_store(tmp_path / "t.sqlite", config_of(10))
    batches: list[int] = []
    write = store.record_batch

    def counted(
        done: Sequence[tuple[ScheduledGame, MatchRecord]],
        failed: Sequence[tuple[ScheduledGame, str, str]],
        versions: Sequence[int] | None = None,
    ) -> None:
        batches.append(len(done) + len(failed))
        write(done, failed, versions)

    store.record_batch = counted  # type: ignore[method-assign]
    heard: list[int] = []
    writer = StoreWriter(store, lambda outcome: heard.append(outcome.game.index))
    games = store.schedule()
    for game in games[:-1]:
        await writer.submit(GameDone(game=game, record=finished(game)))
    await writer.submit(GameFailed(game=games[-1], error="KeyError: 3", traceback="..."))
    writer.close()
    await writer.run()
    assert batches == [40], "forty outcomes already waiting are one transaction"
    assert heard == list(range(40)), "each outcome is announced once, after its commit, in order"
    assert recorded_games(store.path) == list(range(39))
    assert [error.game for error in store.harness_errors()] == [39]


async def test_a_game_reported_twice_in_a_run_is_recorded_once(tmp_path: Path) -> None:
    store = new_store(tmp_path / "t.sqlite", config_of(1))
    heard: list[int] = []
    writer = StoreWriter(store, lambda outcome: heard.append(outcome.game.index))
    game = store.schedule()[2]
    await writer.submit(GameDone(game=game, record=finished(game)))
    await writer.submit(GameDone(game=game, record=finished(game)))  # a retried game that came back twice
    writer.close()
    await writer.run()
    assert heard == [2] and recorded_games(store.path) == [2]


def test_a_batch_holding_a_recorded_game_writes_none_of_its_games(tmp_path: Path) -> None:
    store = new_store(tmp_path / "t.sqlite", config_of(2))
    games = store.schedule()
    store.record(games[3], finished(games[3]))
    with pytest.raises(StoreError, match=r"one of games 1, 2, 3 is already recorded in .*t\.sqlite$"):
        store.record_batch([(game, finished(game)) for game in games[1:4]], [])
    assert recorded_games(store.path) == [3]
    with pytest.raises(StoreError, match=r"^game 3 is already recorded in "):
        store.record(games[3], finished(games[3]))


async def test_a_run_stopped_by_a_failed_worker_keeps_every_game_reported_before(tmp_path: Path) -> None:
    store = new_store(tmp_path / "t.sqlite", config_of(10))
    executor = Instant(fail_after=25)
    with pytest.raises(ExceptionGroup) as stopped:  # as from a real executor: out of Trio's nurseries
        await run_pending(config_of(10), store, concurrency=4, on_result=lambda g, r: None, executor=executor)
    assert stopped.value.split(WorkerFailed)[1] is None, "the worker's failure, and nothing else, stops the run"
    assert recorded_games(store.path) == executor.handed == list(range(25))
    again = Instant()
    played = await run_pending(config_of(10), store, concurrency=4, on_result=lambda g, r: None, executor=again)
    assert played == 15 and again.handed == list(range(25, 40))


# The child feeds the store at full speed and prints each game once its commit is
# announced (on_result), padded so the pipe holds few lines: a child whose reader
# stops stops too, so the kill lands mid-run however loaded the machine is. It
# imports no pytest (seconds on a busy machine) and reads its tournament from the store.
_FEEDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import trio

    from tests.tournaments.store_feeder import Instant
    from tournaments.runner import run_pending
    from tournaments.store import Store

    def announce(game, record):
        sys.stdout.write(f"{game.index:<255}\\n")
        sys.stdout.flush()

    store = Store(Path(sys.argv[1]))
    trio.run(lambda: run_pending(store.config(), store, concurrency=16, on_result=announce, executor=Instant()))
    """
)


def test_a_store_fed_at_full_speed_and_killed_loses_no_committed_game_and_resume_plays_the_rest(
    tmp_path: Path,
) -> None:
    repetitions = 500  # 2,000 games: the child is at most 300 + a pipe's 256 lines ahead when killed
    config = config_of(repetitions)
    db = tmp_path / "t.sqlite"
    new_store(db, config).close()
    child = subprocess.Popen(
        [sys.executable, "-c", _FEEDER, str(db)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None
    announced: list[int] = []
    for line in child.stdout:
        announced.append(int(line))
        if len(announced) == 300:
            break
    os.kill(child.pid, signal.SIGKILL)
    announced += [int(line) for line in child.stdout]  # what it announced before the kill, still in the pipe
    child.wait()
    assert child.returncode == -signal.SIGKILL, child.stderr.read() if child.stderr else ""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        seats = connection.execute("SELECT COUNT(*) FROM seat").fetchone()[0]
    before = recorded_games(db)
    assert 300 <= len(before) < 4 * repetitions, "the kill should land mid-run"
    assert set(announced) <= set(before), "a game announced as committed was lost"
    assert seats == 4 * len(before), "every recorded game has all its seats, and no seat of a game not recorded"

    store = Store(db)
    resume = Instant()
    played = trio.run(lambda: run_pending(config, store, concurrency=16, on_result=lambda g, r: None, executor=resume))
    assert sorted(resume.handed) == sorted(set(range(4 * repetitions)) - set(before)), "exactly the rest is played"
    assert played == len(resume.handed)
    assert recorded_games(db) == list(range(4 * repetitions)), "every game recorded once"
    store.close()
