"""What ``famiglia check-bot`` plays of Sicilianos: every decision kind with every option type it offers.

A kind is forced in a position that offers all its action types at once
(``KIND_ACTIONS``): a ``turn`` with both a roll and a war, a ``bomb`` that can
both count for its family and explode. ``give`` exists only under
``steal_pick=victim``; ``take2_colour`` needs a full hand, which games without
war (the mildest actions) reach. ``SicilianosRules`` hands these to check-bot
through its hooks.
"""

from __future__ import annotations

from referee.games.checkbot import Match, SearchDecision, SearchState, Target, mild_policy, random_policy
from referee.games.sicilianos.state import KIND_ACTIONS

__all__ = ["ILLEGAL_FIX", "VARIANTS", "targets"]

_KIND_VARIANTS: dict[str, dict[str, str]] = {"give": {"steal_pick": "victim"}}
"""The variants a kind needs to come up at all."""


def _offers(kind: str, names: frozenset[str]) -> Match:
    """A recogniser: a ``kind`` decision whose options include every action type in ``names``."""

    def match(state: SearchState, decision: SearchDecision) -> bool:
        offered = {type(option).__name__ for option in decision.options or ()}
        return decision.kind == kind and names <= offered

    return match


def targets() -> list[Target]:
    """One target per decision kind, in the rules' order."""
    found = []
    for kind, actions in KIND_ACTIONS.items():
        names = frozenset(action.__name__ for action in actions)
        found.append(
            Target(
                name=f"decision: {kind}",
                what=f"a {kind} decision offering {', '.join(sorted(names))}",
                match=_offers(kind, names),
                variants=_KIND_VARIANTS.get(kind, {}),
                policy=mild_policy if kind == "take2_colour" else random_policy,
            )
        )
    return found


VARIANTS: tuple[dict[str, str], ...] = (
    {},
    {"steal_pick": "victim"},
    {"business_colour": "winning", "action_die": "1-1-4"},
    {"steal_pick": "victim", "business_colour": "winning", "turn_limit": "60"},
)
"""The variant sets check-bot spreads over the table sizes: each rule variant met at least once."""

ILLEGAL_FIX = "answer with one of the request's options, copied unchanged"
"""check-bot's fix for an illegal action: every Sicilianos decision lists its options."""
