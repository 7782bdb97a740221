"""A seat's lines: every line it sends, read and judged.

``SeatIntake`` reads one seat's lines during a match: decoded, log lines
recorded, the quick-answer polls kept to their schedule. ``unasked_output`` is
the one rule for a line that answers nothing open, whenever it is found. What
the seat is charged is its clock's (referee.match.clock), not this module's.

What the referee spends reading a seat's output is the seat's (issue 42, item
3): the decoding of every line over ``LONG_LINE_BYTES`` is timed on the
referee's own CPU clock and added up in the seat's ``OutputCost``, which its
clock charges; once it passes what the seat has left of its budget, the seat
times out and nothing more of its output is decoded. A long log line in the
usual shape is read for what the replay keeps of it (``protocol.codec.log_message``),
and a match that reads a flood of output lets the other tables' tasks run
between lines once it has held the thread for its fair slice.

An answer that is already in the pipe when the request has been written (the
bot ran while the referee was preempted, or answered on another core) is taken
without a trip through Trio's scheduler, which costs as much as the rest of a
decision; so is one that comes within ``QUICK_ANSWER_S`` from a bot whose
previous answer came as fast (the referee polls its pipe for it). When it has
not come and no other task is runnable, the referee waits for it in the kernel
(``trio_peek.idle_wait``: one ``poll`` of the bot's pipe and of Trio's own descriptor,
bounded by Trio's next deadline), not through the run loop.
"""

from __future__ import annotations

import math
import time

import msgspec

from protocol.codec import ProtocolViolation, decode_bot_message, log_message
from protocol.messages import Action, BotMessage, Log, Ready
from protocol.untrusted import quote
from referee.channel import ChannelBase
from referee.errors import BotProtocolError, BotTimedOut, internal_error
from referee.match import trio_peek
from referee.match.fair_slice import FairSlice
from referee.match.recorder import LOG_CHARS, MatchRecorder
from referee.pipe import LineReader

