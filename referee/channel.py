"""A seat as the referee sees it: the whole contract between a match and whoever plays a seat.

Every seat answers five calls (``BotChannel``): its name, send a line, read a
line, stop, and what it wrote on stderr. Some seats can do more, and the
referee uses it when they can: a pipe it may look into for an answer already
there (``reader``), no clock for a person (``untimed``), the CPU meter of a
bot's process tree (``meter``) and the time it waited for a CPU (``waited``),
freezing that tree between requests (``hold``),
where its quick-answer polls stood after its last game (``poll_schedule``), how
it is contained (``sandbox``). ``ChannelBase`` declares every one of them with
the default that means "this seat has no such thing", so the match reads them
as plain attributes and a new kind of seat states what it offers by overriding
them.

A channel written against the five calls alone is still a seat: ``adopt``
gives it the declared defaults, so it offers nothing more (no clock-free play,
no CPU meter, no freezer). A seat that offers more subclasses ``ChannelBase``
and says so; no member is ever looked up by name.

The seats that live here are the ones that are not a process: ``DeadBot`` (a
bot that could not start: every call fails with its start error) and
``InProcessSeat`` (answers computed in the referee's process, as the
check-bot's random opponents and the human seat do). ``check_channel`` is the
conformance kit any implementation can be run through.
"""

from __future__ import annotations

import abc
from collections import deque
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import msgspec
import trio

from protocol.codec import ProtocolViolation, decode_bot_message, encode_message
from protocol.messages import PROTOCOL_VERSION, Action, End, Log, Ready, Request, Result, Start, TimeControl
from referee.errors import BotError
from referee.pipe import LineReader

__all__ = ["BotChannel", "ChannelBase", "DeadBot", "InProcessSeat", "WaitMeter", "adopt", "check_channel"]


class WaitMeter(Protocol):
    """The time a seat's tasks have waited for a CPU, in nanoseconds, counting upwards; with
    ``going_on``, the waits not over yet as well, as far as the host can tell (dearer to read)."""

    def __call__(self, going_on: bool = False) -> int: ...


class BotChannel(Protocol):
    """The five calls every seat answers: a class that has them is a seat (``adopt`` makes it a ``ChannelBase``)."""

    @property
    def name(self) -> str: ...

    async def send(self, data: bytes) -> None: ...

    async def readline(self) -> bytes: ...

    async def kill(self) -> None: ...

    def stderr_text(self) -> str: ...


class ChannelBase(abc.ABC):
    """The whole seat contract: the five calls, and every other member the referee reads, with its default.

    Each default is what the member means for a seat that has no such thing, so
    a subclass overrides only what it offers. Errors: ``send`` and ``readline``
    fail with a ``BotError`` (``readline`` may also raise a ``ProtocolViolation``
    for a line over the limit); ``kill`` never fails and may be called twice.
    """

    reader: LineReader | None = None
    """The pipe the seat's lines come through, when the referee may look into it (a bot process): it
    then reads an answer already there without a wait, and sees output that came while nothing was asked."""

    untimed: bool = False
    """No clock for this seat (a person at the terminal): the referee waits as long as it takes."""

    sandbox: str = ""
    """How the seat's bot is contained (referee.sandbox), as the match record shows it."""

    meter: Callable[[], int] | None = None
    """The CPU time its whole process tree has used, in nanoseconds: what the cpu clock charges, and
    the evidence of a bot running while it is not asked."""

    waited: WaitMeter | None = None
    """The time the tasks of its process tree have waited for a CPU while they could run, in
    nanoseconds: what the cpu clock leaves out of a decision's wall time. None: the seat's sleep
    is not measured (with a ``meter``, the cpu clock then charges its CPU alone, up to the backstop)."""

    poll_schedule: tuple[int, int] | None = None
    """Where the referee's quick-answer polls stood at the end of this seat's last game (referee.match.intake),
    for its next: how fast a bot answers is the bot's, not one game's. None: from the start."""

    restless: bool = False
    """Caught running while it was not asked: held (``hold``) between its requests in every later game too."""

    @property
    def can_hold(self) -> bool:
        """Whether ``hold`` can freeze the seat's tree until it is next written to."""
        return False

    def hold(self) -> None:
        """Freeze the seat's tree until it is next written to (the referee does not ask it meanwhile)."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The seat's bot's name, as the bot's settings give it."""

    @abc.abstractmethod
    async def send(self, data: bytes) -> None:
        """Write one encoded message (its newline included)."""

    @abc.abstractmethod
    async def readline(self) -> bytes:
        """The seat's next line, without its newline."""

    @abc.abstractmethod
    async def kill(self) -> None:
        """Stop the seat at once (a forfeit: no grace)."""

    @abc.abstractmethod
    def stderr_text(self) -> str:
        """What the seat's bot wrote on stderr (the kept tail)."""


class _Adopted(ChannelBase):
    """A seat that declares only the five calls: it offers nothing more (every other member at its default)."""

    def __init__(self, inner: BotChannel) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    async def send(self, data: bytes) -> None:
        await self.inner.send(data)

    async def readline(self) -> bytes:
        return await self.inner.readline()

    async def kill(self) -> None:
        await self.inner.kill()

    def stderr_text(self) -> str:
        return self.inner.stderr_text()


def adopt(bot: BotChannel) -> ChannelBase:
    """``bot`` as a ``ChannelBase``: itself when it is one, else wrapped with the declared defaults."""
    return bot if isinstance(bot, ChannelBase) else _Adopted(bot)


