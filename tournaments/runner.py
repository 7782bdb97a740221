"""Run a tournament: pending games -> an executor -> the store, resumably.

``run_tournament`` is the one call that plays a tournament (what the CLI
calls): it stores the schedule (or finds it, on a resume), plays what is left
with the chosen executor, stops a head-to-head test once it decides, and tells
``on_progress`` what happens. ``run_pending`` is its core: it reads the pending
games, hands each to the executor (``tournaments.hosting.executors``: one
``play`` per game, as many at once as the executor has ``slots``), and writes
the outcomes in this process alone, through its ``StoreWriter``.

The writer writes a run's outcomes to its store in groups, from a thread, as
fast as they come. One transaction per game made the store the ceiling of a
machine of fast bots: each commit and each hand-over to a writer thread costs
more than the rows of a game. ``StoreWriter`` takes outcomes on a bounded queue
and one writer task writes every outcome waiting when it is free in one
transaction (``Store.record_batch``), so the slower the disk, the larger the
groups.

What a crash costs: a game's slot is given back once its outcome is queued,
not once it is committed. A run killed with outcomes still queued leaves those
games without a result row, and the next run plays them again; a committed
game is never played again (``Store.pending``). Ending on an error of its own
(a failed worker, Ctrl-C) the run first commits what is queued: those games
are finished and need not be played again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import Literal

import msgspec
import trio

from referee.match import MatchRecord
from tournaments.config.tournament import TournamentConfig
from tournaments.hosting.executors.base import Competition, Executor, Seat
from tournaments.hosting.executors.choice import local_executor
from tournaments.hosting.faults import NotPlayed, RefereeFailed
from tournaments.hosting.schedule import ScheduledGame
from tournaments.hosting.sprt import Sprt, pair_score
from tournaments.lifecycle.opening import Opened, open_tournament
from tournaments.lifecycle.versions import pinned_bots, settle_versions
from tournaments.outcomes import GameDone, GameFailed, GameOutcome, harness_failure
from tournaments.playing import game_spec, prepare_replays, replay_path, settings_for
from tournaments.store import Store

__all__ = [
    "QUEUE",
    "GameDone",
    "GameFailed",
    "RunStarted",
    "SequentialStop",
    "StoreWriter",
    "WorkerFailed",
    "run_pending",
    "run_tournament",
]

OnResult = Callable[[ScheduledGame, MatchRecord], None]
OnFailure = Callable[[GameFailed], None]
ShouldStop = Callable[[], bool]


class WorkerFailed(RuntimeError):
    """The executor cannot go on (a worker process died, a cluster was lost); the run stops, resumable."""


QUEUE = 1024
"""Outcomes waiting to be written before a game's slot waits too: the back pressure on a slow disk.

