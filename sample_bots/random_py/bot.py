"""random_py: a uniformly random legal player, for any famiglia game.

* A Vendetta placement (a request with ``constraints``): the engine's own
  ``random_placement``, so this bot plays exactly the distribution of the
  engine's random player.
* Any request that lists ``options`` (Sicilianos): one of them, uniformly.

The generator is seeded from the match id and the seat of each ``start``, so a
match replayed with the same id sees the same choices.

Run by hand from the repository root (famiglia installed in the interpreter)::

    python sample_bots/random_py/bot.py < lines.jsonl
"""

from __future__ import annotations

import random
from typing import Any

import msgspec

from protocol.bot import serve
from protocol.messages import Request, Start
from referee.games.vendetta import Place, PlaceConstraints, random_placement


class RandomBot:
    name = "random_py"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def start(self, message: Start[Any]) -> None:
        self.rng = random.Random(f"random_py:{message.match}:{message.seat}")

    def decide(self, request: Request[Any, Any, Any]) -> Any:
        if request.options:
            return self.rng.choice(request.options)
        if request.constraints is None:
            return Place([])
        constraints = msgspec.convert(request.constraints, PlaceConstraints)
        return random_placement(constraints, self.rng)


if __name__ == "__main__":
    serve(RandomBot())
