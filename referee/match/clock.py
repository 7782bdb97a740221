"""A match's clocks: each seat's bank and meters, each request's deadline and charge, the watchdog.

``SeatClock`` is one seat's side: its bank, what it has been charged, the
meters of its bot's tree (the CPU time it used, the time it waited for a CPU)
and the freezer that holds the tree between its requests when it was caught
running unasked. ``MatchClock`` is the match's side: it opens a request
(``open_request``), keeps its deadline with one watchdog task, and closes it
(``close``): what the decision cost the seat, out of its allowance and then its
bank.

Every request has a budget of the decision allowance plus what is left in the
seat's bank plus the harness margin, measured on Trio's clock from the moment
the request has been written to the moment the answer's line is read. Under
the wall clock that is what the seat is charged. Under the cpu clock a seat is
charged what it could have used: its wall time less the time its processes
waited for a CPU and the referee waited for one meanwhile (so a busy host
decides nothing), or the CPU its tree used, whichever is more (so a tree that
computes on several threads pays for each). Sleeping, blocking, and making the
referee work (reading a flood of output) all cost the seat; waiting for a core
does not. A wall-time backstop (``Clock.backstop`` times the budget) bounds
what the meters cannot see: a seat whose host keeps no run delays is charged
its CPU alone, and a referee that itself waits for a CPU while a seat sleeps
credits that wait to the seat.

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
from referee.match.intake import OutputCost
from referee.match.values import SeatTiming
from referee.run_delay import thread_delay_ns
from referee.settings import Clock

__all__ = ["RAN_UNASKED_NS", "Greeting", "MatchClock", "OpenRequest", "SeatClock"]

CLOSE_ENOUGH_S = 0.001
"""A decision whose wall time is within this of its CPU time is charged its wall time, its waits
unread: the truth lies between the two, so the charge is at most this much over it, and reading
the waits of every task of the seat is the dearest part of the clock (bench/README.md)."""

RAN_UNASKED_NS = 2_000_000
"""CPU time a bot's tree may use between its answer and its next request (finishing its write,
its runtime's housekeeping) before it counts as running on the others' time: from then on its
tree is frozen between its requests (``ChannelBase.hold``)."""


class SeatClock:
    """One seat's clock: its bank, its charges, its meter and its freezer."""

    __slots__ = (
        "bank_s", "bot", "decisions", "hold", "holdable", "max_s", "meter", "output", "rested", "total_s", "untimed",
        "waited", "waits_at_rest",
    )  # fmt: skip

    def __init__(self, bot: ChannelBase, bank_s: float, output: OutputCost) -> None:
        self.bank_s = bank_s
        self.output = output  # what the referee spends decoding the seat's long lines (referee.match.intake)
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
        self.waited = bot.waited if bot.meter is not None else None  # its tree's wait for a CPU, ns
        self.holdable = bot.hold if bot.can_hold else None
        self.hold = self.holdable if bot.restless else None
        self.rested = -1  # its tree's CPU time when its last answer was read (-1: none yet)
        self.waits_at_rest = -1  # its wait meter then, when it was frozen until its next request (-1: unknown)
        self.untimed = bot.untimed  # a person at the terminal plays without a clock

    def rests(self, usage: int) -> None:
        """Before a request: ``usage`` is its tree's CPU time now. One that ran while it was not asked
        is frozen between its requests from now on (and in its process's later games); a quiet bot
        never pays for a freeze."""
        if self.hold is None and self.holdable is not None and 0 <= self.rested < usage - RAN_UNASKED_NS:
            self.hold = self.holdable
            self.bot.restless = True

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


