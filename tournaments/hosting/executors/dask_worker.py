"""The worker side of the Dask executor: a referee that lives as long as the Dask worker process.

The host registers a ``TournamentPlugin`` with the cluster. Dask runs its
``setup`` on every worker that has joined or joins later (a worker restarted
after a crash included), and its ``teardown`` when the host unregisters it or
the worker closes. ``setup`` starts one Trio loop in a thread of its own
(``WorkerReferee``); that loop owns the pool of bot processes, so warm
processes are kept across games, and it spawns every bot, so the bots'
parent-death signal fires only when that thread, or the whole worker, ends.

Each Dask task, ``play_games``, carries a few games (``DaskExecutor``
chooses how many): it runs in one of the worker's task threads and blocks on
the Trio loop while the games are refereed there, one after another, so the
clocks are measured on the worker, next to the bots. The answer goes back as
bytes: each game's outcome and its replay's files, which the host writes.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Generic, TypeVar, TypeVarTuple

import msgspec
import trio
from distributed import WorkerPlugin, get_worker

from referee.bots import BotBuildFailed, BotSpec, BotSpecError
from referee.errors import BotCrashed, BotError
from referee.seats import WarmPool, open_pool
from tournaments.hosting.executors.base import GameDone, GameFailed, TournamentWork, harness_failure
from tournaments.hosting.executors.bot_packages import ShippedBot, ready_on_worker
from tournaments.hosting.executors.installed import (
    InstalledFamiglia,
    WrongFamiglia,
    famiglia_problem,
    installed_famiglia,
)
from tournaments.hosting.schedule import ScheduledGame
from tournaments.playing import play_scheduled, replay_path

__all__ = [
    "DaskAnswer",
    "DaskSetup",
    "NoReferee",
    "RefereeThread",
    "TournamentPlugin",
    "clear_replay",
    "decode_answers",
    "encode_answers",
    "play_games",
    "stop_profiler",
]


class DaskSetup(msgspec.Struct, frozen=True, kw_only=True):
    """What the host tells every worker once: the tournament's work and how each entrant reaches the worker."""

    work: TournamentWork
    entrants: list[ShippedBot]
    famiglia: InstalledFamiglia | None = None
    """The host's famiglia: a worker running other files refuses to referee (its rules, its records may differ)."""


class DaskAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """A worker's answer for one game: its outcome and the files of its replay (name -> bytes)."""

    outcome: GameDone | GameFailed
    files: dict[str, bytes] = {}
    worker: str = ""


T = TypeVar("T")
R = TypeVar("R", bound="RefereeThread")
Args = TypeVarTuple("Args")

_answer_encoder = msgspec.msgpack.Encoder()
_answers_decoder = msgspec.msgpack.Decoder(list[DaskAnswer])


def encode_answers(answers: list[DaskAnswer]) -> bytes:
    """A task's answers as the bytes it returns: msgpack, so Dask ships them without pickling our types."""
    return _answer_encoder.encode(answers)


def decode_answers(data: bytes) -> list[DaskAnswer]:
    return _answers_decoder.decode(data)


class NoReferee(RuntimeError):
    """This Dask worker has no referee for the tournament (its plugin's setup failed): a fault of the worker, not of a game."""


class RefereeThread:
    """A Trio loop in a thread of its own, for as long as a Dask worker process lives; coroutines are run
    in it from the worker's task threads, so every bot process is spawned by that one thread.

    ``_resources`` is what the loop holds open while it runs (a tournament's warm pool of bot processes);
    ``scratch`` is a private folder for the replays of the games played here before they go to the host.
    """

    def __init__(self) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="famiglia-replays-"))  # 0700: the host's alone
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=trio.run, args=(self._main,), name="famiglia-referee", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()

    def stop(self) -> None:
        """Stop every game and bot process of this worker, and wait for it (a few seconds at most)."""
        if self._token is not None and self._stop is not None:
            try:
                trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
            except trio.RunFinishedError:
                pass
        self._thread.join(timeout=15)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def _resources(self) -> AbstractAsyncContextManager[object]:
        return contextlib.nullcontext()

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        async with self._resources():
            self._ready.set()
            await self._stop.wait()

    def run(self, function: Callable[[*Args], Awaitable[T]], *args: *Args) -> T:
        """``function(*args)`` on the loop; blocks the calling task thread until it returns."""
        assert self._token is not None
        return trio.from_thread.run(function, *args, trio_token=self._token)


