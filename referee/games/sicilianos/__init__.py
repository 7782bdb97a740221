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

``screen`` draws the game for the human seat and ``checkbot`` says what
``famiglia check-bot`` plays; ``SicilianosRules``' hooks import them when asked.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final

import msgspec

from referee.games.base import ChoiceVariant, GameRules, GameState, IntVariant, TextVariant, Variant
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
    SicilianosAction,
    SicilianosConfig,
    SicilianosEvent,
    SicilianosView,
)
from referee.games.sicilianos.state import DECISION_RULES, SicilianosState, events_for, pick_option

if TYPE_CHECKING:
    from referee.games.checkbot import Target
    from referee.games.encoding import Encoding
    from referee.games.screen import GameScreen

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


class SicilianosRules(GameRules):
    """Sicilianos: table sizes, variants, wire types, and new games."""

    name: ClassVar[str] = "sicilianos"
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 6
    variant_spec: ClassVar[tuple[Variant, ...]] = (
        IntVariant("turn_limit", 1, MAX_TURN_LIMIT, DEFAULT_TURN_LIMIT),
        TextVariant("action_die", "2-2-2", parse_action_die, "counts take2-take1-steal adding up to 6, e.g. 2-2-2"),
        ChoiceVariant("steal_pick", STEAL_PICKS, "random"),
        ChoiceVariant("business_colour", BUSINESS_COLOURS, "own"),
    )
    config_type: ClassVar[type[msgspec.Struct]] = SicilianosConfig
    view_type: ClassVar[Any] = SicilianosView
    action_type: ClassVar[Any] = SicilianosAction
    event_type: ClassVar[Any] = SicilianosEvent
    state_type: ClassVar[type[GameState]] = SicilianosState

    # Every decision lists its options, so the default random_answer fits.

    def screen(self) -> GameScreen:
        """Hands, money, businesses and piles drawn as tables; options described in words, chosen by number."""
        from referee.games.sicilianos.screen import SicilianosScreen

        return SicilianosScreen()

    def checkbot_targets(self) -> Sequence[Target]:
        """Every decision kind, each in a position offering every action type it can (``sicilianos.checkbot``)."""
        from referee.games.sicilianos.checkbot import targets

        return targets()

    def checkbot_variants(self) -> list[dict[str, str]]:
        from referee.games.sicilianos.checkbot import VARIANTS

        return [dict(variants) for variants in VARIANTS]

    def checkbot_section(self) -> str:
        return "Decisions and actions"

    def checkbot_illegal_fix(self) -> str:
        from referee.games.sicilianos.checkbot import ILLEGAL_FIX

        return ILLEGAL_FIX

    def encoding(self, n_players: int, config: Any) -> Encoding:
        """The view as a vector with the observing seat first, every decision one masked pick from a
        catalogue of all 866 actions (``sicilianos.encoding``)."""
        from referee.games.sicilianos.encoding import SicilianosEncoding

        self.check_table(n_players)
        return SicilianosEncoding(n_players)

    def sample_state(self, view: Any, config: Any, rng: random.Random) -> SicilianosState:
        """Hidden cards and business kinds dealt again within what the view shows (``sicilianos.determinize``)."""
        from referee.games.sicilianos.determinize import state_from_view

        typed = view if isinstance(view, SicilianosView) else msgspec.convert(view, SicilianosView)
        self._check_config_type(config)
        return state_from_view(typed, config, rng)


RULES: Final = SicilianosRules()
