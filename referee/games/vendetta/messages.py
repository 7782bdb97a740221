"""The wire types of Vendetta: configuration, the action, events and a seat's view.

All of them are msgspec Structs that encode to small JSON objects; actions, views
and events carry a "type" tag. Events and the action are frozen, as in every game.
"""

from __future__ import annotations

from typing import TypeAlias

import msgspec

from referee.games.base import Forfeited
from referee.games.vendetta.components import DEFAULT_ROUND_LIMIT, Control, Setup
from referee.games.wire import Action, Event

__all__ = [
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
    "VendettaView",
]


class VendettaConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A game's configuration: the two translation variants and the round limit (H3)."""

    setup: Setup = "except-dealt"
    control: Control = "sole"
    round_limit: int = DEFAULT_ROUND_LIMIT


class Placement(msgspec.Struct, frozen=True, gc=False):
    """Mafiosi put into one district: ``{"district": 7, "count": 3}``."""

    district: int
    count: int


class Place(Action, tag="place"):
    """The one Vendetta action: 0, 1 or 2 placements; an empty list places nothing."""

    placements: list[Placement] = []  # noqa: RUF012 - a msgspec field default: msgspec copies it per instance


class PlaceConstraints(msgspec.Struct, gc=False):
    """The limits of a placement decision (P1-P4); ``minimum[d-1]`` is for district d."""

    max_districts: int
    hand: int
    minimum: list[int]


class VendettaView(msgspec.Struct, tag="vendetta", tag_field="type", kw_only=True):
    """Everything one seat may know (H5): all of it is public but the pile and raid."""

    seat: int
    n_players: int
    round: int  # 1-based
    turn: int  # 0..10; at the end of the game, the last turn played
    start_seat: int
    active_seat: int  # -1 once the game is over
    over: bool
    board: list[list[int]]  # board[d-1][s]: seat s's mafiosi in district d
    hands: list[int]
    box: list[int]
    points: list[int]
    controlled: list[int]  # districts each seat controlled at the last scoring
    revealed: list[int]  # protection cards revealed this round, in order
    pile_left: int
    last_raid: list[int]  # the raid cards revealed at the end of the previous round
    forfeited: list[bool]
    forfeit_order: list[int]  # seats in the order they forfeited
    dealt: list[list[int]]  # each seat's two S1 cards
    round_limit: int
    setup: Setup
    control: Control
    target_districts: int  # E3
    target_points: int  # E3


class RoundStarted(Event, tag="round_start"):
    """A round begins (R1): its number and start player."""

    round: int
    start_seat: int


class Placed(Event, tag="placed"):
    """A seat placed mafiosi (possibly none) on its turn."""

    seat: int
    turn: int
    placements: list[Placement]


class Revealed(Event, tag="revealed"):
    """The active seat revealed the top protection card (V1)."""

    seat: int
    turn: int
    district: int


class Eliminated(Event, tag="eliminated"):
    """A vendetta (V4): ``seat`` lost all ``count`` of its mafiosi in ``district``."""

    district: int
    seat: int
    count: int


class Paid(Event, tag="paid"):
    """Protection money (V5): each listed seat took one mafioso from its box."""

    district: int
    seats: list[int]


class Raided(Event, tag="raided"):
    """The raid (E1): both districts emptied; ``lost[s]`` mafiosi of seat s went to the box."""

    districts: list[int]
    lost: list[int]


class Scored(Event, tag="scored"):
    """Round scoring (E2): districts controlled, points gained and new totals per seat."""

    round: int
    controlled: list[int]
    gained: list[int]
    points: list[int]


class Reinforced(Event, tag="reinforced"):
    """No winner (E4): ``taken[s]`` mafiosi moved from seat s's box to its hand."""

    taken: list[int]


class GameEnded(Event, tag="game_over"):
    """The game ended: why, who won, the H1 ranks and final points.

    Its wire name stays "game_over": protocol/PROTOCOL.md documents it to bots and
    every Vendetta replay on disk holds it."""

    ended_by: str
    winners: list[int]
    ranks: list[int]
    points: list[int]


VendettaEvent: TypeAlias = (
    RoundStarted | Placed | Revealed | Eliminated | Paid | Raided | Scored | Reinforced | Forfeited | GameEnded
)
