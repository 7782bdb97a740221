"""The Dask executor: a competition's games as tasks on a Dask distributed cluster.

Dask does the scheduling, the worker protocol and the network; this module
only maps games onto it:

- ``ready`` reaches the scheduler (``dask_cluster``: within seconds, TLS from
  Dask's configuration, a warning in the clear, a worker running another
  famiglia refused in one line) and registers the competition's
  ``RefereePlugin``: every worker, one that joins or restarts later included,
  sets up a referee of its own (``dask_worker.WorkerReferee``).
- A bot is shipped the first time a game seats it, as a worker plugin of its
  own (``BotPackage``: its folder packed on the host, or the archive the
  competition keeps), once per cluster connection; ``keep`` lets go of the
  packages of bots no longer seated.
- A few games (``games_per_task``, of different deals) make one task
  (``dask_worker.play_games``): each task costs round trips through the
  scheduler, a game only its share (bench/distributed.py: about twice the
  games a host can take in). A game waits a moment for others to join its
  task, never while a worker thread has nothing to do. ``slots`` keeps about
  two tasks per worker thread in flight, as workers join and leave, so a
  worker has its next task at hand and a million-game schedule never sits in
  the scheduler at once.
- A worker that dies mid-game loses nothing: the scheduler runs its tasks
  again on another worker, and only a finished task's answers reach the host.
  When Dask gives up on a task (its workers died under it
  ``allowed-failures`` times: ``KilledWorker``), each of its games is tried
  once more in a task of its own, one at a time; a game Dask gives up on again
  is ``RefereeFailed``, saying so.
- A lost scheduler, a worker that cannot play (another famiglia, famiglia not
  importable, a full disk, no package or referee there) leave the games in
  play ``NotPlayed``, in one line. With ``retry_s`` (the ladder) the executor
  says so once and ``ready`` reaches the scheduler again every ``retry_s``
  seconds until it answers; without (a tournament) the run stops, to be resumed.
- Answers (the match record and the replay's files) come back to the host,
  which writes the replay files where the competition asked.
"""

from __future__ import annotations

import contextlib
import logging
import math
import secrets
import sys
import threading
import traceback
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import msgspec
import trio
from distributed import Client, Future, KilledWorker

from protocol.untrusted import bounded
from referee.match import MatchRecord, MatchSpec
from referee.private import make_private_dirs, write_private
from tournaments.hosting.executors.base import Competition, Seat
from tournaments.hosting.executors.bot_packages import ShippedBot, package_of
from tournaments.hosting.executors.dask_cluster import (
    DaskUnreachable,
    WrongFamiglia,
    check_workers,
    clear_text_warning,
    connect_client,
    print_notice,
)
from tournaments.hosting.executors.dask_worker import (
    BotPackage,
    DaskAnswer,
    DaskGame,
    NoPackage,
    NoReferee,
    RefereePlugin,
    RefereeSetup,
    decode_answers,
    encode_games,
    package_plugin,
    play_games,
)
from tournaments.hosting.executors.installed import InstalledFamiglia, installed_famiglia
from tournaments.hosting.faults import CLUSTER_LOST, STOPS_THE_RUN, NotPlayed, RefereeFailed, played_again_later

__all__ = ["GAMES_PER_TASK", "DaskExecutor", "DaskUnreachable", "WrongFamiglia", "quiet_dask_logs", "when_settled"]

_REFRESH_S = 2.0  # how often the slots follow the cluster's size (and a lost scheduler is noticed)
_WAITING_REFRESH_S = 0.2  # how often while the scheduler has no workers: the first to join is said at once
_PROBE_S = 10.0  # how long a scheduler that a failed gather put in doubt has to answer
_LINGER_S = 0.01  # how long a game waits for others to join its task while every worker thread is busy
_KILLED_WORKER_TRIES = 2  # tasks of a game Dask may give up on before it is RefereeFailed
GAMES_PER_TASK = 4
"""Games in one Dask task: fewer round trips through the scheduler per game (bench/distributed.py)."""


class _Game:
    """One game handed to the cluster: what its task carries, and its caller's answer once it is settled."""

    __slots__ = ("answer", "client", "error", "request", "settled", "tries")

    def __init__(self, request: DaskGame, client: Client) -> None:
        self.request = request
        self.client = client
        self.settled = trio.Event()
        self.answer: DaskAnswer | None = None
        self.error: BaseException | None = None
        self.tries = 0
        """Tasks of it that Dask gave up on (KilledWorker)."""

    def settle(self, answer: DaskAnswer | None = None, error: BaseException | None = None) -> None:
        if not self.settled.is_set():
            self.answer, self.error = answer, error
            self.settled.set()


