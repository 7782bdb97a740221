"""A match's clocks: each seat's bank and meters, each request's deadline and charge, the watchdog.

``SeatClock`` is one seat's side: its bank, what it has been charged, the
meter of its bot's tree (the CPU time it used) and the freezer that holds the
tree between its requests when it was caught running unasked. ``MatchClock``
is the match's side: it opens a request (``open_request``), keeps its
deadline with one watchdog task, and closes it (``close``): what the decision
cost the seat, out of its allowance and then its bank.

Every request has a deadline of the decision allowance plus what is left in
the seat's bank plus the harness margin, measured on Trio's clock from the
moment the request has been written to the moment the answer's line is read.
Under the cpu clock the budget is the CPU time the seat's tree uses while it is
asked, with a wall-time backstop (``Clock.backstop`` times the budget) for a
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

from referee.channel import ChannelBase
from referee.errors import BotTimedOut
from referee.match import trio_peek
from referee.match.values import SeatTiming
from referee.settings import Clock

__all__ = ["RAN_UNASKED_NS", "Greeting", "MatchClock", "OpenRequest", "SeatClock"]

RAN_UNASKED_NS = 2_000_000
"""CPU time a bot's tree may use between its answer and its next request (finishing its write,
its runtime's housekeeping) before it counts as running on the others' time: from then on its
tree is frozen between its requests (``ChannelBase.hold``)."""


class SeatClock:
    """One seat's clock: its bank, its charges, its meter and its freezer."""

    __slots__ = ("bank_s", "bot", "decisions", "hold", "holdable", "max_s", "meter", "rested", "total_s", "untimed")

    def __init__(self, bot: ChannelBase, bank_s: float) -> None:
        self.bank_s = bank_s
        self.decisions = 0
        self.total_s = 0.0
        self.max_s = 0.0
        self.take_seat(bot)

    def take_seat(self, bot: ChannelBase) -> None:
        """Time ``bot`` (at the start, or a fresh process in place of a broken one) with what it offers."""
        self.bot = bot
        # The CPU meter of its tree; how to freeze the tree between its requests (when the host
        # can and does not let bots ponder); and that, already, for a process caught running
        # unasked in an earlier game.
        self.meter = bot.meter
        self.holdable = bot.hold if bot.can_hold else None
        self.hold = self.holdable if bot.restless else None
        self.rested = -1  # its tree's CPU time when its last answer was read (-1: none yet)
        self.untimed = bot.untimed  # a person at the terminal plays without a clock

    def rests(self, usage: int) -> None:
        """Before a request: ``usage`` is its tree's CPU time now. One that ran while it was not asked
        is frozen between its requests from now on (and in its process's later games); a quiet bot
        never pays for a freeze."""
        if self.hold is None and self.holdable is not None and 0 <= self.rested < usage - RAN_UNASKED_NS:
            self.hold = self.holdable
            self.bot.restless = True

    def idle(self) -> None:
        """The seat has answered (or said ready): a seat held between its requests is frozen until the next."""
        if self.hold is not None:
            self.hold()

    def charge(self, elapsed: float, allowance: float) -> None:
        """The decision cost ``elapsed`` seconds: over the allowance comes out of the bank."""
        if not self.untimed and elapsed > allowance:
            self.bank_s = max(0.0, self.bank_s - (elapsed - allowance))
        self.decisions += 1
        self.total_s += elapsed
        if elapsed > self.max_s:  # noqa: PLR1730 - a comparison costs less than a call to max
            self.max_s = elapsed

    def timing(self) -> SeatTiming:
        """How long the seat thought in this match, for its record."""
        return SeatTiming(
            decisions=self.decisions,
            total_ms=round(self.total_s * 1000, 3),
            max_ms=round(self.max_s * 1000, 3),
            bank_left_ms=round(self.bank_s * 1000, 3),
        )


class OpenRequest:
    """The request the referee is waiting on: whose, which, since and until when."""

    __slots__ = ("backstop", "budget", "cpu_start", "deadline", "expired", "metered", "request", "seat", "start")

    def __init__(self, seat: SeatClock) -> None:
        self.seat = seat
        self.request = 0
        self.start = 0.0  # when the request was in the pipe: the wall time the decision is measured from
        self.deadline = math.inf
        self.budget = math.inf
        self.expired = False  # the watchdog has cancelled the decision loop for it
        # Under the cpu clock: the seat's CPU meter is what runs out, from its reading when the
        # request went out, and the wall time past which the request ends whatever CPU it used.
        self.metered = False
        self.cpu_start = 0
        self.backstop = math.inf

    def cpu_used_s(self) -> float:
        """The CPU the seat's tree has used on this request so far, in seconds (a metered request)."""
        meter = self.seat.meter
        assert meter is not None
        return (meter() - self.cpu_start) / 1e9


