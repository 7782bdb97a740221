"""The Dask executor: a tournament's games as tasks on a Dask distributed cluster.

Dask does the scheduling, the worker protocol and the network; this module
only maps a tournament onto it:

- The host packs every entrant that is a folder (``bot_packages``) and
  registers a ``TournamentPlugin`` carrying the packages and the tournament's
  settings. Every worker, including one that joins or restarts later, sets up a
  referee of its own (``dask_worker.WorkerReferee``): a Trio loop with a warm
  pool of bot processes, kept across games.
- A few games (``games_per_task``, of different deals) make one task
  (``dask_worker.play_games``, key ``famiglia-<tournament>-<run>-games-<first
  index>``): each task costs round trips through the scheduler, a game only
  its share. Tasks are submitted in schedule order and kept to a window of
  about two per worker thread, so a worker has its next task at hand, a
  sequential test can stop handing out games and a million-game schedule never
  sits in the scheduler at once.
- A worker that dies mid-game loses nothing: the scheduler runs its tasks
  again on another worker, and only a finished task's answers reach the host,
  which records each game once. When Dask gives up on a task (its workers died
  under it ``allowed-failures`` times: ``KilledWorker``), each of its games is
  tried once more in a task of its own; a game Dask gives up on again is
  recorded as a harness error, saying so.
- A lost scheduler stops the run (``WorkerFailed``, one line); what was
  recorded stays, and the same command resumes against a scheduler again.
- Reaching the scheduler (``dask_cluster``): within seconds or not at all,
  over TLS when Dask's configuration holds the cluster's certificate, with a
  warning when it is reached in the clear off this machine; a worker running
  another famiglia than the host (``installed``) is refused in one line, at
  the start and when it joins later.
- Answers (the match record and the replay's files) come back to the host,
  which writes the replay files and hands the outcome to ``run_pending``,
  which alone writes the store.
"""

from __future__ import annotations

import contextlib
import logging
import math
import secrets
import sys
import traceback
from collections import deque
from collections.abc import Callable
from functools import partial
from pathlib import Path

import msgspec
import trio
from distributed import Client, Future, KilledWorker

from protocol.untrusted import bounded
from referee.bot_folder import pack_folder
from referee.pinning import BotChangedDuringRun, is_folder_bot
from referee.private import make_private_dirs, write_private
from tournaments.hosting.executors.base import GameDone, GameFailed, Report, TournamentWork, WorkerFailed
from tournaments.hosting.executors.bot_packages import ShippedBot
from tournaments.hosting.executors.dask_cluster import (
    DaskUnreachable,
    WrongFamiglia,
    check_workers,
    clear_text_warning,
    connect_client,
    print_notice,
)
from tournaments.hosting.executors.dask_worker import DaskSetup, NoReferee, TournamentPlugin, decode_answers, play_games
from tournaments.hosting.executors.installed import installed_famiglia
from tournaments.hosting.faults import CLUSTER_LOST, STOPS_THE_RUN
from tournaments.hosting.schedule import ScheduledGame
from tournaments.playing import replays_folder

__all__ = ["DaskExecutor", "DaskUnreachable", "WrongFamiglia", "quiet_dask_logs", "ship_entrants"]

_REFRESH_S = 2.0  # how often the window follows the cluster's size
_WAITING_REFRESH_S = 0.2  # how often while the scheduler has no workers: the first to join is said at once
_PROBE_S = 10.0  # how long a scheduler that a failed gather put in doubt has to answer
_KILLED_WORKER_TRIES = 2  # tasks of a game Dask may give up on before it is recorded as a harness error
GAMES_PER_TASK = 4
"""Games in one Dask task: fewer round trips through the scheduler per game (bench/distributed.py)."""


def ship_entrants(work: TournamentWork) -> tuple[list[ShippedBot], dict[str, bytes]]:
    """How each entrant reaches the workers, and the packed folders by hash (each folder packed once)."""
    shipped: list[ShippedBot] = []
    packages: dict[str, bytes] = {}
    by_folder: dict[str, str] = {}
    for spec in work.bots:
        digest = None
        if is_folder_bot(spec):
            if spec.cwd not in by_folder:
                digest, data = pack_folder(Path(spec.cwd))
                packages[digest] = data
                by_folder[spec.cwd] = digest
            digest = by_folder[spec.cwd]
            # The package is named by its content: checked against the run's pin here, it needs none on a worker.
            if spec.pin is not None and spec.pin != "folder:" + digest:
                raise BotChangedDuringRun(spec.name, spec.pin, "folder:" + digest)
        shipped.append(ShippedBot(name=spec.name, spec=spec, package=digest, host_python=sys.executable))
    return shipped, packages