class _Task:
    """A task handed to Dask and not answered yet: its future, its games, whether it holds a suspect."""

    __slots__ = ("client", "future", "games", "suspect")

    def __init__(self, future: Future, games: list[_Game], client: Client, *, suspect: bool) -> None:
        self.future = future
        self.games = games
        self.client = client
        self.suspect = suspect


class DaskExecutor:
    """Play the games on the cluster whose scheduler is at ``scheduler`` (tcp://HOST:8786 or tls://HOST:8786)."""

    def __init__(
        self,
        scheduler: str,
        *,
        concurrency: int = 1,
        retry_s: float | None = None,
        connect_timeout_s: float = 10.0,
        games_per_task: int = GAMES_PER_TASK,
        task: Callable[[str, bytes], bytes] = play_games,
        notice: Callable[[str], None] = print_notice,
    ) -> None:
        self.scheduler = scheduler
        self.concurrency = max(1, concurrency)
        self.retry_s = retry_s
        """None: a scheduler that cannot be reached or is lost is said once, as ``ready``'s or ``play``'s error
        (a tournament stops); else ``ready`` tries again every that many seconds, saying so once (the ladder)."""
        self.connect_timeout_s = connect_timeout_s
        self.games_per_task = max(1, games_per_task)
        self.task = task
        """What each Dask task runs: ``play_games``, or bench/distributed.py's synthetic games."""
        self.notice = notice
        """Where lines for the host's user go while it plays (waiting for workers, a scheduler reached in the clear)."""
        self.slots = trio.CapacityLimiter(self._room(threads=0))
        self._warned = False
        self._competition: Competition | None = None
        self._nursery: trio.Nursery | None = None
        self._famiglia: InstalledFamiglia | None = None
        self._client: Client | None = None
        self._away = ""
        """Why the cluster cannot play now, said once (with ``retry_s``); empty while it plays."""
        self._lost_why = ""
        """Why the last client was dropped: what a game handed in after that is told."""
        self._connecting = trio.Lock()
        self._shipping = trio.Lock()
        self._packed: dict[tuple[str, str], str | None] = {}
        """Package digest (None: a command line) by the seat's archive or folder and command."""
        self._archives: dict[Path, str] = {}
        self._shipped: set[str] = set()
        """Digests whose ``BotPackage`` is registered with the current client's scheduler."""
        self._in_play: Counter[str] = Counter()
        """Games in play by package: a package is unregistered only once no game of it is in play."""
        self._kept: set[str] | None = None
        """The digests still seated (``keep``); None until the competition says."""
        self._incoming: trio.MemorySendChannel[_Game] | None = None
        self._finished: trio.MemorySendChannel[Future] | None = None
        self._tasks: dict[str, _Task] = {}
        self._suspects: deque[_Game] = deque()
        self._threads = 0
        self._keys = 0
        self._run = secrets.token_hex(4)

    # --- reaching the cluster ------------------------------------------------------

    def check_reachable(self) -> None:
        """Before a store is touched: DaskUnreachable within seconds when the scheduler does not answer,
        WrongFamiglia when one of its workers runs another famiglia than this host."""
        quiet_dask_logs()
        client = self._connect()
        try:
            check_workers(client)
        finally:
            _close(client, [], [])

    def _connect(self) -> Client:
        if not self._warned and (warning := clear_text_warning(self.scheduler)) is not None:
            self.notice(warning)
        self._warned = True
        return connect_client(self.scheduler, self.connect_timeout_s)

    def _room(self, threads: int) -> int:
        """Games at once: about two tasks per worker thread, each of ``games_per_task`` games."""
        return max(2, self.concurrency, 2 * threads) * self.games_per_task

    @asynccontextmanager
    async def open(self, competition: Competition) -> AsyncIterator[None]:
        # The client's own log lines (reconnecting, closing) would cut through the host's display.
        quiet_dask_logs()
        self._competition = competition
        self._tasks.clear()
        self._suspects.clear()
        self._away = ""
        self._famiglia = await trio.to_thread.run_sync(installed_famiglia)
        incoming, to_batch = trio.open_memory_channel[_Game](math.inf)
        finished, answered = trio.open_memory_channel[Future](math.inf)
        self._incoming, self._finished = incoming, finished
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._batch, to_batch)
                nursery.start_soon(self._answers, answered)
                try:
                    yield
                finally:
                    nursery.cancel_scope.cancel()
        finally:
            self._nursery = self._incoming = self._finished = None
            with trio.CancelScope(shield=True):
                await self._disconnect()

    async def _disconnect(self) -> None:
        """Cancel what is still running, stop the workers' referees (and their bots), drop the packages, disconnect."""
        client, self._client = self._client, None
        unfinished = [task.future for task in self._tasks.values()]
        self._tasks.clear()
        if client is None or self._competition is None:
            return
        name = self._competition.name
        plugins = [name, *(package_plugin(name, digest) for digest in self._shipped)]
        # Waited for however long a loaded scheduler takes (each call is bounded by Dask's own timeouts): a
        # plugin left registered would set up a referee on every worker that joins or restarts later.
        await trio.to_thread.run_sync(_close, client, plugins, unfinished)

    async def ready(self) -> None:
        """Return once a scheduler answers with the competition's plugin registered (trying every ``retry_s``)."""
        if self._client is not None:
            return
        async with self._connecting:
            while self._client is None:
                try:
                    client = await trio.to_thread.run_sync(self._open_client, abandon_on_cancel=True)
                except Exception as exc:
                    if self.retry_s is None:
                        raise
                    self._say_away(f"cannot play on the Dask scheduler at {self.scheduler} ({_one_line(exc)})")
                    await trio.sleep(self.retry_s)
                    continue
                self._client, self._shipped, self._lost_why = client, set(), ""
                self._back(f"reached the Dask scheduler at {self.scheduler} again: playing")
                assert self._nursery is not None
                self._nursery.start_soon(self._follow, client)

    def _open_client(self) -> Client:
        """A client with the competition's plugin registered on every worker; blocking, run in a thread."""
        assert self._competition is not None
        setup = msgspec.msgpack.encode(RefereeSetup(competition=self._competition, famiglia=self._famiglia))
        client = self._connect()
        try:
            check_workers(client, self._famiglia)
            _register(client, RefereePlugin(setup), self._competition.name)
        except BaseException:
            _close(client, [], [])
            raise
        return client

    async def _follow(self, client: Client) -> None:
        """Keep about two tasks per worker thread in flight as workers join and leave; say when there are none;
        notice a lost scheduler."""
        waiting = False
        while self._current(client):
            try:
                workers = await trio.to_thread.run_sync(client.nthreads, abandon_on_cancel=True)
            except CLUSTER_LOST:
                self._lost(client)
                return
            if not self._current(client):
                return
            self._threads = sum(workers.values())
            self.slots.total_tokens = self._room(self._threads)
            # Without workers games would wait with nothing said.
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

    def _say_away(self, why: str) -> None:
        """With ``retry_s``: say once, when games stop being played, why; until they are played again.
        (Without, each game says it: the competition stops at the first.)"""
        if self.retry_s is not None and not self._away:
            self.notice(f"{why}; the games in play go back to the queue; trying again every {self.retry_s:g} s")
            self._away = why

    def _back(self, line: str) -> None:
        if self._away:
            self.notice(line)
            self._away = ""

    def _current(self, client: Client) -> bool:
        """Whether ``client`` is still the executor's (not dropped since for a lost scheduler)."""
        return self._client is client

    def _lost(self, client: Client, why: str = "") -> NotPlayed:
        """The scheduler went away under ``client`` (or forgot the competition's plugins): every game in play
        on it is ``NotPlayed``, and the client is dropped (once) for ``ready`` to reach the scheduler again."""
        why = why or (
            f"lost the Dask scheduler at {self.scheduler} (it stopped, or this host lost its connection to it): "
            "start it again with its workers"
        )
        if self._client is client:
            self._client, self._lost_why = None, why
            self._say_away(why)
            threading.Thread(target=_close, args=(client, [], []), name="famiglia-dask-close", daemon=True).start()
        for key in [key for key, task in self._tasks.items() if task.client is client]:
            for game in self._tasks.pop(key).games:
                game.settle(error=NotPlayed(why))
        for game in [game for game in self._suspects if game.client is client]:
            self._suspects.remove(game)
            game.settle(error=NotPlayed(why))
        return NotPlayed(why)

    # --- playing -------------------------------------------------------------------

    async def play(self, spec: MatchSpec, seats: Sequence[Seat], replay: Path | None) -> MatchRecord:
        client = self._client
        if client is None or self._incoming is None:
            raise NotPlayed(self._away or self._lost_why or f"no Dask scheduler at {self.scheduler} now")
        shipped = [await self._ship(client, seat) for seat in seats]
        digests = {bot.package for bot in shipped if bot.package is not None}
        game = _Game(DaskGame(spec=spec, seats=shipped, replay=None if replay is None else replay.name), client)
        self._in_play.update(digests)
        try:
            self._incoming.send_nowait(game)
            await game.settled.wait()
        finally:
            self._in_play.subtract(digests)
            self._forget_unkept()
        if game.error is not None:
            if isinstance(game.error, NotPlayed) and self.retry_s is not None and self._client is client:
                await trio.sleep(self.retry_s)  # a worker's fault: not at once onto the same worker again
            raise game.error
        answer = game.answer
        assert answer is not None
        if answer.record is None:
            raise RefereeFailed(
                answer.error or f"Dask worker {answer.worker} answered without a record", answer.traceback
            )
        self._back("the Dask workers play again")
        return await trio.to_thread.run_sync(_save_replay, answer.record, answer.files, replay)

    async def _ship(self, client: Client, seat: Seat) -> ShippedBot:
        """How ``seat``'s bot reaches the workers; its package registered with the cluster the first time."""
        key = (str(seat.archive) if seat.archive is not None else seat.bot.cwd, "\0".join(seat.bot.command))
        async with self._shipping:
            known = key in self._packed
            digest = self._packed.get(key)
            if not known or (digest is not None and digest not in self._shipped):
                packed = await trio.to_thread.run_sync(package_of, seat.bot, seat.archive)
                digest = None if packed is None else packed[0]
                self._packed[key] = digest
                if seat.archive is not None and digest is not None:
                    self._archives[seat.archive] = digest
                if packed is not None and packed[0] not in self._shipped:
                    if not self._current(client):
                        raise NotPlayed(self._away or self._lost_why)
                    assert self._competition is not None
                    name = package_plugin(self._competition.name, packed[0])
                    register = partial(client.register_plugin, BotPackage(*packed), name=name)
                    try:
                        await trio.to_thread.run_sync(register, abandon_on_cancel=True)
                    except CLUSTER_LOST:
                        raise self._lost(client) from None
                    self._shipped.add(packed[0])
        return ShippedBot(name=seat.bot.name, spec=seat.bot, package=digest, host_python=sys.executable)

    def keep(self, archives: Collection[Path]) -> None:
        self._kept = {self._archives[path] for path in archives if path in self._archives}
        self._forget_unkept()

    def _forget_unkept(self) -> None:
        """Unregister the packages of bots no longer seated, once none of their games is in play: the
        scheduler and every worker hold each registered package in memory for as long as it is registered."""
        client = self._client
        if self._kept is None or client is None or self._competition is None:
            return
        gone = [d for d in self._shipped if d not in self._kept and self._in_play[d] <= 0]
        if gone:
            self._shipped.difference_update(gone)
            names = [package_plugin(self._competition.name, digest) for digest in gone]
            threading.Thread(target=_unregister, args=(client, names), name="famiglia-dask-forget", daemon=True).start()

    async def _batch(self, games: trio.MemoryReceiveChannel[_Game]) -> None:
        """Put the games handed in into tasks: up to ``games_per_task`` of different deals each."""
        waiting: list[list[_Game]] = []
        async for game in games:
            self._place(waiting, game)
            # The games handed out together (the slots one task's answers freed) join these tasks; a task
            # not full goes once none has come for a moment, or at once while a worker thread is idle.
            while waiting:
                if len(self._tasks) < self._threads:
                    break
                with trio.move_on_after(_LINGER_S):
                    self._place(waiting, await games.receive())
                    continue
                break
            for batch in waiting:
                self._submit(batch)
            waiting.clear()

    def _place(self, waiting: list[list[_Game]], game: _Game) -> None:
        # A bot process never plays a deal twice (referee.seats), so a task of one deal's games would
        # need a process per game: games of one deal go to different tasks.
        batch = next((b for b in waiting if all(g.request.spec.seed != game.request.spec.seed for g in b)), None)
        if batch is None:
            batch = []
            waiting.append(batch)
        batch.append(game)
        if len(batch) >= self.games_per_task:
            waiting.remove(batch)
            self._submit(batch)

    def _submit(self, games: list[_Game], *, suspect: bool = False) -> None:
        """Hand ``games`` to Dask as one task (those whose callers still wait, on the client they were shipped to)."""
        client = self._client
        games = [game for game in games if not game.settled.is_set()]
        for game in games:
            if game.client is not client:
                game.settle(error=NotPlayed(self._away or self._lost_why))
        games = [game for game in games if not game.settled.is_set()]
        if not games or client is None or self._competition is None or self._finished is None:
            return
        self._keys += 1
        # Keys of this run alone: a task a dead host left on the cluster holds other games under its key.
        key = f"{self._competition.name}-{self._run}-{self._keys}-{games[0].request.spec.match}"
        try:
            future = client.submit(
                self.task, self._competition.name, encode_games([g.request for g in games]), key=key, pure=False,
                retries=0,
            )  # fmt: skip
        except CLUSTER_LOST:
            why = str(self._lost(client))
            for game in games:
                game.settle(error=NotPlayed(why))
            return
        self._tasks[key] = _Task(future, games, client, suspect=suspect)
        token = trio.lowlevel.current_trio_token()
        finished = self._finished

        def on_done(done: Future) -> None:  # on Dask's callback thread
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(_deliver, finished, done)

        future.add_done_callback(on_done)

    async def _answers(self, finished: trio.MemoryReceiveChannel[Future]) -> None:
        """Hand each finished task's answers to its games' callers; settle the tasks that failed."""
        while True:
            batch = [await finished.receive()]
            while True:
                try:
                    batch.append(finished.receive_nowait())
                except trio.WouldBlock:
                    break
            await self._answered(batch)

    async def _answered(self, batch: list[Future]) -> None:
        done = [f for f in batch if (task := self._tasks.get(f.key)) is not None and task.future is f]
        finished = [f for f in done if f.status == "finished"]
        if finished:
            client = self._tasks[finished[0].key].client
            try:
                # errors="skip": a future lost with its worker since it finished is
                # waited for; if Dask then gives up on it, its answer is None and
                # its error is handled below like any other.
                results = await trio.to_thread.run_sync(partial(client.gather, finished, errors="skip"))
            except CLUSTER_LOST as exc:
                # The client may not have noticed yet that the scheduler is gone
                # (a reset connection reaches gather first): ask the scheduler.
                if client.status == "running" and await _scheduler_answers(client):
                    self._lost(
                        client, f"the answers of the Dask cluster at {self.scheduler} were lost ({_one_line(exc)})"
                    )
                else:
                    self._lost(client)
                return
            for future, data in zip(finished, results, strict=True):
                if data is None or (task := self._tasks.get(future.key)) is None:
                    continue
                for game, answer in zip(task.games, decode_answers(data), strict=True):
                    game.settle(answer=answer)
                self._forget(future)
                self._next_suspect()
        for future in done:
            if (task := self._tasks.get(future.key)) is None:
                continue
            if future.status == "cancelled":
                self._lost(task.client)
            elif future.status == "error":
                raised = await trio.to_thread.run_sync(future.exception)
                self._failed(future, raised)
            elif future.status in ("lost", "pending") and self._nursery is not None and self._finished is not None:
                # It finished, then its answer was lost with the worker holding
                # it before the host gathered it: Dask computes it again, and
                # its callback, which fires once, has fired already.
                self._nursery.start_soon(when_settled, future, partial(_deliver, self._finished))

    def _failed(self, future: Future, exc: BaseException) -> None:
        """A task that raised: its games not played, played again alone, or failed."""
        task = self._tasks[future.key]
        games = task.games
        self._forget(future)
        named = ", ".join(game.request.spec.match for game in games)
        if isinstance(exc, (NoReferee, NoPackage)):
            # A scheduler restarted while the client reconnected on its own knows no plugin of the
            # competition, and a worker that refused the famiglia check is named again by the next check.
            why = str(self._lost(task.client, f"a Dask worker cannot play ({_one_line(exc)})"))
            for game in games:
                game.settle(error=NotPlayed(why))
            return
        if isinstance(exc, ImportError):
            # A game's own errors come back as its answer: a task that cannot
            # even be loaded ran on a worker that joined without famiglia.
            why = (
                f"a Dask worker cannot load this host's famiglia ({type(exc).__name__}: {exc}): install the host's "
                "wheel there (famiglia worker wheel; docs/distributed.md) and restart the worker"
            )
        elif isinstance(exc, STOPS_THE_RUN) or played_again_later(exc):
            why = f"a Dask worker failed the games {named}: {type(exc).__name__}: {exc}"
        elif isinstance(exc, KilledWorker):
            # Dask gave up on the task after workers died under it
            # (allowed-failures). A task queued on a worker behind the culprit
            # dies with it, so every game of it is a suspect: suspects are
            # played again one at a time, each in a task of its own, and a game
            # Dask gives up on again is RefereeFailed.
            for game in games:
                game.tries += 1
                if game.tries < _KILLED_WORKER_TRIES:
                    self._suspects.append(game)
                else:
                    error = f"the Dask workers playing it died every time: Dask gave up on it twice ({exc})"
                    game.settle(error=_failure(exc, error))
            self._next_suspect()
            return
        else:
            for game in games:
                game.settle(error=_failure(exc, f"{type(exc).__name__} on a Dask worker: {exc}"))
            self._next_suspect()
            return
        self._say_away(bounded(why, 300))
        for game in games:
            game.settle(error=NotPlayed(bounded(why, 300)))
        self._next_suspect()

    def _next_suspect(self) -> None:
        """Play the next game suspected of killing its workers, once no other suspect is in play."""
        if self._suspects and not any(task.suspect for task in self._tasks.values()):
            self._submit([self._suspects.popleft()], suspect=True)

    def _forget(self, future: Future) -> None:
        self._tasks.pop(str(future.key), None)
        with contextlib.suppress(Exception):
            future.release()


