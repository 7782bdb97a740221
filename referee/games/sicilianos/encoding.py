"""Sicilianos as numbers for a learner (referee.games.encoding): the view as a vector, an action as one number.

Every Sicilianos decision lists its options, so a decision is one step: a
number from a fixed catalogue of every action the game has (866 of them: draw
or inspect a colour, pick or give a value, roll, start or join a war with a
card and a note, stay out, play a card, pass, steal a colour from a seat, the
Renegade and Bomb choices, the spoils, a business kind), masked to the
options. A steal names its target relative to the seat that steals (1 = the
next seat clockwise), so one number means one move from whichever seat.

The observation, with every seat turned so that the observing seat comes first:
the phase and the decision kind, who moves and whose turn it is, the dice, the
piles' and business piles' sizes, the seat's own cards, each seat's hand by
colour, notes, money and businesses (kinds where the seat may know them), the
piles the seat looked through (each value's depth), the last steal, and the
war on the table. Money is divided by 250,000 and counts by their largest
value; every value is kept within [0, ``HIGH``].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec
import numpy as np

from referee.games.encoding import Decision, Encoding, Mask, Vector, field_offsets
from referee.games.sicilianos.components import (
    COLOUR_INDEX,
    COLOURS,
    KIND_INDEX,
    KINDS,
    N_CARDS,
    N_COLOURS,
    NOTE_INDEX,
    NOTE_VALUES,
    START_MONEY,
    VALUES_PER_COLOUR,
    card_id,
    colour_of,
    value_of,
)
from referee.games.sicilianos.messages import (
    AsFamily,
    AsRenegade,
    Draw,
    Explode,
    Give,
    Inspect,
    Join,
    Pass,
    Pick,
    Play,
    Roll,
    SicilianosAction,
    SicilianosView,
    Spoils,
    StartWar,
    StayOut,
    Steal,
    TakeBusiness,
)
from referee.games.sicilianos.state import DECISION_RULES

__all__ = ["CATALOGUE", "HIGH", "SicilianosEncoding"]

HIGH: Final = 4.0
_MAX_SEATS: Final = 6
_KINDS_OF_DECISION: Final = tuple(DECISION_RULES)
_PHASES: Final = ("setup", "turn", "war", "over")
_WAR_STAGES: Final = ("join", "play", "decide", "spoils")
_CARDS = [(COLOURS[colour_of(c)], value_of(c)) for c in range(N_CARDS)]


def _catalogue() -> list[Any]:
    """Every Sicilianos action once, a steal's target counted from the stealing seat (1..5)."""
    actions: list[Any] = [Draw(c) for c in COLOURS]
    actions += [Inspect(c) for c in COLOURS]
    actions += [Pick(v) for v in range(1, VALUES_PER_COLOUR + 1)]
    actions.append(Roll())
    actions += [StartWar(colour, value, note) for colour, value in _CARDS for note in NOTE_VALUES]
    actions += [Join(colour, value, note) for colour, value in _CARDS for note in NOTE_VALUES]
    actions.append(StayOut())
    actions += [Play(colour, value) for colour, value in _CARDS]
    actions.append(Pass())
    actions += [Steal(k, c) for k in range(1, _MAX_SEATS) for c in COLOURS]
    actions += [Give(v) for v in range(1, VALUES_PER_COLOUR + 1)]
    actions += [AsFamily(), AsRenegade()]
    actions += [Explode(colour, value) for colour, value in _CARDS]
    actions += [Spoils("business"), Spoils("launder")]
    actions += [TakeBusiness(kind) for kind in KINDS]
    return actions


CATALOGUE: Final = tuple(_catalogue())
_INDEX: Final = {action: i for i, action in enumerate(CATALOGUE)}
_TO_ACTION: Final = msgspec.convert


def _typed(option: Any) -> Any:
    return option if isinstance(option, msgspec.Struct) else _TO_ACTION(option, SicilianosAction)