class WorkerReferee(RefereeThread):
    """A tournament's referee on one worker: the loop holds the worker's bot pool; games are run in it from task threads."""

    def __init__(self, setup: DaskSetup, packages: dict[str, bytes], address: str) -> None:
        super().__init__()
        self.setup = setup
        self.packages = packages
        self.address = address
        self._pool: WarmPool | None = None
        self._bots: dict[int, BotSpec | BotError] = {}
        self._preparing: dict[int, trio.Lock] = {}

    @contextlib.asynccontextmanager
    async def _resources(self) -> AsyncIterator[None]:
        work = self.setup.work
        async with open_pool(work.settings, max_games=work.max_games_per_process) as pool:
            self._pool = pool
            yield

    def play(self, games: list[ScheduledGame]) -> list[DaskAnswer]:
        """Referee ``games`` one after another on this worker's loop (blocks this task thread)."""
        return [self.run(self._play, game) for game in games]

    async def _play(self, game: ScheduledGame) -> DaskAnswer:
        work = self.setup.work
        assert self._pool is not None
        host_replay = replay_path(work.config, work.tournament, game)
        local = None if host_replay is None else self.scratch / host_replay.name
        if local is not None:
            clear_replay(local)
        try:
            specs, unavailable = await self._seats(game)
            record = await play_scheduled(
                work.config, specs, work.settings, game, self._pool, tournament=work.tournament,
                replay=local, unavailable=unavailable,
            )  # fmt: skip
        except Exception as exc:
            # A harness bug costs this game only; a fault of this machine is the task's error.
            if (failure := harness_failure(game, exc)) is None:
                raise
            if local is not None:
                clear_replay(local)
            return DaskAnswer(outcome=failure, worker=self.address)
        files: dict[str, bytes] = {}
        if local is not None:
            for path in [local, *sorted(local.parent.glob(f"{local.name}.seat*.stderr"))]:
                if path.is_file():
                    files[path.name] = path.read_bytes()
            clear_replay(local)
        return DaskAnswer(outcome=GameDone(game=game, record=record), files=files, worker=self.address)

    async def _seats(self, game: ScheduledGame) -> tuple[list[BotSpec], dict[int, BotError]]:
        """Every entrant's spec (placeholders for the ones not at this table) and the ones that cannot start here."""
        specs = [shipped.spec for shipped in self.setup.entrants]
        unavailable: dict[int, BotError] = {}
        for entrant in set(game.seating):
            ready = await self._bot(entrant)
            if isinstance(ready, BotError):
                unavailable[entrant] = ready
            else:
                specs[entrant] = ready
        return specs, unavailable

    async def _bot(self, entrant: int) -> BotSpec | BotError:
        """The entrant's bot ready on this worker (unpacked and built once), or why it cannot start here."""
        lock = self._preparing.setdefault(entrant, trio.Lock())
        async with lock:
            if entrant not in self._bots:
                shipped = self.setup.entrants[entrant]
                package = None if shipped.package is None else self.packages.get(shipped.package)
                try:
                    self._bots[entrant] = await trio.to_thread.run_sync(
                        ready_on_worker, shipped, package, self.setup.work.settings
                    )
                except (BotSpecError, BotBuildFailed) as exc:
                    self._bots[entrant] = BotCrashed(f"cannot start on Dask worker {self.address}: {exc}")
            return self._bots[entrant]


