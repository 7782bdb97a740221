"""The worker side of the Dask executor: a referee per worker process, the bots' packages, the game task.

The host registers two kinds of worker plugins, and Dask runs their ``setup``
on every worker that has joined or joins later (one restarted after a crash
included):

- ``RefereePlugin``, one per competition (under its name): checks that the
  worker runs the host's famiglia, then starts a ``WorkerReferee``, a Trio
  loop in a thread of its own. That loop owns the worker's pool of bot
  processes (kept warm across games when the competition asks for it) and
  spawns every bot, so the bots' parent-death signal fires only when that
  thread, or the whole worker, ends.
- ``BotPackage``, one per packed bot folder (by its SHA-256), the first time a
  game seats it: held in the worker's memory, so a bot is sent to the cluster
  once, not with each game, and a worker that joins later receives it too.

Each Dask task, ``play_games``, carries a few games (``DaskExecutor`` chooses
how many, never two of one deal): it runs in one of the worker's task
threads and blocks on the Trio loop while the games are refereed there, one
after another, so the clocks are measured on the worker, next to the bots. A
bot is made ready on first use, once per machine and package
(``bot_packages.ready_on_worker``); one that cannot be takes its seats and
fails there. The answer goes back as msgpack bytes: per game, its record and
its replay's files, or the harness's failure. A fault of the machine or the
setup (``STOPS_THE_RUN``) is the task's error instead: none of its games is
played here.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar, TypeVarTuple

import msgspec
import trio
from distributed import WorkerPlugin, get_worker

from referee.bots import BotBuildFailed, BotSpec, BotSpecError
from referee.errors import BotCrashed, BotError
from referee.match import MatchRecord, MatchSpec
from referee.play import play_match
from referee.seats import WarmPool, open_pool
from tournaments.hosting.executors.base import Competition
from tournaments.hosting.executors.bot_packages import ShippedBot, ready_on_worker
from tournaments.hosting.executors.installed import (
    InstalledFamiglia,
    WrongFamiglia,
    famiglia_problem,
    installed_famiglia,
)
from tournaments.hosting.faults import failure_of, stops_the_run

__all__ = [
    "BotPackage",
    "DaskAnswer",
    "DaskGame",
    "NoPackage",
    "NoReferee",
    "RefereePlugin",
    "RefereeSetup",
    "WorkerReferee",
    "clear_replay",
    "decode_answers",
    "decode_games",
    "encode_answers",
    "encode_games",
    "package_plugin",
    "play_games",
    "stop_profiler",
]


class RefereeSetup(msgspec.Struct, frozen=True, kw_only=True):
    """What the host tells every worker once: the competition, and the famiglia the host runs."""

    competition: Competition
    famiglia: InstalledFamiglia | None = None
    """The host's famiglia: a worker running other files refuses to referee (its rules, its records may differ)."""


class DaskGame(msgspec.Struct, frozen=True, kw_only=True):
    """One game for a worker: the match, each seat's bot (by package, or a command line), its replay's file name."""

    spec: MatchSpec
    seats: list[ShippedBot]
    replay: str | None = None


class DaskAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """A worker's answer for one game: its record and replay files (name -> bytes), or the harness's failure."""

    record: MatchRecord | None = None
    error: str = ""
    traceback: str = ""
    files: dict[str, bytes] = {}
    worker: str = ""


class NoReferee(RuntimeError):
    """This Dask worker has no referee for the competition (its plugin's setup failed): a fault of the worker."""


class NoPackage(RuntimeError):
    """This Dask worker lacks the package of a seat's bot (its plugin is not registered here, or any more)."""


T = TypeVar("T")
Args = TypeVarTuple("Args")

_encoder = msgspec.msgpack.Encoder()
_games_decoder = msgspec.msgpack.Decoder(list[DaskGame])
_answers_decoder = msgspec.msgpack.Decoder(list[DaskAnswer])


