"""A test bot: plays like passer, but crashes on the rare Sicilianos "renegade" decision."""

import sys
from typing import Any

from protocol.bot import serve


class RareBreaker:
    name = "rare_breaker"

    def decide(self, request: Any) -> Any:
        if request.decision == "renegade":
            sys.stderr.write("rare_breaker: no idea what a renegade is\n")
            sys.exit(5)
        if request.options:
            return request.options[0]
        return {"type": "place", "placements": []}


serve(RareBreaker())