class DaskExecutor:
    """Play the games on the cluster whose scheduler is at ``scheduler`` (tcp://HOST:8786 or tls://HOST:8786)."""

    def __init__(
        self,
        scheduler: str,
        *,
        connect_timeout_s: float = 10.0,
        games_per_task: int = GAMES_PER_TASK,
        task: Callable[[str, list[ScheduledGame]], bytes] = play_games,
        notice: Callable[[str], None] = print_notice,
    ) -> None:
        self.scheduler = scheduler
        self.connect_timeout_s = connect_timeout_s
        self.games_per_task = games_per_task
        self.task = task
        """What each Dask task runs: ``play_games``, or bench/distributed.py's synthetic games."""
        self.notice = notice
        """Where lines for the host's user go while it plays (waiting for workers, a scheduler reached in the clear)."""
        self._warned = False

    async def run(self, work: TournamentWork, games: trio.MemoryReceiveChannel[ScheduledGame], report: Report) -> None:
        # The client's own log lines (reconnecting, closing) would cut through the progress display.
        quiet_dask_logs()
        entrants, packages = await trio.to_thread.run_sync(ship_entrants, work)
        famiglia = await trio.to_thread.run_sync(installed_famiglia)
        setup = msgspec.msgpack.encode(DaskSetup(work=work, entrants=entrants, famiglia=famiglia))
        client = await trio.to_thread.run_sync(self._connect)
        plugin = f"famiglia-{work.tournament}"
        futures: dict[str, Future] = {}
        try:
            await trio.to_thread.run_sync(check_workers, client, famiglia)
            await trio.to_thread.run_sync(_register, client, TournamentPlugin(setup, packages), plugin)
            await _Run(client, self, plugin, work, report, futures).play(games)
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(_close, client, plugin, list(futures.values()))

    def check_reachable(self) -> None:
        """Before a store is touched: DaskUnreachable within seconds when the scheduler does not answer,
        WrongFamiglia when one of its workers runs another famiglia than this host."""
        quiet_dask_logs()
        client = self._connect()
        try:
            check_workers(client)
        finally:
            _close(client, "", [])

    def _connect(self) -> Client:
        if not self._warned and (warning := clear_text_warning(self.scheduler)) is not None:
            self.notice(warning)
        self._warned = True
        return connect_client(self.scheduler, self.connect_timeout_s)


def quiet_dask_logs() -> None:
    """Silence the client's log lines (reconnecting, closing): they would cut through the progress display,
    and a lost scheduler is one line of ours. Dask's logging setup gives some of its loggers levels of their own."""
    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name == "distributed" or name.startswith("distributed."):
            logging.getLogger(name).setLevel(logging.CRITICAL)


def _register(client: Client, plugin: TournamentPlugin, name: str) -> None:
    """Register the tournament's plugin; a worker whose setup failed stops the run in one line naming it.

    Dask raises the first failed setup's own exception on the host (the
    plugin's setup names its worker): another famiglia is the user's to fix
    (WrongFamiglia), anything else is a fault of that worker.
    """
    try:
        client.register_plugin(plugin, name=name)
    except WrongFamiglia:
        raise
    except CLUSTER_LOST:
        raise
    except Exception as exc:  # noqa: BLE001  # whatever failed on a worker arrives here as itself
        raise WorkerFailed(" ".join(str(exc).split()) or type(exc).__name__) from None


def _close(client: Client, plugin: str, unfinished: list[Future]) -> None:
    """Cancel what is still running, stop the workers' referees (and their bots), disconnect."""
    # A cluster already gone has nothing left to stop (and asking it would wait for its timeouts).
    if client.status == "running":
        with contextlib.suppress(Exception):
            if unfinished:
                client.cancel(unfinished)
            if plugin:
                client.unregister_worker_plugin(plugin)
    with contextlib.suppress(Exception):
        client.close(timeout=10 if client.status == "running" else 2)


