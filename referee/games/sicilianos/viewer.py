"""What the replay viewer draws of a Sicilianos position, per view.

A seat's snapshot is the engine's own view for that seat (I1-I3), so nothing it
may not know can reach its page. The all-seeing snapshot (``seat=None``) is seat
0's view with every seat's private parts put together from each seat's own view:
all hands with values, the kinds of every business, the face-down war cards.
The drawing itself is ``board.js`` beside this module.

``snapshots`` takes every page's snapshot of a step at once, from one call of
the engine's ``every_view`` (each seat's view, made in one pass), instead of a
view per seat for the page of everything and again one for each seat's page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from referee.games.base import GameState
from referee.games.sicilianos.state import SicilianosState

__all__ = ["snapshot", "snapshots"]


def snapshot(state: GameState, seat: int | None, events: list[Any], memory: dict[str, Any]) -> dict[str, Any]:
    """The position as plain JSON values for one seat's view, or for everything when ``seat`` is None.

    ``events`` are this step's events as the view sees them; ``memory`` is kept
    per view across steps, so the last war stays on the table after it ends.
    """
    return snapshots(state, [seat], [events], [memory])[0]


def snapshots(
    state: GameState, seats: list[int | None], events: list[list[Any]], memories: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``snapshot`` for each page of ``seats`` (a number, or None for everything), each view taken once."""
    assert isinstance(state, SicilianosState)
    only = seats[0] if len(seats) == 1 else None
    # One seat's page needs its view alone; more pages than that, every seat's view,
    # which the engine makes in one pass (every_view), sharing what the seats see alike.
    taken = {only: state.view(only)} if only is not None else dict(enumerate(state.every_view()))
    converted: dict[int, dict[str, Any]] = {}

    def own(s: int) -> dict[str, Any]:
        """Seat ``s``'s view as JSON values, shared by the pages that read it and changed by none."""
        if s not in converted:
            converted[s] = msgspec.to_builtins(taken[s])
        return converted[s]

    out = []
    for seat, seen, memory in zip(seats, events, memories, strict=True):
        if seat is None:
            data = _everything(state.n_players, msgspec.to_builtins(taken[0]), own)
        else:
            # A copy of the top level only: the page's own keys change, the shared values do not.
            data = dict(own(seat))
            data["hands"] = {str(seat): data.pop("hand")}
        _remember_war(data, seen, memory)
        out.append(data)
    return out


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


def _everything(n_players: int, data: dict[str, Any], own: Callable[[int], dict[str, Any]]) -> dict[str, Any]:
    """The page of everything: ``data``, a copy of seat 0's view of its own (changed here),
    with each seat's private parts taken from that seat's view, ``own(seat)`` (only read)."""
    views = [own(s) for s in range(n_players)]
    data["seat"] = None
    data.pop("hand")
    data["hands"] = {str(s): view["hand"] for s, view in enumerate(views)}
    data["known_piles"] = []
    for s, view in enumerate(views):
        data["players"][s]["businesses"] = view["players"][s]["businesses"]
    if data["war"] is not None:
        for index, participant in enumerate(data["war"]["participants"]):
            participant["cards"] = views[participant["seat"]]["war"]["participants"][index]["cards"]
    steal = data["last_steal"]
    if steal is not None:
        steal["value"] = views[steal["thief"]]["last_steal"]["value"]
    return data