class Greeting:
    """A seat's wait for its ready line: when to look next, and whether the limit ran out at a look."""

    __slots__ = ("backstop", "check_at", "clock", "cpu_start", "seat")

    def __init__(self, clock: MatchClock, seat: SeatClock, due: float) -> None:
        self.clock = clock
        self.seat = seat
        self.check_at = due  # the first moment the startup limit can have run out
        self.backstop = due
        self.cpu_start = 0
        if clock.cpu_clock and seat.meter is not None and not seat.untimed:
            self.cpu_start = seat.meter()
            self.backstop = due + (clock.backstop_factor - 1) * clock.startup_s

    def look(self) -> None:
        """The ready line has not come by ``check_at``: move it to the next look, or time the seat out.

        Under the cpu clock the startup limit is CPU time too, for the same
        reason as a decision's: on a busy host thousands of bots starting at
        once wait for a core far longer than they use one. The wait goes on
        while the seat's tree has not used it, up to the backstop in wall time.
        """
        clock, meter = self.clock, self.seat.meter
        if not clock.cpu_clock or meter is None or self.seat.untimed:
            raise clock.startup_timeout()
        now = trio.current_time()
        if now >= self.backstop:
            raise clock.startup_timeout("backstop")
        left = clock.startup_s - (meter() - self.cpu_start) / 1e9
        if left <= 0:
            raise clock.startup_timeout("cpu")
        self.check_at = min(now + left, self.backstop)