def quiet_dask_logs() -> None:
    """Silence the client's log lines (reconnecting, closing): they would cut through the progress display,
    and a lost scheduler is one line of ours. Dask's logging setup gives some of its loggers levels of their own."""
    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name == "distributed" or name.startswith("distributed."):
            logging.getLogger(name).setLevel(logging.CRITICAL)


def _deliver(channel: trio.MemorySendChannel[Future], future: Future) -> None:  # on the Trio thread
    with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
        channel.send_nowait(future)


async def when_settled(future: Future, deliver: Callable[[Future], None]) -> None:
    """``deliver(future)`` once Dask has finished, failed or cancelled it again."""
    # exception() waits for the future to settle without fetching its answer;
    # a scheduler lost meanwhile cancels it, which the answers then see.
    with contextlib.suppress(Exception):
        await trio.to_thread.run_sync(future.exception, abandon_on_cancel=True)
    deliver(future)


async def _scheduler_answers(client: Client) -> bool:
    """Whether the scheduler still answers (within ``_PROBE_S``)."""
    with trio.move_on_after(_PROBE_S):
        try:
            await trio.to_thread.run_sync(client.nthreads, abandon_on_cancel=True)
        except CLUSTER_LOST:
            return False
        return True
    return False


def _register(client: Client, plugin: RefereePlugin, name: str) -> None:
    """Register the competition's plugin; a worker whose setup failed is NotPlayed in one line naming it.

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
        raise NotPlayed(_one_line(exc)) from None


def _unregister(client: Client, plugins: list[str]) -> None:
    """Unregister ``plugins`` while the scheduler answers (a scheduler gone has forgotten them anyway)."""
    if client.status == "running":
        for name in plugins:
            with contextlib.suppress(Exception):
                client.unregister_worker_plugin(name)


def _close(client: Client, plugins: list[str], unfinished: list[Future]) -> None:
    """Cancel ``unfinished``, unregister ``plugins`` (the workers' referees stop their bots), disconnect."""
    # A cluster already gone has nothing left to stop (and asking it would wait for its timeouts).
    if client.status == "running" and unfinished:
        with contextlib.suppress(Exception):
            client.cancel(unfinished)
    _unregister(client, plugins)
    with contextlib.suppress(Exception):
        client.close(timeout=10 if client.status == "running" else 2)


def _save_replay(record: MatchRecord, files: dict[str, bytes], replay: Path | None) -> MatchRecord:
    """Write the replay's files beside where the competition wants ``replay``; the record pointing at it."""
    if replay is None:
        return msgspec.structs.replace(record, replay=None)
    make_private_dirs(replay.parent)
    written = None
    for name, data in files.items():
        # Only this game's files, by plain name: what a worker of ours sends.
        if "/" in name or not name.startswith(replay.name):
            continue
        write_private(replay.parent / name, data)
        if name == replay.name:
            written = str(replay)
    return msgspec.structs.replace(record, replay=written)


def _failure(exc: BaseException, error: str) -> RefereeFailed:
    text = "".join(traceback.format_exception(exc))
    return RefereeFailed(bounded(error, 300), text[-(64 << 10) :])


def _one_line(exc: BaseException | None) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