class SicilianosEncoding(Encoding):
    """Sicilianos at one table size: the view as a vector, every decision one masked pick from ``CATALOGUE``."""

    low = 0.0
    high = HIGH
    action_size = len(CATALOGUE)

    def __init__(self, n_players: int) -> None:
        self.n = n = n_players
        player = N_COLOURS + 1 + len(NOTE_VALUES) + 2 + N_COLOURS + N_COLOURS * len(KINDS) + 1
        participant = 1 + N_COLOURS + 1 + VALUES_PER_COLOUR + 1 + 1 + 1 + 1 + 1 + 1
        sizes = {
            "phase": len(_PHASES),
            "kind": len(_KINDS_OF_DECISION),
            "to_move": n,
            "turn_seat": n,
            "turns": 1,
            "dice": 1 + n + N_COLOURS + 3,
            "piles": N_COLOURS,
            "business_piles": N_COLOURS,
            "hand": N_CARDS,
            "players": n * player,
            "known": N_COLOURS * (1 + VALUES_PER_COLOUR),
            "steal": 1 + 2 * n + N_COLOURS + VALUES_PER_COLOUR,
            "war": 1 + n + len(_WAR_STAGES) + 1 + n * participant + n,
            "asked": 1,
        }
        self.player_width = player
        self.participant_width = participant
        self.at, self.observation_size = field_offsets(sizes)

    # -- the observation --------------------------------------------------------------

    def observe(self, view: Any, decision: Decision | None, chosen: Sequence[int] = ()) -> Vector:
        v: SicilianosView = view if isinstance(view, SicilianosView) else msgspec.convert(view, SicilianosView)
        n = self.n
        at = self.at
        out = np.zeros(self.observation_size, dtype=np.float32)

        def rel(seat: int) -> int:
            return (seat - v.seat) % n

        out[at["phase"] + _PHASES.index(v.phase)] = 1.0
        if v.decision is not None:
            out[at["kind"] + _KINDS_OF_DECISION.index(v.decision)] = 1.0
        if v.to_move is not None:
            out[at["to_move"] + rel(v.to_move)] = 1.0
        out[at["turn_seat"] + rel(v.turn_seat)] = 1.0
        out[at["turns"]] = v.turns / max(1, v.turn_limit)
        if v.dice is not None:
            base = at["dice"]
            out[base] = 1.0
            out[base + 1 + rel(v.dice.seat)] = 1.0
            for rolled in v.dice.colours:
                out[base + 1 + n + COLOUR_INDEX[rolled]] += 0.5
            out[base + 1 + n + N_COLOURS + ("take2", "take1", "steal").index(v.dice.action)] = 1.0
        for name, left in v.piles.items():
            out[at["piles"] + COLOUR_INDEX[name]] = left / VALUES_PER_COLOUR
        for name, left in v.business_piles.items():
            out[at["business_piles"] + COLOUR_INDEX[name]] = left / len(KINDS)
        for card in v.hand:
            out[at["hand"] + card_id(COLOUR_INDEX[card.colour], card.value)] = 1.0
        for p in v.players:
            base = at["players"] + rel(p.seat) * self.player_width
            for held in p.hand:
                out[base + COLOUR_INDEX[held]] += 0.2
            base += N_COLOURS
            out[base] = p.hand_size / 10
            base += 1
            for note in p.notes:
                out[base + NOTE_INDEX[note]] += 0.5
            base += len(NOTE_VALUES)
            out[base] = p.dirty / START_MONEY
            out[base + 1] = p.clean / START_MONEY
            base += 2
            for business in p.businesses:
                owned = COLOUR_INDEX[business.colour]
                out[base + owned] += 1 / len(KINDS)
                if business.kind is not None:
                    out[base + N_COLOURS + owned * len(KINDS) + KIND_INDEX[business.kind]] = 1.0
            base += N_COLOURS + N_COLOURS * len(KINDS)
            out[base] = float(p.forfeited)
        for pile in v.known_piles:
            base = at["known"] + COLOUR_INDEX[pile.colour] * (1 + VALUES_PER_COLOUR)
            out[base] = 1.0
            for depth, value in enumerate(pile.order):
                out[base + value] = (depth + 1) / VALUES_PER_COLOUR
        if v.last_steal is not None:
            base = at["steal"]
            steal = v.last_steal
            out[base] = 1.0
            out[base + 1 + rel(steal.thief)] = 1.0
            out[base + 1 + n + rel(steal.victim)] = 1.0
            out[base + 1 + 2 * n + COLOUR_INDEX[steal.colour]] = 1.0
            if steal.value is not None:
                out[base + 1 + 2 * n + N_COLOURS + steal.value - 1] = 1.0
        if v.war is not None:
            self._observe_war(v, out, rel)
        if decision is not None:
            out[at["asked"]] = 1.0
        np.clip(out, 0.0, HIGH, out=out)
        return out

    def _observe_war(self, v: SicilianosView, out: Vector, rel: Any) -> None:
        war = v.war
        assert war is not None
        n = self.n
        base = self.at["war"]
        out[base] = 1.0
        out[base + 1 + rel(war.initiator)] = 1.0
        out[base + 1 + n + _WAR_STAGES.index(war.stage)] = 1.0
        out[base + 1 + n + len(_WAR_STAGES)] = war.round / 10
        first = base + 2 + n + len(_WAR_STAGES)
        for p in war.participants:
            at = first + rel(p.seat) * self.participant_width
            out[at] = 1.0
            out[at + 1 + COLOUR_INDEX[p.colour]] = 1.0
            at += 1 + N_COLOURS
            out[at] = p.stake / NOTE_VALUES[-1]
            at += 1
            for card in p.cards:
                if card.value is not None:
                    out[at + card.value - 1] = 1.0
            at += VALUES_PER_COLOUR
            out[at] = sum(card.face_down for card in p.cards) / 5
            out[at + 1] = sum(card.use == "undecided" for card in p.cards) / 2
            out[at + 2] = p.strength / 40
            out[at + 3] = float(p.passed)
            out[at + 4] = float(p.stopped)
            out[at + 5] = float(p.ally is not None)
        winners = first + n * self.participant_width
        for seat in war.winners:
            out[winners + rel(seat)] = 1.0

    # -- decisions: one pick from the catalogue ----------------------------------------

    def index_of(self, seat: int, action: Any) -> int:
        """The catalogue number of ``action`` played by ``seat``."""
        action = _typed(action)
        if isinstance(action, Steal):
            action = Steal((action.target - seat) % self.n, action.colour)
        return _INDEX[action]

    def action_at(self, seat: int, index: int) -> Any:
        """The action number ``index`` means for ``seat``."""
        action = CATALOGUE[index]
        if isinstance(action, Steal):
            return Steal((seat + action.target) % self.n, action.colour)
        return action

    def mask(self, decision: Decision, chosen: Sequence[int] = ()) -> Mask:
        mask = np.zeros(self.action_size, dtype=np.int8)
        if not chosen:
            for option in decision.options or ():
                mask[self.index_of(decision.seat, option)] = 1
        return mask

    def action(self, decision: Decision, chosen: Sequence[int]) -> Any | None:
        return self.action_at(decision.seat, chosen[0]) if chosen else None

    def steps_for(self, decision: Decision, action: Any) -> list[int]:
        return [self.index_of(decision.seat, action)]

    def describe(self, decision: Decision, chosen: Sequence[int], index: int) -> str:
        return msgspec.json.encode(self.action_at(decision.seat, index)).decode()
