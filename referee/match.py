"""Run one match: the engine decides who must act, the bots answer over JSON lines.

``run_match`` talks to each seat through a ``BotChannel`` (a real process from
``referee.process``, or a scripted fake in tests). It owns the clocks: every
request has a deadline of the decision allowance plus what is left in the seat's
bank plus the harness margin, measured on Trio's clock from the moment the
request has been written to the moment the answer's line is read.

The deadlines are kept by one watchdog task per match rather than a cancel
scope per request: opening and closing a Trio cancel scope costs about as much
as all the rest of the referee's own work on a decision. The decisions run in
one long-lived scope; the watchdog sleeps until the open request's deadline and
cancels that scope only when the request is really overdue.

An answer that is already in the pipe when the request has been written (the
bot ran while the referee was preempted, or answered on another core) is taken
without a trip through Trio's scheduler, which costs as much as the rest of a
decision; so is one that comes within ``QUICK_ANSWER_S`` from a bot whose
previous answer came as fast (the referee polls its pipe for it). When it has
not come and no other task is runnable, the referee waits for it in the kernel
(``_idle_wait``: one ``poll`` of the bot's pipe and of Trio's own descriptor,
bounded by Trio's next deadline), not through the run loop. So that one
match cannot hold the Trio thread while its bots answer at once, a match
yields to the other tasks once it has run ``FAIR_SLICE_S`` of CPU since its
last wait (``_Match.ask``).

Whatever a bot does wrong becomes a ``BotError``: the seat forfeits (the engine
plays its turns as passes from then on), the reason is recorded, and the other
seats' game goes on.
"""

from __future__ import annotations

import datetime
import math
import select
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import msgspec
import trio

from protocol.codec import LineReader, ProtocolViolation, decode_bot_message, encode_message
from protocol.messages import (
    PROTOCOL_VERSION,
    Action,
    BotMessage,
    End,
    Log,
    Ready,
    Rejected,
    Request,
    Result,
    Start,
    Termination,
)
from protocol.untrusted import quote
from referee.errors import BotError, BotIllegalAction, BotProtocolError, BotTimedOut, internal_error
from referee.games import get_rules
from referee.games.base import GameState, IllegalAction, Outcome, RecordingChance, SeededChance
from referee.replay import (
    REPLAY_FORMAT,
    ActionRecord,
    ChanceRecord,
    ForfeitRecord,
    Header,
    LogRecord,
    RejectedRecord,
    ReplayWriter,
    ResultRecord,
    SeatInfo,
    encode_raw,
)
from referee.settings import DEFAULT_SETTINGS, RefereeSettings

__all__ = ["BotChannel", "MatchRecord", "MatchSpec", "Replace", "SeatTiming", "result_of", "run_match"]

FAIR_SLICE_S = 0.000_5
"""The longest a match runs decisions whose answers were already there before it lets the other tasks run.

Counted in the thread's CPU time since the match last waited or yielded: while
the process is preempted (by the bots it wakes, on a busy machine) no task
runs, whoever holds the thread, so that time is not this match's to give back.
Half a millisecond is about a dozen decisions against bots that answer at once:
the other games' answers wait that much longer to be read at the most, far
below the harness margin on every deadline (``margin_ms``), while a yield,
which costs as much as a third of a decision, comes once per dozen decisions."""

QUICK_ANSWER_S = 0.000_05
"""How long the referee polls the pipe of a seat that answers at once before it waits for it.

A bot whose previous answer came within this time is expected to answer as
fast again: the referee polls its pipe for up to this long
(``LineReader.line_within``) instead of going to sleep in Trio's run loop, whose
register, wait, collect and reschedule cost more CPU than the polls while an
instant bot answers (bench/README.md has the figures). A seat whose answer did
not come within it is waited for as usual for its next ``QUICK_RETRY``
decisions, then twice as many after each further poll that finds nothing (up
to ``QUICK_RETRY_MAX``), so a bot that thinks costs the referee a handful of
short busy waits in a game (in all its games, for a warm process: the
schedule goes on from one game to the next), and any bot at most one in
``QUICK_RETRY + 1`` decisions. The bound is far below any time limit and below
``FAIR_SLICE_S``: the other tasks wait no longer than they already may."""

QUICK_RETRY = 8
"""Decisions a seat is waited for as usual after a poll found no answer within ``QUICK_ANSWER_S``."""

QUICK_RETRY_MAX = 512
"""The most decisions between two polls of a seat whose answers keep not coming in time."""


def _idle_wait() -> tuple[float, int] | None:
    """How long this thread may block in the kernel for one bot's answer, and the descriptor that
    wakes it for anything else: (seconds to Trio's next deadline, its epoll descriptor); or None.

    Under load an instant bot's answer is rarely there within ``QUICK_ANSWER_S``:
    the bot waits for a core. Waiting through Trio's run loop then costs the
    referee several times the CPU of the rest of the decision (a wait, the
    epoll registration and its removal, and the loop's own steps), and on a
    busy host the referee's CPU share is what bounds its decisions per second
    (bench/README.md, issue 30). When no other task is runnable, one ``poll``
    of the bot's pipe and of Trio's epoll descriptor, bounded by Trio's next
    deadline (the watchdog's), waits for what the run loop would have waited for:
    the answer, any other I/O or thread or signal wake-up (they all make the
    epoll descriptor readable), or a deadline. Trio's run loop has no public
    call for this, so its runner is read directly, and anything unusual
    (another clock, instruments, guest mode, a test waiting for all tasks to
    block, more than ``_IDLE_WAIT_TASKS`` tasks, a Trio without these
    attributes) gets None: the usual wait.
    """
    runner = getattr(_RUN_CONTEXT, "runner", None)
    try:
        if (
            runner is None
            or runner.runq
            or len(runner.tasks) > _IDLE_WAIT_TASKS
            # A task scheduled in the batch the run loop is stepping through now is in
            # no queue; it is marked by what it is to be resumed with (None once it runs).
            or any(task._next_send_fn is not None for task in runner.tasks)
            or runner.waiting_for_idle
            or runner.instruments["_all"]  # the run loop's hooks would miss this wait
            or runner.is_guest
            or type(runner.clock) is not _SYSTEM_CLOCK
        ):
            return None
        seconds: float = runner.deadlines.next_deadline() - runner.clock.current_time()
        wake_fd: int = runner.io_manager._epoll.fileno()
    except (AttributeError, KeyError, TypeError):  # a Trio whose runner differs: the usual wait
        return None
    # No deadline at all (not so in a match: the watchdog always has one): look again within a second.
    return (min(seconds, 1.0), wake_fd) if seconds > 0 else None


