"""Scripted fake bots: BotChannel implementations driven by a response function."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any

import trio

from referee.channel import ChannelBase
from referee.errors import BotCrashed, BotError
from referee.pipe import LineReader, StreamClosed

HANG = "hang"
"""A response item: never send anything again."""

Response = bytes | float | str | BotError
"""A line to emit, seconds to wait first, HANG, or an error readline raises."""


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def ready(name: str = "fake") -> bytes:
    return line({"type": "ready", "name": name})


def action(request_id: int, value: Any) -> bytes:
    return line({"type": "action", "id": request_id, "action": value})


PASS = {"type": "place", "placements": []}


class ScriptedBot(ChannelBase):
    """A bot whose answers come from ``respond(message) -> [Response, ...]``."""

    def __init__(self, respond: Callable[[dict[str, Any]], list[Response]], name: str = "fake") -> None:
        self._name = name
        self.respond = respond
        self.received: list[dict[str, Any]] = []
        self.killed = False
        self._in, self._out = trio.open_memory_channel[Response](math.inf)

    @property
    def name(self) -> str:
        return self._name

    async def send(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1, "one message per line"
        message = json.loads(data)
        self.received.append(message)
        for item in self.respond(message):
            self._in.send_nowait(item)

    async def readline(self) -> bytes:
        while True:
            item = await self._out.receive()
            if isinstance(item, BotError):
                raise item
            if isinstance(item, float):
                await trio.sleep(item)
                continue
            if item == HANG:
                await trio.sleep_forever()
            assert isinstance(item, bytes)
            return item

    async def kill(self) -> None:
        self.killed = True

    def stderr_text(self) -> str:
        return ""

    def requests(self) -> list[dict[str, Any]]:
        return [m for m in self.received if m["type"] == "request"]


def passing(message: dict[str, Any]) -> list[Response]:
    """Ready at start, then the empty placement to every request."""
    if message["type"] == "start":
        return [ready()]
    if message["type"] == "request":
        return [action(message["id"], PASS)]
    return []


def passer() -> ScriptedBot:
    return ScriptedBot(passing, name="passer")


def after(
    requests: int, misbehave: Callable[[dict[str, Any]], list[Response]]
) -> Callable[[dict[str, Any]], list[Response]]:
    """Pass for the first ``requests`` requests, then ``misbehave``."""
    count = 0

    def respond(message: dict[str, Any]) -> list[Response]:
        nonlocal count
        if message["type"] == "request":
            count += 1
            if count > requests:
                return misbehave(message)
        return passing(message)

    return respond


_PIPE_ROOM = 16384  # written at once; the pipe holds at least this much when the referee keeps up


class PipeBot(ChannelBase):
    """A scripted bot behind a real pipe, read by the referee's own LineReader.

    ``respond(message)`` gives raw writes (bytes, newlines included or not) and
    float pauses; everything before the first pause is in the pipe before
    ``send`` returns, the rest is written later by a task in ``nursery``. So the
    referee's read path (framing, buffering, looking for unasked output) is the
    real one.
    """

    def __init__(
        self,
        respond: Callable[[dict[str, Any]], list[bytes | float]],
        nursery: trio.Nursery,
        name: str = "pipe",
    ) -> None:
        self._name = name
        self.respond = respond
        self._nursery = nursery
        read_fd, self._write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        self._read_stream = trio.lowlevel.FdStream(read_fd)
        self.lines = LineReader(self._read_stream)
        self.reader = self.lines  # the referee may look into the pipe, as into a bot process's
        self.received: list[dict[str, Any]] = []
        self.killed = False

    @property
    def name(self) -> str:
        return self._name

    async def send(self, data: bytes) -> None:
        if self.killed:
            raise BotCrashed("killed")
        message = json.loads(data)
        self.received.append(message)
        items = self.respond(message)
        # What fits in the pipe now is written now; the rest (after a pause, or
        # too big for the pipe) by a task, as the referee reads.
        while items and isinstance(items[0], bytes) and len(items[0]) <= _PIPE_ROOM:
            item = items.pop(0)
            assert isinstance(item, bytes)
            self._write(item)
        if items:
            self._nursery.start_soon(self._later, items)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._write_fd, view) :]

    async def _later(self, items: list[bytes | float]) -> None:
        stream = trio.lowlevel.FdStream(os.dup(self._write_fd))
        try:
            for item in items:
                if isinstance(item, float):
                    await trio.sleep(item)
                elif not self.killed:
                    await stream.send_all(item)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await stream.aclose()

    async def readline(self) -> bytes:
        try:
            return await self.lines.readline()
        except (StreamClosed, trio.ClosedResourceError, trio.BrokenResourceError):
            raise BotCrashed("closed its output") from None

    async def kill(self) -> None:
        self.killed = True

    def stderr_text(self) -> str:
        return ""

    async def aclose(self) -> None:
        os.close(self._write_fd)
        await self._read_stream.aclose()


def pipe_passing(message: dict[str, Any]) -> list[bytes | float]:
    """``passing`` for a PipeBot: each line with its newline."""
    return [item + b"\n" for item in passing(message) if isinstance(item, bytes)]
