"""Where a match's seats come from: a bot process started for the game (cold), or a warm one reused.

Cold seats start each bot for one game and stop it when the game ends. Warm
seats come from a ``WarmPool``: each entrant's bot is started once and reused
for game after game. Starting an interpreter costs tens of milliseconds, a
decision microseconds, so a tournament of short games spends most of its time
starting bots unless processes are reused. The protocol allows it: after
``end`` the same process gets the next ``start``.

Each pooled process lives in a task of the pool's nursery, inside ``open_bot``,
so its cleanup (EOF, grace, SIGTERM, SIGKILL of its group) runs however the
pool ends. A process that failed in a game (forfeit, crash) or exited after
its game is never handed out again; the next game starts a fresh one.

A bot that cannot be started, either way, still takes its seat as a
``DeadBot`` (referee.channel): the match goes on and the seat is charged with the start error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager

import trio

from referee.bots import BotSpec
from referee.channel import BotChannel, DeadBot
from referee.errors import BotCrashed, BotError
from referee.match import Replace
from referee.process import BotProcess, open_bot
from referee.settings import RefereeSettings

__all__ = ["Seated", "WarmPool", "cold_seats", "open_pool", "warm_seats"]


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
        # Once closing, the pool starts and keeps nothing: a game still in play
        # when its referee stops may ask for a replacement, which would then
        # outlive the pool and hold its nursery open.
        self._closed = False
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
        if self._closed:
            return DeadBot(spec.name, BotCrashed("the referee is stopping"))
        idle = [] if fresh else self._idle.get(self._key(spec), [])
        for index in range(len(idle) - 1, -1, -1):
            held = idle[index]
            # Looked at again now, not only at its last game's end: a line the bot began after that
            # end, on a loaded machine, may have come only since (glued to its next ready line).
            if held.bot.process.returncode is not None or not held.bot.healthy or not held.bot.clean_after_end():
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
        if self._closed:  # closed while this one started
            started.close.set()
            return DeadBot(spec.name, BotCrashed("the referee is stopping"))
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
        if reusable and not self._closed:
            self._idle.setdefault(self._key(spec), []).append(held)
        else:
            held.close.set()

    def close_all(self) -> None:
        self._closed = True
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


class Seated:
    """The channels of one match's seats, in seat order, and what the seat source adds to the match."""

    def __init__(self, channels: list[BotChannel], replace: Replace | None = None) -> None:
        self.channels = channels
        self.replace = replace
        self.stderr: list[str] = []
        """Each seat's kept stderr, filled once the game ended normally and the seats were given back."""


@asynccontextmanager
async def cold_seats(
    bots: Sequence[BotSpec | BotChannel], settings: RefereeSettings, dead: Mapping[int, BotError]
) -> AsyncIterator[Seated]:
    """A process started for each ``BotSpec`` seat, stopped when the block ends; a ready channel used as it is.

    ``dead``: seats (by index) that cannot start, with the error they fail with.
    """
    seated = Seated([])
    async with AsyncExitStack() as stack:
        for seat, bot in enumerate(bots):
            if seat in dead:
                seated.channels.append(DeadBot(bot.name, dead[seat]))
            elif not isinstance(bot, BotSpec):
                seated.channels.append(bot)
            else:
                try:
                    seated.channels.append(await stack.enter_async_context(open_bot(bot, settings)))
                except BotError as error:
                    seated.channels.append(DeadBot(bot.name, error))
        yield seated
    # The bots are stopped now, so their stderr is complete.
    seated.stderr = [channel.stderr_text() for channel in seated.channels]


@asynccontextmanager
async def warm_seats(
    bots: Sequence[BotSpec | BotChannel], pool: WarmPool, dead: Mapping[int, BotError], *, deal: int
) -> AsyncIterator[Seated]:
    """Each ``BotSpec`` seat's process from ``pool`` (for a game of deal ``deal``), given back when the block ends.

    A seat whose reused process breaks at ``start`` gets a fresh one
    (``Seated.replace``). A game that did not end normally may leave a process
    mid-conversation: then none of them is handed to another game.
    """
    seated = Seated([DeadBot("", BotCrashed("not started"))] * len(bots))
    channels = seated.channels

    async def take(seat: int) -> None:
        bot = bots[seat]
        if seat in dead:
            channels[seat] = DeadBot(bot.name, dead[seat])
        elif isinstance(bot, BotSpec):
            channels[seat] = await pool.acquire(bot, deal=deal)
        else:
            channels[seat] = bot

    async def replace(seat: int) -> BotChannel | None:
        old, bot = channels[seat], bots[seat]
        if not isinstance(bot, BotSpec) or not pool.was_reused(old):
            return None
        pool.discard(old)
        channels[seat] = await pool.acquire(bot, fresh=True, deal=deal)
        return channels[seat]

    seated.replace = replace
    try:
        # Start (or wake) the seats' processes together: cold starts overlap.
        async with trio.open_nursery() as nursery:
            for seat in range(len(bots)):
                nursery.start_soon(take, seat)
        yield seated
        # Taken before the processes go back: the next game that takes one resets its stderr.
        seated.stderr = [channel.stderr_text() for channel in channels]
    except BaseException:
        for channel in channels:
            pool.discard(channel)
        raise
    finally:
        for seat, channel in enumerate(channels):
            bot = bots[seat]
            if isinstance(bot, BotSpec):
                pool.release(channel, bot)
