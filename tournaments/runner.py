"""Play a tournament's pending games: concurrently, on every core, resumably.

Games run inside Trio referees: in this process when one worker is asked for,
else in W worker processes (``tournaments.worker``) that take games over a pipe
and send back match records, so every core referees. Whatever executes them,
each finished game is written to the store in its own transaction, from a
thread, so the referee's loop never waits on the disk.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path

import msgspec
import trio

from protocol.untrusted import bounded
from referee.bots import BotBuildFailed, BotSpec, BotSpecError
from referee.errors import BotCrashed
from referee.games import UnknownGame
from referee.games.base import UnknownVariant
from referee.match import BotChannel, MatchRecord, MatchSpec, run_match
from referee.play import DeadBot, play_match, prepare_bots, save_stderr
from referee.private import make_private_dirs
from referee.process import signal_name
from referee.replay import tournament_match_id
from referee.sandbox import SandboxUnavailable
from referee.settings import RefereeSettings
from tournaments.config import TournamentConfig
from tournaments.pool import WarmPool, open_pool
from tournaments.schedule import ScheduledGame
from tournaments.store import Store, StoreError

__all__ = [
    "GameDone",
    "GameFailed",
    "Job",
    "WorkerFailed",
    "WorkerSetup",
    "default_workers",
    "harness_failure",
    "play_scheduled",
    "prepare_replays",
    "replay_path",
    "replays_folder",
    "run_pending",
]

OnResult = Callable[[ScheduledGame, MatchRecord], None]
OnFailure = Callable[["GameFailed"], None]
ShouldStop = Callable[[], bool]


class WorkerFailed(RuntimeError):
    """A worker process died or sent something unreadable."""


class WorkerSetup(msgspec.Struct, tag="setup", tag_field="type", kw_only=True):
    """The first line to a worker: what it plays and how."""

    config: TournamentConfig
    bots: list[BotSpec]
    settings: RefereeSettings
    concurrency: int
    tournament: str
    """The tournament's id (``Store.tournament_id``): it names the replays."""


class Job(msgspec.Struct, tag="job", tag_field="type", kw_only=True):
    """One game for a worker to play."""

    game: ScheduledGame


class GameDone(msgspec.Struct, tag="done", tag_field="type", kw_only=True):
    """A worker's answer: the game and its record."""

    game: ScheduledGame
    record: MatchRecord


class GameFailed(msgspec.Struct, tag="failed", tag_field="type", kw_only=True):
    """A game the harness failed to referee: an unexpected exception (a bug of famiglia), with its traceback."""

    game: ScheduledGame
    error: str
    traceback: str


# Faults of the machine or of the tournament's setup: the same for every game,
# so they stop the run (to be fixed and resumed) instead of costing each game.
_STOPS_THE_RUN = (
    OSError, MemoryError, StoreError, SandboxUnavailable, BotSpecError, BotBuildFailed, UnknownGame, UnknownVariant,
)  # fmt: skip
_MAX_TRACEBACK = 64 << 10