def encode_games(games: list[DaskGame]) -> bytes:
    """A task's games as the bytes it is given: msgpack, so Dask ships them without pickling our types."""
    return _encoder.encode(games)


def decode_games(data: bytes) -> list[DaskGame]:
    return _games_decoder.decode(data)


def encode_answers(answers: list[DaskAnswer]) -> bytes:
    """A task's answers as the bytes it returns, one per game in the task's order."""
    return _encoder.encode(answers)


def decode_answers(data: bytes) -> list[DaskAnswer]:
    return _answers_decoder.decode(data)


def package_plugin(competition: str, digest: str) -> str:
    """The name a bot's ``BotPackage`` is registered under, beside its competition's ``RefereePlugin``."""
    return f"{competition}-bot-{digest}"


class WorkerReferee:
    """A competition's referee on one Dask worker process: a Trio loop in a thread of its own holding the
    bot pool; games are run in it from the worker's task threads, so every bot is spawned by that thread.

    ``scratch`` is a private folder for the replays of the games played here before they go to the host.
    """

    def __init__(self, setup: RefereeSetup, address: str) -> None:
        self.setup = setup
        self.address = address
        self.scratch = Path(tempfile.mkdtemp(prefix="famiglia-replays-"))  # 0700: the host's alone
        self._pool: WarmPool | None = None
        self._bots: dict[str, BotSpec | BotError] = {}
        self._preparing: dict[str, trio.Lock] = {}
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

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        competition = self.setup.competition
        async with open_pool(competition.settings, max_games=0 if competition.warm else 1) as pool:
            self._pool = pool
            self._ready.set()
            await self._stop.wait()

    def run(self, function: Callable[[*Args], Awaitable[T]], *args: *Args) -> T:
        """``function(*args)`` on the loop; blocks the calling task thread until it returns."""
        assert self._token is not None
        return trio.from_thread.run(function, *args, trio_token=self._token)

    def play(self, games: list[DaskGame], packages: dict[str, bytes]) -> list[DaskAnswer]:
        """Referee ``games`` one after another on this worker's loop (blocks this task thread)."""
        return [self.run(self._play, game, packages) for game in games]

    async def _play(self, game: DaskGame, packages: dict[str, bytes]) -> DaskAnswer:
        assert self._pool is not None
        local = None if game.replay is None else self.scratch / game.replay
        if local is not None:
            clear_replay(local)
        try:
            bots, dead = await self._seats(game.seats, packages)
            record = await play_match(
                game.spec, bots, self.setup.competition.settings, pool=self._pool, replay_path=local, unavailable=dead
            )
        except Exception as exc:
            if local is not None:
                clear_replay(local)
            # A fault of this machine or the setup is the task's error; a harness bug costs this game only.
            if stops_the_run(exc):
                raise
            failure = failure_of(exc)
            return DaskAnswer(error=failure.error, traceback=failure.traceback, worker=self.address)
        files: dict[str, bytes] = {}
        if local is not None:
            for path in [local, *sorted(local.parent.glob(f"{local.name}.seat*.stderr"))]:
                if path.is_file():
                    files[path.name] = path.read_bytes()
            clear_replay(local)
        return DaskAnswer(record=record, files=files, worker=self.address)

    async def _seats(
        self, seats: list[ShippedBot], packages: dict[str, bytes]
    ) -> tuple[list[BotSpec], dict[int, BotError]]:
        """Each seat's bot ready on this worker (as the host gave it where it cannot be), and the seats that cannot start."""
        bots: list[BotSpec] = []
        dead: dict[int, BotError] = {}
        for index, shipped in enumerate(seats):
            ready = await self._bot(shipped, packages)
            if isinstance(ready, BotError):
                bots.append(shipped.spec)
                dead[index] = ready
            else:
                bots.append(ready)
        return bots, dead

    async def _bot(self, shipped: ShippedBot, packages: dict[str, bytes]) -> BotSpec | BotError:
        """The bot ready on this worker (unpacked and built once per machine and package), or why it cannot start."""
        key = shipped.package or "\0".join([shipped.spec.cwd, *shipped.spec.command])
        async with self._preparing.setdefault(key, trio.Lock()):
            if key not in self._bots:
                package = None if shipped.package is None else packages.get(shipped.package)
                try:
                    self._bots[key] = await trio.to_thread.run_sync(
                        ready_on_worker, shipped, package, self.setup.competition.settings
                    )
                except (BotSpecError, BotBuildFailed) as exc:
                    self._bots[key] = BotCrashed(f"cannot start on Dask worker {self.address}: {exc}")
            ready = self._bots[key]
        # One package may sit at several seats (two entrants, one bot): each under its own name.
        if isinstance(ready, BotSpec) and ready.name != shipped.name:
            return msgspec.structs.replace(ready, name=shipped.name)
        return ready


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


