"""sicilianos_py: the Sicilianos heuristic of ``sicilianos_policy.choose`` as a bot process.

* A Sicilianos request: ``sicilianos_policy.choose(view, decision, options)``, a
  pure function of the request (the bot keeps no state between requests). The
  answer is always one of the request's options, unchanged.
* A request this bot does not understand (another game, or a view a newer
  engine changed): one of its options, uniformly at random, seeded from the
  match id and seat; a Vendetta placement of nothing when there are no options.

Run by hand from the repository root (famiglia installed in the interpreter)::

    python sample_bots/sicilianos_py/bot.py < lines.jsonl
"""

from __future__ import annotations

import random
import sys
from typing import Any

import msgspec
from sicilianos_policy import choose

from protocol.bot import serve
from protocol.messages import Request, Start
from referee.games.sicilianos import SicilianosAction, SicilianosView


class SicilianosBot:
    name = "sicilianos_py"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def start(self, message: Start[Any]) -> None:
        self.rng = random.Random(f"sicilianos_py:{message.match}:{message.seat}")

    def decide(self, request: Request[Any, Any, Any]) -> Any:
        options = request.options
        if not options:
            return {"type": "place", "placements": []}
        try:
            view = msgspec.convert(request.view, SicilianosView)
            typed = [msgspec.convert(option, SicilianosAction) for option in options]
        except msgspec.ValidationError as exc:
            print(f"sicilianos_py: cannot read this request ({exc}); answering a random option", file=sys.stderr)
            return self.rng.choice(options)
        choice = choose(view, request.decision, typed)
        # Send the option exactly as it was listed.
        return options[typed.index(choice)]


if __name__ == "__main__":
    serve(SicilianosBot())