def harness_failure(game: ScheduledGame, exc: Exception) -> GameFailed | None:
    """``exc``, raised while refereeing ``game``, as that game's harness error; None if it must stop the run."""
    if isinstance(exc, _STOPS_THE_RUN):
        return None
    if isinstance(exc, ExceptionGroup):
        stops, _ = exc.split(_STOPS_THE_RUN)
        if stops is not None:
            return None
    leaf: BaseException = exc
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    text = "".join(traceback.format_exception(exc))
    if len(text) > _MAX_TRACEBACK:
        text = text[: _MAX_TRACEBACK // 2] + "\n[... cut ...]\n" + text[-_MAX_TRACEBACK // 2 :]
    return GameFailed(game=game, error=bounded(f"{type(leaf).__name__}: {leaf}", 300), traceback=text)


def default_workers() -> int:
    """One worker per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def settings_for(config: TournamentConfig) -> RefereeSettings:
    return RefereeSettings(
        time=config.time,
        illegal_action=config.illegal_action,
        sandbox=config.sandbox,
        limits=config.limits,
        margin_ms=config.margin_ms,
        game_wall_s=config.game_wall_ms / 1000,
    )


def replays_folder(config: TournamentConfig, tournament: str) -> Path | None:
    """Where a tournament's replays go: a folder of its own inside the file's ``replays`` folder.

    Named by the tournament id, which is unique per store, so tournaments
    that share a ``replays`` folder never write each other's files.
    """
    if config.replays is None:
        return None
    return Path(config.replays) / tournament


def replay_path(config: TournamentConfig, tournament: str, game: ScheduledGame) -> Path | None:
    folder = replays_folder(config, tournament)
    return None if folder is None else folder / f"game-{game.index:06d}.jsonl"


def prepare_replays(config: TournamentConfig, tournament: str, pending: list[ScheduledGame]) -> None:
    """Make the tournament's replay folder (0700) and clear what a stopped run left of pending games.

    A pending game has no result, so any file of it in this tournament's own
    folder is from an attempt that did not finish: the game is played again
    and writes it anew. Nothing of another tournament is touched.
    """
    folder = replays_folder(config, tournament)
    if folder is None:
        return
    make_private_dirs(folder)
    for game in pending:
        path = replay_path(config, tournament, game)
        assert path is not None
        for leftover in (path, path.with_name(path.name + ".partial"), *folder.glob(f"{path.name}.seat*.stderr")):
            leftover.unlink(missing_ok=True)


async def play_scheduled(
    config: TournamentConfig,
    bots: list[BotSpec],
    settings: RefereeSettings,
    game: ScheduledGame,
    pool: WarmPool | None = None,
    *,
    tournament: str,
) -> MatchRecord:
    """Play one scheduled game: the entrants of its seating, its deal seed.

    ``tournament`` is the tournament's id: the match id and the replay's name
    say which game of which tournament this is.

    With a pool, the seats' processes are warm ones reused across games;
    without, each game starts and stops its own.
    """
    spec = MatchSpec(
        game=config.game, seed=game.seed, variants=config.variants, match=tournament_match_id(tournament, game.index)
    )
    seat_bots = [bots[e] for e in game.seating]
    replay = replay_path(config, tournament, game)
    if pool is None:
        return await play_match(spec, seat_bots, settings, replay_path=replay)
    channels: list[BotChannel] = [DeadBot("", BotCrashed("not started"))] * len(seat_bots)

    async def take(seat: int) -> None:
        channels[seat] = await pool.acquire(seat_bots[seat])

    async def replace(seat: int) -> BotChannel | None:
        old = channels[seat]
        if not pool.was_reused(old):
            return None
        pool.discard(old)
        channels[seat] = await pool.acquire(seat_bots[seat], fresh=True)
        return channels[seat]

    try:
        # Start (or wake) the seats' processes together: cold starts overlap.
        async with trio.open_nursery() as nursery:
            for seat in range(len(seat_bots)):
                nursery.start_soon(take, seat)
        record = await run_match(
            spec, channels, settings, replay_path=replay, commands=[b.command for b in seat_bots], replace=replace
        )
        if replay is not None:
            save_stderr(replay, channels)
    except BaseException:
        # A game that did not end normally may leave a process mid-conversation:
        # none of them is handed to another game.
        for channel in channels:
            pool.discard(channel)
        raise
    finally:
        for seat, channel in enumerate(channels):
            pool.release(channel, seat_bots[seat])
    return record


async def run_pending(
    config: TournamentConfig,
    store: Store,
    *,
    concurrency: int,
    workers: int,
    on_result: OnResult,
    should_stop: ShouldStop = lambda: False,
    on_failure: OnFailure = lambda failure: None,
) -> int:
    """Play every game of the store's schedule that has no result yet; how many were played.

    ``should_stop`` is asked before each game starts (a sequential test that has
    decided); games already running finish and are recorded. A game that
    raises an unexpected exception is recorded as a harness error
    (``Store.record_harness_error``, then ``on_failure``) and the others go on;
    faults of the machine or the setup (a full disk, a sandbox missing) stop the run.
    """
    pending = store.pending()
    if not pending or should_stop():
        return 0
    settings = settings_for(config)
    bots = prepare_bots([entrant.bot for entrant in config.entrants], settings)
    tournament = store.tournament_id()
    prepare_replays(config, tournament, pending)
    write_lock = trio.Lock()
    played = 0

    async def finished(game: ScheduledGame, record: MatchRecord) -> None:
        nonlocal played
        async with write_lock:
            await trio.to_thread.run_sync(store.record, game, record)
        played += 1
        on_result(game, record)

    async def failed(failure: GameFailed) -> None:
        async with write_lock:
            await trio.to_thread.run_sync(store.record_harness_error, failure.game, failure.error, failure.traceback)
        on_failure(failure)

    jobs_in, jobs_out = trio.open_memory_channel[ScheduledGame](0)

    async def feed() -> None:
        async with jobs_in:
            for game in pending:
                if should_stop():
                    break
                await jobs_in.send(game)

    async with open_pool(settings) as pool, trio.open_nursery() as nursery:
        nursery.start_soon(feed)
        if workers <= 1:
            warm = pool if config.reuse_processes else None
            for _ in range(concurrency):
                nursery.start_soon(
                    _play_from, jobs_out.clone(), config, bots, settings, warm, tournament, finished, failed
                )
        else:
            per_worker = max(1, math.ceil(concurrency / workers))
            setup = WorkerSetup(
                config=config, bots=bots, settings=settings, concurrency=per_worker, tournament=tournament
            )
            for _ in range(workers):
                nursery.start_soon(_drive_worker, jobs_out.clone(), setup, finished, failed)
        await jobs_out.aclose()
    return played


async def _play_from(
    jobs: trio.MemoryReceiveChannel[ScheduledGame],
    config: TournamentConfig,
    bots: list[BotSpec],
    settings: RefereeSettings,
    pool: WarmPool | None,
    tournament: str,
    finished: Callable[[ScheduledGame, MatchRecord], Awaitable[None]],
    failed: Callable[[GameFailed], Awaitable[None]],
) -> None:
    async with jobs:
        async for game in jobs:
            try:
                record = await play_scheduled(config, bots, settings, game, pool, tournament=tournament)
            except Exception as exc:
                if (failure := harness_failure(game, exc)) is None:
                    raise
                await failed(failure)
                continue
            await finished(game, record)


_encoder = msgspec.json.Encoder()
_done_decoder = msgspec.json.Decoder(GameDone | GameFailed)


async def _drive_worker(
    jobs: trio.MemoryReceiveChannel[ScheduledGame],
    setup: WorkerSetup,
    finished: Callable[[ScheduledGame, MatchRecord], Awaitable[None]],
    failed: Callable[[GameFailed], Awaitable[None]],
) -> None:
    """Keep one worker process busy with up to ``setup.concurrency`` games."""
    from protocol.codec import LineReader, StreamClosed

    slots = trio.Semaphore(setup.concurrency)
    in_flight = 0
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "tournaments.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    try:
        await stdin.send_all(_encoder.encode(setup) + b"\n")

        async def send_jobs() -> None:
            nonlocal in_flight
            async with jobs:
                while True:
                    await slots.acquire()
                    try:
                        game = await jobs.receive()
                    except trio.EndOfChannel:
                        slots.release()
                        break
                    in_flight += 1
                    await stdin.send_all(_encoder.encode(Job(game=game)) + b"\n")
            # Wait for the answers, then tell the worker there is no more work.
            for _ in range(setup.concurrency):
                await slots.acquire()
            await stdin.aclose()

        async def read_results() -> None:
            nonlocal in_flight
            reader = LineReader(stdout, 64 << 20)
            while True:
                try:
                    line = await reader.readline()
                except StreamClosed:
                    if in_flight:
                        how = await _how_it_ended(process)
                        raise WorkerFailed(f"a worker process {how} with {in_flight} games unfinished") from None
                    return
                try:
                    done = _done_decoder.decode(line)
                except msgspec.DecodeError as exc:
                    raise WorkerFailed(f"a worker sent an unreadable line: {exc}") from None
                in_flight -= 1
                if isinstance(done, GameFailed):
                    await failed(done)
                else:
                    await finished(done.game, done.record)
                slots.release()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(send_jobs)
            nursery.start_soon(read_results)
    finally:
        with trio.CancelScope(shield=True):
            # Closing its stdin makes a worker cancel its games and stop its bots.
            await stdin.aclose()
            with trio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def _how_it_ended(process: trio.Process) -> str:
    """How a worker whose output closed ended: its exit code or signal, if it exits within a second."""
    with trio.move_on_after(1):
        await process.wait()
    code = process.returncode
    if code is None:
        return "stopped answering"
    if code < 0:
        return f"was killed by {signal_name(-code)}"
    return f"exited with code {code}"