_IDLE_WAIT_TASKS = 64
"""The most Trio tasks a referee may have for ``_idle_wait`` to look through them all (a few
matches); one with more (a tournament's hundreds of games) waits through Trio's run loop, whose
wait then collects many answers at once."""

_RUN_CONTEXT: Any = getattr(getattr(trio._core, "_run", None), "GLOBAL_RUN_CONTEXT", None)
_SYSTEM_CLOCK: Any = getattr(getattr(trio._core, "_run", None), "SystemClock", None)


class BotChannel(Protocol):
    """What the referee needs of a bot: send a line, read a line, stop it."""

    @property
    def name(self) -> str: ...

    async def send(self, data: bytes) -> None: ...

    async def readline(self) -> bytes: ...

    async def kill(self) -> None: ...

    def stderr_text(self) -> str: ...


Replace = Callable[[int], Awaitable["BotChannel | None"]]
"""Given a seat whose reused process broke before ``ready``, a fresh bot, or None."""


class MatchSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One game to play: which game and variants, the deal seed, an id for the records."""

    game: str
    seed: int
    variants: dict[str, str] = {}
    match: str = ""


class SeatTiming(msgspec.Struct, frozen=True, kw_only=True):
    """How long a seat thought: decisions answered, total and slowest, in ms."""

    decisions: int
    total_ms: float
    max_ms: float
    bank_left_ms: float


class MatchRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A finished match: the result, who played, how long it took, where the replay is."""

    match: str
    game: str
    seed: int
    variants: dict[str, str]
    names: list[str]
    result: Result
    timings: list[SeatTiming]
    seconds: float
    replay: str | None = None
    sandbox: str = ""
    """How the bots were contained (referee.sandbox), with anything this host could not apply."""


def _reader_of(bot: BotChannel) -> LineReader | None:
    """The line reader behind a channel that has one (a bot process): the referee
    looks into it for output that arrived while no request was open."""
    reader = getattr(bot, "reader", None)
    return reader if isinstance(reader, LineReader) else None


class _Seat:
    """The referee's bookkeeping for one seat during a match."""

    __slots__ = (
        "active", "answered", "bank_s", "bot", "decisions", "early", "hold", "holdable", "index", "logs", "max_s",
        "meter", "poll_in", "poll_skip", "reader", "rested", "seen", "total_s", "untimed",
    )  # fmt: skip

    def __init__(self, index: int, bot: BotChannel, bank_s: float) -> None:
        self.index = index
        self.bot = bot
        self.reader = _reader_of(bot)
        self.meter, self.holdable, self.hold = _rest_of(bot)
        self.rested = -1  # its tree's CPU time when its last answer was read (-1: none yet)
        # A person at the terminal (tournaments.human) plays without a clock.
        self.untimed: bool = getattr(bot, "untimed", False)
        self.answered = 0  # the last request this seat answered
        self.logs = 0  # log lines since its last answer (a flood is more than the limit)
        self.early = False  # a line had begun to arrive before the open request was sent
        self.bank_s = bank_s
        self.active = True
        self.seen = 0  # how much of the match's event log this seat has been sent
        self.decisions = 0
        self.total_s = 0.0
        self.max_s = 0.0
        # Decisions until the referee polls for a quick answer again (QUICK_ANSWER_S; -1: never, a
        # person), and how many poll_in skips after the next poll that finds nothing.
        self.poll_in, self.poll_skip = _poll_schedule(bot, self.untimed)


RAN_UNASKED_NS = 2_000_000
"""CPU time a bot's tree may use between its answer and its next request (finishing its write,
its runtime's housekeeping) before it counts as running on the others' time: from then on its
tree is frozen between its requests (``BotProcess.hold``)."""

_Rest = tuple[Callable[[], int] | None, Callable[[], None] | None, Callable[[], None] | None]


def _rest_of(bot: BotChannel) -> _Rest:
    """A seat's (meter, holdable, hold): the CPU time of its bot's whole tree in nanoseconds
    (``BotProcess.meter``: the cpu clock's charge, and the evidence of running while not asked);
    how to freeze the tree until it is next written to (``BotProcess.hold``), when the host can and
    does not let bots ponder; and that, already, for a process caught running unasked in an earlier
    game. None where a seat has no such thing (a person, a host without control groups)."""
    meter = getattr(bot, "meter", None)
    hold = getattr(bot, "hold", None)
    holdable = hold if callable(hold) and getattr(bot, "freezer", None) is not None else None
    caught = holdable if getattr(bot, "restless", False) else None
    return (meter if callable(meter) else None), holdable, caught


def _poll_schedule(bot: BotChannel, untimed: bool) -> tuple[int, int]:
    """A seat's quick-answer poll schedule at the start of a match: where a warm process's
    last game left it (``BotProcess.poll_schedule``), so a bot that thinks is not polled
    for again at the start of every game; else from the start."""
    if untimed:
        return -1, QUICK_RETRY
    kept: tuple[int, int] | None = getattr(bot, "poll_schedule", None)
    return kept if kept is not None else (0, QUICK_RETRY)


