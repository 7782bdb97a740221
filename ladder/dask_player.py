"""The ladder's games on a Dask cluster: one task per game, the versions' packages sent once.

``DaskPlayer`` is the match loop's game player for ``--executor dask``. It
reaches the scheduler as the tournament executor does (``dask_cluster``:
within seconds, TLS from Dask's configuration, a warning in the clear, a
worker running another famiglia refused), registers the ladder's
``LadderPlugin`` and, the first time a version plays, its ``BotPackage``;
then each game is one task, ``play_ladder_game``. The answer's replay files
are written under the ladder's replays folder here, and the record goes back
to the loop, which writes the store as for a game played in process.

Faults:

- A worker that dies mid-game costs nothing: the scheduler runs the task
  again on another worker and only its one answer comes back. When Dask
  gives up on it (its workers died under it ``allowed-failures`` times), the
  game is recorded as failed, saying so; the host can requeue it.
- A lost scheduler (or a worker that cannot referee: another famiglia, a
  full disk) costs the games in play nothing either: each is ``NotPlayed``,
  back to pending, and the loop waits in ``ready`` while this player tries to
  reach the scheduler again every few seconds, saying so once. The web
  server keeps serving meanwhile.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import threading
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path

import msgspec
import trio
from distributed import Client, Future, KilledWorker

from ladder.dask_worker import (
    BotPackage,
    LadderGame,
    LadderPlugin,
    LadderSetup,
    NoPackage,
    decode_answer,
    package_plugin,
    play_ladder_game,
)
from ladder.intake import upload_path
from ladder.players import NotPlayed, RefereeFailed, Seat
from referee.match import MatchRecord, MatchSpec
from referee.private import make_private_dirs, write_private
from referee.settings import RefereeSettings
from tournaments.hosting.executors.bot_packages import ShippedBot
from tournaments.hosting.executors.dask import quiet_dask_logs
from tournaments.hosting.executors.dask_cluster import (
    DaskUnreachable,
    WrongFamiglia,
    check_workers,
    clear_text_warning,
    connect_client,
    print_notice,
)
from tournaments.hosting.executors.dask_worker import NoReferee
from tournaments.hosting.executors.installed import InstalledFamiglia, installed_famiglia
from tournaments.hosting.faults import CLUSTER_LOST, played_again_later

__all__ = ["DaskPlayer", "DaskUnreachable", "WrongFamiglia", "ladder_plugin"]


def ladder_plugin(db: Path) -> str:
    """The name of a ladder's plugin: the same at every start of that ladder, so a restart replaces what the
    last run registered instead of leaving it on the scheduler."""
    return "famiglia-ladder-" + hashlib.sha256(str(db.resolve()).encode()).hexdigest()[:12]


class DaskPlayer:
    """Play the ladder's games on the cluster whose scheduler is at ``scheduler`` (tcp:// or tls://HOST:8786)."""

    def __init__(
        self,
        scheduler: str,
        *,
        plugin: str,
        uploads: Path,
        replays: Path,
        settings: RefereeSettings,
        connect_timeout_s: float = 10.0,
        retry_s: float = 5.0,
        notice: Callable[[str], None] = print_notice,
    ) -> None:
        self.scheduler = scheduler
        self.plugin = plugin
        self.uploads = uploads
        self.replays = replays
        self.settings = settings
        self.connect_timeout_s = connect_timeout_s
        self.retry_s = retry_s
        self.notice = notice
        self._client: Client | None = None
        self._shipped: set[str] = set()
        """Digests whose ``BotPackage`` is registered with the current client's scheduler."""
        self._connecting = trio.Lock()
        self._shipping = trio.Lock()
        self._famiglia: InstalledFamiglia | None = None
        self._warned = False
        self._away = ""
        """Why the cluster cannot play now, said once; empty while it plays."""
        self._keys = itertools.count(1)
        self._in_play: Counter[str] = Counter()
        """Games in play by seat digest: a package is unregistered only once no game of it is in play."""
        self._kept: set[str] | None = None
        """The digests the loop still seats (``keep``); None until it says."""

    # --- reaching the cluster ------------------------------------------------------

    def check_reachable(self) -> None:
        """Before the server starts: DaskUnreachable within seconds when the scheduler does not answer,
        WrongFamiglia when one of its workers runs another famiglia than this host."""
        quiet_dask_logs()
        client = self._connect()
        try:
            check_workers(client)
        finally:
            _close(client)

    def _connect(self) -> Client:
        if not self._warned and (warning := clear_text_warning(self.scheduler)) is not None:
            self.notice(warning)
        self._warned = True
        return connect_client(self.scheduler, self.connect_timeout_s)

    def _open(self) -> Client:
        """A client with the ladder's plugin registered on every worker; blocking, run in a thread."""
        if self._famiglia is None:
            self._famiglia = installed_famiglia()
        setup = msgspec.msgpack.encode(LadderSetup(settings=self.settings, famiglia=self._famiglia))
        client = self._connect()
        try:
            check_workers(client, self._famiglia)
            client.register_plugin(LadderPlugin(setup), name=self.plugin)
            workers = client.nthreads()
        except BaseException:
            _close(client)
            raise
        if not workers:
            # Games would wait in play with nothing said: say why once, at each connection.
            self.notice(
                f"waiting for workers: the Dask scheduler at {self.scheduler} has none; start them on each worker "
                f"machine with: famiglia worker start {self.scheduler}"
            )
        return client

    async def ready(self) -> None:
        """Return once a scheduler answers with the ladder's plugin registered, trying every ``retry_s``."""
        if self._client is not None and self._client.status == "running":
            return
        async with self._connecting:
            while self._client is None or self._client.status != "running":
                try:
                    client = await trio.to_thread.run_sync(self._open, abandon_on_cancel=True)
                except Exception as exc:  # noqa: BLE001  # unreachable, refused, or a worker's setup failed: try again
                    self._say_away(f"cannot play on the Dask scheduler at {self.scheduler} ({_one_line(exc)})")
                    await trio.sleep(self.retry_s)
                    continue
                self._client, self._shipped = client, set()
                self._back(f"reached the Dask scheduler at {self.scheduler} again: playing")

    def _say_away(self, why: str) -> None:
        """Say once, when games stop being played, why; until they are played again."""
        if not self._away:
            self.notice(f"{why}; the games in play go back to the queue; trying again every {self.retry_s:g} s")
            self._away = why

    def _back(self, line: str) -> None:
        if self._away:
            self.notice(line)
            self._away = ""

    def _lost(self, client: Client, why: str = "") -> NotPlayed:
        """The scheduler went away under ``client`` (or forgot the ladder's plugins): drop it (once), for
        ``ready`` to connect and register them again; the game waits its turn again."""
        why = why or f"lost the Dask scheduler at {self.scheduler}"
        if self._client is client:
            self._client = None
            self._say_away(why)
            _close_later(client)
        return NotPlayed(why)

    def _current(self, client: Client) -> bool:
        return self._client is client

    # --- playing -------------------------------------------------------------------

    async def play(self, spec: MatchSpec, seats: list[Seat], replay: Path) -> MatchRecord:
        digests = {seat.digest for seat in seats}
        self._in_play.update(digests)
        try:
            return await self._play(spec, seats, replay)
        finally:
            self._in_play.subtract(digests)
            self._forget_unkept()

    def keep(self, digests: set[str]) -> None:
        self._kept = set(digests)
        self._forget_unkept()

    def _forget_unkept(self) -> None:
        """Unregister the packages of versions no longer seated, once none of their games is in play: the
        scheduler and every worker hold each registered package in memory for as long as it is registered."""
        client = self._client
        if self._kept is None or client is None:
            return
        gone = [d for d in self._shipped if d not in self._kept and self._in_play[d] <= 0]
        if gone:
            self._shipped.difference_update(gone)
            names = [package_plugin(self.plugin, digest) for digest in gone]
            threading.Thread(target=_unregister, args=(client, names), name="famiglia-dask-forget", daemon=True).start()

    async def _play(self, spec: MatchSpec, seats: list[Seat], replay: Path) -> MatchRecord:
        client = self._client
        if client is None or client.status != "running":
            raise NotPlayed("no Dask scheduler now")
        try:
            for seat in seats:
                await self._ship(client, seat)
            shipped = [ShippedBot(name=seat.bot.name, spec=seat.bot, package=seat.digest) for seat in seats]
            request = msgspec.msgpack.encode(LadderGame(spec=spec, seats=shipped, replay=replay.name))
            key = f"{self.plugin}-{spec.match}-{next(self._keys)}"
            future = client.submit(play_ladder_game, self.plugin, request, key=key, pure=False, retries=0)
        except CLUSTER_LOST:
            raise self._lost(client) from None
        try:
            return await self._answer(client, future, replay)
        finally:
            # Unwanted now (answered, or the server stops): the scheduler forgets it, and a game not begun is not played.
            with contextlib.suppress(Exception):
                future.release()

    async def _ship(self, client: Client, seat: Seat) -> None:
        """Register the version's package with the cluster, the first time it plays on this client."""
        async with self._shipping:
            if seat.digest in self._shipped or not self._current(client):
                return  # shipped already, or the scheduler was lost meanwhile (the task's submit says so)
            package = await trio.to_thread.run_sync(upload_path(self.uploads, seat.digest).read_bytes)
            plugin = BotPackage(seat.digest, package)
            name = package_plugin(self.plugin, seat.digest)
            register = partial(client.register_plugin, plugin, name=name)
            await trio.to_thread.run_sync(register, abandon_on_cancel=True)
            self._shipped.add(seat.digest)

    async def _answer(self, client: Client, future: Future, replay: Path) -> MatchRecord:
        await _settled(future)
        while True:
            if future.status == "finished":
                try:
                    data = await trio.to_thread.run_sync(future.result, abandon_on_cancel=True)
                except CLUSTER_LOST:
                    if client.status == "running" and future.status in ("lost", "pending"):
                        continue  # its answer was lost with its worker: Dask computes it again
                    raise self._lost(client) from None
                record = await self._recorded(data, replay)
                self._back("the Dask workers play again")
                return record
            if future.status == "error":
                exc = await trio.to_thread.run_sync(future.exception, abandon_on_cancel=True)
                await self._failed(client, exc)
            if future.status == "cancelled" or client.status != "running":
                raise self._lost(client)
            # Lost with a worker after it finished and computed again: wait for it to settle again.
            with contextlib.suppress(Exception):
                await trio.to_thread.run_sync(future.exception, abandon_on_cancel=True)

    async def _failed(self, client: Client, exc: BaseException | None) -> None:
        """A task that raised: the game recorded as failed, or played again later when a worker is at fault."""
        if isinstance(exc, (NoReferee, NoPackage)):
            # A scheduler restarted while the client reconnected on its own knows no plugin of the ladder,
            # and a worker that refused the ladder's famiglia check is named again by the next check.
            raise self._lost(client, f"a Dask worker cannot play ({_one_line(exc)})")
        if isinstance(exc, KilledWorker):
            raise RefereeFailed(
                "the Dask workers playing it died every time: Dask gave up on it "
                f"({_one_line(exc)}); requeue it with famiglia ladder requeue"
            )
        if exc is not None and played_again_later(exc):  # its worker's fault, not the game's
            self._say_away(f"a Dask worker cannot play ({_one_line(exc)})")
            await trio.sleep(self.retry_s)  # not at once onto the same worker again
            raise NotPlayed(_one_line(exc))
        raise RefereeFailed(f"{type(exc).__name__} on a Dask worker: {_one_line(exc)}")

    async def _recorded(self, data: bytes, replay: Path) -> MatchRecord:
        answer = decode_answer(data)
        if answer.record is None:
            raise RefereeFailed(answer.error or f"Dask worker {answer.worker} answered without a record")
        return await trio.to_thread.run_sync(self._save_replay, answer.record, answer.files, replay)

    def _save_replay(self, record: MatchRecord, files: dict[str, bytes], replay: Path) -> MatchRecord:
        """Write the replay's files beside where the loop expects ``replay``; the record pointing at it."""
        make_private_dirs(self.replays)
        written = None
        for name, data in files.items():
            # Only this game's files, by plain name: what a worker of ours sends.
            if "/" in name or not name.startswith(replay.name):
                continue
            write_private(replay.parent / name, data)
            if name == replay.name:
                written = str(replay)
        return msgspec.structs.replace(record, replay=written)

    async def close(self) -> None:
        """Stop the workers' referees and drop the versions' packages, then disconnect."""
        client, self._client = self._client, None
        if client is not None:
            names = [self.plugin, *(package_plugin(self.plugin, digest) for digest in self._shipped)]
            with trio.CancelScope(shield=True), trio.move_on_after(15):
                await trio.to_thread.run_sync(_close, client, names, abandon_on_cancel=True)


async def _settled(future: Future) -> None:
    """Wait until Dask finished, failed or cancelled ``future``, without holding a thread meanwhile."""
    token = trio.lowlevel.current_trio_token()
    settled = trio.Event()

    def on_done(_: Future) -> None:  # on Dask's callback thread
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(settled.set)

    future.add_done_callback(on_done)
    await settled.wait()


def _unregister(client: Client, plugins: list[str]) -> None:
    """Unregister ``plugins`` while the scheduler answers (a scheduler gone has forgotten them anyway)."""
    if client.status == "running":
        for name in plugins:
            with contextlib.suppress(Exception):
                client.unregister_worker_plugin(name)


def _close(client: Client, plugins: list[str] | None = None) -> None:
    """Unregister ``plugins`` while the scheduler answers, then disconnect."""
    _unregister(client, plugins or [])
    with contextlib.suppress(Exception):
        client.close(timeout=10 if client.status == "running" else 2)


def _close_later(client: Client) -> None:
    """Disconnect a client whose scheduler went away, in a thread of its own: the loop does not wait for it."""
    threading.Thread(target=_close, args=(client,), name="famiglia-dask-close", daemon=True).start()


def _one_line(exc: BaseException | None) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
