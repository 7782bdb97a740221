"""A stand-in executor that finishes each game the moment it is handed out (tests of the store).

A module of its own, without pytest, so a child process that feeds a store
(``test_store_batches``) starts in a fraction of a second even on a busy machine.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from protocol.messages import Result
from referee.match import MatchRecord, MatchSpec, SeatTiming
from tournaments.hosting.executors.base import Competition, Seat
from tournaments.hosting.faults import NotPlayed
from tournaments.hosting.schedule import ScheduledGame

__all__ = ["Instant", "finished"]


def finished(game: ScheduledGame) -> MatchRecord:
    """A made-up finished game of ``game``'s seating."""
    return _finished(f"m{game.index}", game.seed, [f"p{e}" for e in game.seating])


def _finished(match: str, seed: int, names: list[str]) -> MatchRecord:
    seats = len(names)
    return MatchRecord(
        match=match, game="vendetta", seed=seed, variants={}, names=names,
        result=Result(ranks=list(range(1, seats + 1)), scores=[0] * seats, winners=[0], forfeited=[],
                      ended_by="round_limit"),
        timings=[SeatTiming(decisions=1, total_ms=1.0, max_ms=1.0, bank_left_ms=0.0)] * seats, seconds=0.01,
    )  # fmt: skip


class Instant:
    """Finishes each game at once, one at a time, in the order handed; remembers which games (by index) it
    was handed; after ``fail_after`` games, if set, it cannot play any more (as a dead worker process)."""

    def __init__(self, fail_after: int | None = None) -> None:
        self.handed: list[int] = []
        self.fail_after = fail_after
        self.slots = trio.CapacityLimiter(1)

    @asynccontextmanager
    async def open(self, competition: Competition) -> AsyncIterator[None]:
        yield

    async def ready(self) -> None:
        return

    async def play(self, spec: MatchSpec, seats: Sequence[Seat], replay: Path | None) -> MatchRecord:
        if self.fail_after is not None and len(self.handed) == self.fail_after:
            raise NotPlayed("a worker process was killed by signal 9")
        self.handed.append(int(spec.match.rsplit("#", 1)[1]))  # the tournament's match id ends with the game's index
        return _finished(spec.match, spec.seed, [seat.bot.name for seat in seats])

    def keep(self, archives: Collection[Path]) -> None:
        return
