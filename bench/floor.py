"""The floor's request: what every decision must send under this protocol, and nothing more.

Shared by ``bench/referee.py`` (with bot processes) and ``bench/referee_loopback.py``
(with in-process seats), so that both floors are the same loop.
"""

from __future__ import annotations

from typing import Any

import msgspec

from protocol.codec import encode_message
from protocol.messages import Request
from referee.games.base import Decision, GameState


def floor_request(
    state: GameState, decision: Decision, request_id: int, events: list[msgspec.Struct], seen: list[int]
) -> bytes:
    """The request line for ``decision``: the seat's full view (as ``transient_view`` gives it),
    the events since its last request (``seen`` is updated), no clock of its own."""
    seat = decision.seat
    request: Request[Any, Any, Any] = Request(
        id=request_id,
        decision=decision.kind,
        view=state.transient_view(seat),
        events=state.events_for(seat, events[seen[seat] :]),
        options=decision.options,
        constraints=decision.constraints,
        time_ms=1000,
        bank_ms=0,
    )
    seen[seat] = len(events)
    return encode_message(request)
