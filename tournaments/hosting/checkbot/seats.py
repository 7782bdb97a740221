"""Seats played inside the referee's process: they speak the protocol as bytes, like a bot.

``InProcessSeat`` turns the referee's lines into messages and the answers back
into lines, so the referee talks to it through the same ``BotChannel`` calls as
to a process. ``RandomSeat`` answers with a random legal action, of any game
(the game's ``GameRules.random_answer``): the opponents of a bot under check.
The human seat (tournaments.human) is another subclass.
"""

from __future__ import annotations

import random
from typing import Any

from referee.channel import InProcessSeat
from referee.games import get_rules
from referee.games.base import GameRules

__all__ = ["InProcessSeat", "RandomSeat"]


class RandomSeat(InProcessSeat):
    """Answers every request with a random legal action (seeded per game and seat)."""

    def __init__(self, name: str = "random") -> None:
        super().__init__(name)
        self.rng = random.Random(0)
        self.rules: GameRules | None = None

    async def respond(self, message: dict[str, Any]) -> dict[str, Any] | None:
        kind = message.get("type")
        if kind == "start":
            self.rng = random.Random(f"{message['match']}:{message['seat']}")
            self.rules = get_rules(str(message["game"]))
            return {"type": "ready", "name": self.name}
        if kind != "request" or self.rules is None:
            return None
        action = self.rules.random_answer(message, self.rng)
        return {"type": "action", "id": message["id"], "action": action}