def clear_replay(replay: Path) -> None:
    """Remove a replay, its partial file and its seats' stderr files (what an attempt at it left)."""
    for leftover in (replay, replay.with_name(replay.name + ".partial"), *replay.parent.glob(f"{replay.name}.seat*")):
        leftover.unlink(missing_ok=True)


def stop_profiler(worker: object) -> None:
    """Stop Dask's statistical profiler on a worker that plays games.

    It samples every thread's stack every 10 ms, the referee's included, and
    holds the GIL while it does: refereeing ran about 40% slower with it
    (bench/distributed.py). A worker that plays games has no use for it.
    """
    callbacks = getattr(worker, "periodic_callbacks", {})
    for name in ("profile", "profile-cycle"):
        if name in callbacks:
            callbacks[name].stop()


class RefereePlugin(WorkerPlugin, Generic[R]):  # type: ignore[misc]  # distributed is not type-checked
    """A worker plugin that runs one referee thread per Dask worker process (a tournament's, a ladder's).

    It checks that the worker's famiglia is the one the host wants before anything starts,
    and names the worker in every error: Dask hands the host the exception, not where it came
    from. A subclass says what it wants and how its referee is made (``referee_for``).
    """

    def __init__(self, setup: bytes) -> None:
        self.encoded_setup = setup
        self.referee: R | None = None
        self.refused = ""
        """Why this worker will not referee (another famiglia than the host's), for its tasks to say."""

    def referee_for(self, address: str) -> tuple[InstalledFamiglia | None, Callable[[], R]]:
        """The famiglia the host wants (None: any), and how to make this worker's referee."""
        raise NotImplementedError

    def setup(self, worker: object) -> None:
        address = str(getattr(worker, "address", "?"))
        wanted, make = self.referee_for(address)
        # A worker that joins after the host checked the cluster is checked here.
        if wanted is not None and (problem := famiglia_problem(wanted, installed_famiglia())):
            self.refused = f"Dask worker {address} {problem}"
            raise WrongFamiglia(self.refused)
        stop_profiler(worker)
        try:
            self.referee = make()
            self.referee.start()
        except Exception as exc:
            raise RuntimeError(
                f"Dask worker {address} could not set up its referee: {type(exc).__name__}: {exc}"
            ) from exc

    def teardown(self, worker: object) -> None:
        if self.referee is not None:
            self.referee.stop()
            self.referee = None


def referee_of(plugin: str, kind: type[RefereePlugin[R]], why: str) -> tuple[Any, R]:
    """In a Dask task: this worker and its referee of plugin ``plugin``; NoReferee saying why there is none."""
    worker = get_worker()
    registered = worker.plugins.get(plugin)
    if isinstance(registered, kind) and registered.refused:
        raise NoReferee(registered.refused)
    if not isinstance(registered, kind) or registered.referee is None:
        raise NoReferee(f"Dask worker {worker.address} has no famiglia referee for {plugin!r} ({why})")
    return worker, registered.referee


class TournamentPlugin(RefereePlugin["WorkerReferee"]):
    """Registered by the host under the tournament's name: one ``WorkerReferee`` per Dask worker process."""

    def __init__(self, setup: bytes, packages: dict[str, bytes]) -> None:
        super().__init__(setup)
        self.packages = packages

    def referee_for(self, address: str) -> tuple[InstalledFamiglia | None, Callable[[], WorkerReferee]]:
        setup = msgspec.msgpack.decode(self.encoded_setup, type=DaskSetup)
        return setup.famiglia, lambda: WorkerReferee(setup, self.packages, address)


def play_games(plugin: str, games: list[ScheduledGame]) -> bytes:
    """The Dask task for a few games: play them with this worker's referee of tournament plugin ``plugin``.

    One answer per game, in order. A game's harness error is its answer; a
    fault of this machine (``STOPS_THE_RUN``) is raised, and the task's other
    games are played again on a resume.
    """
    _, referee = referee_of(plugin, TournamentPlugin, "its setup failed; see its log")
    return encode_answers(referee.play(games))
