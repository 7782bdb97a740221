"""What the bot under check said, and how fast: a ``BotChannel`` wrapper around its process.

The referee plays the bot through a ``Transcript`` as through any seat. It
passes every line on unchanged and keeps what a verdict needs: the ids of the
requests answered, each decision's thinking time as the referee's clock charges
it, each fresh process's start-up time, and after a timeout what came late
(with the input still open) or only once the input closed (never flushed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import trio

from protocol.codec import ProtocolViolation, decode_bot_message
from protocol.messages import Action, Log, Ready
from referee.channel import ChannelBase
from referee.errors import BotError
from referee.process import BotProcess

__all__ = ["Transcript"]


class Transcript(ChannelBase):
    """A ``BotChannel`` around the bot's process that keeps what it sent and how fast.

    ``swap`` puts a fresh process behind it. Each fresh process's start-up
    time is kept: from its start to its first ``ready``. On ``kill`` after an
    unanswered ``start`` or request (a timeout) it first waits ``patience``
    seconds more with the bot's input open: an answer that comes then is late,
    and says how late. Only then does it close the input and read what still
    comes out: an answer that appears only at that point was written but never
    flushed.
    """

    def __init__(
        self,
        process: BotProcess,
        patience: Callable[[bool], float] = lambda startup: 0.0,
        *,
        cpu_clock: bool = True,
    ) -> None:
        self.process = process
        self.patience = patience
        self.cpu_clock = cpu_clock
        """Thinking is charged as the referee's clock charges it: the tree's CPU time on the cpu clock
        (waiting for a core on a busy machine costs a bot nothing), else the wall time."""
        self.sent_cpu_ns = 0
        self._offer(process)
        self.answered: set[int] = set()
        self.open_request = 0
        self.sent_at = 0.0
        self.waiting_ready = False
        self.thinking_ms: list[float] = []
        self.late_lines: list[bytes] = []
        self.late_ms: float | None = None
        """How long after its start or request the overdue answer came while the input was still open."""
        self.decision = ""  # the kind of the last request sent
        self.first_option = ""
        """The last request's first option as JSON ("" when it listed none): an answer of the right shape."""
        self.spawned_at = self.start_sent_at = trio.current_time()
        self.first_ready = True  # the next ready is this process's first
        self.heard = False
        """A line other than a log came since the last start or request: the bot answered, rightly or not."""
        self.startup_ms: list[float] = []
        """Each fresh process's start-up: from its start until its first ready line."""

    def _offer(self, process: BotProcess) -> None:
        """Offer the referee what the process offers (its CPU meter, its freezer): check-bot plays a
        bot under the clock and the fairness rules of a tournament, not a gentler one."""
        self.meter = process.meter
        self.waited = process.waited
        self.sandbox = process.sandbox
        self.restless = False
        self.poll_schedule = None

    @property
    def can_hold(self) -> bool:
        return self.process.can_hold

    def hold(self) -> None:
        self.process.hold()

    def swap(self, process: BotProcess) -> None:
        self.process = process
        self._offer(process)
        self.spawned_at = trio.current_time()
        self.first_ready = True

    @property
    def name(self) -> str:
        return self.process.name

    async def send(self, data: bytes) -> None:
        if data.startswith(b'{"type":"request"'):
            request = msgspec.json.decode(data, type=dict[str, Any])
            self.open_request = request["id"]
            self.decision = str(request["decision"])
            options = request.get("options")
            self.first_option = msgspec.json.encode(options[0]).decode() if options else ""
            self.sent_at = trio.current_time()
            self.sent_cpu_ns = self.meter() if self.meter is not None else 0
            self.heard = False
        elif data.startswith(b'{"type":"start"'):
            self.start_sent_at = trio.current_time()
            self.heard = False
            self.waiting_ready = True
            self.open_request = 0
            self.answered.clear()  # request ids start again at 1 in every game
        await self.process.send(data)

    async def readline(self) -> bytes:
        line = await self.process.readline()
        try:
            message = decode_bot_message(line)
        except ProtocolViolation:
            self.heard = True
            return line
        self.heard = self.heard or not isinstance(message, Log)
        if isinstance(message, Ready):
            self.waiting_ready = False
            if self.first_ready:
                self.first_ready = False
                self.startup_ms.append((trio.current_time() - self.spawned_at) * 1000)
        elif isinstance(message, Action) and self.open_request:
            self.thinking_ms.append(self._thinking_ms())
            self.answered.add(self.open_request)
            self.open_request = 0
        return line

    def _thinking_ms(self) -> float:
        """The last request's thinking time, as the referee's clock charged it."""
        if self.cpu_clock and self.meter is not None:
            return (self.meter() - self.sent_cpu_ns) / 1e6
        return (trio.current_time() - self.sent_at) * 1000

    async def kill(self) -> None:
        # Only a timeout is looked into: after a wrong line the bot has answered, rightly or not.
        if (self.open_request or self.waiting_ready) and not self.heard:
            with trio.CancelScope(shield=True):
                await self._wait_for_late_answer()
                if self.late_ms is not None:
                    await self.process.kill()
                    return
                stdin = self.process.process.stdin
                if stdin is not None:
                    with trio.move_on_after(0.2):
                        await stdin.aclose()
                with trio.move_on_after(0.5):
                    while True:
                        try:
                            self.late_lines.append(await self.process.readline())
                        except (BotError, ProtocolViolation):
                            break
        await self.process.kill()

    async def _wait_for_late_answer(self) -> None:
        """After a timeout, read on with the input open: a bot that is only slow answers now (``late_ms``)."""
        startup = self.waiting_ready
        began = (self.spawned_at if self.first_ready else self.start_sent_at) if startup else self.sent_at
        with trio.move_on_after(self.patience(startup)):
            while True:
                try:
                    line = await self.process.readline()
                    message = decode_bot_message(line)
                except (BotError, ProtocolViolation):
                    return
                if isinstance(message, Ready if startup else Action):
                    self.late_ms = (trio.current_time() - began) * 1000
                    if startup and self.first_ready:
                        self.first_ready = False
                        self.startup_ms.append(self.late_ms)
                    return

    def stderr_text(self) -> str:
        return self.process.stderr_text()
