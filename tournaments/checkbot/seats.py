"""Seats played inside the referee's process: they speak the protocol as bytes, like a bot.

``InProcessSeat`` turns the referee's lines into messages and the answers back
into lines, so the referee talks to it through the same ``BotChannel`` calls as
to a process. ``RandomSeat`` answers with a random legal action: the opponents
of a bot under check. The human seat (tournaments.human) is another subclass.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

import msgspec
import trio

from referee.games.vendetta import PlaceConstraints, random_placement

__all__ = ["InProcessSeat", "RandomSeat"]


class InProcessSeat:
    """A ``BotChannel`` whose answers come from ``respond`` instead of a process."""

    untimed = False

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
            self._out.append(msgspec.json.encode(answer) + b"\n")
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


class RandomSeat(InProcessSeat):
    """Answers every request with a random legal action (seeded per game and seat)."""

    def __init__(self, name: str = "random") -> None:
        super().__init__(name)
        self.rng = random.Random(0)

    async def respond(self, message: dict[str, Any]) -> dict[str, Any] | None:
        kind = message.get("type")
        if kind == "start":
            self.rng = random.Random(f"{message['match']}:{message['seat']}")
            return {"type": "ready", "name": self.name}
        if kind != "request":
            return None
        if message.get("options"):
            action: Any = self.rng.choice(message["options"])
        else:
            constraints = msgspec.convert(message["constraints"], PlaceConstraints)
            action = msgspec.to_builtins(random_placement(constraints, self.rng))
        return {"type": "action", "id": message["id"], "action": action}
