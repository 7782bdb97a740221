"""The wire types of Sicilianos: configuration, actions, events and a seat's view.

All of them are msgspec Structs that encode to small JSON objects with a "type"
tag. A card is always named by its colour and value ({"colour": "blue",
"value": 7}): each pair exists once in the game, so it is a stable name.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

import msgspec

from referee.games.base import Forfeited
from referee.games.sicilianos.components import (
    Colour,
    DieAction,
    Kind,
    parse_action_die,
)
from referee.games.wire import Action, Event

__all__ = [
    "BUSINESS_COLOURS",
    "DEFAULT_TURN_LIMIT",
    "MAX_TURN_LIMIT",
    "STEAL_PICKS",
    "AsFamily",
    "AsRenegade",
    "BusinessColour",
    "BusinessTaken",
    "BusinessView",
    "Card",
    "CardUsed",
    "Dice",
    "Draw",
    "Drew",
    "Explode",
    "Exploded",
    "FamilyStrength",
    "Forfeited",
    "GameEnded",
    "Give",
    "Inspect",
    "Inspected",
    "Join",
    "Joined",
    "KnownPile",
    "Laundered",
    "NoBusiness",
    "Participant",
    "Pass",
    "Passed",
    "Pick",
    "Play",
    "Played",
    "PlayerView",
    "Returned",
    "Revealed",
    "Roll",
    "Rolled",
    "SicilianosAction",
    "SicilianosConfig",
    "SicilianosEvent",
    "SicilianosView",
    "Skipped",
    "Spoils",
    "SpoilsChosen",
    "StakesLost",
    "StartWar",
    "StayOut",
    "StayedOut",
    "Steal",
    "StealPick",
    "StealView",
    "Stole",
    "Take",
    "TakeBusiness",
    "TookNothing",
    "WarCard",
    "WarCardShown",
    "WarResolved",
    "WarStarted",
    "WarView",
]

DEFAULT_TURN_LIMIT: Final = 400
MAX_TURN_LIMIT: Final = 100_000

StealPick: TypeAlias = Literal["random", "victim"]
BusinessColour: TypeAlias = Literal["own", "winning"]
STEAL_PICKS: Final[tuple[StealPick, ...]] = ("random", "victim")
BUSINESS_COLOURS: Final[tuple[BusinessColour, ...]] = ("own", "winning")


class SicilianosConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A game's configuration: the turn limit (H1) and the [A] variants a bot may care about."""

    turn_limit: int = DEFAULT_TURN_LIMIT
    # Faces of the action die as counts "take2-take1-steal" (C7).
    action_die: str = "2-2-2"
    # Who picks the stolen card (DS): chance, or the victim (who sees its values).
    steal_pick: StealPick = "random"
    # Whose colour the business pile of a winning ally is (G8): its own family's
    # colour (the seed's "the colour of the family it played"), or the winning family's.
    business_colour: BusinessColour = "own"

    def __post_init__(self) -> None:
        limit = self.turn_limit
        if type(limit) is not int or not 1 <= limit <= MAX_TURN_LIMIT:
            raise ValueError(f"turn_limit {limit!r} must be an integer from 1 to {MAX_TURN_LIMIT}")
        parse_action_die(self.action_die)
        if self.steal_pick not in STEAL_PICKS:
            raise ValueError(f"steal_pick {self.steal_pick!r} is not one of {', '.join(STEAL_PICKS)}")
        if self.business_colour not in BUSINESS_COLOURS:
            raise ValueError(f"business_colour {self.business_colour!r} is not one of {', '.join(BUSINESS_COLOURS)}")


# ---------------------------------------------------------------------------
# Actions: one tagged Struct each; Decision.options holds ready-made instances.


class Draw(Action, tag="draw"):
    """Take the top card of a colour's pile (S3 setup, D1 top card, D2 colour at 9 cards)."""

    colour: Colour


class Inspect(Action, tag="inspect"):
    """Look through the whole pile of a rolled colour (D1)."""

    colour: Colour


class Pick(Action, tag="pick"):
    """Take this card from the pile being looked through (D1)."""

    value: int


class Roll(Action, tag="roll"):
    """Roll the three dice (T1)."""


class StartWar(Action, tag="war"):
    """Start a gang war with this card face down and this dirty note as stake (T2, G1)."""

    colour: Colour
    value: int
    note: int


class Join(Action, tag="join"):
    """Join the war with this card face down and this dirty note as stake (G2)."""

    colour: Colour
    value: int
    note: int


class StayOut(Action, tag="stay_out"):
    """Stay out of the war (G2)."""


class Play(Action, tag="play"):
    """Put one more card of the own family face down (G4)."""

    colour: Colour
    value: int


