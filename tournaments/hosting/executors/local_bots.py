"""Seats made ready on this machine: each distinct bot built once, or the error its seats fail with.

The executors that play here (``inprocess``, and ``processes`` on behalf of
its worker processes) build a bot the first time a game seats it, in its
sandbox (``referee.play.prepare_entrants``), and reuse what came of that for
every later game. A bot whose build fails, or whose files its sandbox cannot
show it, takes its seats all the same and fails there ("cannot start: ..."),
so one entrant's broken bot costs its own seats, never a game or a run.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import trio

from referee.bots import BotSpec
from referee.errors import BotCrashed, BotError
from referee.play import prepare_entrants
from referee.settings import RefereeSettings
from tournaments.hosting.executors.base import Seat

__all__ = ["LocalBots"]


class LocalBots:
    """Every bot seated so far, ready to start here or the error its seats fail with."""

    def __init__(self, settings: RefereeSettings) -> None:
        self.settings = settings
        self._ready: dict[tuple[str, tuple[str, ...]], BotSpec | BotError] = {}
        self._preparing: dict[tuple[str, tuple[str, ...]], trio.Lock] = {}

    async def seat(self, seats: Sequence[Seat]) -> tuple[list[BotSpec], dict[int, BotError]]:
        """Each seat's bot ready to start (as given where it cannot be), and the seats that cannot start."""
        bots: list[BotSpec] = []
        dead: dict[int, BotError] = {}
        for index, seat in enumerate(seats):
            ready = await self._prepared(seat.bot)
            if isinstance(ready, BotError):
                bots.append(seat.bot)
                dead[index] = ready
            else:
                # Two entrants may run one bot: built once, each seat under its own entrant's name.
                bots.append(
                    ready if ready.name == seat.bot.name else msgspec.structs.replace(ready, name=seat.bot.name)
                )
        return bots, dead

    async def _prepared(self, bot: BotSpec) -> BotSpec | BotError:
        key = (bot.cwd, tuple(bot.command))
        # One build per bot, however many games wait for it at once.
        async with self._preparing.setdefault(key, trio.Lock()):
            if key not in self._ready:
                ready, failed = await trio.to_thread.run_sync(prepare_entrants, [bot], self.settings)
                self._ready[key] = BotCrashed(f"cannot start: {failed[0]}") if failed else ready[0]
            return self._ready[key]
