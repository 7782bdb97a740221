"""What the replay viewer draws of a Sicilianos position, per view.

A seat's snapshot is the engine's own view for that seat (I1-I3), so nothing it
may not know can reach its page. The all-seeing snapshot (``seat=None``) is seat
0's view with every seat's private parts put together from each seat's own view:
all hands with values, the kinds of every business, the face-down war cards.
The drawing itself is ``board.js`` beside this module.
"""

from __future__ import annotations

from typing import Any

import msgspec

from referee.games.base import GameState
from referee.games.sicilianos.state import SicilianosState

__all__ = ["snapshot"]


def snapshot(state: GameState, seat: int | None, events: list[Any], memory: dict[str, Any]) -> dict[str, Any]:
    """The position as plain JSON values for one seat's view, or for everything when ``seat`` is None.

    ``events`` are this step's events as the view sees them; ``memory`` is kept
    per view across steps, so the last war stays on the table after it ends.
    """
    data = _position(state, seat)
    _remember_war(data, events, memory)
    return data


# The events that tell how a war ended: the last reveal, what the cards did, who
# won, and where the money and businesses went.
_WAR_END_EVENTS = frozenset(
    {
        "revealed",
        "card_used",
        "exploded",
        "war_resolved",
        "spoils_chosen",
        "business_taken",
        "no_business",
        "laundered",
        "stakes_lost",
        "returned",
    }
)


def _remember_war(data: dict[str, Any], events: list[Any], memory: dict[str, Any]) -> None:
    """``last_war``: the table of the war that just ended and the events that ended it."""
    if any(event["type"] == "war_started" for event in events):
        memory.pop("war", None)
        memory["outcome"] = []
    if data["war"] is not None:
        memory["war"] = data["war"]
        memory["outcome"] = []
        data["last_war"] = None
        return
    if "war" in memory:
        memory["outcome"] = memory.get("outcome", []) + [e for e in events if e["type"] in _WAR_END_EVENTS]
        data["last_war"] = {"table": memory["war"], "outcome": memory["outcome"]}
    else:
        data["last_war"] = None


def _position(state: GameState, seat: int | None) -> dict[str, Any]:
    assert isinstance(state, SicilianosState)
    if seat is not None:
        data: dict[str, Any] = msgspec.to_builtins(state.view(seat))
        data["hands"] = {str(seat): data.pop("hand")}
        return data
    views = [msgspec.to_builtins(state.view(s)) for s in range(state.n_players)]
    data = views[0]
    hands = {str(s): view["hand"] for s, view in enumerate(views)}
    data["seat"] = None
    data.pop("hand")
    data["hands"] = hands
    data["known_piles"] = []
    for s, view in enumerate(views):
        data["players"][s]["businesses"] = view["players"][s]["businesses"]
    if data["war"] is not None:
        for index, participant in enumerate(data["war"]["participants"]):
            own = views[participant["seat"]]["war"]["participants"][index]
            participant["cards"] = own["cards"]
    steal = data["last_steal"]
    if steal is not None:
        steal["value"] = views[steal["thief"]]["last_steal"]["value"]
    return data