class DeadBot(ChannelBase):
    """A seat whose bot could not be started: every call fails with the start error."""

    def __init__(self, name: str, error: BotError) -> None:
        self._name = name
        self.error = error

    @property
    def name(self) -> str:
        return self._name

    async def send(self, data: bytes) -> None:
        raise self.error

    async def readline(self) -> bytes:
        raise self.error

    async def kill(self) -> None:
        return None

    def stderr_text(self) -> str:
        return ""


class InProcessSeat(ChannelBase):
    """A seat whose answers come from ``respond`` in the referee's process, spoken as lines like a bot's.

    The referee's lines are turned into messages and the answers back into
    lines, so it talks to this seat through the same calls as to a process.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._out: deque[bytes] = deque()
        self._ready = trio.Event()

    @property
    def name(self) -> str:
        return self._name

    async def respond(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The answer to one referee message (None: nothing to answer)."""
        raise NotImplementedError

    async def send(self, data: bytes) -> None:
        message = msgspec.json.decode(data)
        answer = await self.respond(message)
        if answer is not None:
            self._out.append(msgspec.json.encode(answer))  # a line as readline gives it: no newline
            self._ready.set()

    async def readline(self) -> bytes:
        while not self._out:
            self._ready = trio.Event()
            await self._ready.wait()
        return self._out.popleft()

    async def kill(self) -> None:
        return None

    def stderr_text(self) -> str:
        return ""


# --- the conformance kit ------------------------------------------------------

MakeChannel = Callable[[], AbstractAsyncContextManager[BotChannel]]
"""A fresh seat for one check, cleaned up when the block ends (as trio.testing's stream makers)."""


async def check_channel(make: MakeChannel, *, seconds: float = 10.0) -> None:
    """Run one seat implementation through the contract; AssertionError names what it breaks.

    The seat is either live (it takes ``start`` and says ``ready``, answers a
    request with an action for that request, takes ``end``) or dead (``send``
    and ``readline`` fail with a ``BotError``, as a ``DeadBot``). Either way its
    declared members have their declared types, ``kill`` may be called twice,
    ``stderr_text`` is text, and nothing but a ``BotError`` (or, from
    ``readline``, a ``ProtocolViolation``) escapes a call. ``seconds`` bounds
    each wait for a line.
    """
    async with make() as bot:
        channel = adopt(bot)
        _check_members(channel)
        start: Start[dict[str, str]] = Start(
            protocol=PROTOCOL_VERSION,
            game="check",
            match="check_channel",
            seat=0,
            players=2,
            names=[channel.name, "other"],
            variants={},
            config={},
            time=TimeControl(),
        )
        try:
            await channel.send(encode_message(start))
        except BotError:
            await _check_dead(channel, seconds)
        else:
            await _check_live(channel, seconds)
        await channel.kill()
        await channel.kill()  # twice: a forfeit and the match's end may both stop it
        assert isinstance(channel.stderr_text(), str), "stderr_text() must be text"
        _check_members(channel)


def _check_members(channel: ChannelBase) -> None:
    assert isinstance(channel.name, str), f"name must be text, not {type(channel.name).__name__}"
    assert channel.reader is None or isinstance(channel.reader, LineReader), "reader must be a LineReader or None"
    assert isinstance(channel.untimed, bool), "untimed must be a bool"
    assert isinstance(channel.sandbox, str), "sandbox must be text"
    assert isinstance(channel.restless, bool), "restless must be a bool"
    assert isinstance(channel.can_hold, bool), "can_hold must be a bool"
    schedule = channel.poll_schedule
    assert schedule is None or (len(schedule) == 2 and all(isinstance(n, int) for n in schedule)), (
        "poll_schedule must be None or two counts"
    )
    if channel.meter is not None:
        first = channel.meter()
        assert isinstance(first, int) and 0 <= first <= channel.meter(), "meter must count CPU ns upwards"
    if channel.waited is not None:
        first = channel.waited()
        assert isinstance(first, int) and 0 <= first <= channel.waited(), "waited must count ns upwards"
        assert isinstance(channel.waited(going_on=True), int), "waited(going_on=True) must count ns"


async def _check_dead(channel: ChannelBase, seconds: float) -> None:
    with trio.fail_after(seconds):
        try:
            await channel.readline()
        except BotError:
            pass
        else:
            raise AssertionError("a seat whose send failed must fail its readline too")


async def _check_live(channel: ChannelBase, seconds: float) -> None:
    first = await _next_message(channel, seconds, "ready")
    assert isinstance(first, Ready), f"the answer to start must be ready, not {type(first).__name__}"
    request: Request[Any, Any, Any] = Request(
        id=1, decision="check", view={}, events=[], options=[{"type": "check"}], time_ms=1000, bank_ms=0
    )
    await channel.send(encode_message(request))
    answer = await _next_message(channel, seconds, "an action")
    assert isinstance(answer, Action), f"the answer to a request must be an action, not {type(answer).__name__}"
    assert answer.id == 1, f"the action must answer request 1, not {answer.id}"
    result = Result(ranks=[1, 2], scores=[0, 0], winners=[0], forfeited=[], ended_by="check")
    await channel.send(encode_message(End(match="check_channel", seat=0, result=result)))


async def _next_message(channel: ChannelBase, seconds: float, wanted: str) -> Ready | Action[msgspec.Raw]:
    """The seat's next line that is not a log line, decoded; each line must come within ``seconds``."""
    while True:
        line = b""
        with trio.move_on_after(seconds) as waited:
            line = await channel.readline()
        assert not waited.cancelled_caught, f"no line within {seconds:g} s while waiting for {wanted}"
        assert isinstance(line, bytes) and not line.endswith(b"\n"), "readline() must give one line without its newline"
        try:
            message = decode_bot_message(line)
        except ProtocolViolation as exc:
            raise AssertionError(f"the seat sent a line that is not a message: {exc}") from None
        if not isinstance(message, Log):
            return message
