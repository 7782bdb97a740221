"""Scripted fake bots: BotChannel implementations driven by a response function."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import trio

from referee.errors import BotError

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


class ScriptedBot:
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


def after(requests: int, misbehave: Callable[[dict[str, Any]], list[Response]]) -> Callable[[dict[str, Any]], list[Response]]:
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
