"""Closes its stderr at once, then plays a whole game as the passer does.

The referee takes stderr's end as the sign that the launcher chain has gone
(referee.process.BotProcess.end_fifo): this bot's stdout must not end with it.
"""

import os
from typing import Any

from protocol.bot import serve

os.close(2)


class ClosesStderr:
    name = "closes_stderr"

    def decide(self, request: Any) -> Any:
        if request.options:
            return request.options[0]
        return {"type": "place", "placements": []}


serve(ClosesStderr())
