"""A match's clocks: each request's deadline, the watchdog that keeps it, and the words for running out.

Every request has a deadline of the decision allowance plus what is left in
the seat's bank plus the harness margin, measured on Trio's clock from the
moment the request has been written to the moment the answer's line is read.
Under the cpu clock the budget is the CPU time the seat's tree uses while it is
asked, with a wall-time backstop (``clock_backstop`` times the budget) for a
bot that sleeps or blocks.

The deadlines are kept by one watchdog task per match rather than a cancel
scope per request: opening and closing a Trio cancel scope costs about as much
as all the rest of the referee's own work on a decision. The decisions run in
one long-lived scope (``loop_scope``); the watchdog sleeps until the open
request's deadline and cancels that scope only when the request is really
overdue. It never calls back into the match: the match sees the cancelled
scope, takes the expired request (``take_expired``) and asks here for the
timeout to charge (``overdue``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import trio

from referee.errors import BotTimedOut
from referee.settings import RefereeSettings

__all__ = ["MatchClock", "OpenRequest"]


class OpenRequest:
    """The request the referee is waiting on: whose (a seat index), which, and until when."""

    __slots__ = ("backstop", "budget", "cpu_start", "deadline", "expired", "meter", "request", "seat")

    def __init__(self) -> None:
        self.seat = 0
        self.request = 0
        self.deadline = math.inf
        self.budget = math.inf
        self.expired = False  # the watchdog has cancelled the decision loop for it
        # Under the cpu clock: the seat's CPU meter, its reading when the request went
        # out, and the wall time past which the request ends whatever CPU it used.
        self.meter: Callable[[], int] | None = None
        self.cpu_start = 0
        self.backstop = math.inf


class MatchClock:
    """The deadlines of one match: the open request's, the game's wall limit, and the start-up limit."""

    def __init__(self, settings: RefereeSettings, now: Callable[[], float]) -> None:
        self.settings = settings
        self.now = now
        self.cpu_clock = settings.clock.mode == "cpu"
        self.backstop_factor = settings.clock.backstop
        self.wall_deadline = math.inf  # the game's wall limit (game_wall_ms), once it has begun
        self.open: OpenRequest | None = None  # the request being waited on
        self.decider: trio.lowlevel.Task | None = None  # the decision loop's task, once the decisions begin
        self.loop_scope = trio.CancelScope()  # the decision loop's; the watchdog cancels it on a timeout
        self.alarm = trio.CancelScope()  # the watchdog's sleep; its deadline is the next check
        self.alarm_at = math.inf  # that deadline: a scope's deadline is a property, this a plain read
        self.slot = OpenRequest()  # self.open, refilled for each request
        # The shortest budget a request can have: no request opened from now on ends sooner.
        self.min_budget_s = max(0.001, (settings.clock.time.move_ms + settings.clock.margin_ms) / 1000)
        self.allowance_s = settings.clock.time.move_ms / 1000
        self.startup_s = (settings.clock.time.startup_ms + settings.clock.margin_ms) / 1000
        self.margin_s = settings.clock.margin_ms / 1000

    def begin(self, began: float) -> None:
        """The game began at ``began``: its wall limit, if the host set one, runs from now."""
        if self.settings.clock.game_wall_ms > 0:
            self.wall_deadline = began + self.settings.clock.game_wall_ms / 1000

    # --- a decision ----------------------------------------------------------------

    def open_request(
        self, seat: int, request: int, bank_s: float, untimed: bool, meter: Callable[[], int] | None, usage: int
    ) -> OpenRequest:
        """Start the clock of ``request`` to ``seat``; ``meter`` and ``usage``: the seat's CPU meter and its reading now."""
        budget = math.inf if untimed else self.allowance_s + bank_s + self.margin_s
        now = self.now()
        deadline = now + budget
        if deadline > self.wall_deadline:  # noqa: PLR1730 - a comparison costs less than a call to min
            deadline = self.wall_deadline
        # One request is open at a time: its record is refilled rather than made anew.
        open_ = self.slot
        open_.seat, open_.request, open_.expired = seat, request, False
        open_.deadline, open_.budget = deadline, budget
        open_.meter = None
        if meter is not None and self.cpu_clock:
            open_.meter, open_.cpu_start = meter, usage
            open_.backstop = now + budget * self.backstop_factor
            if open_.backstop > self.wall_deadline:  # noqa: PLR1730 - as above
                open_.backstop = self.wall_deadline
        self.open = open_
        # Only when it is sooner (a seat with less bank left): setting a scope's
        # deadline costs microseconds, the comparison nothing.
        if deadline < self.alarm_at:
            self.alarm.deadline = self.alarm_at = deadline
        return open_

    def spent(self, open_: OpenRequest, wall: float, usage: int) -> float:
        """What the answered request costs its seat: ``wall`` seconds, or under the cpu clock the CPU its
        tree used (``usage``: the meter's reading now); BotTimedOut when that is over the budget."""
        if open_.meter is None:
            return wall
        elapsed = (usage - open_.cpu_start) / 1e9
        if elapsed > open_.budget:
            # Spent on more than one core between two looks of the watchdog: over all the same.
            raise BotTimedOut(
                f"used {elapsed * 1000:.0f} ms of CPU on request {open_.request}, "
                f"more than its {open_.budget * 1000:.0f} ms"
            )
        return elapsed

    async def watchdog(self) -> None:
        """Cancel the decision loop when the open request is overdue.

        Sleeps until the open request's deadline or, with none open (or one
        already expired), for the shortest budget a request can have: a request
        opened meanwhile cannot end sooner, unless its seat has less bank left
        than the open one, and then ``open_request`` moves the alarm forward. So
        the watchdog wakes about once per decision allowance, not once per decision.
        """
        while True:
            now = trio.current_time()
            open_ = self.open
            if open_ is not None and not open_.expired and now >= open_.deadline:
                if open_.meter is None:
                    open_.expired = True
                else:
                    # The cpu clock: the budget is CPU time, which runs no faster than the
                    # wall clock for a tree bounded to one core, so this is the first moment
                    # it can be spent. Not spent yet: look again when it could be.
                    left = open_.budget - (open_.meter() - open_.cpu_start) / 1e9
                    if left <= 0:
                        open_.expired = True
                    elif now < open_.backstop:
                        open_.deadline = min(now + left, open_.backstop)
                    elif self._decider_scheduled():
                        # The decision loop is due to run (its answer may be in): it goes first,
                        # then the watchdog looks again (``_decider_scheduled``).
                        await trio.lowlevel.checkpoint()
                        continue
                    else:
                        open_.deadline = open_.backstop  # what ran out: the wall-time bound (``overdue``)
                        open_.expired = True
                if open_.expired:
                    self.loop_scope.cancel()
            if open_ is not None and not open_.expired:
                alarm = open_.deadline
            else:
                alarm = now + self.min_budget_s
                if now < self.wall_deadline < alarm:
                    alarm = self.wall_deadline
            self.alarm_at = alarm
            with trio.CancelScope(deadline=alarm) as self.alarm:
                await trio.sleep_forever()

    def _decider_scheduled(self) -> bool:
        """Whether the decision loop's task is scheduled to run (Trio has handed it its I/O or a checkpoint's end).

        At the cpu clock's backstop, with CPU to spare. A referee kept off the
        CPU past the backstop (a host busier than its share) wakes with the
        deadline and the answer, if it came meanwhile, in the same pass of
        Trio's run loop, and the two tasks run in either order: the bot used
        less than its budget and answered, and the decision loop, run first,
        takes the answer, as a ready line found in the pipe after a late
        start-up check is taken. A seat whose decision loop is waiting (no
        answer, or half a line) times out at once. The loop cannot be kept
        scheduled for ever: a line has a length limit and writing one costs the
        bot CPU, both checked at each look. Trio has no public call for this;
        a Trio without the field reads as not scheduled (the timeout as before).
        """
        task = self.decider
        return task is not None and getattr(task, "_next_send_fn", None) is not None

    def take_expired(self) -> OpenRequest:
        """The request whose deadline passed (the watchdog cancelled the loop for it); none is open after."""
        open_, self.open = self.open, None
        assert open_ is not None and open_.expired
        return open_

    def overdue(self, open_: OpenRequest, bank_s: float) -> BotTimedOut:
        """The timeout of an expired request, saying which limit ran out; ``bank_s``: the seat's bank."""
        settings = self.settings
        if open_.deadline == self.wall_deadline:
            return BotTimedOut(f"the game's wall limit of {settings.clock.game_wall_ms / 1000:g} s ran out")
        allowance = f"({settings.clock.time.move_ms} ms + {bank_s * 1000:.0f} ms bank)"
        if open_.meter is not None and open_.deadline >= open_.backstop:
            return BotTimedOut(
                f"no answer to request {open_.request} within {open_.budget * settings.clock.backstop * 1000:.0f} "
                f"ms of wall time, the cpu clock's bound for a bot that sleeps or blocks "
                f"({settings.clock.backstop:g} x its {open_.budget * 1000:.0f} ms)"
            )
        if open_.meter is not None:
            return BotTimedOut(
                f"used more than {open_.budget * 1000:.0f} ms of CPU on request {open_.request} {allowance}"
            )
        return BotTimedOut(f"no answer to request {open_.request} within {open_.budget * 1000:.0f} ms {allowance}")

    # --- the start-up ----------------------------------------------------------------

    def startup_due(self) -> float:
        """When a greeting that starts now is out of time on the wall clock."""
        return trio.current_time() + self.startup_s

    def startup_backstop(self, due: float) -> float:
        """Under the cpu clock, the wall time a greeting due at ``due`` ends whatever CPU it used."""
        return due + (self.backstop_factor - 1) * self.startup_s

    def next_startup_check(self, meter: Callable[[], int] | None, cpu_start: int, backstop: float) -> float:
        """A greeting has not brought ``ready`` by its check time: the next one, or the timeout.

        Under the cpu clock the startup limit is CPU time too, for the same
        reason as a decision's: on a busy host thousands of bots starting at
        once wait for a core far longer than they use one. The wait goes on
        while the seat's tree has not used it, up to the backstop in wall time.
        """
        if meter is None:
            raise self.startup_timeout()
        now = trio.current_time()
        if now >= backstop:
            raise self.startup_timeout("backstop")
        left = self.startup_s - (meter() - cpu_start) / 1e9
        if left <= 0:
            raise self.startup_timeout("cpu")
        return min(now + left, backstop)

    def startup_timeout(self, on: str = "") -> BotTimedOut:
        """The seat said no ``ready`` in time; ``on``: "cpu" or "backstop" when the cpu clock ended it."""
        limit = self.settings.clock.time.startup_ms
        if on == "cpu":
            return BotTimedOut(f"no ready line within the startup limit of {limit} ms of CPU time")
        if on == "backstop":
            return BotTimedOut(
                f"no ready line within {limit * self.settings.clock.backstop:.0f} ms of wall time "
                f"({self.settings.clock.backstop:g} x the startup limit of {limit} ms), "
                "the cpu clock's bound for a bot that sleeps or blocks"
            )
        return BotTimedOut(f"no ready line within the startup limit of {limit} ms")
