"""Run a tournament: pending games -> an executor -> the store, resumably.

``run_tournament`` is the one call that plays a tournament (what the CLI
calls): it stores the schedule (or finds it, on a resume), plays what is left
with the chosen executor, stops a head-to-head test once it decides, and tells
``on_progress`` what happens. ``run_pending`` is its core: it reads the pending
games, hands them to the executor, and writes the outcomes in this process
alone (``tournaments.recorder``: those that arrive together in one transaction,
from a thread so the loop never waits on the disk).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import Literal

import msgspec
import trio

from referee.match import MatchRecord
from tournaments.config import TournamentConfig
from tournaments.executors.base import (
    Executor,
    GameDone,
    GameFailed,
    Outcome,
    TournamentWork,
    WorkerFailed,
    harness_failure,
)
from tournaments.executors.inprocess import InProcessExecutor
from tournaments.executors.processes import ProcessExecutor
from tournaments.fingerprint import settle_versions
from tournaments.grow import Opened, open_tournament
from tournaments.playing import play_scheduled, prepare_replays, replay_path, replays_folder, settings_for
from tournaments.recorder import Recorder
from tournaments.schedule import ScheduledGame
from tournaments.sprt import Sprt, pair_score
from tournaments.store import Store

__all__ = [
    "DaskUnavailable",
    "ExecutorChoiceError",
    "GameDone",
    "GameFailed",
    "RunStarted",
    "SequentialStop",
    "WorkerFailed",
    "default_workers",
    "executor_for",
    "harness_failure",
    "local_executor",
    "play_scheduled",
    "prepare_replays",
    "replay_path",
    "replays_folder",
    "run_pending",
    "run_tournament",
    "settings_for",
]

OnResult = Callable[[ScheduledGame, MatchRecord], None]
OnFailure = Callable[[GameFailed], None]
ShouldStop = Callable[[], bool]


class ExecutorChoiceError(ValueError):
    """An executor asked for in a way that cannot work (a Dask executor without a scheduler address)."""


class DaskUnavailable(ExecutorChoiceError):
    """The Dask executor was asked for but the dask packages are not installed."""


def default_workers() -> int:
    """One worker per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def local_executor(workers: int) -> Executor:
    """This machine's executor: in this process for one worker, else that many worker processes."""
    return InProcessExecutor() if workers <= 1 else ProcessExecutor(workers)


def executor_for(kind: str, *, workers: int, scheduler: str | None) -> Executor:
    """The executor named ``kind`` (local or dask); ExecutorChoiceError for a choice that cannot work."""
    if kind == "local":
        return local_executor(workers)
    if kind != "dask":
        raise ExecutorChoiceError(f"--executor {kind!r}: choose local or dask")
    if not scheduler:
        raise ExecutorChoiceError(
            "--executor dask needs the scheduler's address: --scheduler tcp://HOST:8786, "
            'or scheduler = "tcp://HOST:8786" in [tournament.executor]'
        )
    try:
        from tournaments.executors.dask import DaskExecutor
    except ImportError:
        raise DaskUnavailable(
            "the dask executor needs the dask packages; install them with: pip install 'famiglia[dask]'"
        ) from None
    executor = DaskExecutor(scheduler)
    executor.check_reachable()
    return executor


async def run_pending(
    config: TournamentConfig,
    store: Store,
    *,
    concurrency: int,
    workers: int = 1,
    on_result: OnResult,
    should_stop: ShouldStop = lambda: False,
    on_failure: OnFailure = lambda failure: None,
    executor: Executor | None = None,
    versions: Sequence[int] | None = None,
) -> int:
    """Play every game of the store's schedule that has no result yet; how many were played.

    ``executor`` plays them (default: ``local_executor(workers)``), with the
    seat source chosen here once: warm processes when the tournament reuses
    them, else a fresh process per game. ``should_stop`` is asked before each
    game is handed out (a sequential test that has decided); games already
    running finish and are recorded. A game that raised an unexpected
    exception is recorded as a harness error (``Store.record_harness_error``,
    then ``on_failure``) and the others go on; faults of the machine or the
    setup (a full disk, a sandbox missing) stop the run. An outcome for a game
    already taken in this run is ignored: every game is recorded once.
    ``on_result`` and ``on_failure`` hear of an outcome once it is committed.
    ``versions``: each entrant's bot version (``tournaments.fingerprint``),
    recorded with every seat it plays.
    """
    pending = store.pending()
    if not pending or should_stop():
        return 0
    tournament = store.tournament_id()
    prepare_replays(config, tournament, pending)
    work = TournamentWork(
        config=config,
        bots=[entrant.bot for entrant in config.entrants],
        settings=settings_for(config),
        tournament=tournament,
        concurrency=max(1, concurrency),
        warm=config.executor.reuse_processes,
    )
    chosen = executor if executor is not None else local_executor(workers)
    played = 0

    def recorded(outcome: Outcome) -> None:
        nonlocal played
        if isinstance(outcome, GameDone):
            played += 1
            on_result(outcome.game, outcome.record)
        else:
            on_failure(outcome)

    recorder = Recorder(store, recorded, versions)
    games_in, games_out = trio.open_memory_channel[ScheduledGame](0)

    async def feed() -> None:
        async with games_in:
            for game in pending:
                if should_stop():
                    break
                try:
                    await games_in.send(game)
                except trio.BrokenResourceError:  # the executor stopped taking games
                    break

    async with trio.open_nursery() as writing:
        writing.start_soon(recorder.run)
        try:
            async with trio.open_nursery() as playing:
                playing.start_soon(feed)
                await chosen.run(work, games_out, recorder.submit)
        finally:
            recorder.close()
    return played