__all__ = [
    "QUICK_ANSWER_S",
    "QUICK_RETRY",
    "QUICK_RETRY_MAX",
    "SeatIntake",
    "decode",
    "unasked_output",
]

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
the fair slice (referee.match.fair_slice): the other tasks wait no longer than they already may."""

LONG_LINE_BYTES = 4096
"""A line longer than this has its decoding timed and charged to its seat (``OutputCost``). A
shorter one costs the referee microseconds, and a seat sends at most ``max_messages_per_decision``
of them per request: not worth the two reads of the CPU clock."""

QUICK_RETRY = 8
"""Decisions a seat is waited for as usual after a poll found no answer within ``QUICK_ANSWER_S``."""

QUICK_RETRY_MAX = 512
"""The most decisions between two polls of a seat whose answers keep not coming in time."""

# --- the one rule for output nobody asked for ----------------------------------


def unasked_output(message: BotMessage, answered: int, moment: str | None) -> BotProtocolError:
    """The seat's error for ``message``, a line that answers no open request; ``moment`` says when it came
    (None: in the same read as the seat's answer to request ``answered``).

    Between requests a bot may send log lines and nothing else. A line that is
    not a log and not the answer to the open request is unasked output,
    whenever the referee finds it: begun before the request it would answer
    was sent, arrived while none was open, in the same read as an answer, or
    read as the answer to a later request. One that repeats the answer to
    request ``answered`` is named a second answer (which, in the same read as
    the first, says all).
    """
    if isinstance(message, Action) and message.id == answered != 0:
        second = f"a second answer to request {answered}"
        return BotProtocolError(second if moment is None else f"{second} (it {moment})")
    if moment is None:
        moment = f"arrived with the answer to request {answered}"
    return BotProtocolError(f"unasked output: {_kind(message)} {moment}")


def _kind(message: BotMessage) -> str:
    """A message as a reason names it: "an action for request 7", "a ready line"."""
    if isinstance(message, Action):
        return f"an action for request {quote(message.id)}"
    return "a ready line" if isinstance(message, Ready) else "a log line"


def not_an_answer(message: BotMessage, request: int) -> BotProtocolError:
    """The seat's error for sending something else where its answer to ``request`` belongs."""
    return BotProtocolError(f"sent {_kind(message)} instead of an action for request {request}")


def not_ready(message: BotMessage) -> BotProtocolError:
    """The seat's error for sending something else before its ready line."""
    return BotProtocolError(f"sent {_kind(message)} before ready")


def decode(line: bytes) -> BotMessage:
    """One line from a bot as a message; anything wrong with it is that seat's protocol error."""
    try:
        return decode_bot_message(line)
    except ProtocolViolation as exc:
        raise BotProtocolError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - a bug of ours met by these bytes: the seat's error, not the match's
        raise internal_error(exc) from None


# --- a seat ----------------------------------------------------------------------


OUTPUT_BYTES_PER_S = 16 << 20
"""The bytes a seat may send per second of its budget, one line of the longest allowed besides:
reading them costs the referee about a hundredth of that second (decoding them is charged)."""


class OutputCost:
    """What one seat's output costs the referee since its last answer, and the most it may.

    The decoding of its long lines, on the referee's own CPU clock
    (``spent_s``, at most ``limit_s``), and the bytes read from its pipe (at
    most ``limit_bytes``: reading them is cheap, but not free, and not timed).
    Its clock (referee.match.clock) sets the limits from what the seat has left
    of its budget (``limit``), charges ``spent_s`` with each decision and starts
    the count again (``start``)."""

    __slots__ = ("bytes_from", "limit_bytes", "limit_s", "line_bytes", "reader", "spent_s")

    def __init__(self, line_bytes: int) -> None:
        self.line_bytes = line_bytes  # the longest line the seat may send
        self.reader: LineReader | None = None  # the seat's pipe, when the referee reads it itself
        self.spent_s = 0.0
        self.limit_s = math.inf
        self.bytes_from = 0  # the pipe's count of bytes read when the count started
        self.limit_bytes = math.inf

    def limit(self, seconds: float) -> None:
        """The seat has ``seconds`` of budget: the most the referee spends on its output from the start."""
        self.limit_s = seconds
        self.limit_bytes = self.line_bytes + OUTPUT_BYTES_PER_S * seconds

    def start(self, seconds: float) -> None:
        """Count afresh from now, with ``limit(seconds)``."""
        self.spent_s = 0.0
        self.bytes_from = self.reader.bytes_read if self.reader is not None else 0
        self.limit(seconds)

    def check(self, line: int) -> None:
        """After a long line (``line`` bytes): BotTimedOut past the time limit, a flood past the bytes."""
        if self.spent_s > self.limit_s:
            raise BotTimedOut(
                f"the referee spent {self.spent_s * 1000:.0f} ms of its CPU decoding this seat's output "
                f"(lines of up to {line} bytes), more than the {self.limit_s * 1000:.0f} ms it had left"
            )
        reader = self.reader
        if reader is not None and reader.bytes_read - self.bytes_from > self.limit_bytes:
            raise BotProtocolError(
                f"flood: more than {int(self.limit_bytes)} bytes of output since its last answer (one line and "
                f"{OUTPUT_BYTES_PER_S >> 20} MiB per second of its {self.limit_s * 1000:.0f} ms)"
            )


class SeatIntake:
    """The referee's bookkeeping for one seat during a match, and the reading of its lines."""

    __slots__ = (
        "answered", "bot", "cost", "early", "fair", "index", "logs", "max_logs", "now", "poll_in", "poll_skip",
        "reader", "record",
    )  # fmt: skip

    def __init__(
        self,
        index: int,
        bot: ChannelBase,
        record: MatchRecorder,
        max_logs: int,
        fair: FairSlice,
        cost: OutputCost,
    ) -> None:
        self.index = index
        self.record = record
        self.fair = fair  # the match's slice of the thread, given up between long lines
        self.cost = cost  # what the referee spends decoding this seat's long lines
        now = fair.now
        self.max_logs = max_logs  # log lines allowed per request (a flood is more)
        self.now = now
        self.answered = 0  # the last request this seat answered
        self.logs = 0  # log lines since its last answer
        self.early = False  # a line had begun to arrive before the open request was sent
        self.take_seat(bot)

    def take_seat(self, bot: ChannelBase) -> None:
        """Read ``bot``'s lines (at the start, or a fresh process in place of a broken one)."""
        self.bot = bot
        self.reader = self.cost.reader = bot.reader
        # Decisions until the referee polls for a quick answer again (QUICK_ANSWER_S; -1: never, a
        # person), and how many poll_in skips after the next poll that finds nothing. A warm process
        # goes on where its last game left it, so a bot that thinks is not polled for at every start.
        kept = bot.poll_schedule
        if bot.untimed:
            self.poll_in, self.poll_skip = -1, QUICK_RETRY
        else:
            self.poll_in, self.poll_skip = kept if kept is not None else (0, QUICK_RETRY)

    def keep_schedule(self) -> None:
        """Leave the quick-answer poll schedule with the channel, for its next game."""
        if self.poll_in >= 0:
            self.bot.poll_schedule = (self.poll_in, self.poll_skip)

    # --- lines -------------------------------------------------------------------

    def line_now(self, seconds: float = 0.0) -> bytes | None:
        """The seat's next line if all of it is there now or within ``seconds`` (polled), without waiting; else None."""
        reader = self.reader
        assert reader is not None
        try:
            return reader.line_within(seconds, self.now) if seconds else reader.pending_line()
        except ProtocolViolation as exc:
            raise BotProtocolError(str(exc)) from None

    def line_blocking(self, seconds: float, wake_fd: int) -> bytes | None:
        """``LineReader.line_blocking``, its protocol errors the seat's."""
        reader = self.reader
        assert reader is not None
        try:
            return reader.line_blocking(seconds, wake_fd)
        except ProtocolViolation as exc:
            raise BotProtocolError(str(exc)) from None

    def answer_now(self) -> BotMessage | None:
        """The seat's next message if it is there now, or comes soon while nothing else can run; else None.

        A seat polled for (``QUICK_ANSWER_S``) is polled; then, if no other task
        is runnable, the referee waits for the line in the kernel rather than in
        Trio's run loop (``trio_peek.idle_wait``). Keeps the seat's poll schedule (``QUICK_RETRY``).
        """
        if self.poll_in != 0:  # waited for as usual for now (-1: never polled for)
            if self.poll_in > 0:
                self.poll_in -= 1
            line = self.line_now()
        else:
            line = self.line_now(QUICK_ANSWER_S)
            if line is None:  # not a quick answer this time: wait as usual for a while
                self.poll_in = self.poll_skip
                self.poll_skip = min(2 * self.poll_skip, QUICK_RETRY_MAX)
            else:
                self.poll_skip = QUICK_RETRY
        if line is None and not self.early and (idle := trio_peek.idle_wait()) is not None:
            # Nothing else for this thread to do until the answer (or a deadline, or
            # other I/O) comes: wait in the kernel, not through Trio's run loop.
            line = self.line_blocking(*idle)
        if line is None:
            return None
        return decode(line) if len(line) <= LONG_LINE_BYTES else self.long_message(line)

    def ready_now(self) -> BotMessage | None:
        """The seat's first line after ``start``, decoded, if a warm bot's quick poll finds it; else None."""
        if self.reader is None or self.poll_in != 0:
            return None
        line = self.line_now(QUICK_ANSWER_S)
        return self.message(line) if line is not None else None

    def message_now(self) -> Ready | Action[msgspec.Raw] | None:
        """The seat's next message that is not a log line, if it has all arrived; log lines before it are recorded."""
        if self.reader is None:
            return None
        while (line := self.line_now()) is not None:
            message = self.message(line)
            if not isinstance(message, Log):
                return message
            self.record_log(0, message)
        return None

    async def read_message(self, request: int, first: BotMessage | None = None) -> Ready | Action[msgspec.Raw]:
        """The next message that is not a log line (``first``, if given, is the first one read); logs go to the record."""
        message = first
        while True:
            if message is None:
                try:
                    line = await self.bot.readline()
                except ProtocolViolation as exc:
                    raise BotProtocolError(str(exc)) from None
                message = self.message(line)
                if len(line) > LONG_LINE_BYTES:
                    await self.keep_fair()
            if not isinstance(message, Log):
                if self.early:
                    self.early = False
                    raise unasked_output(message, 0, f"began to arrive before request {request} was sent")
                return message
            self.early = False
            self.record_log(request, message)
            message = None

    def record_log(self, request: int, message: Log) -> None:
        self.logs += 1
        if self.logs > self.max_logs:
            raise BotProtocolError(f"flood: more than {self.max_logs} log lines for one request")
        self.record.log(self.index, request, message.message)

    def accept_ready(self, message: Ready | Action[msgspec.Raw]) -> None:
        """The seat's first message after its log lines: it must be ``ready``."""
        if not isinstance(message, Ready):
            raise not_ready(message)
        self.logs = 0

    def quiet(self) -> bool:
        """Nothing sent since the seat's last answer (one ``poll``, no read): the usual state before
        a request. Then no line still arriving can be mistaken for the answer to the next one."""
        reader = self.reader
        assert reader is not None
        if reader.quiet():
            self.early = False
            return True
        return False

    async def check_unasked(self, next_request: int) -> None:
        """Read what the seat sent since its last answer, before ``next_request`` goes out (0: the game is over).

        Log lines are allowed between requests and recorded; anything else
        arrived while no request was open and is unasked output. A line still
        arriving is marked: it cannot be the answer to the request about to be
        sent. For a seat that is not ``quiet``; the other tables' tasks run
        between long lines once the match has held the thread for its slice.
        """
        while (line := self.line_now()) is not None:
            message = self.message(line)
            if not isinstance(message, Log):
                after = f"after its answer to request {self.answered}" if self.answered else "after ready"
                before = f", before request {next_request} was sent" if next_request else ", after the game's end"
                raise unasked_output(message, self.answered, f"arrived {after}, while no request was open{before}")
            self.record_log(self.answered, message)
            if len(line) > LONG_LINE_BYTES:
                await self.keep_fair()
        assert self.reader is not None
        self.early = self.reader.partial

    async def finish_line(self) -> None:
        """Read to its end the line the seat was writing when its game ended, a log recorded as its last
        answer's; BotProtocolError for anything else. For a seat whose reader holds a begun line (its
        tree was frozen after its last answer, in the middle of writing): its End let it go on. The
        caller bounds the wait."""
        assert self.reader is not None
        while self.reader.partial:
            try:
                line = await self.bot.readline()
            except ProtocolViolation as exc:
                raise BotProtocolError(str(exc)) from None
            message = self.message(line)
            if not isinstance(message, Log):
                raise unasked_output(message, self.answered, "arrived after the game's end")
            self.record_log(self.answered, message)

    def message(self, line: bytes) -> BotMessage:
        """One line as a message (``decode``), a long one's decoding charged to the seat."""
        return decode(line) if len(line) <= LONG_LINE_BYTES else self.long_message(line)

    def long_message(self, line: bytes) -> BotMessage:
        """A line over ``LONG_LINE_BYTES`` as a message: its decoding timed on the referee's CPU clock
        and added to the seat's ``OutputCost``; BotTimedOut or a flood once that is over its limits (the
        message is then not read)."""
        cost = self.cost
        began = time.thread_time()
        try:
            message = log_message(line, LOG_CHARS) or decode(line)
        finally:
            cost.spent_s += time.thread_time() - began
        cost.check(len(line))
        return message

    async def keep_fair(self) -> None:
        """After a long line: let the other tasks run if this match has held the thread for its slice."""
        now = self.now()
        if now >= self.fair.due:
            await self.fair.keep(now)

    def take_answer(self, message: Ready | Action[msgspec.Raw], request: int) -> Action[msgspec.Raw]:
        """``message``, read as the answer to ``request``, if it is one; lines that came in the same read checked too."""
        if not isinstance(message, Action):
            raise not_an_answer(message, request)
        if message.id != request:
            if message.id == self.answered != 0:  # it came too late to be caught before this request went out
                raise unasked_output(message, self.answered, f"arrived after request {request} was sent")
            raise BotProtocolError(f"answered request {quote(message.id)}, the open request is {request}")
        self.answered, self.logs = request, 0
        reader = self.reader
        if reader is not None and reader.partial:
            while (line := reader.pending_line()) is not None:
                more = self.message(line)
                if not isinstance(more, Log):
                    raise unasked_output(more, request, None)
                self.record_log(request, more)
        return message