class Pass(Action, tag="pass"):
    """Play no more cards in this war (G4); final."""


class Steal(Action, tag="steal"):
    """Steal a card of a rolled colour from another seat (DS)."""

    target: int
    colour: Colour


class Give(Action, tag="give"):
    """The victim hands over this card of the stolen colour (variant steal_pick=victim)."""

    value: int


class AsFamily(Action, tag="as_family"):
    """Count the revealed Renegade (+8) or Bomb (+5) as a plain family card (G5, G6)."""


class AsRenegade(Action, tag="as_renegade"):
    """Use the revealed Renegade for its other colour and stop playing (G5)."""


class Explode(Action, tag="explode"):
    """Explode the revealed Bomb at this card in play (G6); a Bodyguard may take the hit."""

    colour: Colour
    value: int


Take: TypeAlias = Literal["business", "launder"]


class Spoils(Action, tag="spoils"):
    """The winning family's player picks its share of a won alliance (G8)."""

    take: Take


class TakeBusiness(Action, tag="business"):
    """Take the business of this kind from the business pile being looked through (G8)."""

    kind: Kind


SicilianosAction: TypeAlias = (
    Draw
    | Inspect
    | Pick
    | Roll
    | StartWar
    | Join
    | StayOut
    | Play
    | Pass
    | Steal
    | Give
    | AsFamily
    | AsRenegade
    | Explode
    | Spoils
    | TakeBusiness
)


# ---------------------------------------------------------------------------
# Events. A field typed ``X | None`` holding a card value or business kind is
# private: events_for blanks it for every seat not entitled to it.


class Card(msgspec.Struct, frozen=True, gc=False):
    """A family card by colour and value."""

    colour: Colour
    value: int


class Drew(Event, tag="drew"):
    """A seat took a card from a pile; ``value`` only for that seat."""

    seat: int
    colour: Colour
    value: int | None
    source: Literal["setup", "top", "inspect"]


class Rolled(Event, tag="rolled"):
    """A seat rolled the dice (T1)."""

    seat: int
    colours: list[Colour]
    action: DieAction


class TookNothing(Event, tag="took_nothing"):
    """The roll gave this seat nothing, and why."""

    seat: int
    rule: str
    reason: str


class Inspected(Event, tag="inspected"):
    """A seat looks through a pile (D1); ``order`` (top first) only for that seat."""

    seat: int
    colour: Colour
    order: list[int] | None


class Stole(Event, tag="stole"):
    """A card changed hands (DS); ``value`` only for thief and victim."""

    thief: int
    victim: int
    colour: Colour
    value: int | None
    picked_by: Literal["chance", "victim"]


class WarStarted(Event, tag="war_started"):
    """A seat started a gang war (G1) with a face-down card; ``value`` only for it."""

    seat: int
    colour: Colour
    value: int | None
    note: int


class Joined(Event, tag="joined"):
    """A seat joined the war (G2) with a face-down card; ``value`` only for it."""

    seat: int
    colour: Colour
    value: int | None
    note: int


class StayedOut(Event, tag="stayed_out"):
    """A seat stayed out of the war (G2): by choice, unable, or forfeited."""

    seat: int
    reason: Literal["chose", "unable", "forfeited"]


class Played(Event, tag="played"):
    """A participant put one more card face down (G4); ``value`` only for it."""

    seat: int
    colour: Colour
    value: int | None


class Passed(Event, tag="passed"):
    """A participant plays no more cards in this war (G4)."""

    seat: int
    reason: Literal["chose", "unable", "forfeited"]


class WarCardShown(msgspec.Struct, frozen=True, gc=False):
    """One card turned face up, with the seat that played it."""

    seat: int
    colour: Colour
    value: int


class Revealed(Event, tag="revealed"):
    """The face-down cards are turned up (G3, G4); ``first`` for the first reveal."""

    first: bool
    cards: list[WarCardShown]


class CardUsed(Event, tag="card_used"):
    """A revealed Renegade or Bomb was settled without an explosion (G5, G6)."""

    seat: int
    colour: Colour
    value: int
    use: Literal["family", "renegade"]
    ally: int | None  # the seat of the other colour, for a Renegade with a partner


class Exploded(Event, tag="exploded"):
    """A Bomb exploded (G6): the aimed card, and the card actually removed."""

    seat: int
    colour: Colour
    target_seat: int
    aimed: Card
    removed: Card
    bodyguard: bool


class FamilyStrength(msgspec.Struct, frozen=True, gc=False):
    """One family's strength at the end of a war (G7)."""

    seat: int
    colour: Colour
    strength: int


class WarResolved(Event, tag="war_resolved"):
    """The war's result (G7): strengths, the winning family, the seats that win."""

    strengths: list[FamilyStrength]
    winning_colour: Colour | None
    winners: list[int]
    stripped: list[int]  # seats whose every card was removed by Bombs