class RefereePlugin(WorkerPlugin):  # type: ignore[misc]  # distributed is not type-checked
    """Registered by the host under its competition's name: one ``WorkerReferee`` per Dask worker process.

    It checks that the worker's famiglia is the one the host wants before anything starts, and names
    the worker in every error: Dask hands the host the exception, not where it came from.
    """

    def __init__(self, setup: bytes) -> None:
        self.encoded_setup = setup
        self.referee: WorkerReferee | None = None
        self.refused = ""
        """Why this worker will not referee (another famiglia than the host's), for its tasks to say."""

    def setup(self, worker: object) -> None:
        address = str(getattr(worker, "address", "?"))
        setup = msgspec.msgpack.decode(self.encoded_setup, type=RefereeSetup)
        # A worker that joins after the host checked the cluster is checked here.
        if setup.famiglia is not None and (problem := famiglia_problem(setup.famiglia, installed_famiglia())):
            self.refused = f"Dask worker {address} {problem}"
            raise WrongFamiglia(self.refused)
        stop_profiler(worker)
        try:
            self.referee = WorkerReferee(setup, address)
            self.referee.start()
        except Exception as exc:
            raise RuntimeError(
                f"Dask worker {address} could not set up its referee: {type(exc).__name__}: {exc}"
            ) from exc

    def teardown(self, worker: object) -> None:
        if self.referee is not None:
            self.referee.stop()
            self.referee = None


class BotPackage(WorkerPlugin):  # type: ignore[misc]  # distributed is not type-checked
    """One bot's packed folder (named by its SHA-256), held by every worker."""

    def __init__(self, digest: str, package: bytes) -> None:
        self.digest = digest
        self.package = package


def referee_of(plugin: str) -> tuple[Any, WorkerReferee]:
    """In a Dask task: this worker and its referee of plugin ``plugin``; NoReferee saying why there is none."""
    worker = get_worker()
    registered = worker.plugins.get(plugin)
    if isinstance(registered, RefereePlugin) and registered.refused:
        raise NoReferee(registered.refused)
    if not isinstance(registered, RefereePlugin) or registered.referee is None:
        raise NoReferee(f"Dask worker {worker.address} has no famiglia referee for {plugin!r} (see its log)")
    return worker, registered.referee


def play_games(plugin: str, request: bytes) -> bytes:
    """The Dask task of a few games: play them with this worker's referee of competition plugin ``plugin``.

    One answer per game, in order. A game's harness failure is its answer; a
    fault of this machine or the setup (``STOPS_THE_RUN``) is raised.
    """
    worker, referee = referee_of(plugin)
    games = decode_games(request)
    packages: dict[str, bytes] = {}
    for game in games:
        for seat in game.seats:
            if seat.package is None or seat.package in packages:
                continue
            holder = worker.plugins.get(package_plugin(plugin, seat.package))
            if not isinstance(holder, BotPackage):
                raise NoPackage(f"Dask worker {worker.address} has no package of {seat.name} ({seat.package[:12]}) yet")
            packages[seat.package] = holder.package
    return encode_answers(referee.play(games, packages))