class _Meters:
    """A seat's meters read when its clock started: what the cpu clock charges is counted from here."""

    __slots__ = ("awake", "cpu_start", "own_start", "seat", "start", "waited_s", "waits_end", "waits_start")

    def __init__(self, seat: SeatClock) -> None:
        self.seat = seat
        self.start = 0.0  # the wall time the charge runs from
        self.cpu_start = 0  # the seat's CPU meter then
        self.waits_start = -1  # its wait meter then (-1: none, its CPU alone is charged)
        self.waits_end = -1  # and at the last look (``used``)
        self.own_start = 0  # the referee thread's own wait for a CPU then
        self.waited_s = 0.0  # at the last look (``used``): what the seat and the referee waited for a CPU
        self.awake = False  # and whether its wall time less those waits was what it had used, not its CPU

    def read(self, usage: int) -> None:
        """The clock starts now; ``usage``: the seat's CPU meter, read just now."""
        self.cpu_start = usage
        seat = self.seat
        waited = seat.waited
        if waited is not None:
            # A tree frozen since its last answer has waited for nothing since: its meter then stands.
            self.waits_start = seat.waits_at_rest if seat.waits_at_rest >= 0 else waited()
            seat.waits_at_rest = -1
            self.own_start = thread_delay_ns()
        else:
            self.waits_start = -1

    def used(self, now: float, usage: int, *, going_on: bool = False) -> float:
        """What the seat has used of its budget by ``now``, in seconds, its CPU meter reading ``usage``:
        its CPU time, or its wall time less the time it and the referee waited for a CPU, the more.
        ``going_on``: a look before its answer, when its tasks may be waiting for a CPU still."""
        cpu = (usage - self.cpu_start) / 1e9
        waited = self.seat.waited
        if waited is None or self.waits_start < 0:
            self.awake = False
            return cpu
        self.waits_end = waited(going_on)
        self.waited_s = (self.waits_end - self.waits_start + thread_delay_ns() - self.own_start) / 1e9
        awake = now - self.start - self.waited_s
        self.awake = awake > cpu
        return awake if self.awake else cpu

    def words(self, budget_ms: float) -> str:
        """How a budget ran out, after "within": on the CPU meter, or in wall time less the waits."""
        if self.awake:
            return f"{budget_ms:.0f} ms, not counting the {self.waited_s * 1000:.0f} ms its processes and the referee waited for a CPU"
        return f"{budget_ms:.0f} ms of CPU time"


class OpenRequest(_Meters):
    """The request the referee is waiting on: whose, which, since and until when."""

    __slots__ = ("backstop", "budget", "deadline", "expired", "metered", "output_before", "request")

    def __init__(self, seat: SeatClock) -> None:
        super().__init__(seat)
        self.output_before = 0.0  # the referee's CPU on the seat's output before the request was written
        self.request = 0
        self.deadline = math.inf
        self.budget = math.inf
        self.expired = False  # the watchdog has cancelled the decision loop for it
        # Under the cpu clock: the seat's meters are what runs out, and the wall time past which
        # the request ends whatever they say.
        self.metered = False
        self.backstop = math.inf

    def sent(self, now: float) -> None:
        """The request is in the pipe at ``now``: the wall time the decision is measured from."""
        self.start = now
        self.output_before = self.seat.output.spent_s

    def with_output(self, used: float) -> float:
        """``used`` with the referee's CPU on the seat's output: what it spent while the request was
        open is no less than the seat's (it counts as much as the seat's own time, not on top), what it
        spent before the request was written (lines read since the last answer) comes on top."""
        before = self.output_before
        during = self.seat.output.spent_s - before
        return (max(during, used)) + before

    def used_now(self, now: float) -> float:
        """What the seat has used of this request's budget by ``now`` (a metered request)."""
        meter = self.seat.meter
        assert meter is not None
        return self.with_output(self.used(now, meter(), going_on=True))


