"""What the replay viewer draws of a Vendetta position, per view.

Every Vendetta fact is public (H5) except the order of the unrevealed protection
cards and the round's raid cards; a seat's snapshot is the engine's own view for
that seat, and only the all-seeing snapshot (``seat=None``) adds the hidden cards.
The drawing itself is ``board.js`` beside this module.
"""

from __future__ import annotations

from typing import Any

import msgspec

from referee.games.base import GameState
from referee.games.vendetta import VendettaState

__all__ = ["PUBLIC_ACTIONS", "snapshot", "snapshots"]

PUBLIC_ACTIONS = True
"""Every placement is public (H5): a seat's page shows the other seats' actions too."""


def snapshot(state: GameState, seat: int | None, events: list[Any], memory: dict[str, Any]) -> dict[str, Any]:
    """The position as plain JSON values: ``view(seat)``, plus the hidden cards when ``seat`` is None.

    ``events`` (this step's, as the view sees them) and ``memory`` (kept per view
    across steps) are not needed: every Vendetta figure is in the view."""
    return snapshots(state, [seat], [events], [memory])[0]


def snapshots(
    state: GameState, seats: list[int | None], events: list[list[Any]], memories: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``snapshot`` for each page of ``seats``; seat 0's view, which the page of everything starts from, taken once."""
    assert isinstance(state, VendettaState)
    taken: dict[int, Any] = {}
    out = []
    for seat in seats:
        s = 0 if seat is None else seat
        if s not in taken:
            taken[s] = state.view(s)
        # Converted once per page: the page of everything adds to its copy what no seat sees.
        data: dict[str, Any] = msgspec.to_builtins(taken[s])
        if seat is None:
            data["seat"] = None
            pile, raid = state.hidden_cards()
            data["hidden"] = {"pile": pile, "raid": raid}
        out.append(data)
    return out