class SpoilsChosen(Event, tag="spoils_chosen"):
    """The winning family's player chose its share of a won alliance (G8)."""

    seat: int
    take: Take


class BusinessTaken(Event, tag="business_taken"):
    """A seat took a business (G8); ``kind`` only for it (for all once the game is over)."""

    seat: int
    colour: Colour
    kind: Kind | None


class NoBusiness(Event, tag="no_business"):
    """A winner's business share gave nothing (G8), and why."""

    seat: int
    colour: Colour
    reason: Literal["pile_empty", "forfeited"]


class Laundered(Event, tag="laundered"):
    """Dirty stakes became this seat's clean money (G8)."""

    seat: int
    amount: int
    from_bank: int  # the part the bank paid (0 when the ally's stake is taken instead)


class StakesLost(Event, tag="stakes_lost"):
    """The bank took the losing stakes (G9), per seat."""

    seats: list[int]
    notes: list[int]


class Returned(Event, tag="returned"):
    """The war's cards went under their piles (G9), in this order."""

    cards: list[Card]


class Skipped(Event, tag="skipped"):
    """A forfeited seat's turn was skipped (H2)."""

    seat: int


class BusinessView(msgspec.Struct, frozen=True, gc=False):
    """A business card: its colour, and its kind when the viewer may know it."""

    colour: Colour
    kind: Kind | None


class GameEnded(Event, tag="game_ended"):
    """The game is over: why, the final scores (E3), ranks, and every business shown."""

    ended_by: str
    godfather: int | None
    scores: list[int]
    ranks: list[int]
    businesses: list[list[BusinessView]]


SicilianosEvent: TypeAlias = (
    Drew
    | Rolled
    | TookNothing
    | Inspected
    | Stole
    | WarStarted
    | Joined
    | StayedOut
    | Played
    | Passed
    | Revealed
    | CardUsed
    | Exploded
    | WarResolved
    | SpoilsChosen
    | BusinessTaken
    | NoBusiness
    | Laundered
    | StakesLost
    | Returned
    | Skipped
    | Forfeited
    | GameEnded
)


# ---------------------------------------------------------------------------
# The view


class Dice(msgspec.Struct, frozen=True, gc=False):
    """The last roll: who rolled, the two colours, the action face."""

    seat: int
    colours: list[Colour]
    action: DieAction


class PlayerView(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """What everyone sees of one seat (I1), plus its business kinds for itself."""

    seat: int
    hand: list[Colour]  # the colours of its cards, sorted (values are private)
    hand_size: int
    notes: list[int]  # dirty notes, largest first
    dirty: int
    clean: int
    businesses: list[BusinessView]
    forfeited: bool


class WarCard(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """A card on the war table; ``value`` is None while it lies face down (to others)."""

    colour: Colour
    value: int | None
    face_down: bool
    use: Literal["family", "renegade", "undecided"]


class Participant(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """One family in the war."""

    seat: int
    colour: Colour
    stake: int
    cards: list[WarCard]
    strength: int  # from its face-up cards, Renegades counted where they add (G7)
    passed: bool
    stopped: bool  # used a Renegade (G5)
    ally: int | None


class WarView(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """The gang war in progress."""

    initiator: int
    stage: Literal["join", "play", "decide", "spoils"]
    round: int  # 0 while seats join, then 1 for the cards of the first reveal, ...
    participants: list[Participant]
    winners: list[int]  # set once the war is resolved (stage "spoils")


class KnownPile(msgspec.Struct, frozen=True, gc=False):
    """A pile this seat looked through and that has not changed since: values, top first."""

    colour: Colour
    order: list[int]


class StealView(msgspec.Struct, frozen=True, gc=False):
    """The last steal of the game; ``value`` only for thief and victim."""

    thief: int
    victim: int
    colour: Colour
    value: int | None


class SicilianosView(
    msgspec.Struct,
    frozen=True,
    gc=False,
    kw_only=True,
    tag="sicilianos",
    tag_field="type",
):
    """Everything one seat may know (I1-I3), and nothing more."""

    seat: int
    n_players: int
    phase: Literal["setup", "turn", "war", "over"]
    to_move: int | None
    decision: str | None
    turn_seat: int  # whose turn it is (the initiator during a war)
    turns: int  # turns started so far
    turn_limit: int
    dice: Dice | None
    piles: dict[str, int]  # cards left per colour
    business_piles: dict[str, int]  # businesses left per colour
    players: list[PlayerView]
    hand: list[Card]  # this seat's cards, sorted by colour then value
    known_piles: list[KnownPile]
    last_steal: StealView | None
    war: WarView | None
    ended_by: str | None
