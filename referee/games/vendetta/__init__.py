"""Vendetta (Matthäus & Nestel, 1990) for 3 to 5 players: the rules engine.

The engine follows shared/rules/vendetta.md; rule ids (S1, P4, E3, H2, ...) appear
in error messages and in the test names. Decisions this module takes where the
rule book is silent or leaves the choice to the harness:

Chance (H4). The deal is one ``chance.shuffle("deal", 13)``: seat s gets the
districts at positions 2s and 2s+1. Every round draws one
``chance.shuffle("round", 13)`` when it starts: the first 11 entries are the
protection pile, top card first, the last 2 are the raid cards. Nothing else is
ever drawn, and no draw depends on an action, so a seed fixes the deal and every
round's cards whoever sits where.

Seats and turns. Turn t of a round (0..10) belongs to seat (start + t) mod n.
Turn 0 allows one district (P2), every other turn two (P1), the start player's
later turns included. The seat that would play turn 11, (start + 11) mod n,
starts the next round (E4).

Vendetta ties (V4). Among the seats tied for fewest, the first one met going
clockwise from the seat after the active seat loses; the active seat is last.

Control. ``control="sole"`` (default, the original): a seat controls a district
where only its mafiosi stand. ``control="majority"`` (the translations): strictly
the most mafiosi there; a tie for most, or an empty district, controls nothing.
Reinforcement (E4) and pay (V5) take from the box and stop when it is empty.

Victory (E3) is checked after scoring, among the seats that have not forfeited.
A forfeited seat can never win, and the round it would have won simply goes on.

Forfeits (H2). A forfeited seat keeps its mafiosi on the board, is still paid and
reinforced, and the engine plays each of its turns as an empty placement followed
by its vendetta, so ``decision()`` never names it. When only one seat is left in
play the game ends at once (``ended_by="forfeits"``) with that seat as the single
winner: nothing left in the game could change the H1 ranking. Forfeiting a
finished game, or a seat twice, changes nothing.

Round limit (H3). When the round numbered ``round_limit`` ends without a winner
the game ends (``ended_by="round_limit"``) without reinforcement. The default is
30 rounds (330 turns). Random players end half their games within 4 to 9 rounds
and about 1 in 100 after round 20; none of 9,000 sampled games (3-5 players,
every variant) went past round 26. So the limit only stops games that stall,
and does not cut short a game that is still heading for a result.

Ranking (H1). Winners share rank 1. The other seats in play follow by points,
then districts controlled at the last scoring; equal on both share a rank. Seats
that forfeited come last, the most recent forfeit first.

Events. Every turn gives ``placed`` (possibly empty) and ``revealed``, then
``eliminated`` when a vendetta is fought and ``paid`` when at least one seat took
a mafioso (V5). A round ends with ``raided``, ``scored`` and either ``game_over``
(the ``GameEnded`` event; its wire name is the one PROTOCOL.md documents) or
``reinforced`` and ``round_start``. ``forfeited`` opens the events of a forfeit.

Random play. ``random_placement`` (and ``VendettaState.random_action``) draws the
number of districts, then the districts, then the counts, each uniformly among
the legal choices left; ``pass_action`` is the empty placement, always legal.

Views (H5). Everything is public except the order of the unrevealed protection
cards and the current round's raid cards, so every seat's view is the same
apart from ``seat``, and ``events_for`` returns the events unchanged.

Layout. ``components`` holds the numbers, ``messages`` the wire types,
``sampler`` the random placement, ``state`` the game in progress; this module
declares the game (``VendettaRules``, its variants once) for the registry.
``screen`` draws the game for the human seat and ``checkbot`` says what
``famiglia check-bot`` plays; both are imported only by the hooks that give them.

Speed. The state is flat lists; ``apply`` validates, mutates in place and builds
only its events. Two per-district caches make placement checks and vendettas
O(1): ``_owner[d]`` (-1 empty, -2 two or more seats, else the only seat there)
and ``_minbase[d]`` (the P4 minimum for a seat that is not that only seat).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final

import msgspec

from referee.games.base import ChoiceVariant, GameRules, GameState, IntVariant, SeededChance, Variant
from referee.games.vendetta.components import CONTROLS, DEFAULT_ROUND_LIMIT, MAX_ROUND_LIMIT, SETUPS
from referee.games.vendetta.messages import (
    Eliminated,
    Forfeited,
    GameEnded,
    Paid,
    Place,
    PlaceConstraints,
    Placed,
    Placement,
    Raided,
    Reinforced,
    Revealed,
    RoundStarted,
    Scored,
    VendettaConfig,
    VendettaEvent,
    VendettaView,
)
from referee.games.vendetta.sampler import random_placement
from referee.games.vendetta.state import VendettaState

if TYPE_CHECKING:
    from referee.games.checkbot import Target
    from referee.games.encoding import Encoding
    from referee.games.screen import GameScreen

__all__ = [
    "DEFAULT_ROUND_LIMIT",
    "RULES",
    "Eliminated",
    "Forfeited",
    "GameEnded",
    "Paid",
    "Place",
    "PlaceConstraints",
    "Placed",
    "Placement",
    "Raided",
    "Reinforced",
    "Revealed",
    "RoundStarted",
    "Scored",
    "VendettaConfig",
    "VendettaEvent",
    "VendettaRules",
    "VendettaState",
    "VendettaView",
    "random_placement",
]


class VendettaRules(GameRules):
    """Vendetta: table sizes, variants, wire types, and new games."""

    name: ClassVar[str] = "vendetta"
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 5
    variant_spec: ClassVar[tuple[Variant, ...]] = (
        ChoiceVariant("setup", SETUPS, "except-dealt"),
        ChoiceVariant("control", CONTROLS, "sole"),
        IntVariant("round_limit", 1, MAX_ROUND_LIMIT, DEFAULT_ROUND_LIMIT),
    )
    config_type: ClassVar[type[msgspec.Struct]] = VendettaConfig
    view_type: ClassVar[Any] = VendettaView
    action_type: ClassVar[Any] = Place
    event_type: ClassVar[Any] = VendettaEvent
    state_type: ClassVar[type[GameState]] = VendettaState

    def screen(self) -> GameScreen:
        """The board as a table; placements typed as ``7:3 11:2`` and judged by the engine before they are sent."""
        from referee.games.vendetta.screen import VendettaScreen

        return VendettaScreen(self)

    def random_answer(self, request: Mapping[str, Any], rng: random.Random) -> Any:
        """A placement drawn like ``random_action``'s, from the request's constraints (it lists no options)."""
        if request.get("options"):
            return super().random_answer(request, rng)
        constraints = msgspec.convert(request["constraints"], PlaceConstraints)
        return msgspec.to_builtins(random_placement(constraints, rng))

    def checkbot_targets(self) -> Sequence[Target]:
        """The four placements a bot computes differently (``vendetta.checkbot.TARGETS``)."""
        from referee.games.vendetta.checkbot import TARGETS

        return TARGETS

    def checkbot_variants(self) -> list[dict[str, str]]:
        from referee.games.vendetta.checkbot import VARIANTS

        return [dict(variants) for variants in VARIANTS]

    def checkbot_section(self) -> str:
        return "Vendetta"

    def checkbot_illegal_fix(self) -> str:
        from referee.games.vendetta.checkbot import ILLEGAL_FIX

        return ILLEGAL_FIX

    def encoding(self, n_players: int, config: Any) -> Encoding:
        """The board as a vector with the observing seat first, a placement as up to five masked steps
        (``vendetta.encoding``)."""
        from referee.games.vendetta.encoding import VendettaEncoding

        self.check_table(n_players)
        return VendettaEncoding(n_players)

    def sample_state(self, view: Any, config: Any, rng: random.Random) -> VendettaState:
        """``VendettaState.from_view``: the unrevealed protection cards and the raid dealt from ``rng``
        (nothing else is hidden, H5), and later rounds' cards drawn from it too. The view names its
        variants; ValueError when they are not ``config``'s."""
        typed = view if isinstance(view, VendettaView) else msgspec.convert(view, VendettaView)
        self._check_config_type(config)
        if (typed.setup, typed.control, typed.round_limit) != (config.setup, config.control, config.round_limit):
            raise ValueError("sample_state: the view's variants are not the configuration's")
        return VendettaState.from_view(typed, SeededChance(rng.getrandbits(63)), self)


RULES: Final = VendettaRules()
