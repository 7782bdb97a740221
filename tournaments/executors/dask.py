"""The Dask executor: a tournament's games as tasks on a Dask distributed cluster.

Dask does the scheduling, the worker protocol and the network; this module
only maps a tournament onto it:

- The host packs every entrant that is a folder (``bot_packages``) and
  registers a ``TournamentPlugin`` carrying the packages and the tournament's
  settings. Every worker, including one that joins or restarts later, sets up a
  referee of its own (``dask_worker.WorkerReferee``): a Trio loop with a warm
  pool of bot processes, kept across games.
- Each game is one task (``dask_worker.play_game``, key
  ``famiglia-<tournament>-game-<index>``), submitted in schedule order and
  kept to a window of about two per worker thread, so a sequential test can
  stop handing out games and a million-game schedule never sits in the
  scheduler at once.
- A worker that dies mid-game loses nothing: the scheduler runs its tasks
  again on another worker, and only the finished task's answer reaches the
  host. A game that kills every worker it is tried on (Dask's
  ``allowed-failures``) is recorded as a harness error.
- Answers (the match record and the replay's files) come back to the host,
  which writes the replay files and hands the outcome to ``run_pending``,
  which alone writes the store.
"""

from __future__ import annotations

import contextlib
import logging
import math
import socket
import sys
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import trio
from distributed import Client, Future
from distributed.comm import parse_address
from distributed.comm.addressing import parse_host_port

from referee.private import make_private_dirs, write_private
from tournaments.executors.base import STOPS_THE_RUN, GameDone, GameFailed, Report, TournamentWork, WorkerFailed
from tournaments.executors.bot_packages import ShippedBot, is_folder_bot, pack_folder
from tournaments.executors.dask_worker import DaskAnswer, DaskSetup, TournamentPlugin, play_game
from tournaments.playing import replays_folder
from tournaments.schedule import ScheduledGame

__all__ = ["DaskExecutor", "DaskUnreachable", "ship_entrants"]

_answer_decoder = msgspec.msgpack.Decoder(DaskAnswer)
_REFRESH_S = 2.0  # how often the window follows the cluster's size


class DaskUnreachable(ValueError):
    """The scheduler cannot be reached at the address given."""


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
        shipped.append(ShippedBot(name=spec.name, spec=spec, package=digest, host_python=sys.executable))
    return shipped, packages