Also the most one transaction writes; a run killed loses at most this many
finished games more than with a commit per game (they are played again).
"""


class StoreWriter:
    """The only writer of a run's results: ``submit`` outcomes, ``run`` writes them; every game at most once."""

    def __init__(
        self, store: Store, on_recorded: Callable[[GameOutcome], None], versions: Sequence[int] | None = None
    ) -> None:
        self.store = store
        self.on_recorded = on_recorded
        # Each entrant's bot version in this run (tournaments.lifecycle.versions), written with each of its seats.
        self.versions = versions
        self._in, self._out = trio.open_memory_channel[GameOutcome](QUEUE)
        self._accepted: set[int] = set()
        self._failed = False

    async def submit(self, outcome: GameOutcome) -> None:
        """Queue a game's ``outcome``; waits while the queue is full.

        A second outcome for a game this run has taken already is dropped (a
        game retried after its worker was lost may come back twice).
        """
        if outcome.game.index in self._accepted:
            return
        self._accepted.add(outcome.game.index)
        await self._in.send(outcome)

    def close(self) -> None:
        """No more outcomes: ``run`` returns once it has written the queued ones."""
        self._in.close()

    async def run(self) -> None:
        """Write queued outcomes, grouped, until ``close``; if cancelled, write what is queued first."""
        try:
            async for first in self._out:
                await self._write([first, *self._waiting()])
        finally:
            try:
                rest = self._waiting()
                if rest and not self._failed:
                    with trio.CancelScope(shield=True):
                        await self._write(rest)
            finally:
                self._out.close()

    def _waiting(self) -> list[GameOutcome]:
        batch: list[GameOutcome] = []
        while len(batch) < QUEUE:
            try:
                batch.append(self._out.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                break
        return batch

    async def _write(self, batch: list[GameOutcome]) -> None:
        done: list[tuple[ScheduledGame, MatchRecord]] = []
        failed: list[tuple[ScheduledGame, str, str]] = []
        for outcome in batch:
            if isinstance(outcome, GameDone):
                done.append((outcome.game, outcome.record))
            else:
                failed.append((outcome.game, outcome.error, outcome.traceback))
        try:
            # Shielded: a write begun is finished, so a cancel never leaves a game
            # committed but unannounced.
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self.store.record_batch, done, failed, self.versions)
        except BaseException:
            self._failed = True  # the store cannot be written: nothing more is tried
            raise
        for outcome in batch:
            self.on_recorded(outcome)


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

    ``executor`` plays them (default: ``local_executor(concurrency, workers)``),
    with the seat source chosen here once: warm processes when the tournament
    reuses them, else a fresh process per game. ``should_stop`` is asked before
    each game is handed out (a sequential test that has decided); games already
    running finish and are recorded. A game that raised an unexpected exception
    is recorded as a harness error (``Store.record_harness_error``, then
    ``on_failure``) and the others go on; faults of the machine or the setup (a
    full disk, a sandbox missing) stop the run, and so does a game the executor
    could not play (``WorkerFailed``). An outcome for a game already taken in
    this run is ignored: every game is recorded once. ``on_result`` and
    ``on_failure`` hear of an outcome once it is committed. ``versions``: each
    entrant's bot version (``tournaments.lifecycle.versions``), recorded with
    every seat it plays.
    """
    pending = store.pending()
    if not pending or should_stop():
        return 0
    tournament = store.tournament_id()
    prepare_replays(config, tournament, pending)
    bots = [entrant.bot for entrant in config.entrants] if versions is None else pinned_bots(store, config, versions)
    seats = [Seat(bot=bot) for bot in bots]
    competition = Competition(
        name=f"famiglia-{tournament}", settings=settings_for(config), warm=config.executor.reuse_processes
    )
    chosen = executor if executor is not None else local_executor(max(1, concurrency), workers)
    played = 0

    def recorded(outcome: GameOutcome) -> None:
        nonlocal played
        if isinstance(outcome, GameDone):
            played += 1
            on_result(outcome.game, outcome.record)
        else:
            on_failure(outcome)

    writer = StoreWriter(store, recorded, versions)
    stopped: list[WorkerFailed] = []

    async def play(game: ScheduledGame, playing: trio.CancelScope) -> None:
        try:
            table = [seats[entrant] for entrant in game.seating]
            try:
                outcome = await _outcome(chosen, config, tournament, table, game)
            except NotPlayed as exc:
                stopped.append(WorkerFailed(str(exc)))
                playing.cancel()  # the first game the executor could not play stops the run
                return
            await writer.submit(outcome)
        finally:
            chosen.slots.release_on_behalf_of(game)

    async with trio.open_nursery() as writing:
        writing.start_soon(writer.run)
        try:
            async with chosen.open(competition):
                try:
                    await chosen.ready()
                except NotPlayed as exc:
                    raise WorkerFailed(str(exc)) from None
                async with trio.open_nursery() as playing:
                    for game in pending:
                        # A slot first: a decided test stops handing out games, and only as many wait as can play.
                        await chosen.slots.acquire_on_behalf_of(game)
                        if should_stop() or stopped:
                            chosen.slots.release_on_behalf_of(game)
                            break
                        playing.start_soon(play, game, playing.cancel_scope)
            if stopped:
                raise stopped[0]
        finally:
            writer.close()
    return played


async def _outcome(
    executor: Executor, config: TournamentConfig, tournament: str, seats: list[Seat], game: ScheduledGame
) -> GameOutcome:
    """What ``game`` came to, as ``executor`` played it (NotPlayed and a fault that stops the run go on)."""
    spec = game_spec(config, tournament, game)
    try:
        record = await executor.play(spec, seats, replay_path(config, tournament, game))
    except RefereeFailed as failed:  # the harness failed it where it was refereed: its words, as they are
        return GameFailed(game=game, error=failed.error, traceback=failed.traceback)
    except NotPlayed:
        raise
    except Exception as exc:
        # A harness bug costs this game only; a fault of the machine stops the run.
        if (failure := harness_failure(game, exc)) is None:
            raise
        return failure
    return GameDone(game=game, record=record)


class SequentialStop:
    """For a head-to-head: feed finished pairs to the SPRT in order; stop once it decides.

    Lives with the runner, not the CLI, so every executor stops the same way.
    """

    def __init__(self, config: TournamentConfig, store: Store) -> None:
        # Here, not at the top: tournaments.report.standings brings the ratings fit (numpy,
        # scipy), which a run refused before it plays (a store another run holds,
        # a file with mistakes) should not wait for.
        from tournaments.report.standings import head_to_head_test

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
    played (``tournaments.lifecycle.versions.settle_versions``, with ``new_versions``),
    unless the caller did that and gives ``versions``: a bot changed since its
    entrant's recorded games is refused (BotChanged) unless named in
    ``new_versions``. Raises StoreError/ValueError for what the caller must fix,
    WorkerFailed when the executor cannot go on (resumable), and lets Ctrl-C
    through after the games already finished are recorded.
    """
    # Begin, resume or grow the store (tournaments.lifecycle.opening); ``opened`` when the
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
    counts = config.executor.counts(concurrency=concurrency, workers=workers)
    sequential = SequentialStop(config, store)

    def on_result(game: ScheduledGame, record: MatchRecord) -> None:
        sequential.feed(game, record)
        on_progress(GameDone(game=game, record=record))

    return trio.run(
        partial(
            run_pending,
            config,
            store,
            concurrency=counts.concurrency,
            workers=counts.workers,
            on_result=on_result,
            should_stop=sequential.should_stop,
            on_failure=on_progress,
            executor=executor if executor is not None else local_executor(counts.concurrency, counts.workers),
            versions=versions,
        )
    )
