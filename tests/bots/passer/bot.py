"""A test bot: answers every request with the first option, or places nothing."""

from typing import Any

from protocol.bot import serve


class Passer:
    name = "passer"

    def decide(self, request: Any) -> Any:
        if request.options:
            return request.options[0]
        return {"type": "place", "placements": []}


serve(Passer())
