"""The worker side of a ladder on Dask: a referee per worker process, the versions' packages, the game task.

The ladder's server registers two kinds of worker plugins, and Dask runs
their ``setup`` on every worker that has joined or joins later:

- ``LadderPlugin``, one per ladder: checks that the worker runs the server's
  famiglia and starts a ``LadderReferee`` (a Trio loop in a thread of its
  own, ``tournaments.hosting.executors.dask_worker.RefereeThread``), which spawns
  every bot of the games played here;
- ``BotPackage``, one per version that has played: its packed folder, kept in
  the worker's memory, so a version is sent to the cluster once, not with
  each game, and a worker that joins later receives it too.

``play_ladder_game`` is one game's task. The bot is built on first use, once
per machine and digest (``bot_packages.ready_on_worker``); the answer goes
back as msgpack bytes: the match record and the replay's files, or the
harness's error in one line. A fault of the machine (``OSError``) is the
task's error instead, for the server to play the game again.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import trio
from distributed import WorkerPlugin

from protocol.untrusted import bounded
from referee.bots import BotBuildFailed, BotSpec, BotSpecError
from referee.match import MatchRecord, MatchSpec
from referee.play import play_match
from referee.settings import RefereeSettings
from tournaments.hosting.executors.bot_packages import ShippedBot, ready_on_worker
from tournaments.hosting.executors.dask_worker import RefereePlugin, RefereeThread, clear_replay, referee_of
from tournaments.hosting.executors.installed import InstalledFamiglia
from tournaments.hosting.faults import MACHINE_FAULTS

__all__ = [
    "BotPackage",
    "LadderAnswer",
    "LadderGame",
    "LadderPlugin",
    "LadderSetup",
    "NoPackage",
    "decode_answer",
    "package_plugin",
    "play_ladder_game",
]


class LadderSetup(msgspec.Struct, frozen=True, kw_only=True):
    """What the server tells every worker once: how games are refereed, and the famiglia it runs."""

    settings: RefereeSettings
    famiglia: InstalledFamiglia | None = None


class LadderGame(msgspec.Struct, frozen=True, kw_only=True):
    """One game to play on a worker: the match, each seat's bot (by package digest), the replay's file name."""

    spec: MatchSpec
    seats: list[ShippedBot]
    replay: str


class LadderAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """A worker's answer for one game: its record and replay files (name -> bytes), or the harness's error."""

    record: MatchRecord | None = None
    error: str = ""
    files: dict[str, bytes] = {}
    worker: str = ""


class NoPackage(RuntimeError):
    """A worker lacks the package of a seat's version (its plugin is not registered there yet)."""


_answer_decoder = msgspec.msgpack.Decoder(LadderAnswer)


def decode_answer(data: bytes) -> LadderAnswer:
    return _answer_decoder.decode(data)


def package_plugin(ladder_plugin: str, digest: str) -> str:
    """The name a version's ``BotPackage`` is registered under, beside its ladder's ``LadderPlugin``."""
    return f"{ladder_plugin}-bot-{digest}"


class LadderReferee(RefereeThread):
    """One worker's referee of a ladder's games; each game's bots are started for it and stopped after it."""

    def __init__(self, setup: LadderSetup, address: str) -> None:
        super().__init__()
        self.setup = setup
        self.address = address
        self._bots: dict[str, BotSpec] = {}
        self._preparing: dict[str, trio.Lock] = {}

    def play(self, game: LadderGame, packages: dict[str, bytes]) -> LadderAnswer:
        """Referee ``game`` on this worker's loop (blocks the task thread)."""
        return self.run(self._play, game, packages)

    async def _play(self, game: LadderGame, packages: dict[str, bytes]) -> LadderAnswer:
        local = self.scratch / game.replay
        clear_replay(local)
        try:
            bots = [await self._bot(shipped, packages) for shipped in game.seats]
            record = await play_match(game.spec, bots, self.setup.settings, replay_path=local)
        except MACHINE_FAULTS:
            clear_replay(local)
            raise  # this machine's fault, not the game's: the server plays it again
        except Exception as exc:  # noqa: BLE001  # costs this game only, recorded with it as on the server
            clear_replay(local)
            return LadderAnswer(error=bounded(f"{type(exc).__name__}: {exc}", 300), worker=self.address)
        files = {
            path.name: path.read_bytes()
            for path in [local, *sorted(self.scratch.glob(f"{local.name}.seat*.stderr"))]
            if path.is_file()
        }
        clear_replay(local)
        return LadderAnswer(record=record, files=files, worker=self.address)

    async def _bot(self, shipped: ShippedBot, packages: dict[str, bytes]) -> BotSpec:
        """The version's bot ready on this worker (unpacked and built once per machine and digest)."""
        digest = shipped.package or ""
        async with self._preparing.setdefault(digest, trio.Lock()):
            if digest not in self._bots:
                try:
                    self._bots[digest] = await trio.to_thread.run_sync(
                        ready_on_worker, shipped, packages.get(digest), self.setup.settings
                    )
                except (BotSpecError, BotBuildFailed) as exc:
                    # Not kept: a later game tries again (the build cache remembers a failed build).
                    raise RuntimeError(f"{shipped.name} cannot start on Dask worker {self.address}: {exc}") from None
            return self._bots[digest]


class LadderPlugin(RefereePlugin["LadderReferee"]):
    """Registered by the server under its ladder's name: one ``LadderReferee`` per Dask worker process."""

    def referee_for(self, address: str) -> tuple[InstalledFamiglia | None, Callable[[], LadderReferee]]:
        setup = msgspec.msgpack.decode(self.encoded_setup, type=LadderSetup)
        return setup.famiglia, lambda: LadderReferee(setup, address)


class BotPackage(WorkerPlugin):  # type: ignore[misc]  # distributed is not type-checked
    """One version's packed folder (an upload, named by its SHA-256), held by every worker."""

    def __init__(self, digest: str, package: bytes) -> None:
        self.digest = digest
        self.package = package


def play_ladder_game(plugin: str, request: bytes) -> bytes:
    """The Dask task of one game: play it with this worker's referee of ladder plugin ``plugin``."""
    worker, referee = referee_of(plugin, LadderPlugin, "see its log")
    game = msgspec.msgpack.decode(request, type=LadderGame)
    packages: dict[str, bytes] = {}
    for seat in game.seats:
        digest = seat.package or ""
        holder = worker.plugins.get(package_plugin(plugin, digest))
        if not isinstance(holder, BotPackage):
            raise NoPackage(f"Dask worker {worker.address} has no package of {seat.name} ({digest[:12]}) yet")
        packages[digest] = holder.package
    return msgspec.msgpack.encode(referee.play(game, packages))
