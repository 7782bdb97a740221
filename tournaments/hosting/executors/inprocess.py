"""The in-process executor: Trio referees in this process, up to ``concurrency`` games at once.

Its bot processes come from one pool (``referee.seats``): kept warm from game
to game when the competition asks for it, else one fresh process per seat and
game. Every bot is built once, the first time it is seated (``local_bots``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from referee.match import MatchRecord, MatchSpec
from referee.play import play_match
from referee.seats import WarmPool, open_pool
from tournaments.hosting.executors.base import Competition, Seat
from tournaments.hosting.executors.local_bots import LocalBots

__all__ = ["InProcessExecutor"]


class InProcessExecutor:
    """Referee every game in this process, with one pool of bot processes for all of them."""

    def __init__(self, concurrency: int = 1) -> None:
        self.slots = trio.CapacityLimiter(max(1, concurrency))
        self._pool: WarmPool | None = None
        self._bots: LocalBots | None = None

    @asynccontextmanager
    async def open(self, competition: Competition) -> AsyncIterator[None]:
        settings = competition.settings
        # max_games=1: a fresh process per game, stopped after it.
        async with open_pool(settings, max_games=0 if competition.warm else 1) as pool:
            self._pool, self._bots = pool, LocalBots(settings)
            try:
                yield
            finally:
                self._pool = self._bots = None

    async def ready(self) -> None:
        return

    async def play(self, spec: MatchSpec, seats: Sequence[Seat], replay: Path | None) -> MatchRecord:
        pool, bots = self._pool, self._bots
        if pool is None or bots is None:
            raise RuntimeError("InProcessExecutor.play outside its open() block")
        ready, dead = await bots.seat(seats)
        return await play_match(spec, ready, pool.settings, pool=pool, replay_path=replay, unavailable=dead)

    def keep(self, archives: Collection[Path]) -> None:
        return  # nothing is shipped anywhere
