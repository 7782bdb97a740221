"""A stand-in executor that finishes each game the moment it is handed out (tests of the store).

A module of its own, without pytest, so a child process that feeds a store
(``test_store_batches``) starts in a fraction of a second even on a busy machine.
"""

from __future__ import annotations

import trio

from protocol.messages import Result
from referee.match import MatchRecord, SeatTiming
from tournaments.hosting.executors.base import GameDone, Report, TournamentWork, WorkerFailed
from tournaments.hosting.schedule import ScheduledGame

__all__ = ["Instant", "finished"]


def finished(game: ScheduledGame) -> MatchRecord:
    """A made-up finished game of ``game``'s seating."""
    seats = len(game.seating)
    return MatchRecord(
        match=f"m{game.index}", game="vendetta", seed=game.seed, variants={}, names=[f"p{e}" for e in game.seating],
        result=Result(ranks=list(range(1, seats + 1)), scores=[0] * seats, winners=[0], forfeited=[],
                      ended_by="round_limit"),
        timings=[SeatTiming(decisions=1, total_ms=1.0, max_ms=1.0, bank_left_ms=0.0)] * seats, seconds=0.01,
    )  # fmt: skip


class Instant:
    """Finishes each game at once; remembers which games it was handed; fails after ``fail_after`` games if set."""

    def __init__(self, fail_after: int | None = None) -> None:
        self.handed: list[int] = []
        self.fail_after = fail_after

    async def run(self, work: TournamentWork, games: trio.MemoryReceiveChannel[ScheduledGame], report: Report) -> None:
        async with games:
            async for game in games:
                if self.fail_after is not None and len(self.handed) == self.fail_after:
                    raise WorkerFailed("a worker process was killed by signal 9")
                self.handed.append(game.index)
                await report(GameDone(game=game, record=finished(game)))
