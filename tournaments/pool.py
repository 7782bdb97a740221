"""Warm bot processes: start each entrant's bot once, reuse it for game after game.

Starting an interpreter costs tens of milliseconds, a decision microseconds, so
a tournament of short games spends most of its time starting bots unless
processes are reused. The protocol allows it: after ``end`` the same process
gets the next ``start``.

Each process lives in a task of the pool's nursery, inside ``open_bot``, so its
cleanup (EOF, grace, SIGTERM, SIGKILL of its group) runs however the pool ends.
A process that failed in a game (forfeit, crash) or exited after its game is
never handed out again; the next game starts a fresh one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from referee.bots import BotSpec
from referee.errors import BotError
from referee.match import BotChannel
from referee.play import DeadBot
from referee.process import BotProcess, open_bot
from referee.settings import RefereeSettings

__all__ = ["WarmPool", "open_pool"]


class _Held:
    """A pooled process, the deals it has seen, and the event that tells its holder task to close it."""

    __slots__ = ("bot", "close", "deal", "seen")

    def __init__(self, bot: BotProcess) -> None:
        self.bot = bot
        self.close = trio.Event()
        self.seen: set[int] = set()
        self.deal: int | None = None  # the deal of the game it plays now


class WarmPool:
    """Idle bot processes per spec, reused across games."""

    def __init__(self, nursery: trio.Nursery, settings: RefereeSettings, *, max_games: int = 0) -> None:
        self._nursery = nursery
        self.settings = settings
        self.max_games = max_games  # 0: reuse without limit
        self._idle: dict[tuple[str, str], list[_Held]] = {}
        self._busy: dict[int, _Held] = {}
        self.started = 0
        self.reused = 0

    @staticmethod
    def _key(spec: BotSpec) -> tuple[str, str]:
        return (spec.cwd, "\0".join(spec.command))

    async def acquire(self, spec: BotSpec, *, fresh: bool = False, deal: int | None = None) -> BotChannel:
        """A running process for ``spec``: an idle warm one (unless ``fresh``), else a new one.

        ``deal``: the game's deal seed. A process never gets a deal it has
        played before: duplicate deals replay one deal with the seats rotated,
        and a process that remembered the first game would know every hidden
        card and chance outcome of the next.
        """
        idle = [] if fresh else self._idle.get(self._key(spec), [])
        for index in range(len(idle) - 1, -1, -1):
            held = idle[index]
            if held.bot.process.returncode is not None or not held.bot.healthy:
                del idle[index]
                held.close.set()
                continue
            if deal is not None and deal in held.seen:
                continue  # stays idle for games of other deals
            del idle[index]
            self.reused += 1
            held.bot.stderr.reset()
            held.deal = deal
            self._busy[id(held.bot)] = held
            return held.bot
        try:
            started: _Held = await self._nursery.start(self._hold, spec)
        except BotError as error:
            return DeadBot(spec.name, error)
        self.started += 1
        started.deal = deal
        self._busy[id(started.bot)] = started
        return started.bot

    def was_reused(self, bot: BotChannel) -> bool:
        """Whether ``bot`` had played a game before this one."""
        held = self._busy.get(id(bot))
        return held is not None and held.bot.games_played > 0

    def discard(self, bot: BotChannel) -> None:
        """Close a process that must not be used again."""
        held = self._busy.pop(id(bot), None)
        if held is not None:
            held.close.set()

    def release(self, bot: BotChannel, spec: BotSpec) -> None:
        """Give a process back after its game; a failed or exited one is closed."""
        held = self._busy.pop(id(bot), None)
        if held is None:
            return
        held.bot.games_played += 1
        if held.deal is not None:
            held.seen.add(held.deal)
        held.bot.end_game()  # nothing it started outlives this game
        reusable = (
            held.bot.healthy
            and held.bot.process.returncode is None
            and (self.max_games == 0 or held.bot.games_played < self.max_games)
        )
        if reusable:
            self._idle.setdefault(self._key(spec), []).append(held)
        else:
            held.close.set()

    def close_all(self) -> None:
        for idle in self._idle.values():
            for held in idle:
                held.close.set()
        self._idle.clear()
        for held in self._busy.values():
            held.close.set()

    async def _hold(self, spec: BotSpec, *, task_status: trio.TaskStatus[_Held] = trio.TASK_STATUS_IGNORED) -> None:
        async with open_bot(spec, self.settings) as bot:
            held = _Held(bot)
            task_status.started(held)
            await held.close.wait()


@asynccontextmanager
async def open_pool(settings: RefereeSettings, *, max_games: int = 0) -> AsyncIterator[WarmPool]:
    """A pool whose every process is stopped when the block ends."""
    async with trio.open_nursery() as nursery:
        pool = WarmPool(nursery, settings, max_games=max_games)
        try:
            yield pool
        finally:
            pool.close_all()
