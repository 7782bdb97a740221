"""Keeping the Trio thread fair: one match yields to the others once it has held the thread for its slice.

An answer that is already in the pipe is read without a trip through Trio's
scheduler (referee.match.intake), so a match whose bots all answer at once
could hold the thread for as long as its game lasts. ``FairSlice`` counts the
CPU a match has run since it last waited, and lets the other tasks run once
that passes ``FAIR_SLICE_S``.
"""

from __future__ import annotations

import select
import time
from collections.abc import Callable

import trio

from referee.match import trio_peek

__all__ = ["FAIR_SLICE_S", "FairSlice"]

FAIR_SLICE_S = 0.000_5
"""The longest a match runs decisions whose answers were already there before it lets the other tasks run.

Counted in the thread's CPU time since the match last waited or yielded: while
the process is preempted (by the bots it wakes, on a busy machine) no task
runs, whoever holds the thread, so that time is not this match's to give back.
Half a millisecond is about a dozen decisions against bots that answer at once:
the other games' answers wait that much longer to be read at the most, far
below the harness margin on every deadline (``margin_ms``), while a yield,
which costs as much as a third of a decision, comes once per dozen decisions."""


class FairSlice:
    """How long one match has held the Trio thread since it last waited, and giving it up when that is too long."""

    __slots__ = ("cpu", "due", "now", "wake_fd", "wake_poll")

    def __init__(self, now: Callable[[], float]) -> None:
        self.now = now
        # The slice (FAIR_SLICE_S) began at the thread CPU time cpu. The CPU clock is a
        # system call, the wall clock is not and runs no slower: the slice cannot be
        # over before the wall time due.
        self.cpu = time.thread_time()
        self.due = now() + FAIR_SLICE_S
        self.wake_poll = select.poll()  # Trio's epoll descriptor, for others_waiting
        self.wake_fd = -1

    async def keep(self, now: float) -> None:
        """Let the other tasks run if this match has held the thread for its slice; ``now`` is a wall time past ``due``."""
        spent = time.thread_time() - self.cpu
        if spent < FAIR_SLICE_S:
            self.due = now + (FAIR_SLICE_S - spent)  # the soonest the CPU clock can get there
            return
        if not self.others_waiting():
            # No other task to let run (one match alone in its referee): a pass through
            # Trio's run loop would cost the CPU of a third of a decision for nothing.
            self.restart()
            return
        await trio.lowlevel.cancel_shielded_checkpoint()
        self.restart()

    def others_waiting(self) -> bool:
        """Whether another Trio task may have something to do now: one runnable, a deadline
        passed, or I/O ready that the run loop has not collected (its epoll descriptor is
        readable). True whenever ``trio_peek.idle_wait`` cannot tell."""
        idle = trio_peek.idle_wait()
        if idle is None:
            return True
        wake_fd = idle[1]
        if wake_fd != self.wake_fd:  # a poll object per match: never shared between threads
            self.wake_poll = select.poll()
            self.wake_poll.register(wake_fd, select.POLLIN)
            self.wake_fd = wake_fd
        return bool(self.wake_poll.poll(0))

    def restart(self) -> None:
        """The match has just waited or yielded: its slice starts again."""
        self.cpu = time.thread_time()
        self.due = self.now() + FAIR_SLICE_S
