"""What ``famiglia check-bot`` plays of Vendetta: four placements a bot must get right, and the variants.

Vendetta has one decision kind, ``place``, stated by constraints rather than
options; what differs is the limits. So the targets are the cases of P1, P2
and P4 a bot computes differently, and an empty hand. ``VendettaRules`` hands
them to check-bot through its hooks.
"""

from __future__ import annotations

import random
from typing import Any

from referee.games.checkbot import SearchDecision, SearchState, Target
from referee.games.vendetta.messages import Place, PlaceConstraints, Placement
from referee.games.vendetta.state import VendettaState

__all__ = ["ILLEGAL_FIX", "TARGETS", "VARIANTS", "spend_all"]


def spend_all(state: SearchState, rng: random.Random) -> Any:
    """Place the whole hand in one district where that is legal, else a random action: hands run empty."""
    decision = state.decision()
    assert decision is not None
    constraints = decision.constraints
    if isinstance(constraints, PlaceConstraints) and constraints.hand:
        fits = [d for d, need in enumerate(constraints.minimum, 1) if need <= constraints.hand]
        if fits:
            return Place([Placement(rng.choice(fits), constraints.hand)])
    return state.random_action(rng)


def _turn(state: SearchState) -> tuple[int, int]:
    """(round, turn) of the position."""
    assert isinstance(state, VendettaState)
    view = state.view(0)
    return view.round, view.turn


def _first_turn_of_later_round(state: SearchState, decision: SearchDecision) -> bool:
    round_, turn = _turn(state)
    return round_ >= 2 and turn == 0


def _later_turn_of_later_round(state: SearchState, decision: SearchDecision) -> bool:
    round_, turn = _turn(state)
    return round_ >= 2 and turn > 0


def _minimum_above_two(state: SearchState, decision: SearchDecision) -> bool:
    return bool(max(decision.constraints.minimum) > 2)


def _empty_hand(state: SearchState, decision: SearchDecision) -> bool:
    return bool(decision.constraints.hand == 0)


TARGETS = (
    Target(
        name="decision: place, turn 0",
        what="the first turn of a later round (one district, P2)",
        match=_first_turn_of_later_round,
    ),
    Target(
        name="decision: place, later turn",
        what="a later turn of a later round (two districts, P1)",
        match=_later_turn_of_later_round,
    ),
    Target(
        name="decision: place, P4 minimum",
        what="a district held alone by another seat (minimum > 1, P4)",
        match=_minimum_above_two,
    ),
    Target(
        name="decision: place, empty hand",
        what="a turn with no mafioso in hand (only [] is legal)",
        match=_empty_hand,
        policy=spend_all,
    ),
)
"""The placements check-bot forces, at every table size (3 to 5)."""

VARIANTS: tuple[dict[str, str], ...] = ({}, {"setup": "dealt-only"}, {"control": "majority", "setup": "dealt-only"})
"""The variant sets check-bot spreads over the table sizes: each setup and control rule met once."""

ILLEGAL_FIX = (
    "keep each placement within the request's constraints: at most max_districts different "
    "districts, at least minimum[D-1] mafiosi on each district D you place on, at most hand in all "
    "(the reason names the rule broken; docs/vendetta.md explains it)"
)
"""check-bot's fix for an illegal placement."""
