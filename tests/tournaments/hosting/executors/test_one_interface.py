"""One executor interface: a game handed as (spec, seats, replay), its record back, on any executor.

The local executors played for real with the test bots (the Dask executor's
own tests are test_dask_*.py), and the runner against stand-ins that count
what it hands out.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import msgspec
import pytest
import trio
import trio.testing

from referee.bots import BotSpec, load_bot
from referee.match import MatchRecord, MatchSpec
from referee.settings import RefereeSettings
from tests.conftest import TEST_BOTS, workers_of
from tests.tournaments.store_feeder import Instant
from tests.tournaments.test_store_batches import config_of, new_store
from tournaments.hosting.executors.base import Competition, Executor, Seat
from tournaments.hosting.executors.inprocess import InProcessExecutor
from tournaments.hosting.executors.processes import ProcessExecutor
from tournaments.hosting.faults import NotPlayed, RefereeFailed
from tournaments.runner import WorkerFailed, run_pending

COMPETITION = Competition(name="famiglia-test", settings=RefereeSettings(), warm=True)
SPEC = MatchSpec(game="vendetta", seed=11, variants={"round_limit": "2"}, match="t#0")


def passers(*names: str) -> list[Seat]:
    bot = load_bot(str(TEST_BOTS / "passer"))
    return [Seat(bot=msgspec.structs.replace(bot, name=name)) for name in names]


async def play_once(executor: Executor, seats: list[Seat], replay: Path | None) -> MatchRecord:
    async with executor.open(COMPETITION):
        await executor.ready()
        return await executor.play(SPEC, seats, replay)


@pytest.mark.parametrize("make", [InProcessExecutor, lambda: ProcessExecutor(1)], ids=["in-process", "processes"])
async def test_each_local_executor_plays_a_handed_game_writes_its_replay_and_names_each_seat_its_own(
    tmp_path: Path, make: object
) -> None:
    # Three entrants of one bot: built once, each seat under its entrant's own name.
    replay = tmp_path / "replays" / "game-000000.jsonl"
    record = await play_once(make(), passers("ann", "bob", "cat"), replay)  # type: ignore[operator]
    assert record.names == ["ann", "bob", "cat"] and record.match == "t#0" and record.seed == 11
    assert record.replay == str(replay) and replay.is_file()
    assert record.result.forfeited == []


async def test_the_in_process_and_the_worker_process_executors_give_one_game_the_same_result(tmp_path: Path) -> None:
    seats = passers("ann", "bob", "cat")
    here = await play_once(InProcessExecutor(), seats, None)
    there = await play_once(ProcessExecutor(1), seats, None)
    assert here.result == there.result and here.names == there.names and here.replay is there.replay is None


async def test_a_worker_process_killed_mid_game_leaves_that_game_and_every_later_one_not_played(
    tmp_path: Path,
) -> None:
    dawdler = BotSpec(
        name="dawdler", command=[sys.executable, str(TEST_BOTS / "hostile" / "dawdler" / "bot.py"), "20"],
        cwd=str(tmp_path),
    )  # fmt: skip
    executor = ProcessExecutor(1)
    outcome: list[BaseException] = []

    async def play() -> None:
        try:
            await executor.play(SPEC, [Seat(bot=dawdler), *passers("bob", "cat")], None)
        except NotPlayed as exc:
            outcome.append(exc)

    async with executor.open(COMPETITION):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play)
            with trio.fail_after(240):  # the worker is up and its game's bots are starting (the dawdler waits 20 s)
                while not (workers := workers_of(os.getpid())) or not _children(workers[0]):
                    await trio.sleep(0.05)
            os.kill(workers[0], signal.SIGKILL)
        [lost] = outcome
        assert str(lost) == "a worker process was killed by SIGKILL with 1 games unfinished"
        with pytest.raises(NotPlayed, match="^a worker process was killed by SIGKILL"):
            await executor.play(SPEC, passers("ann", "bob", "cat"), None)
    async with executor.open(COMPETITION):  # a new block starts new workers: the run that stopped can resume
        record = await executor.play(SPEC, passers("ann", "bob", "cat"), None)
    assert record.result.forfeited == []


async def test_a_worker_process_that_dies_between_games_is_named_by_the_next_game() -> None:
    executor = ProcessExecutor(1)
    async with executor.open(COMPETITION):
        with trio.fail_after(240):
            while not (workers := workers_of(os.getpid())):
                await trio.sleep(0.05)
        os.kill(workers[0], signal.SIGKILL)
        with trio.fail_after(240):  # the host reaped it: it knows how it ended
            while workers_of(os.getpid()):
                await trio.sleep(0.05)
            await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(NotPlayed, match="^a worker process was killed by SIGKILL$"):
            await executor.play(SPEC, passers("ann", "bob", "cat"), None)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                found.append(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


# --- the runner against stand-ins ----------------------------------------------------------


class Counting:
    """A stand-in with ``slots`` games at once: it counts how many it holds at a time, and fails one game
    the way a worker would (``RefereeFailed``) if asked."""

    def __init__(self, slots: int, failing: int | None = None) -> None:
        self.slots = trio.CapacityLimiter(slots)
        self.failing = failing
        self.at_once = 0
        self.most = 0
        self.opened: list[str] = []

    @asynccontextmanager
    async def open(self, competition: Competition) -> AsyncIterator[None]:
        self.opened.append(competition.name)
        yield

    async def ready(self) -> None:
        return

    async def play(self, spec: MatchSpec, seats: Sequence[Seat], replay: Path | None) -> MatchRecord:
        self.at_once += 1
        self.most = max(self.most, self.at_once)
        try:
            await trio.sleep(0.01)
            if spec.match.endswith(f"#{self.failing}"):
                raise RefereeFailed("KeyError: 'seat' on a Dask worker", "Traceback (most recent call last): ...")
            return await Instant().play(spec, seats, replay)
        finally:
            self.at_once -= 1

    def keep(self, archives: Collection[Path]) -> None:
        return


async def test_the_runner_hands_an_executor_as_many_games_at_once_as_it_has_slots_and_gets_every_slot_back(
    tmp_path: Path,
) -> None:
    store = new_store(tmp_path / "t.sqlite", config_of(10))
    executor = Counting(slots=7, failing=5)
    played = await run_pending(config_of(10), store, concurrency=2, on_result=lambda g, r: None, executor=executor)
    assert executor.most == 7, "the executor's slots, not the runner's concurrency, say how many at once"
    assert executor.slots.borrowed_tokens == 0
    assert executor.opened == [f"famiglia-{store.tournament_id()}"]
    assert played == 39 and store.counts() == (39, 40)
    [error] = store.harness_errors()
    assert error.game == 5 and error.error == "KeyError: 'seat' on a Dask worker" and "Traceback" in error.traceback


async def test_a_game_the_executor_cannot_play_stops_the_run_with_its_line_and_gives_every_slot_back(
    tmp_path: Path,
) -> None:
    store = new_store(tmp_path / "t.sqlite", config_of(3))
    executor = Instant(fail_after=5)
    with pytest.raises(ExceptionGroup) as stopped:
        await run_pending(config_of(3), store, concurrency=1, on_result=lambda g, r: None, executor=executor)
    failed, rest = stopped.value.split(WorkerFailed)
    assert rest is None and failed is not None
    assert [str(e) for e in failed.exceptions] == ["a worker process was killed by signal 9"]
    assert executor.slots.borrowed_tokens == 0 and len(store.pending()) == 7


async def test_a_worker_that_cannot_write_a_replay_stops_the_run_with_its_words_and_no_traceback(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # A folder where the replay's folder should be (a full disk gives the same fault, later): the fault of
    # the machine ends the worker, and the run stops with the worker's own line, not "exited with code 1"
    # after a traceback on the terminal.
    (tmp_path / "replays").write_text("a file, not a folder")
    with pytest.RaisesGroup(NotPlayed, flatten_subgroups=True) as stopped:  # through the executor's nursery
        await play_once(ProcessExecutor(1), passers("ann", "bob", "cat"), tmp_path / "replays" / "game-000000.jsonl")
    (lost,) = stopped.value.exceptions
    assert "cannot write replay" in str(lost) and "exited with code" not in str(lost), lost
    assert "Traceback" not in capfd.readouterr().err
