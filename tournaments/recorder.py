"""Write a run's outcomes to its store in groups, from a thread, as fast as they come.

One transaction per game made the store the ceiling of a machine of fast bots:
each commit and each hand-over to a writer thread costs more than the rows of a
game. ``Recorder`` takes outcomes on a bounded queue and one writer task writes
every outcome waiting when it is free in one transaction (``Store.record_batch``),
so the slower the disk, the larger the groups.

What a crash costs: an outcome is acknowledged to its executor once it is
queued, not once it is committed. A run killed with outcomes still queued
leaves those games without a result row, and the next run plays them again;
a committed game is never played again (``Store.pending``). Ending on an error
of its own (a failed worker, Ctrl-C) the run first commits what is queued: those
games are finished and need not be played again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import trio

from referee.match import MatchRecord
from tournaments.executors.base import GameDone, Outcome
from tournaments.schedule import ScheduledGame
from tournaments.store import Store

__all__ = ["QUEUE", "Recorder"]

QUEUE = 1024
"""Outcomes waiting to be written before an executor must wait: the back pressure on a slow disk.

Also the most one transaction writes; a run killed loses at most this many
finished games more than with a commit per game (they are played again).
"""


class Recorder:
    """The only writer of a run's results: ``submit`` outcomes, ``run`` writes them; every game at most once."""

    def __init__(
        self, store: Store, on_recorded: Callable[[Outcome], None], versions: Sequence[int] | None = None
    ) -> None:
        self.store = store
        self.on_recorded = on_recorded
        # Each entrant's bot version in this run (tournaments.fingerprint), written with each of its seats.
        self.versions = versions
        self._in, self._out = trio.open_memory_channel[Outcome](QUEUE)
        self._accepted: set[int] = set()
        self._failed = False

    async def submit(self, outcome: Outcome) -> None:
        """Queue ``outcome`` (an executor's ``report``); waits while the queue is full.

        A second outcome for a game this run has taken already is dropped (a
        game retried after its worker was lost may come back twice).
        """
        if outcome.game.index in self._accepted:
            return
        self._accepted.add(outcome.game.index)
        await self._in.send(outcome)

    def close(self) -> None:
        """No more outcomes: ``run`` returns once it has written the queued ones."""
        self._in.close()

    async def run(self) -> None:
        """Write queued outcomes, grouped, until ``close``; if cancelled, write what is queued first."""
        try:
            async for first in self._out:
                await self._write([first, *self._waiting()])
        finally:
            try:
                rest = self._waiting()
                if rest and not self._failed:
                    with trio.CancelScope(shield=True):
                        await self._write(rest)
            finally:
                self._out.close()

    def _waiting(self) -> list[Outcome]:
        batch: list[Outcome] = []
        while len(batch) < QUEUE:
            try:
                batch.append(self._out.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                break
        return batch

    async def _write(self, batch: list[Outcome]) -> None:
        done: list[tuple[ScheduledGame, MatchRecord]] = []
        failed: list[tuple[ScheduledGame, str, str]] = []
        for outcome in batch:
            if isinstance(outcome, GameDone):
                done.append((outcome.game, outcome.record))
            else:
                failed.append((outcome.game, outcome.error, outcome.traceback))
        try:
            # Shielded: a write begun is finished, so a cancel never leaves a game
            # committed but unannounced.
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self.store.record_batch, done, failed, self.versions)
        except BaseException:
            self._failed = True  # the store cannot be written: nothing more is tried
            raise
        for outcome in batch:
            self.on_recorded(outcome)
