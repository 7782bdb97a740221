"""The ladder's engine room: the submissions' checks and the match loop, in one Trio nursery.

``Ladder.run`` starts by making the store whole again after whatever stopped
the last run: games that were being played go back to pending (their partial
replays removed) and are played again; submissions that were queued or being
checked are checked again. Then ``checks_at_once`` tasks check submissions
(each check bounded in wall time, ``ladder.submissions.check_seconds``), one
task keeps the active versions' bots ready (a version reinstated or lifted
while the server runs is built here), and ``concurrency`` tasks play games: each takes the oldest pending game, or
deals a new table (``ladder.matchmaking``) when none is pending, and hands it
to the executor (``tournaments.hosting.executors``, as a tournament does: in
this process, or on a Dask cluster), then records what came back.

Everything that touches the store runs on the Trio thread, between awaits, so
each store call is whole and no two interleave.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import random
import sqlite3
import traceback
from pathlib import Path

import msgspec
import trio

from ladder.build_logs import keep_build_log
from ladder.config import LadderConfig, LadderPaths
from ladder.final import closed_line, run_season
from ladder.fixed_keys import keep_fixed_keys
from ladder.health import FAULTS, HealthRule
from ladder.matchmaking import choose_table, table_seatings, table_size
from ladder.seasons import SeasonBook
from ladder.shares import ShareBook, seat_seconds
from ladder.store import EntrantRow, LadderStore, fit_input
from ladder.submissions import Verdict, check_submission, ready_bot, upload_path
from ladder.views import FitStanding, fit_standings
from protocol.untrusted import terminal_text
from referee.bots import BotBuildFailed, BotSpec, BotSpecError
from referee.match import MatchSpec
from referee.private import make_private_dirs
from referee.settings import RefereeSettings
from tournaments.hosting.executors.base import Competition, Executor, Seat
from tournaments.hosting.executors.inprocess import InProcessExecutor
from tournaments.hosting.faults import NotPlayed, RefereeFailed, failure_of, machine_fault
from tournaments.hosting.settings import referee_settings

__all__ = ["FIT_REST", "Ladder", "ScheduledFit", "competition_name"]

_IDLE_S = 0.5
"""How long a player waits before looking again when there is nothing to play (too few active versions)."""
FIT_REST = 3.0
"""After a scheduled fit, the refitter waits this many times as long as the fit took: fits take at most a
quarter of one core (bench/ladder_scale.py: a fit of two million games takes a minute or more)."""
_BOTS_LOOK_S = 2.0
"""How often the bots' keeper looks for versions made active or stopped from outside (the CLI's lift, retire)."""


def competition_name(db: Path) -> str:
    """What names a ladder's work on a cluster: the same at every start of that ladder, so a restart
    replaces what the last run registered instead of leaving it on the scheduler."""
    return "famiglia-ladder-" + hashlib.sha256(str(db.resolve()).encode()).hexdigest()[:12]


class ScheduledFit(msgspec.Struct, frozen=True, kw_only=True):
    """The latest scheduled Plackett-Luce fit: its rows, when it was made, and over how many games."""

    rows: list[FitStanding]
    fitted: str
    games: int


class Ladder:
    """One ladder's store, bots and loops; the web app reads and writes through it."""

    def __init__(
        self,
        config: LadderConfig,
        paths: LadderPaths,
        *,
        stop_after: int | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.config = config
        self.paths = paths
        self.store = LadderStore(paths.db)
        try:
            keep_fixed_keys(self.store, config, paths.config)
        except ValueError:
            self.store.close()
            raise
        self.settings: RefereeSettings = referee_settings(config.time, config.sandbox, config.illegal_action)
        self.executor: Executor = executor if executor is not None else InProcessExecutor(config.concurrency)
        """Who plays each game: in this process, or on a Dask cluster (``tournaments.hosting.executors.choice``)."""
        self.bots: dict[int, BotSpec] = {}
        """Ready-to-start bots of the active versions, by version id."""
        self.played = 0
        self.stop_after = stop_after
        self._rng = random.Random()
        self._tables = 0
        self.shares = ShareBook()
        """Each entrant's games in flight and recent game time: what bounds its share of the tables."""
        self._queue_in, self._queue_out = trio.open_memory_channel[int](10_000)
        self._changed = trio.Event()
        self.fit: ScheduledFit | None = None
        """The latest scheduled fit, replaced whole when a new one is done (readers never see half of one)."""
        self._since_fit = 0
        self._fit_due = trio.Event()
        self.seasons = SeasonBook(self.store)
        """The ladder's seasons: the deadline closes the current one and its final decides it (``ladder.final``)."""
        self.health = HealthRule(window=config.health.window, failed_fraction=config.health.failed_fraction)
        self._bots_due = trio.Event()
        self._checking: set[int] = set()
        self._unready: set[int] = set()
        """Active versions whose bot could not be made ready here: said once, not tried again until restart."""

    def season_closed(self) -> str | None:
        """The line refusing submissions and challenges once the season's deadline passed; None while open."""
        return closed_line(self.config, self.seasons.current(), datetime.datetime.now(datetime.UTC))

    # --- submissions -------------------------------------------------------------

    def enqueue(self, version: int) -> None:
        """Have a recorded version checked (the web app calls this after storing an upload)."""
        self._queue_in.send_nowait(version)

    def wake(self) -> None:
        """Have idle players look for a game now (the admin page resumed the ladder or requeued a game),
        instead of at their next idle timeout."""
        self._changed.set()

    def wake_bots(self) -> None:
        """Have the bots' keeper look at the active versions now (the admin page lifted a suspension)."""
        self._bots_due.set()

    async def _check_submissions(self) -> None:
        """One of ``checks_at_once`` checkers: each takes the next queued version, so a slow check holds
        only its own checker."""
        async for version_id in self._queue_out:
            version = self.store.version(version_id)
            if version.state not in ("queued", "checking") or version_id in self._checking:
                continue
            self._checking.add(version_id)
            try:
                await self._check(version_id)
            finally:
                self._checking.discard(version_id)

    async def _check(self, version_id: int) -> None:
        version = self.store.version(version_id)
        self.store.set_checking(version_id)
        try:
            verdict, spec = await check_submission(
                self.paths.uploads, version.digest, version.entrant, self.config.game, self.settings
            )
        except Exception as exc:  # noqa: BLE001  # the harness's fault costs this submission, not the server
            traceback.print_exc()
            reason = f"the ladder could not check it ({type(exc).__name__}); submit again or tell the host"
            verdict, spec = Verdict(accepted=False, reason=reason, report=""), None
        keep_build_log(self.paths, version_id, verdict.build_output)  # before the verdict that shows it
        self.store.decide(version_id, accepted=verdict.accepted, reason=verdict.reason, report=verdict.report)
        if spec is not None and self.store.version(version_id).state == "active":
            self.bots[version_id] = spec
        self._bots_due.set()

    async def _keep_bots(self) -> None:
        """Hold a ready bot for every active version and none other: after each verdict and suspension,
        and every few seconds for what the host's commands changed in the store."""
        while True:
            self._bots_due = trio.Event()
            await self._ready_bots()
            self.executor.keep({self.upload(v) for v in self.bots})
            self._changed.set()
            with trio.move_on_after(_BOTS_LOOK_S):
                await self._bots_due.wait()

    async def _ready_bots(self) -> None:
        """Drop the bots of versions no longer active; build those of active versions that lack one."""
        active = {v.id: v for v in self.store.versions(states=("active",))}
        for old in [v for v in self.bots if v not in active]:
            del self.bots[old]
        for version in active.values():
            if version.id in self.bots or version.id in self._unready:
                continue
            try:
                self.bots[version.id] = await trio.to_thread.run_sync(
                    ready_bot, self.paths.uploads, version.digest, version.entrant, self.settings
                )
            except (BotBuildFailed, BotSpecError, OSError) as exc:
                self._unready.add(version.id)
                # The reason may quote the build's output: shown, never obeyed by the terminal.
                print(terminal_text(f"version {version.number} of {version.entrant} cannot start here: {exc}"))

    # --- games ---------------------------------------------------------------------

    def upload(self, version: int) -> Path:
        """The version's upload: its bot's folder packed, which an executor that plays elsewhere ships."""
        return upload_path(self.paths.uploads, self.store.version(version).digest)

    def competition(self) -> Competition:
        """What every game of the ladder shares, for its executor: each game's bots started for it."""
        return Competition(name=competition_name(self.paths.db), settings=self.settings, warm=False)

    def replay_path(self, game: int) -> Path:
        return self.paths.replays / f"game-{game:06d}.jsonl"

    def _clear_attempt(self, game: int) -> None:
        """What an interrupted attempt at ``game`` left: its partial replay and stderr files."""
        replay = self.replay_path(game)
        for path in replay.parent.glob(f"{replay.name}*"):
            path.unlink(missing_ok=True)

    def next_game(self) -> tuple[int, int, list[int]] | None:
        """The next game to play, now running; None while the host paused the ladder or no table can be filled
        (not even from entrants past their share of games in flight: a game in flight must end first).

        No entrant takes more than its share (``ladder.shares``): a pending game waits while one of its
        entrants is past it, and a new table is dealt from those within it when none is playable (while
        at most ``concurrency`` tables are pending; past that the pending game least past them plays).
        """
        if self.store.paused() or self.season_closed() is not None:
            return None  # a closed season's tables stop: its final plays the frozen versions instead
        owners = {version: name for version, name in self.store.active_owners().items() if version in self.bots}
        entrants, slots = len(set(owners.values())), self.config.concurrency
        size = table_size(self.config.table_sizes, len(owners), self._tables)

        def choose(pending: list[tuple[int, list[int]]]) -> int | None:
            """The pending game to play: the first within every entrant's shares (or no longer playable, to be
            failed below); else None, to deal a new table, while few tables are pending; else the least past them."""
            for index, (_, seating) in enumerate(pending):
                if any(version not in owners for version in seating):
                    return index
                if self.shares.within([owners[v] for v in seating], len(seating), entrants, slots):
                    return index
            if size is not None and len({table for table, _ in pending}) <= slots:
                return None
            playable = [i for i, (_, seating) in enumerate(pending) if not any(held(v, len(seating)) for v in seating)]
            if not playable:
                return None if size is not None else 0
            return min(playable, key=lambda i: (load(pending[i][1]), i))

        def held(version: int, seats: int) -> bool:
            return self.shares.held(owners[version], seats, entrants, slots)

        def load(seating: list[int]) -> tuple[int, int]:
            return self.shares.load([owners[v] for v in seating], len(seating), entrants)

        while (started := self.store.start_next(choose)) is not None:
            game, _, seating = started
            if all(version in owners for version in seating):
                return started
            # A version retired since (famiglia ladder retire), or whose bot cannot start here any more
            # (its cached build was removed and fails now): the game is not played.
            self.store.fail(game, "a seat's version is no longer active or not ready on this server")
        if size is None:
            return None
        seatable = set(self.shares.seatable(owners, size, slots))
        if len(seatable) < size:
            return None  # only entrants held to their games in flight could fill it: one of those ends first
        self._tables += 1
        candidates = [c for c in self.store.candidates() if c.version in owners and c.version in seatable]
        members = choose_table(candidates, size, self._rng)
        table = self.store.add_table(self._rng.getrandbits(62), members, table_seatings(members))
        return self.store.start_next(lambda pending: next(i for i, (t, _) in enumerate(pending) if t == table))

    def challenge(self, challenger: EntrantRow, opponents: list[str]) -> tuple[int, int]:
        """Queue a table of ``challenger``'s active version against ``opponents``' (entrant names), played
        before the loop's own tables in every seating of one deal: (table id, games).

        ValueError saying what is wrong with the request; RateLimited past the ladder's hourly limit.
        """
        if self.config.challenges.per_hour == 0:
            raise ValueError("this ladder takes no challenges")
        if (closed := self.season_closed()) is not None:
            raise ValueError(closed)
        size = len(opponents) + 1
        if size not in self.config.table_sizes:
            sizes = ", ".join(str(s - 1) for s in self.config.table_sizes)
            raise ValueError(f"name {sizes} opponents: this ladder plays tables of {self.config.table_sizes}")
        active = {v.entrant: v for v in self.store.versions(states=("active",)) if v.id in self.bots}
        mine = active.get(challenger.name)
        if mine is None:
            raise ValueError("you have no version playing yet; challenges wait for an accepted submission")
        if len(set(opponents)) != len(opponents) or challenger.name in opponents:
            raise ValueError("name each opponent once, and not yourself")
        missing = [name for name in opponents if name not in active]
        if missing:
            raise ValueError(f"no version of {missing[0]!r} is playing")
        members = [mine.id, *(active[name].id for name in opponents)]
        seatings = table_seatings(members)
        table = self.store.add_challenge(
            challenger.id, self.config.challenges.per_hour, self._rng.getrandbits(62), members, seatings
        )
        self._changed.set()
        return table, len(seatings)

    async def _player(self, done: trio.CancelScope) -> None:
        while True:
            # While the cluster is away, games stay pending (shown so) instead of running nowhere.
            await self.executor.ready()
            started = self.next_game()
            if started is None:
                with trio.move_on_after(_IDLE_S):
                    await self._changed.wait()
                self._changed = trio.Event()
                continue
            if not await self._play(*started):
                continue
            self.played += 1
            if self.stop_after is not None and self.played >= self.stop_after:
                done.cancel()

    async def _play(self, game: int, seed: int, seating: list[int]) -> bool:
        """Play ``game`` and record it; False when it went back to pending, unplayed (its cluster went away)."""
        spec = MatchSpec(game=self.config.game, seed=seed, variants=self.config.variants, match=f"ladder-{game}")
        replay = self.replay_path(game)
        seats = [Seat(bot=self.bots[v], archive=self.upload(v)) for v in seating]
        entrants = [self.store.version(v).entrant for v in seating]
        self.shares.started(game, entrants)
        began = trio.current_time()
        try:
            record = await self.executor.play(spec, seats, replay)
        except NotPlayed:
            self.shares.ended(game, None)
            self._clear_attempt(game)
            self.store.put_back(game)
            return False
        except RefereeFailed as exc:  # the harness failed it on a worker: its line, recorded as is
            self.shares.ended(game, seat_seconds(trio.current_time() - began, entrants, [0.0] * len(seating), []))
            self.store.fail(game, exc.error)
            return True
        except Exception as exc:  # an unexpected error costs this game only, recorded with it
            if machine_fault(exc):
                # The machine's fault, not the game's (a full disk under its replay): every game would fail
                # alike, so the server stops, saying why, and its restart plays this game again.
                raise
            self.shares.ended(game, seat_seconds(trio.current_time() - began, entrants, [0.0] * len(seating), []))
            self.store.fail(game, failure_of(exc).error)
            traceback.print_exc()
            return True
        # The wall time the game held its slot, each seat charged its own part: what it cost the ladder.
        faulted = {t.seat for t in record.result.terminations if t.kind in FAULTS}
        thought = [timing.total_ms / 1000 for timing in record.timings]
        failed = [seat in faulted for seat in range(len(seating))]
        self.shares.ended(game, seat_seconds(trio.current_time() - began, entrants, thought, failed))
        for suspended in self.store.finish(game, record, self.health):
            instead = "; its previous version plays again" if suspended.reinstated is not None else ""
            print(terminal_text(f"version {suspended.number} of {suspended.entrant} {suspended.note}{instead}"))
            self._bots_due.set()
        self.count_for_fit()
        return True

    def count_for_fit(self) -> None:
        """One more finished game: wake the refitter once ``fit_every`` of them came in since its last fit."""
        self._since_fit += 1
        if self.config.rating.fit_every and self._since_fit >= self.config.rating.fit_every:
            self._fit_due.set()

    async def _refitter(self) -> None:
        """Refit whenever ``fit_every`` games finished since the last fit, and once at start.

        The fit is CPU-bound and grows with the ladder: its games are read and fitted in worker threads, on
        a connection of their own (the store's stays on the Trio thread), so pages are served meanwhile. A
        fit that fails (it diverged, or ran out of memory) is said in one line and the board keeps the last
        one: the games and pages go on, and the next due fit tries again.
        """
        if not self.config.rating.fit_every:
            return
        while True:
            self._since_fit = 0
            self._fit_due = trio.Event()
            started = trio.current_time()
            fitted = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
            rows, versions = await trio.to_thread.run_sync(fit_input, self.paths.db)  # seconds on a large ladder
            if rows:
                try:
                    ranked = await trio.to_thread.run_sync(fit_standings, rows, versions)
                except (ValueError, ArithmeticError, MemoryError) as exc:  # numpy's and scipy's errors among them
                    print(
                        f"the scheduled fit of {len(rows)} games failed ({type(exc).__name__}: {exc}); the board keeps the last one"
                    )
                else:
                    self.fit = ScheduledFit(rows=ranked, fitted=fitted, games=len(rows))
            # A fit of a large ladder takes longer than fit_every games: rest a multiple of its time, so
            # that refitting takes at most a share of one core, however fast the games come in.
            await trio.sleep((trio.current_time() - started) * FIT_REST)
            await self._fit_due.wait()

    # --- the whole -----------------------------------------------------------------

    async def _restore(self) -> None:
        """The active versions' bots made ready, then the submissions left unchecked queued again."""
        await self._ready_bots()  # before any player looks: a pending game's seats must find their bots
        for version in self.store.versions(states=("queued", "checking")):
            self.enqueue(version.id)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Restore, then check submissions and play games until cancelled (or ``stop_after`` games).

        Started (the web server may serve) once the store is whole again, before the bots are readied: at
        2,000 active versions that takes a minute of CPU (bench/ladder_scale.py), which the games wait for
        and the pages need not. Until then a challenge is refused as if no version played yet.
        """
        make_private_dirs(self.paths.replays)
        self._put_back_running()  # left running by a server that was killed
        with trio.CancelScope() as done:
            try:
                # Every game in play, and its bots, stopped when the executor's block ends.
                async with self.executor.open(self.competition()), trio.open_nursery() as nursery:
                    task_status.started()
                    await self._restore()
                    for _ in range(self.config.checks_at_once):
                        nursery.start_soon(self._check_submissions)
                    nursery.start_soon(self._keep_bots)
                    nursery.start_soon(self._refitter)
                    nursery.start_soon(run_season, self, self.seasons)
                    for _ in range(self.config.concurrency):
                        nursery.start_soon(self._player, done)
            finally:
                # Stopped (--stop-after, Ctrl-C, an error) with games in play: the next start would put
                # them back, but until then the store and the replays would say more than was recorded.
                # A store or disk failing now (the error that stopped the loop, perhaps) leaves them to
                # that start: the error on its way out is the one to show.
                with contextlib.suppress(sqlite3.Error, OSError):
                    self._put_back_running()

    def _put_back_running(self) -> None:
        """Games left running are pending again, without what their attempts left (a partial replay, or
        a whole one never recorded, and stderr files): they are played again."""
        for game in self.store.reset_running():
            self._clear_attempt(game)

    async def run_until_stopped(
        self, everything: trio.CancelScope, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """``run``, then cancel ``everything`` (the web server with it) once ``stop_after`` games were played."""
        await self.run(task_status=task_status)
        everything.cancel()