class MatchClock:
    """The deadlines of one match: the open request's, the game's wall limit, and the start-up limit."""

    def __init__(self, clock: Clock, now: Callable[[], float]) -> None:
        self.settings = clock
        self.now = now
        self.cpu_clock = clock.mode == "cpu"
        self.backstop_factor = clock.backstop
        self.wall_deadline = math.inf  # the game's wall limit (game_wall_ms), once it has begun
        self.open: OpenRequest | None = None  # the request being waited on
        self.decider: trio.lowlevel.Task | None = None  # the decision loop's task, once the decisions begin
        self.loop_scope = trio.CancelScope()  # the decision loop's; the watchdog cancels it on a timeout
        self.alarm = trio.CancelScope()  # the watchdog's sleep; its deadline is the next check
        self.alarm_at = math.inf  # that deadline: a scope's deadline is a property, this a plain read
        self.slot: OpenRequest | None = None  # self.open, refilled for each request
        # The shortest budget a request can have: no request opened from now on ends sooner.
        self.min_budget_s = max(0.001, (clock.time.move_ms + clock.margin_ms) / 1000)
        self.allowance_s = clock.time.move_ms / 1000
        self.startup_s = (clock.time.startup_ms + clock.margin_ms) / 1000
        self.margin_s = clock.margin_ms / 1000

    def begin(self, began: float) -> None:
        """The game began at ``began``: its wall limit, if the host set one, runs from now."""
        if self.settings.game_wall_ms > 0:
            self.wall_deadline = began + self.settings.game_wall_ms / 1000

    def seat(self, bot: ChannelBase) -> SeatClock:
        """A clock for a seat played by ``bot``, with the bank of a game's start."""
        return SeatClock(bot, self.settings.time.bank_ms / 1000)

    # --- a decision ----------------------------------------------------------------

    def open_request(self, seat: SeatClock, request: int) -> OpenRequest:
        """Start the clock of ``request`` to ``seat``, before it is written (while a frozen tree is still frozen)."""
        meter = seat.meter
        usage = 0
        if meter is not None:
            usage = meter()
            seat.rests(usage)
        budget = math.inf if seat.untimed else self.allowance_s + seat.bank_s + self.margin_s
        now = self.now()
        deadline = now + budget
        if deadline > self.wall_deadline:  # noqa: PLR1730 - a comparison costs less than a call to min
            deadline = self.wall_deadline
        # One request is open at a time: its record is refilled rather than made anew.
        open_ = self.slot
        if open_ is None:
            open_ = self.slot = OpenRequest(seat)
        open_.seat, open_.request, open_.expired = seat, request, False
        open_.deadline, open_.budget = deadline, budget
        open_.metered = meter is not None and self.cpu_clock
        if open_.metered:
            open_.cpu_start = usage
            open_.backstop = now + budget * self.backstop_factor
            if open_.backstop > self.wall_deadline:  # noqa: PLR1730 - as above
                open_.backstop = self.wall_deadline
        self.open = open_
        # Only when it is sooner (a seat with less bank left): setting a scope's
        # deadline costs microseconds, the comparison nothing.
        if deadline < self.alarm_at:
            self.alarm.deadline = self.alarm_at = deadline
        return open_

    def close(self, open_: OpenRequest, end: float) -> float:
        """The answer to ``open_`` was read at ``end``: what the decision costs its seat, in seconds,
        charged to it (its allowance, then its bank); BotTimedOut when that is over its budget.

        The seat is frozen first if it is held between requests, and its meter
        read after: what its tree uses from then on ran while it was not asked.
        Under the cpu clock the cost is the CPU its tree used for the decision
        (the wait for a CPU on a busy host is not its), else the wall time.
        """
        self.open = None
        seat = open_.seat
        if seat.hold is not None:
            seat.hold()  # until its next request (or notice): it is not asked meanwhile
        meter = seat.meter
        if meter is not None:
            usage = seat.rested = meter()
        if open_.metered:
            elapsed = (usage - open_.cpu_start) / 1e9
            if elapsed > open_.budget:
                # Spent on more than one core between two looks of the watchdog: over all the same.
                raise BotTimedOut(
                    f"used {elapsed * 1000:.0f} ms of CPU on request {open_.request}, "
                    f"more than its {open_.budget * 1000:.0f} ms"
                )
        else:
            elapsed = end - open_.start
        seat.charge(elapsed, self.allowance_s)
        return elapsed

    def abandon(self) -> None:
        """The open request ended without an answer (the seat failed): none is open now."""
        self.open = None

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
                if not open_.metered:
                    open_.expired = True
                else:
                    # The cpu clock: the budget is CPU time, which runs no faster than the
                    # wall clock for a tree bounded to one core, so this is the first moment
                    # it can be spent. Not spent yet: look again when it could be.
                    left = open_.budget - open_.cpu_used_s()
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
        bot CPU, both checked at each look. Trio has no public call for this
        (``trio_peek.scheduled``).
        """
        task = self.decider
        return task is not None and trio_peek.scheduled(task)

    def take_expired(self) -> OpenRequest:
        """The request whose deadline passed (the watchdog cancelled the loop for it); none is open after."""
        open_, self.open = self.open, None
        assert open_ is not None and open_.expired
        return open_

    def overdue(self, open_: OpenRequest) -> BotTimedOut:
        """The timeout of an expired request, saying which limit ran out."""
        clock = self.settings
        if open_.deadline == self.wall_deadline:
            return BotTimedOut(f"the game's wall limit of {clock.game_wall_ms / 1000:g} s ran out")
        allowance = f"({clock.time.move_ms} ms + {open_.seat.bank_s * 1000:.0f} ms bank)"
        if open_.metered and open_.deadline >= open_.backstop:
            return BotTimedOut(
                f"no answer to request {open_.request} within {open_.budget * clock.backstop * 1000:.0f} "
                f"ms of wall time, the cpu clock's bound for a bot that sleeps or blocks "
                f"({clock.backstop:g} x its {open_.budget * 1000:.0f} ms)"
            )
        if open_.metered:
            return BotTimedOut(
                f"used more than {open_.budget * 1000:.0f} ms of CPU on request {open_.request} {allowance}"
            )
        return BotTimedOut(f"no answer to request {open_.request} within {open_.budget * 1000:.0f} ms {allowance}")

    # --- the start-up ----------------------------------------------------------------

    def startup_due(self) -> float:
        """When a greeting that starts now is out of time on the wall clock."""
        return trio.current_time() + self.startup_s

    def greeting(self, seat: SeatClock, due: float) -> Greeting:
        """The clock of ``seat``'s wait for its ready line, out of time on the wall clock at ``due``."""
        return Greeting(self, seat, due)

    def startup_timeout(self, on: str = "") -> BotTimedOut:
        """The seat said no ``ready`` in time; ``on``: "cpu" or "backstop" when the cpu clock ended it."""
        limit = self.settings.time.startup_ms
        if on == "cpu":
            return BotTimedOut(f"no ready line within the startup limit of {limit} ms of CPU time")
        if on == "backstop":
            return BotTimedOut(
                f"no ready line within {limit * self.settings.backstop:.0f} ms of wall time "
                f"({self.settings.backstop:g} x the startup limit of {limit} ms), "
                "the cpu clock's bound for a bot that sleeps or blocks"
            )
        return BotTimedOut(f"no ready line within the startup limit of {limit} ms")