class _Run:
    """One run's submissions and answers."""

    def __init__(
        self,
        client: Client,
        executor: DaskExecutor,
        plugin: str,
        work: TournamentWork,
        report: Report,
        futures: dict[str, Future],
    ) -> None:
        self.client = client
        self.scheduler = executor.scheduler
        self.task = executor.task
        self.notice = executor.notice
        self.games_per_task = max(1, executor.games_per_task)
        self.plugin = plugin
        self.work = work
        self.report = report
        self.futures = futures  # key -> future, for every task handed to Dask and not answered yet
        self.tasks: dict[str, list[ScheduledGame]] = {}  # key -> its games, in the order it plays them
        self.tries: dict[int, int] = {}  # game index -> tasks of it that Dask gave up on (KilledWorker)
        self.windowed: set[str] = set()  # the keys that hold a token of the window
        self.suspects: deque[ScheduledGame] = deque()  # games of tasks Dask gave up on, to play again alone
        self.suspect_keys: set[str] = set()
        self.window = trio.CapacityLimiter(max(2, work.concurrency))
        self.replays = replays_folder(work.config, work.tournament)
        self.on_done: Callable[[Future], None] = lambda future: None
        self.deliver: Callable[[Future | None], None] = lambda future: None
        self.nursery: trio.Nursery | None = None
        # Keys of this run alone: a task a dead host left on the cluster holds other games under its key.
        self.run = secrets.token_hex(4)

    async def play(self, games: trio.MemoryReceiveChannel[ScheduledGame]) -> None:
        done_in, done_out = trio.open_memory_channel[Future | None](math.inf)
        token = trio.lowlevel.current_trio_token()

        def deliver(future: Future | None) -> None:  # on the Trio thread
            try:
                done_in.send_nowait(future)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                pass

        def on_done(future: Future) -> None:  # on Dask's callback thread
            try:
                token.run_sync_soon(deliver, future)
            except trio.RunFinishedError:
                pass

        self.on_done = on_done
        self.deliver = deliver

        async def submit() -> None:
            # Games of one deal go to different tasks: a bot process never
            # plays a deal twice (tournaments.pool), so a task of one deal's
            # games would need a process per game.
            open_batches: list[list[ScheduledGame]] = []
            async with games:
                async for game in games:
                    batch = next((b for b in open_batches if all(g.seed != game.seed for g in b)), None)
                    if batch is None:
                        batch = []
                        open_batches.append(batch)
                    batch.append(game)
                    if len(batch) >= self.games_per_task:
                        open_batches.remove(batch)
                        await self._submit(batch, windowed=True)
            for batch in open_batches:
                await self._submit(batch, windowed=True)
            deliver(None)

        async with done_out, trio.open_nursery() as nursery:
            self.nursery = nursery
            nursery.start_soon(submit)
            nursery.start_soon(self._follow_cluster_size)
            submitting = True
            while submitting or self.futures:
                batch = [await done_out.receive()]
                while True:
                    try:
                        batch.append(done_out.receive_nowait())
                    except trio.WouldBlock:
                        break
                if None in batch:
                    submitting = False
                await self._answers([f for f in batch if f is not None])
            nursery.cancel_scope.cancel()

    async def _submit(self, games: list[ScheduledGame], *, windowed: bool, suspect: bool = False) -> None:
        """Hand ``games`` to Dask as one task; ``windowed``: wait for room in the window first."""
        key = f"famiglia-{self.work.tournament}-{self.run}-games-{games[0].index}"
        tries = self.tries.get(games[0].index, 0)
        if tries:
            key += f"-try-{tries + 1}"
        if windowed:
            await self.window.acquire_on_behalf_of(key)
            self.windowed.add(key)
        future = self.client.submit(self.task, self.plugin, games, key=key, pure=False, retries=0)
        if suspect:
            self.suspect_keys.add(key)
        self.futures[key] = future
        self.tasks[key] = games
        future.add_done_callback(self.on_done)

    async def _follow_cluster_size(self) -> None:
        """Keep about two tasks per worker thread in flight, as workers join and leave; say when there are none."""
        waiting = False
        while True:
            try:
                workers = await trio.to_thread.run_sync(self.client.nthreads)
            except CLUSTER_LOST:
                raise self._lost() from None
            threads = sum(workers.values())
            self.window.total_tokens = max(2, self.work.concurrency, 2 * threads)
            # Without workers the display would sit at 0 games/s with no reason given.
            if not workers and not waiting:
                self.notice(
                    f"waiting for workers: the Dask scheduler at {self.scheduler} has none; start them on each "
                    f"worker machine with: famiglia worker start {self.scheduler}"
                )
            elif workers and waiting:
                self.notice(f"{len(workers)} Dask worker{'s' if len(workers) != 1 else ''} joined: playing")
            waiting = not workers
            # The first worker to join is said at once: a short run could end before a look 2 s later.
            await trio.sleep(_WAITING_REFRESH_S if waiting else _REFRESH_S)

    async def _answers(self, batch: list[Future]) -> None:
        finished = [f for f in batch if f.key in self.futures and f.status == "finished"]
        if finished:
            try:
                # errors="skip": a future lost with its worker since it finished
                # is waited for; if Dask then gives up on it, its answer is None
                # and its error is handled below like any other.
                results = await trio.to_thread.run_sync(partial(self.client.gather, finished, errors="skip"))
            except CLUSTER_LOST:
                # The client may not have noticed yet that the scheduler is gone
                # (a reset connection reaches gather first): ask the scheduler.
                if self.client.status == "running" and await self._scheduler_answers():
                    raise
                raise self._lost() from None
            for future, data in zip(finished, results, strict=True):
                if data is None:
                    continue
                for answer in decode_answers(data):
                    outcome = answer.outcome
                    if isinstance(outcome, GameDone) and answer.files:
                        outcome = await trio.to_thread.run_sync(self._save_replay, outcome, answer.files)
                    await self.report(outcome)
                self._forget(future)
                await self._next_suspect()
        for future in batch:
            if future.key not in self.futures:
                continue
            if future.status == "cancelled":
                raise self._lost()
            if future.status == "error":
                exc = await trio.to_thread.run_sync(future.exception)
                await self._failed(future, exc)
            elif future.status in ("lost", "pending") and self.nursery is not None:
                # It finished, then its answer was lost with the worker holding
                # it before the host gathered it: Dask computes it again, and
                # its callback, which fires once, has fired already.
                self.nursery.start_soon(when_settled, future, self.deliver)

    async def _scheduler_answers(self) -> bool:
        """Whether the scheduler still answers (within ``_PROBE_S``)."""
        with trio.move_on_after(_PROBE_S):
            try:
                await trio.to_thread.run_sync(self.client.nthreads, abandon_on_cancel=True)
            except CLUSTER_LOST:
                return False
            return True
        return False

    async def _next_suspect(self) -> None:
        """Play the next game suspected of killing its workers, once no other suspect is in play."""
        if self.suspects and not any(key in self.futures for key in self.suspect_keys):
            await self._submit([self.suspects.popleft()], windowed=False, suspect=True)

    def _lost(self) -> WorkerFailed:
        return WorkerFailed(
            f"lost the Dask scheduler at {self.scheduler} (it stopped, or this host lost its connection to it): "
            "start it again with its workers"
        )

    async def _failed(self, future: Future, exc: BaseException) -> None:
        """A task that raised: stop the run, play its games again, or record them as harness errors."""
        games = self.tasks[future.key]
        self._forget(future)
        if isinstance(exc, NoReferee):
            raise WorkerFailed(str(exc))
        if isinstance(exc, ImportError):
            # A game's own errors come back as its answer: a task that cannot
            # even be loaded ran on a worker that joined without famiglia.
            raise WorkerFailed(
                f"a Dask worker cannot load this host's famiglia ({type(exc).__name__}: {exc}): install the host's "
                "wheel there (famiglia worker wheel; docs/distributed.md) and restart the worker"
            )
        if isinstance(exc, STOPS_THE_RUN):
            raise WorkerFailed(f"a Dask worker failed games {_indexes(games)}: {type(exc).__name__}: {exc}")
        if isinstance(exc, KilledWorker):
            # Dask gave up on the task after workers died under it
            # (allowed-failures). A task queued on a worker behind the culprit
            # dies with it, so every game of it is a suspect: suspects are
            # played again one at a time, each in a task of its own, and a game
            # Dask gives up on again is recorded as a harness error.
            for game in games:
                self.tries[game.index] = self.tries.get(game.index, 0) + 1
                if self.tries[game.index] < _KILLED_WORKER_TRIES:
                    self.suspects.append(game)
                else:
                    error = f"the Dask workers playing it died every time: Dask gave up on it twice ({exc})"
                    await self.report(_failure(game, exc, error))
            await self._next_suspect()
            return
        for game in games:
            await self.report(_failure(game, exc, f"{type(exc).__name__} on a Dask worker: {exc}"))
        await self._next_suspect()

    def _save_replay(self, done: GameDone, files: dict[str, bytes]) -> GameDone:
        """Write the replay's files into the tournament's replay folder; the record pointing at them."""
        if self.replays is None:
            return done
        make_private_dirs(self.replays)
        replay = None
        for name, data in files.items():
            if "/" in name or name.startswith("."):
                continue  # only plain names come from a worker of ours
            write_private(self.replays / name, data)
            if name.endswith(".jsonl"):
                replay = str(self.replays / name)
        record = msgspec.structs.replace(done.record, replay=replay)
        return GameDone(game=done.game, record=record)

    def _forget(self, future: Future) -> None:
        key = str(future.key)
        self.futures.pop(key, None)
        self.tasks.pop(key, None)
        self.suspect_keys.discard(key)
        future.release()
        if key in self.windowed:
            self.windowed.discard(key)
            self.window.release_on_behalf_of(key)


async def when_settled(future: Future, deliver: Callable[[Future], None]) -> None:
    """``deliver(future)`` once Dask has finished, failed or cancelled it again."""
    # exception() waits for the future to settle without fetching its answer;
    # a scheduler lost meanwhile cancels it, which the answers then see.
    with contextlib.suppress(Exception):
        await trio.to_thread.run_sync(future.exception, abandon_on_cancel=True)
    deliver(future)


def _failure(game: ScheduledGame, exc: BaseException, error: str) -> GameFailed:
    text = "".join(traceback.format_exception(exc))
    return GameFailed(game=game, error=bounded(error, 300), traceback=text[-(64 << 10) :])


def _indexes(games: list[ScheduledGame]) -> str:
    return ", ".join(str(g.index) for g in games)