class Greeting(_Meters):
    """A seat's wait for its ready line: when to look next, and whether the limit ran out at a look."""

    __slots__ = ("backstop", "check_at", "clock", "metered")

    def __init__(self, clock: MatchClock, seat: SeatClock, due: float) -> None:
        super().__init__(seat)
        self.clock = clock
        self.check_at = due  # the first moment the startup limit can have run out
        self.backstop = due
        self.metered = clock.cpu_clock and seat.meter is not None and not seat.untimed
        seat.output.start(math.inf if seat.untimed else clock.startup_s)
        if self.metered:
            assert seat.meter is not None
            self.start = due - clock.startup_s
            self.read(seat.meter())
            self.backstop = self.start + clock.backstop_factor * clock.startup_s

    def look(self) -> None:
        """The ready line has not come by ``check_at``: move it to the next look, or time the seat out.

        Under the cpu clock the startup limit is counted as a decision's budget
        is, for the same reason: on a busy host thousands of bots starting at
        once wait for a core far longer than they use one. The wait goes on
        while the seat has not used its limit, up to the backstop in wall time.
        """
        clock, meter = self.clock, self.seat.meter
        if not self.metered or meter is None:
            raise clock.startup_timeout()
        now = trio.current_time()
        if now >= self.backstop:
            raise clock.startup_timeout("backstop")
        left = clock.startup_s - self.used(now, meter(), going_on=True)
        if left <= 0:
            raise BotTimedOut(f"no ready line within the startup limit of {self.words(clock.settings.time.startup_ms)}")
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

    def seat(self, bot: ChannelBase, output: OutputCost) -> SeatClock:
        """A clock for a seat played by ``bot``, with the bank of a game's start; ``output``: what the
        referee spends decoding its long lines."""
        return SeatClock(bot, self.settings.time.bank_ms / 1000, output)

    def ready(self, seat: SeatClock) -> None:
        """The seat said ready: frozen until its first request if it is held between its requests,
        and the referee's CPU on its output counted against its first request from now on."""
        if seat.hold is not None:
            seat.hold()
        self._between(seat)

    def _between(self, seat: SeatClock) -> None:
        """Between two requests of ``seat``: what the referee may spend reading its output is what it
        would have for its next request, and what it spends counts towards that request."""
        seat.output.start(math.inf if seat.untimed else self.allowance_s + seat.bank_s + self.margin_s)

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
        open_.deadline, open_.budget, open_.start = deadline, budget, now  # start: again once it is written
        open_.output_before = seat.output.spent_s
        seat.output.limit(budget)
        open_.metered = meter is not None and self.cpu_clock
        if open_.metered:
            open_.read(usage)
            open_.backstop = now + budget * self.backstop_factor
            if open_.backstop > self.wall_deadline:  # noqa: PLR1730 - as above
                open_.backstop = self.wall_deadline
        self.open = open_
        # Only when it is sooner (a seat with less bank left): setting a scope's
        # deadline costs microseconds, the comparison nothing.
        if deadline < self.alarm_at:
            self.alarm.deadline = self.alarm_at = deadline
        return open_

    def open_together(self, seat: SeatClock, request: int) -> OpenRequest:
        """Start the clock of ``request`` to ``seat``, one of several seats a simultaneous step asks at once.

        Each such request has a record of its own and runs beside the others:
        not the one open request the watchdog keeps, but one whose asking task
        keeps its own deadline (``look``). Its budget, charge and freezing are
        those of any request: the seat is thawed by its request and frozen again
        at its answer, whatever the other seats asked are doing.
        """
        meter = seat.meter
        usage = 0
        if meter is not None:
            usage = meter()
            seat.rests(usage)
        budget = math.inf if seat.untimed else self.allowance_s + seat.bank_s + self.margin_s
        now = self.now()
        open_ = OpenRequest(seat)
        open_.request, open_.budget, open_.start = request, budget, now
        open_.deadline = min(now + budget, self.wall_deadline)
        open_.output_before = seat.output.spent_s
        seat.output.limit(budget)
        open_.metered = meter is not None and self.cpu_clock
        if open_.metered:
            open_.read(usage)
            open_.backstop = min(now + budget * self.backstop_factor, self.wall_deadline)
        return open_

    def look(self, open_: OpenRequest) -> None:
        """``open_`` (a request of a simultaneous step) has no answer at its deadline: move the deadline on
        where the cpu clock says the seat has not used its budget yet, else BotTimedOut (``overdue``).

        The watchdog's reasoning for the one open request, kept by the asking task itself."""
        now = self.now()
        if open_.metered and now < open_.backstop and open_.deadline < self.wall_deadline:
            left = open_.budget - open_.used_now(now)
            if left > 0:
                open_.deadline = min(now + left, open_.backstop)
                return
        elif open_.metered and open_.deadline < self.wall_deadline:
            open_.deadline = open_.backstop  # what ran out: the wall-time bound
        open_.expired = True
        raise self.overdue(open_)

    def close(self, open_: OpenRequest, end: float) -> float:
        """The answer to ``open_`` was read at ``end``: what the decision costs its seat, in seconds,
        charged to it (its allowance, then its bank); BotTimedOut when that is over its budget.

        The seat is frozen first if it is held between requests, and its meters
        read after: what its tree uses from then on ran while it was not asked.
        Under the cpu clock the cost is what the seat used (``_Meters.used``),
        else the wall time.
        """
        self.open = None
        seat = open_.seat
        if seat.hold is not None:
            seat.hold()  # until its next request (or notice): it is not asked meanwhile
        meter = seat.meter
        if meter is not None:
            usage = seat.rested = meter()
        if open_.metered:
            cpu, wall = (usage - open_.cpu_start) / 1e9, end - open_.start
            if open_.waits_start >= 0 and wall - CLOSE_ENOUGH_S <= cpu:
                # The usual case, an answer as quick as the bot's work on it: its waits are not read.
                open_.awake = wall > cpu
                elapsed = wall if open_.awake else cpu
            else:
                elapsed = open_.used(end, usage)
                if seat.hold is not None and open_.waits_start >= 0:
                    seat.waits_at_rest = open_.waits_end  # read after the freeze: it stands until the thaw
            if elapsed > open_.budget and not open_.awake:
                # Spent on more than one core between two looks of the watchdog: over all the same.
                # (Wall time over the budget is an answer the watchdog had not yet looked at: as under
                # the wall clock, it is taken and charged, the bank then empty.)
                raise BotTimedOut(
                    f"used {elapsed * 1000:.0f} ms of CPU on request {open_.request}, "
                    f"more than its {open_.budget * 1000:.0f} ms"
                )
        else:
            elapsed = end - open_.start
        elapsed = open_.with_output(elapsed)
        seat.charge(elapsed, self.allowance_s)
        self._between(seat)
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
                    # The cpu clock: what the seat used runs no faster than the wall clock
                    # (a tree bounded to one core), so this is the first moment the budget
                    # can be spent. Not spent yet: look again when it could be.
                    left = open_.budget - open_.used_now(now)
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
                f"ms of wall time, the cpu clock's backstop for what its meters cannot see "
                f"({clock.backstop:g} x its {open_.budget * 1000:.0f} ms)"
            )
        if open_.metered and not open_.awake:
            return BotTimedOut(
                f"used more than {open_.budget * 1000:.0f} ms of CPU on request {open_.request} {allowance}"
            )
        within = open_.words(open_.budget * 1000) if open_.metered else f"{open_.budget * 1000:.0f} ms"
        return BotTimedOut(f"no answer to request {open_.request} within {within} {allowance}")

    # --- the start-up ----------------------------------------------------------------

    def startup_due(self) -> float:
        """When a greeting that starts now is out of time on the wall clock."""
        return trio.current_time() + self.startup_s

    def greeting(self, seat: SeatClock, due: float) -> Greeting:
        """The clock of ``seat``'s wait for its ready line, out of time on the wall clock at ``due``."""
        return Greeting(self, seat, due)

    def startup_timeout(self, on: str = "") -> BotTimedOut:
        """The seat said no ``ready`` in time; ``on``: "backstop" when the cpu clock's backstop ended it."""
        limit = self.settings.time.startup_ms
        if on == "backstop":
            return BotTimedOut(
                f"no ready line within {limit * self.settings.backstop:.0f} ms of wall time "
                f"({self.settings.backstop:g} x the startup limit of {limit} ms), "
                "the cpu clock's backstop for what its meters cannot see"
            )
        return BotTimedOut(f"no ready line within the startup limit of {limit} ms")