class _Open:
    """The request the referee is waiting on: whose, which, and until when."""

    __slots__ = ("backstop", "budget", "cpu_start", "deadline", "expired", "meter", "request", "seat")

    def __init__(self, seat: _Seat, request: int, deadline: float, budget: float) -> None:
        self.seat = seat
        self.request = request
        self.deadline = deadline
        self.budget = budget
        self.expired = False  # the watchdog has cancelled the decision loop for it
        # Under the cpu clock: the seat's CPU meter, its reading when the request went
        # out, and the wall time past which the request ends whatever CPU it used.
        self.meter: Callable[[], int] | None = None
        self.cpu_start = 0
        self.backstop = math.inf


class _Match:
    """The state of one match in progress; ``run_match`` is its only user."""

    def __init__(
        self,
        spec: MatchSpec,
        bots: Sequence[BotChannel],
        settings: RefereeSettings,
        replay_path: Path | None,
        replace: Replace | None = None,
        initial_state: GameState | None = None,
    ) -> None:
        self.spec = spec
        self.replace = replace
        self.settings = settings
        self.rules = get_rules(spec.game)
        self.config = self.rules.config(spec.variants)
        self.variants = self.rules.variants(self.config)
        n = len(bots)
        self.rules.check_table(n)
        self.chance = RecordingChance(SeededChance(spec.seed))
        # A given state (check-bot's forced positions) replaces the seeded deal.
        self.state: GameState = initial_state or self.rules.new_game(n, self.config, self.chance)
        self.action_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(self.rules.action_type)
        self.cpu_clock = settings.clock == "cpu"
        self.seats = [_Seat(i, bot, settings.time.bank_ms / 1000) for i, bot in enumerate(bots)]
        self.names = [bot.name for bot in bots]
        self.events: list[msgspec.Struct] = []
        self.terminations: list[Termination] = []
        self.request_id = 0
        self.draws_written = 0
        self.replay = ReplayWriter(replay_path) if replay_path is not None else None
        self.match_id = spec.match or spec.game  # sent to bots: never the seed
        self.wall_deadline = math.inf
        self.open: _Open | None = None  # the request being waited on
        self.loop_scope = trio.CancelScope()  # the decision loop's; the watchdog cancels it on a timeout
        self.alarm = trio.CancelScope()  # the watchdog's sleep; its deadline is the next check
        self.alarm_at = math.inf  # that deadline: a scope's deadline is a property, this a plain read
        self.request_slot = _Open(self.seats[0], 0, math.inf, math.inf)  # self.open, refilled for each request
        # The shortest budget a request can have: no request opened from now on ends sooner.
        self.min_budget_s = max(0.001, (settings.time.move_ms + settings.margin_ms) / 1000)
        self.allowance_s = settings.time.move_ms / 1000
        self.move_ms = settings.time.move_ms
        self.startup_s = (settings.time.startup_ms + settings.margin_ms) / 1000
        self.margin_s = settings.margin_ms / 1000
        # trio.current_time() without its lookup of the run: the same clock, read directly.
        self.now: Callable[[], float] = trio.lowlevel.current_clock().current_time
        # The slice (FAIR_SLICE_S) began at the thread CPU time slice_cpu. The CPU
        # clock is a system call, the wall clock is not and runs no slower: the
        # slice cannot be over before the wall time slice_due.
        self.slice_cpu = time.thread_time()
        self.slice_due = self.now() + FAIR_SLICE_S
        self.wake_poll = select.poll()  # Trio's epoll descriptor, for others_waiting
        self.wake_fd = -1

    # --- records -----------------------------------------------------------

    def write_header(self, commands: Sequence[list[str]]) -> None:
        if self.replay is None:
            return
        self.replay.write(
            Header(
                format=REPLAY_FORMAT,
                match=self.match_id,
                game=self.spec.game,
                variants=self.variants,
                config=encode_raw(self.config),
                seats=[SeatInfo(name=name, command=list(cmd)) for name, cmd in zip(self.names, commands, strict=True)],
                seed=self.spec.seed,
                time=self.settings.time,
                illegal_action=self.settings.illegal_action,
                started=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                clock=self.settings.clock,
            )
        )
        self.flush_chance()

    def flush_chance(self) -> None:
        draws = self.chance.draws
        if self.replay is not None and len(draws) > self.draws_written:
            self.replay.write(ChanceRecord(draws=draws[self.draws_written :]))
        self.draws_written = len(draws)

    # --- the conversation --------------------------------------------------

    async def start_seats(self) -> None:
        """Send every seat ``start`` and take its ``ready`` line, under the startup limit.

        All the starts go out first, so the bots get ready together; then each
        seat's ready line is polled for as an answer is (a warm bot says ready
        at once: ``QUICK_ANSWER_S``). Only the seats that need more (a ready
        line not there yet, a log line before it, a process to replace) get a
        task each, all at once: a nursery and its tasks cost the referee as much
        as a few decisions, so a match of warm bots opens none.
        """
        due = trio.current_time() + self.startup_s
        more: list[Callable[[], Awaitable[None]]] = []  # the greetings that need a task
        written: list[_Seat] = []
        sending = 0
        with trio.move_on_at(due) as scope:
            for seat in self.seats:
                try:
                    await seat.bot.send(self.start_line(seat))
                    written.append(seat)
                except BotError as error:
                    more.append(partial(self.retry, seat, error))
                sending += 1
        if scope.cancelled_caught:
            # A bot that does not read held its start until the limit: its seat is
            # timed out; the seats after it are greeted afresh, with their own limit,
            # and the seats before it, whose ready lines were not read meanwhile,
            # get a limit of their own from now for them.
            more.append(partial(self.fail, self.seats[sending], self.startup_timeout(), 0))
            more.extend(partial(self.handshake, seat) for seat in self.seats[sending + 1 :])
            due = trio.current_time() + self.startup_s
        for seat in written:
            try:
                first = self.ready_now(seat)
            except BotError as error:
                more.append(partial(self.retry, seat, error))
                continue
            if isinstance(first, Ready):
                seat.logs = 0
                if seat.hold is not None:
                    seat.hold()
            else:
                more.append(partial(self.take_ready, seat, due, first))
        if more:
            async with trio.open_nursery() as nursery:
                for greeting in more:
                    nursery.start_soon(greeting)

    def start_line(self, seat: _Seat) -> bytes:
        start = Start(
            protocol=PROTOCOL_VERSION,
            game=self.spec.game,
            match=self.match_id,
            seat=seat.index,
            players=len(self.seats),
            names=self.names,
            variants=self.variants,
            config=self.config,
            time=self.settings.time,
        )
        return encode_message(start)

    def startup_timeout(self, on: str = "") -> BotTimedOut:
        """The seat said no ``ready`` in time; ``on``: "cpu" or "backstop" when the cpu clock ended it."""
        limit = self.settings.time.startup_ms
        if on == "cpu":
            return BotTimedOut(f"no ready line within the startup limit of {limit} ms of CPU time")
        if on == "backstop":
            return BotTimedOut(
                f"no ready line within {limit * self.settings.clock_backstop:.0f} ms of wall time "
                f"({self.settings.clock_backstop:g} x the startup limit of {limit} ms), "
                "the cpu clock's bound for a bot that sleeps or blocks"
            )
        return BotTimedOut(f"no ready line within the startup limit of {limit} ms")

    def ready_now(self, seat: _Seat) -> BotMessage | None:
        """The seat's first line after ``start``, decoded, if a warm bot's quick poll finds it; else None."""
        if seat.reader is None or seat.poll_in != 0:
            return None
        line = self.line_now(seat.reader, QUICK_ANSWER_S)
        return self.decode(line) if line is not None else None

    async def handshake(self, seat: _Seat) -> None:
        """Greet one seat in full (``greet``), with a fresh process if its own has gone (``retry``)."""
        try:
            await self.greet(seat)
        except BotError as error:
            await self.retry(seat, error)

    async def take_ready(self, seat: _Seat, due: float, first: BotMessage | None) -> None:
        """Wait for the ready line of a seat that has its start (``first``: the message read so far)."""
        try:
            await self.await_ready(seat, due, first)
        except BotError as error:
            await self.retry(seat, error)

    async def retry(self, seat: _Seat, error: BotError) -> None:
        """A greeting failed. A warm process that exited after its previous game (a
        bot that plays one game per process) is not a failure: a fresh one is
        started and greeted once more. Any other failure is the seat's."""
        fresh = None
        if error.kind in ("crash", "stall") and self.replace is not None:
            fresh = await self.replace(seat.index)
        if fresh is None:
            await self.fail(seat, error, 0)
            return
        seat.bot = fresh
        seat.reader = _reader_of(fresh)
        seat.meter, seat.holdable, seat.hold = _rest_of(fresh)
        seat.rested = -1
        seat.untimed = getattr(fresh, "untimed", False)
        seat.poll_in, seat.poll_skip = _poll_schedule(fresh, seat.untimed)
        try:
            await self.greet(seat)
        except BotError as again:
            await self.fail(seat, again, 0)

    async def greet(self, seat: _Seat) -> None:
        """Send ``start`` and wait for ``ready`` under the startup limit."""
        due = trio.current_time() + self.startup_s
        with trio.move_on_at(due) as scope:
            await seat.bot.send(self.start_line(seat))
        if scope.cancelled_caught:
            raise self.startup_timeout()
        await self.await_ready(seat, due, self.ready_now(seat))

    async def await_ready(self, seat: _Seat, due: float, first: BotMessage | None) -> None:
        """Read up to the seat's ``ready`` line (``first``, if given, is the first message) until ``due``.

        Under the cpu clock the startup limit is CPU time too, for the same
        reason as a decision's: on a busy host thousands of bots starting at
        once wait for a core far longer than they use one. ``due`` (the wall
        time the limit would end) is then the first moment the seat's tree can
        have used it; the wait goes on while it has not, up to ``clock_backstop``
        times the limit in wall time, for a bot that sleeps or blocks.
        """
        check_at = backstop = due
        meter = seat.meter if self.cpu_clock and not seat.untimed else None
        cpu_start = 0
        if meter is not None:
            cpu_start = meter()
            backstop = due + (self.settings.clock_backstop - 1) * self.startup_s
        while True:
            with trio.move_on_at(check_at):
                self.accept_ready(seat, await self.read_message(seat, 0, first))
                return
            first = None  # read_message took it before its first wait
            # A referee kept from running past the deadline (a busy host) still
            # takes a ready line that arrived in time and waits in the pipe.
            if (message := self.message_now(seat)) is not None:
                self.accept_ready(seat, message)
                return
            if meter is None:
                raise self.startup_timeout()
            now = trio.current_time()
            if now >= backstop:
                raise self.startup_timeout("backstop")
            left = self.startup_s - (meter() - cpu_start) / 1e9
            if left <= 0:
                raise self.startup_timeout("cpu")
            check_at = min(now + left, backstop)

    def accept_ready(self, seat: _Seat, message: Ready | Action[msgspec.Raw]) -> None:
        """The seat's first message after its log lines: it must be ``ready``."""
        if not isinstance(message, Ready):
            raise BotProtocolError(f"sent {_kind(message)} before ready")
        seat.logs = 0
        if seat.hold is not None:
            seat.hold()

    def message_now(self, seat: _Seat) -> Ready | Action[msgspec.Raw] | None:
        """The seat's next message that is not a log line, if it has all arrived; log lines before it are recorded."""
        if seat.reader is None:
            return None
        while (line := self.line_now(seat.reader)) is not None:
            message = self.decode(line)
            if not isinstance(message, Log):
                return message
            self.record_log(seat, 0, message)
        return None

    def decode(self, line: bytes) -> BotMessage:
        """One line from a bot as a message; anything wrong with it is that seat's protocol error."""
        try:
            return decode_bot_message(line)
        except ProtocolViolation as exc:
            raise BotProtocolError(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a bug of ours met by these bytes: the seat's error, not the match's
            raise internal_error(exc) from None

    async def read_message(
        self, seat: _Seat, request: int, first: BotMessage | None = None
    ) -> Ready | Action[msgspec.Raw]:
        """The next message that is not a log line (``first``, if given, is the first one read); logs go to the replay."""
        message = first
        while True:
            if message is None:
                try:
                    line = await seat.bot.readline()
                except ProtocolViolation as exc:
                    raise BotProtocolError(str(exc)) from None
                message = self.decode(line)
            if not isinstance(message, Log):
                if seat.early:
                    seat.early = False
                    raise BotProtocolError(
                        f"unasked output: {_kind(message)} began to arrive before request {request} was sent"
                    )
                return message
            seat.early = False
            self.record_log(seat, request, message)
            message = None

    def record_log(self, seat: _Seat, request: int, message: Log) -> None:
        seat.logs += 1
        if seat.logs > self.settings.max_messages_per_decision:
            raise BotProtocolError(
                f"flood: more than {self.settings.max_messages_per_decision} log lines for one request"
            )
        if self.replay is not None:
            self.replay.write(LogRecord(seat=seat.index, request=request, message=message.message[:4096]))

    async def keep_slice(self, now: float) -> None:
        """Let the other tasks run if this match has held the thread for its slice
        (``FAIR_SLICE_S``); ``now`` is a wall time past ``slice_due``."""
        spent = time.thread_time() - self.slice_cpu
        if spent < FAIR_SLICE_S:
            self.slice_due = now + (FAIR_SLICE_S - spent)  # the soonest the CPU clock can get there
            return
        if not self.others_waiting():
            # No other task to let run (one match alone in its referee): a pass through
            # Trio's run loop would cost the CPU of a third of a decision for nothing.
            self.new_slice()
            return
        await trio.lowlevel.cancel_shielded_checkpoint()
        self.new_slice()

    def others_waiting(self) -> bool:
        """Whether another Trio task may have something to do now: one runnable, a deadline
        passed, or I/O ready that the run loop has not collected (its epoll descriptor is
        readable). True whenever ``_idle_wait`` cannot tell."""
        idle = _idle_wait()
        if idle is None:
            return True
        wake_fd = idle[1]
        if wake_fd != self.wake_fd:  # a poll object per match: never shared between threads
            self.wake_poll = select.poll()
            self.wake_poll.register(wake_fd, select.POLLIN)
            self.wake_fd = wake_fd
        return bool(self.wake_poll.poll(0))

    def new_slice(self) -> None:
        """The match has just waited or yielded: its slice starts again."""
        self.slice_cpu = time.thread_time()
        self.slice_due = self.now() + FAIR_SLICE_S

    def line_now(self, reader: LineReader, seconds: float = 0.0) -> bytes | None:
        """The seat's next line if all of it is there now or within ``seconds`` (polled), without waiting; else None."""
        try:
            return reader.line_within(seconds, self.now) if seconds else reader.pending_line()
        except ProtocolViolation as exc:
            raise BotProtocolError(str(exc)) from None

    def line_blocking(self, reader: LineReader, seconds: float, wake_fd: int) -> bytes | None:
        """``LineReader.line_blocking``, its protocol errors the seat's."""
        try:
            return reader.line_blocking(seconds, wake_fd)
        except ProtocolViolation as exc:
            raise BotProtocolError(str(exc)) from None

    def answer_now(self, seat: _Seat, reader: LineReader) -> bytes | None:
        """The seat's next line if it is there now or, when the seat is polled for, within
        ``QUICK_ANSWER_S``; else None. Keeps the seat's poll schedule (``QUICK_RETRY``)."""
        if seat.poll_in != 0:  # waited for as usual for now (-1: never polled for)
            if seat.poll_in > 0:
                seat.poll_in -= 1
            return self.line_now(reader)
        line = self.line_now(reader, QUICK_ANSWER_S)
        if line is None:  # not a quick answer this time: wait as usual for a while
            seat.poll_in = seat.poll_skip
            seat.poll_skip = min(2 * seat.poll_skip, QUICK_RETRY_MAX)
        else:
            seat.poll_skip = QUICK_RETRY
        return line

    def check_unasked(self, seat: _Seat, next_request: int) -> None:
        """Read what the seat sent since its last answer, before ``next_request`` goes out.

        Log lines are allowed between requests and recorded; anything else
        arrived while no request was open (an answer sent ahead, a second
        answer) and is a protocol error now. A line still arriving is marked:
        it cannot be the answer to the request about to be sent.
        """
        reader = seat.reader
        assert reader is not None
        if reader.quiet():  # the usual case: one poll, nothing to read
            seat.early = False
            return
        while True:
            try:
                line = reader.pending_line()
            except ProtocolViolation as exc:
                raise BotProtocolError(str(exc)) from None
            if line is None:
                break
            message = self.decode(line)
            if isinstance(message, Action) and message.id == seat.answered != 0:
                raise BotProtocolError(
                    f"a second answer to request {seat.answered} (it arrived after the first, "
                    f"while no request was open)"
                )
            if not isinstance(message, Log):
                after = f"after its answer to request {seat.answered}" if seat.answered else "after ready"
                raise BotProtocolError(
                    f"unasked output: {_kind(message)} arrived {after}, while no request was open "
                    f"(request {next_request} had not been sent)"
                )
            self.record_log(seat, seat.answered, message)
        seat.early = reader.partial

    def check_second_answer(self, seat: _Seat, request: int) -> None:
        """Lines that came in the same read as the answer to ``request``: logs, or a second answer."""
        reader = seat.reader
        assert reader is not None
        while (line := reader.pending_line()) is not None:
            message = self.decode(line)
            if isinstance(message, Action) and message.id == request:
                raise BotProtocolError(f"a second answer to request {request}")
            if not isinstance(message, Log):
                raise BotProtocolError(f"unasked output: {_kind(message)} arrived with the answer to request {request}")
            self.record_log(seat, request, message)

    async def ask(self, seat: _Seat, request: Request[Any, Any, Any]) -> tuple[Any, msgspec.Raw, float]:
        """Send a request and wait for its answer: (decoded action, raw action, seconds).

        Runs inside the decision loop's scope (``play``): when the deadline
        passes, the watchdog cancels that scope and ``timed_out`` records it.
        """
        untimed = seat.untimed
        budget = math.inf if untimed else self.allowance_s + seat.bank_s + self.margin_s
        data = encode_message(request)
        now = self.now()
        deadline = now + budget
        if deadline > self.wall_deadline:  # noqa: PLR1730 - a comparison costs less than a call to min
            deadline = self.wall_deadline
        # One request is open at a time: its record is refilled rather than made anew.
        open_ = self.request_slot
        open_.seat, open_.request, open_.expired = seat, request.id, False
        open_.deadline, open_.budget = deadline, budget
        meter = seat.meter
        open_.meter = None
        if meter is not None:
            # Read before the request is written (while a frozen tree is still frozen).
            usage = meter()
            if seat.hold is None and seat.holdable is not None and 0 <= seat.rested < usage - RAN_UNASKED_NS:
                # It ran while it was not asked: frozen between its requests from now on
                # (and in its process's later games). A quiet bot never pays for a freeze.
                seat.hold = seat.holdable
                seat.bot.restless = True  # type: ignore[attr-defined]  # a BotProcess: it has a holdable
            if self.cpu_clock:
                open_.meter, open_.cpu_start = meter, usage
                open_.backstop = now + budget * self.settings.clock_backstop
                if open_.backstop > self.wall_deadline:  # noqa: PLR1730 - as above
                    open_.backstop = self.wall_deadline
        self.open = open_
        # Only when it is sooner (a seat with less bank left): setting a scope's
        # deadline costs microseconds, the comparison nothing.
        if deadline < self.alarm_at:
            self.alarm.deadline = self.alarm_at = deadline
        reader = seat.reader
        try:
            if reader is not None:
                self.check_unasked(seat, request.id)
            await seat.bot.send(data)
            # The clock starts once the request is in the pipe: a slow write is the
            # bot not reading, and is covered by the same deadline.
            start = self.now()
            # The answer may be there already, or come within microseconds from a
            # bot that answers at once (polled for: QUICK_ANSWER_S): then no wait,
            # and no pass through Trio's scheduler unless this match has held the
            # thread for its slice.
            first: BotMessage | None = None
            if reader is not None:
                line = self.answer_now(seat, reader)
                if line is None and not seat.early and (idle := _idle_wait()) is not None:
                    # Nothing else for this thread to do until the answer (or a deadline, or
                    # other I/O) comes: wait in the kernel, not through Trio's run loop.
                    line = self.line_blocking(reader, *idle)
                if line is not None:
                    first = self.decode(line)
            if isinstance(first, Action) and not seat.early:
                message: Ready | Action[msgspec.Raw] = first
                end = self.now()
                # After a wait in the kernel as after none: the slice goes on (that wait let
                # no other task run, there was none), and keep_slice yields only to another.
                if end >= self.slice_due:
                    await self.keep_slice(end)
            else:
                message = await self.read_message(seat, request.id, first)
                end = self.now()
                self.new_slice()
        except BotError:
            # Overdue as well (the watchdog ran first in the same tick): the timeout counts.
            if open_.expired:
                await trio.lowlevel.checkpoint_if_cancelled()
            self.open = None
            raise
        if open_.expired:
            # The watchdog found the request overdue before this task read the
            # answer (both ready in the same tick): a timeout, raised as Cancelled.
            await trio.lowlevel.checkpoint_if_cancelled()
        self.open = None
        if seat.hold is not None:
            seat.hold()  # until its next request (or notice): it is not asked meanwhile
        # What the decision costs the seat: the wall time its answer took, or under the
        # cpu clock the CPU its tree used for it (the wait for a CPU on a busy host is not its).
        elapsed = end - start
        if meter is not None:
            seat.rested = usage = meter()
            if open_.meter is not None:
                elapsed = (usage - open_.cpu_start) / 1e9
        if open_.meter is not None and elapsed > budget:
            # Spent on more than one core between two looks of the watchdog: over all the same.
            raise BotTimedOut(
                f"used {elapsed * 1000:.0f} ms of CPU on request {request.id}, more than its {budget * 1000:.0f} ms"
            )
        if not untimed and elapsed > self.allowance_s:
            seat.bank_s = max(0.0, seat.bank_s - (elapsed - self.allowance_s))
        seat.decisions += 1
        seat.total_s += elapsed
        if elapsed > seat.max_s:  # noqa: PLR1730 - a comparison costs less than a call to max
            seat.max_s = elapsed
        if not isinstance(message, Action):
            raise BotProtocolError(f"sent {_kind(message)} instead of an action for request {request.id}")
        if message.id != request.id:
            if message.id == seat.answered != 0:  # it came too late to be caught before this request went out
                raise BotProtocolError(
                    f"a second answer to request {seat.answered} (it arrived after request {request.id} was sent)"
                )
            raise BotProtocolError(f"answered request {quote(message.id)}, the open request is {request.id}")
        seat.answered, seat.logs = request.id, 0
        if reader is not None and reader.partial:
            self.check_second_answer(seat, request.id)
        try:
            action = self.action_decoder.decode(message.action)
        except msgspec.DecodeError as exc:
            raise BotProtocolError(f"action for request {request.id} has the wrong shape: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a bug of ours met by these bytes: the seat's error, not the match's
            raise internal_error(exc) from None
        return action, message.action, elapsed

    async def play(self) -> None:
        """Every decision until the game is over, with ``watchdog`` keeping the deadlines."""
        async with trio.open_nursery() as nursery:
            # Started soon, not awaited: it first runs at this task's first wait
            # (only then can a request be overdue) and reads the open request then.
            nursery.start_soon(self.watchdog)
            while True:
                with trio.CancelScope() as self.loop_scope:
                    while await self.play_decision():
                        pass
                if not self.loop_scope.cancelled_caught:
                    break
                await self.timed_out()
            nursery.cancel_scope.cancel()

    async def timed_out(self) -> None:
        """The open request's deadline passed: its seat forfeits on time."""
        open_, self.open = self.open, None
        assert open_ is not None and open_.expired
        seat = open_.seat
        if open_.deadline == self.wall_deadline:
            error = BotTimedOut(f"the game's wall limit of {self.settings.game_wall_ms / 1000:g} s ran out")
        elif open_.meter is not None and open_.deadline >= open_.backstop:
            error = BotTimedOut(
                f"no answer to request {open_.request} within {open_.budget * self.settings.clock_backstop * 1000:.0f} "
                f"ms of wall time, the cpu clock's bound for a bot that sleeps or blocks "
                f"({self.settings.clock_backstop:g} x its {open_.budget * 1000:.0f} ms)"
            )
        elif open_.meter is not None:
            error = BotTimedOut(
                f"used more than {open_.budget * 1000:.0f} ms of CPU on request {open_.request} "
                f"({self.settings.time.move_ms} ms + {seat.bank_s * 1000:.0f} ms bank)"
            )
        else:
            error = BotTimedOut(
                f"no answer to request {open_.request} within {open_.budget * 1000:.0f} ms "
                f"({self.settings.time.move_ms} ms + {seat.bank_s * 1000:.0f} ms bank)"
            )
        await self.fail(seat, error, open_.request)

    async def watchdog(self) -> None:
        """Cancel the decision loop when the open request is overdue.

        Sleeps until the open request's deadline or, with none open (or one
        already expired), for the shortest budget a request can have: a request
        opened meanwhile cannot end sooner, unless its seat has less bank left
        than the open one, and then ``ask`` moves the alarm forward. So the
        watchdog wakes about once per decision allowance, not once per decision.
        """
        while True:
            now = trio.current_time()
            open_ = self.open
            if open_ is not None and not open_.expired and now >= open_.deadline:
                if open_.meter is not None and now < open_.backstop:
                    # The cpu clock: the budget is CPU time, which runs no faster than the
                    # wall clock for a tree bounded to one core, so this is the first moment
                    # it can be spent. Not spent yet: look again when it could be.
                    left = open_.budget - (open_.meter() - open_.cpu_start) / 1e9
                    if left > 0:
                        open_.deadline = min(now + left, open_.backstop)
                    else:
                        open_.expired = True
                else:
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

    def record_events(self, events: list[msgspec.Struct]) -> None:
        self.events.extend(events)
        self.flush_chance()

    async def fail(self, seat: _Seat, error: BotError, request: int) -> None:
        """The seat forfeits: record why, let the engine take it out, stop the bot."""
        if not seat.active:
            return
        seat.active = False
        termination = Termination(seat=seat.index, kind=error.kind, reason=error.reason, request=request)
        self.terminations.append(termination)
        events = self.state.forfeit(seat.index)
        if self.replay is not None:
            self.replay.write(
                ForfeitRecord(
                    seat=seat.index, request=request, kind=error.kind, reason=error.reason, events=encode_raw(events)
                )
            )
        self.record_events(events)
        await seat.bot.kill()

    async def play_decision(self) -> bool:
        """Ask for and apply one decision; False when the game is over."""
        state = self.state
        decision = state.decision()
        if decision is None:
            return False
        index = decision.seat
        seat = self.seats[index]
        events_so_far = self.events
        self.request_id += 1
        request: Request[Any, Any, Any] = Request(
            id=self.request_id,
            decision=decision.kind,
            view=state.transient_view(index),  # encoded in ask, before the state changes again
            events=state.events_for(index, events_so_far[seat.seen :]),
            options=decision.options,
            constraints=decision.constraints,
            time_ms=self.move_ms,
            bank_ms=round(seat.bank_s * 1000),
        )
        seat.seen = len(events_so_far)
        try:
            action, raw, elapsed = await self.ask(seat, request)
        except BotError as error:
            await self.fail(seat, error, request.id)
            return True
        substituted = False
        try:
            events = state.apply(index, action)
        except IllegalAction as exc:
            if not await self.reject(seat, request.id, raw, exc, elapsed):
                return True
            # The "pass" policy: the seat keeps playing, this turn is a pass.
            action = self.state.pass_action()
            raw, substituted = encode_raw(action), True
            events = self.state.apply(seat.index, action)
        if self.replay is not None:
            self.replay.write(
                ActionRecord(
                    seat=seat.index,
                    request=request.id,
                    decision=decision.kind,
                    action=raw,
                    ms=round(elapsed * 1000, 3),
                    events=encode_raw(events),
                    substituted=substituted,
                )
            )
        self.record_events(events)
        return True

    async def reject(self, seat: _Seat, request: int, raw: msgspec.Raw, exc: IllegalAction, elapsed: float) -> bool:
        """An illegal action: record it and tell the bot. True if the seat plays on."""
        policy = self.settings.illegal_action
        if self.replay is not None:
            self.replay.write(
                RejectedRecord(
                    seat=seat.index,
                    request=request,
                    action=raw,
                    rule=exc.rule_id,
                    message=exc.detail,
                    ms=round(elapsed * 1000, 3),
                )
            )
        notice = Rejected(id=request, rule=exc.rule_id, message=str(exc), penalty=policy)
        with trio.move_on_after(self.settings.grace_ms / 1000):
            try:
                await seat.bot.send(encode_message(notice))
            except BotError:
                pass
        if policy == "forfeit":
            await self.fail(seat, BotIllegalAction(f"illegal action: {exc}", exc.rule_id), request)
            return False
        return True

    async def finish(self) -> Result:
        result = result_of(self.state.outcome(), self.terminations)
        ends: list[tuple[_Seat, bytes]] = []
        unasked: list[_Seat] = []
        for seat in self.seats:
            if not seat.active:
                continue
            # Output after the seat's last answer other than log lines is never
            # read as part of this game; the process is then not reused, so it
            # cannot reach the next game either.
            if seat.reader is not None:
                try:
                    self.check_unasked(seat, 0)
                except BotError:
                    unasked.append(seat)
            end = End(
                match=self.match_id,
                seat=seat.index,
                result=result,
                events=self.state.events_for(seat.index, self.events[seat.seen :]),
            )
            ends.append((seat, encode_message(end)))

        # One grace period for all the seats, told one after the other: a write
        # the pipe takes at once is not a checkpoint, so only a bot that does
        # not read can hold the others up, and only until the shared deadline.
        # A cancel scope costs as much as a few decisions: one is opened for all
        # the seats, and another after each seat whose write it ended (the seats
        # after it are still told what their pipes take at once).
        deadline = trio.current_time() + self.settings.grace_ms / 1000
        told = 0
        while told < len(ends):
            with trio.move_on_at(deadline):
                for seat, line in ends[told:]:
                    try:
                        await seat.bot.send(line)
                    except BotError:
                        pass
                    told += 1
            told += told < len(ends)  # the seat whose write ran out of time
        for seat in unasked:
            await seat.bot.kill()
        for seat in self.seats:
            if seat.poll_in >= 0 and hasattr(seat.bot, "poll_schedule"):
                seat.bot.poll_schedule = (seat.poll_in, seat.poll_skip)  # for its next game (_poll_schedule)
        return result


def _kind(message: BotMessage) -> str:
    """A message as a reason names it: "an action for request 7", "a ready line"."""
    if isinstance(message, Action):
        return f"an action for request {quote(message.id)}"
    return "a ready line" if isinstance(message, Ready) else "a log line"


def result_of(outcome: Outcome, terminations: Sequence[Termination] = ()) -> Result:
    """The ``result`` message of a finished game: the engine's outcome and the seats' terminations."""
    return Result(
        ranks=outcome.ranks,
        scores=outcome.scores,
        winners=outcome.winners,
        forfeited=outcome.forfeited,
        ended_by=outcome.ended_by,
        stats=outcome.stats,
        terminations=list(terminations),
    )


async def run_match(
    spec: MatchSpec,
    bots: Sequence[BotChannel],
    settings: RefereeSettings = DEFAULT_SETTINGS,
    *,
    replay_path: Path | None = None,
    commands: Sequence[list[str]] | None = None,
    replace: Replace | None = None,
    initial_state: GameState | None = None,
) -> MatchRecord:
    """Play one match between ``bots`` (seat order) and return its record.

    The caller owns the bots (their processes and cleanup); this function only
    talks to them. ``replace`` may swap in a fresh bot for a reused process that
    broke before ``ready`` (see ``referee.seats``). ``ValueError`` for a bad spec (unknown game or variant, a
    table size the game does not allow) before anything is sent.

    ``initial_state`` starts the match from a position built by the caller (the
    conformance check's forced decisions) instead of ``spec.seed``'s deal; its
    table size must match ``bots``, and no replay can be written (its deal is not
    in the chance record). A bot whose channel has ``untimed = True`` (a person
    at the terminal) has no clock; every other seat's clock runs as usual.
    """
    if initial_state is not None and (replay_path is not None or initial_state.n_players != len(bots)):
        raise ValueError("run_match: a given initial state needs one bot per seat and no replay path")
    match = _Match(spec, bots, settings, replay_path, replace, initial_state)
    began = trio.current_time()
    if settings.game_wall_ms > 0:
        match.wall_deadline = began + settings.game_wall_ms / 1000
    match.write_header(commands if commands is not None else [[] for _ in bots])
    try:
        await match.start_seats()
        await match.play()
        result = await match.finish()
        seconds = trio.current_time() - began
        if match.replay is not None:
            match.replay.write(ResultRecord(result=result, seconds=round(seconds, 3)))
            # finish() fsyncs the file: milliseconds of disk wait that must not
            # stall the other games' clocks on this Trio thread.
            await trio.to_thread.run_sync(match.replay.finish)
    except BaseException:
        if match.replay is not None:
            match.replay.abort()
        raise
    return MatchRecord(
        match=match.match_id,
        game=spec.game,
        seed=spec.seed,
        variants=match.variants,
        names=match.names,
        result=result,
        timings=[
            SeatTiming(
                decisions=seat.decisions,
                total_ms=round(seat.total_s * 1000, 3),
                max_ms=round(seat.max_s * 1000, 3),
                bank_left_ms=round(seat.bank_s * 1000, 3),
            )
            for seat in match.seats
        ],
        seconds=round(seconds, 3),
        replay=str(replay_path) if replay_path is not None else None,
        sandbox=_sandbox_summary(bots),
    )


def _sandbox_summary(bots: Sequence[BotChannel]) -> str:
    """How the seats were contained: one description, or one per group of seats when they differ."""
    # Real processes carry a description (referee.process); scripted fakes do not.
    seats: dict[str, list[int]] = {}
    for seat, bot in enumerate(bots):
        if text := getattr(bot, "sandbox", ""):
            seats.setdefault(text, []).append(seat)
    if len(seats) <= 1:
        return next(iter(seats), "")
    return "; ".join(
        f"seat{'s' if len(group) > 1 else ''} {', '.join(map(str, group))}: {text}" for text, group in seats.items()
    )
