"""Sicilianos (Czarné, Zoch 2004) for 3 to 6 players: the rules engine.

The engine follows shared/rules/sicilianos.md; rule ids (S3, D1, G5, E3, H2, ...)
appear in error messages and test names. docs/sicilianos.md describes how
famiglia plays the game: every decision kind with its options, the view, the
variants, and every decision the project took where the rule book is silent.

A bot needs nothing from this package beyond the request it receives: every
decision lists all its legal options as ready-to-send actions, so
``pick_option`` (or any choice among ``Decision.options``) is a legal answer.

Chance (H3): one ``shuffle("pile:<colour>", 11)`` per colour at setup, in colour
order; each roll draws three ``below("dice", ...)`` (two colours, the action
face), so the n-th roll of a game shows the same dice whoever rolls it; a random
steal draws from its own stream "steal".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final, cast

import msgspec

from referee.games.base import Chance, GameRules, GameState, UnknownVariant, choice_variant, int_variant
from referee.games.sicilianos.components import (
    COLOURS,
    KINDS,
    NOTE_VALUES,
    parse_action_die,
)
from referee.games.sicilianos.messages import (
    BUSINESS_COLOURS,
    DEFAULT_TURN_LIMIT,
    MAX_TURN_LIMIT,
    STEAL_PICKS,
    BusinessColour,
    SicilianosAction,
    SicilianosConfig,
    SicilianosEvent,
    SicilianosView,
    StealPick,
)
from referee.games.sicilianos.state import DECISION_RULES, SicilianosState, events_for, pick_option

__all__ = [
    "COLOURS",
    "DECISION_KINDS",
    "DEFAULT_TURN_LIMIT",
    "KINDS",
    "NOTE_VALUES",
    "RULES",
    "SicilianosAction",
    "SicilianosConfig",
    "SicilianosEvent",
    "SicilianosRules",
    "SicilianosState",
    "SicilianosView",
    "events_for",
    "pick_option",
]

DECISION_KINDS: Final[tuple[str, ...]] = tuple(DECISION_RULES)
_VARIANT_KEYS: Final = ("turn_limit", "action_die", "steal_pick", "business_colour")


class SicilianosRules:
    """Sicilianos: table sizes, wire types, variants, and new games."""

    name: ClassVar[str] = "sicilianos"
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 6
    config_type: ClassVar[type[msgspec.Struct]] = SicilianosConfig
    view_type: ClassVar[Any] = SicilianosView
    action_type: ClassVar[Any] = SicilianosAction
    event_type: ClassVar[Any] = SicilianosEvent

    def config(self, variants: dict[str, str]) -> SicilianosConfig:
        turn_limit = DEFAULT_TURN_LIMIT
        action_die = "2-2-2"
        steal_pick: StealPick = "random"
        business_colour: BusinessColour = "own"
        for key, value in variants.items():
            text = str(value).strip()
            if key == "turn_limit":
                turn_limit = int_variant("sicilianos", key, value, 1, MAX_TURN_LIMIT)
            elif key == "action_die":
                try:
                    parse_action_die(text)
                except ValueError:
                    raise UnknownVariant(
                        f"sicilianos action_die={value!r}: use counts take2-take1-steal adding up to 6, e.g. 2-2-2"
                    ) from None
                action_die = text
            elif key == "steal_pick":
                steal_pick = cast(StealPick, choice_variant("sicilianos", key, value, tuple(STEAL_PICKS)))
            elif key == "business_colour":
                business_colour = cast(
                    BusinessColour, choice_variant("sicilianos", key, value, tuple(BUSINESS_COLOURS))
                )
            else:
                raise UnknownVariant(
                    f"sicilianos has no variant {key!r} (given {value!r}): use {', '.join(_VARIANT_KEYS)}"
                )
        return SicilianosConfig(
            turn_limit=turn_limit,
            action_die=action_die,
            steal_pick=steal_pick,
            business_colour=business_colour,
        )

    def variants(self, config: msgspec.Struct) -> dict[str, str]:
        if not isinstance(config, SicilianosConfig):
            raise TypeError(f"sicilianos needs a SicilianosConfig, got {type(config).__name__}")
        return {
            "turn_limit": str(config.turn_limit),
            "action_die": config.action_die,
            "steal_pick": config.steal_pick,
            "business_colour": config.business_colour,
        }

    def new_game(self, n_players: int, config: msgspec.Struct, chance: Chance) -> SicilianosState:
        if not isinstance(config, SicilianosConfig):
            raise TypeError(f"sicilianos needs a SicilianosConfig, got {type(config).__name__}")
        if not self.min_players <= n_players <= self.max_players:
            raise ValueError(f"sicilianos is for 3 to 6 players, not {n_players}")
        return SicilianosState(n_players, config, chance)


RULES: Final = SicilianosRules()

if TYPE_CHECKING:
    # mypy holds the engine to the contract of base.py.
    _RULES_CHECK: GameRules = RULES
    _STATE_CHECK: type[GameState] = SicilianosState