class SequentialStop:
    """For a head-to-head: feed finished pairs to the SPRT in order; stop once it decides.

    Lives with the runner, not the CLI, so every executor stops the same way.
    """

    def __init__(self, config: TournamentConfig, store: Store) -> None:
        # Here, not at the top: tournaments.reports brings the ratings fit (numpy,
        # scipy), which a run refused before it plays (a store another run holds,
        # a file with mistakes) should not wait for.
        from tournaments.reports import head_to_head_test

        found = head_to_head_test(store)
        self.test: Sprt | None = found[0] if found is not None else None
        self.next_pair = found[1] if found is not None else 0
        names = [e.name for e in config.entrants]
        self.heroes = (names.index(config.format.a or names[0]), names.index(config.format.b or names[0]))
        self.ranks: dict[int, int] = {}  # game index -> rank of the entrant under test

    def should_stop(self) -> bool:
        return self.test is not None and self.test.decision() != "continue"

    def feed(self, game: ScheduledGame, record: MatchRecord) -> None:
        if self.test is None:
            return
        hero = self.heroes[game.index % 2]
        self.ranks[game.index] = record.result.ranks[game.seating.index(hero)]
        # Results arrive out of order under concurrency; the test reads pairs in order.
        while 2 * self.next_pair in self.ranks and 2 * self.next_pair + 1 in self.ranks:
            first, second = self.ranks.pop(2 * self.next_pair), self.ranks.pop(2 * self.next_pair + 1)
            self.test.update(pair_score(first, second))
            self.next_pair += 1


class RunStarted(msgspec.Struct, frozen=True, kw_only=True):
    """The first progress event of a run: begun, resumed or grown, and how much is already recorded."""

    how: Literal["begun", "resumed", "grown"]
    new_entrants: list[str] = []
    """Entrants a grown tournament gained."""
    new_games: int = 0
    """Games a grown tournament gained."""
    done: int
    """Games with a result."""
    errors: int
    """Games recorded as harness errors (not played again)."""
    total: int


Progress = RunStarted | GameDone | GameFailed
OnProgress = Callable[[Progress], None]


def run_tournament(
    config: TournamentConfig,
    store: Store,
    on_progress: OnProgress = lambda event: None,
    *,
    executor: Executor | None = None,
    concurrency: int | None = None,
    workers: int | None = None,
    opened: Opened | None = None,
    versions: Sequence[int] | None = None,
    new_versions: Collection[str] = (),
) -> int:
    """Play a tournament in ``store`` to its end (new, resumed or grown); how many games this run played.

    Stores the schedule (dealt with the store's key) unless it is there,
    then plays the pending games with ``executor`` (default: this machine's,
    with ``workers`` processes, default the file's or one per core). A
    head-to-head test stops handing out games once its sequential test
    decides. ``on_progress`` hears ``RunStarted`` once, then each outcome as
    it is recorded. Each entrant's bot is fingerprinted before a game is
    played (``tournaments.fingerprint.settle_versions``, with ``new_versions``),
    unless the caller did that and gives ``versions``: a bot changed since its
    entrant's recorded games is refused (BotChanged) unless named in
    ``new_versions``. Raises StoreError/ValueError for what the caller must fix,
    WorkerFailed when the executor cannot go on (resumable), and lets Ctrl-C
    through after the games already finished are recorded.
    """
    # Begin, resume or grow the store (tournaments.grow); ``opened`` when the
    # caller did that already. Its config has the entrants in the store's order.
    opened = opened if opened is not None else open_tournament(store, config)
    config = opened.config
    if versions is None:
        versions = settle_versions(store, config, new_versions)
    done, total = store.counts()
    errors = len(store.harness_errors())
    on_progress(
        RunStarted(how=opened.how, new_entrants=opened.new_entrants, new_games=opened.new_games, done=done,
                   errors=errors, total=total)
    )  # fmt: skip
    workers = workers if workers is not None else (config.executor.workers or default_workers())
    concurrency = concurrency if concurrency is not None else max(config.executor.concurrency, workers)
    sequential = SequentialStop(config, store)

    def on_result(game: ScheduledGame, record: MatchRecord) -> None:
        sequential.feed(game, record)
        on_progress(GameDone(game=game, record=record))

    return trio.run(
        partial(
            run_pending,
            config,
            store,
            concurrency=concurrency,
            workers=workers,
            on_result=on_result,
            should_stop=sequential.should_stop,
            on_failure=on_progress,
            executor=executor if executor is not None else local_executor(workers),
            versions=versions,
        )
    )