class DaskExecutor:
    """Play the games on the cluster whose scheduler is at ``scheduler`` (tcp://HOST:8786)."""

    def __init__(
        self,
        scheduler: str,
        *,
        connect_timeout_s: float = 10.0,
        task: Callable[[str, ScheduledGame], bytes] = play_game,
    ) -> None:
        self.scheduler = scheduler
        self.connect_timeout_s = connect_timeout_s
        self.task = task
        """What each game's Dask task runs: ``play_game``, or bench/distributed.py's synthetic games."""

    async def run(self, work: TournamentWork, games: trio.MemoryReceiveChannel[ScheduledGame], report: Report) -> None:
        # The client's own log lines (reconnecting, closing) would cut through the progress display.
        logging.getLogger("distributed").setLevel(logging.ERROR)
        entrants, packages = await trio.to_thread.run_sync(ship_entrants, work)
        setup = msgspec.msgpack.encode(DaskSetup(work=work, entrants=entrants))
        client = await trio.to_thread.run_sync(self._connect)
        plugin = f"famiglia-{work.tournament}"
        futures: dict[str, Future] = {}
        try:
            answers = await trio.to_thread.run_sync(
                partial(client.register_plugin, TournamentPlugin(setup, packages), name=plugin)
            )
            _check_setup(answers)
            await _Run(client, self, plugin, work, report, futures).play(games)
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(_close, client, plugin, list(futures.values()))

    def check_reachable(self) -> None:
        """DaskUnreachable at once when nothing listens at the scheduler's address (before a store is touched)."""
        try:
            _probe(self.scheduler, self.connect_timeout_s)
        except (OSError, TimeoutError, ValueError) as exc:
            raise DaskUnreachable(
                f"cannot reach the Dask scheduler at {self.scheduler} ({exc}); start one with `dask scheduler` "
                "and give its address (tcp://HOST:8786)"
            ) from None

    def _connect(self) -> Client:
        try:
            _probe(self.scheduler, self.connect_timeout_s)
            return Client(self.scheduler, timeout=self.connect_timeout_s, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise DaskUnreachable(
                f"cannot reach the Dask scheduler at {self.scheduler} ({exc}); start one with `dask scheduler` "
                "and give its address (tcp://HOST:8786)"
            ) from None


def _probe(address: str, timeout_s: float) -> None:
    """For a tcp:// address, OSError at once when nothing listens there (Dask's client would retry until its timeout)."""
    protocol, location = parse_address(address)
    if protocol != "tcp":
        return
    host, port = parse_host_port(location)
    socket.create_connection((host, port), timeout=timeout_s).close()


def _check_setup(answers: Any) -> None:
    """WorkerFailed naming the first worker whose referee could not start."""
    if not isinstance(answers, dict):
        return
    for address, answer in answers.items():
        if isinstance(answer, dict) and answer.get("status") == "error":
            raise WorkerFailed(f"Dask worker {address} could not set up its referee: {answer.get('exception')}")


def _close(client: Client, plugin: str, unfinished: list[Future]) -> None:
    """Cancel what is still running, stop the workers' referees (and their bots), disconnect."""
    # A cluster already gone has nothing left to stop.
    with contextlib.suppress(Exception):
        if unfinished:
            client.cancel(unfinished)
        client.unregister_worker_plugin(plugin)
    with contextlib.suppress(Exception):
        client.close(timeout=10)


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
        self.plugin = plugin
        self.work = work
        self.report = report
        self.futures = futures  # key -> future, for every game handed to Dask and not answered yet
        self.games: dict[str, ScheduledGame] = {}
        self.window = trio.CapacityLimiter(max(2, work.concurrency))
        self.replays = replays_folder(work.config, work.tournament)

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

        async def submit() -> None:
            async with games:
                async for game in games:
                    key = f"famiglia-{self.work.tournament}-game-{game.index}"
                    await self.window.acquire_on_behalf_of(key)
                    future = self.client.submit(self.task, self.plugin, game, key=key, pure=False, retries=0)
                    self.futures[key] = future
                    self.games[key] = game
                    future.add_done_callback(on_done)
            deliver(None)

        async with done_out, trio.open_nursery() as nursery:
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

    async def _follow_cluster_size(self) -> None:
        """Keep about two games per worker thread in flight, as workers join and leave."""
        while True:
            threads = sum((await trio.to_thread.run_sync(self.client.nthreads)).values())
            self.window.total_tokens = max(2, self.work.concurrency, 2 * threads)
            await trio.sleep(_REFRESH_S)

    async def _answers(self, batch: list[Future]) -> None:
        finished = [f for f in batch if f.key in self.futures and f.status == "finished"]
        if finished:
            results = await trio.to_thread.run_sync(self.client.gather, finished)
            for future, data in zip(finished, results, strict=True):
                answer = _answer_decoder.decode(data)
                outcome = answer.outcome
                if isinstance(outcome, GameDone) and answer.files:
                    outcome = await trio.to_thread.run_sync(self._save_replay, outcome, answer.files)
                await self.report(outcome)
                self._forget(future)
        for future in batch:
            if future.key not in self.futures:
                continue
            if future.status == "cancelled":
                raise WorkerFailed(
                    f"the Dask scheduler at {self.scheduler} dropped the games "
                    "(it restarted, or this host lost its connection)"
                )
            if future.status == "error":
                exc = await trio.to_thread.run_sync(future.exception)
                await self.report(self._failure(future, exc))
                self._forget(future)

    def _failure(self, future: Future, exc: BaseException) -> GameFailed:
        game = self.games[future.key]
        if isinstance(exc, STOPS_THE_RUN):
            raise WorkerFailed(f"a Dask worker failed game {game.index}: {type(exc).__name__}: {exc}")
        name = type(exc).__name__
        if name == "KilledWorker":
            error = f"lost with every Dask worker that played it ({exc})"
        else:
            error = f"{name} on a Dask worker: {exc}"
        text = "".join(traceback.format_exception(exc))
        return GameFailed(game=game, error=error[:300], traceback=text[-(64 << 10) :])

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
        self.games.pop(key, None)
        future.release()
        self.window.release_on_behalf_of(key)
