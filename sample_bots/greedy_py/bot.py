"""greedy_py: the greedy Vendetta heuristic of ``greedy_policy.choose`` as a bot process.

* A Vendetta placement: ``greedy_policy.choose(view, constraints)``, a pure
  function of the request (the bot keeps no state between requests).
* Any request that lists ``options`` (Sicilianos, which this bot does not
  study): one of them, uniformly at random, seeded from the match id and seat.

Run by hand from the repository root (famiglia installed in the interpreter)::

    python sample_bots/greedy_py/bot.py < lines.jsonl
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
from greedy_policy import choose

from protocol.bot import serve
from protocol.messages import Request, Start
from referee.games.vendetta import (
    Place,
    PlaceConstraints,
    VendettaView,
    random_placement,
)


class GreedyBot:
    name = "greedy_py"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def start(self, message: Start[Any]) -> None:
        self.rng = random.Random(f"greedy_py:{message.match}:{message.seat}")

    def decide(self, request: Request[Any, Any, Any]) -> Any:
        if request.options:
            return self.rng.choice(request.options)
        if request.constraints is None:
            return Place([])
        constraints = msgspec.convert(request.constraints, PlaceConstraints)
        try:
            view = msgspec.convert(request.view, VendettaView)
        except msgspec.ValidationError:
            # A view this bot does not understand (a newer engine?): still play legally.
            return random_placement(constraints, self.rng)
        return choose(view, constraints)


if __name__ == "__main__":
    serve(GreedyBot())
