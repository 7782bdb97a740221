"""The pieces of Sicilianos as numbers: colours, cards, notes, businesses, dice (C1-C7).

Everything inside the engine is a small int so that hands, piles and the war table
are flat lists; the wire types in ``messages`` turn them into short strings.

* A colour is 0..5 in ``COLOURS`` order.
* A family card is ``colour * 11 + value - 1`` (0..65), so sorting a hand sorts it
  by colour, then value.
* A business card is ``colour * 3 + kind`` (0..17), kind 0..2 in ``KINDS`` order.
* A note is its value in sicilianos; a seat's dirty notes are counted per value.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

Colour: TypeAlias = Literal["blue", "white", "black", "yellow", "red", "green"]
Kind: TypeAlias = Literal["antique", "restaurant", "laundry"]
DieAction: TypeAlias = Literal["take2", "take1", "steal"]

COLOURS: Final[tuple[Colour, ...]] = (
    "blue",
    "white",
    "black",
    "yellow",
    "red",
    "green",
)
COLOUR_INDEX: Final[dict[str, int]] = {name: i for i, name in enumerate(COLOURS)}
BLUE, WHITE, BLACK, YELLOW, RED, GREEN = range(6)
N_COLOURS: Final = 6

# C1/C2: eleven cards per family, three of them special.
VALUES_PER_COLOUR: Final = 11
N_CARDS: Final = N_COLOURS * VALUES_PER_COLOUR
BODYGUARD: Final = 1
BOMB: Final = 5
RENEGADE: Final = 8
RENEGADE_BONUS: Final = 4  # what a Renegade adds to its other colour (G5)

# C3: the other colour of each family's Renegade; red<->green is [A].
PARTNER: Final[tuple[int, ...]] = (WHITE, BLUE, YELLOW, BLACK, GREEN, RED)

# C4: the families each colour's Bomb can hit (black's from the seed, the rest [A]).
BOMB_TARGETS: Final[tuple[tuple[int, ...], ...]] = (
    (BLACK, RED, GREEN),  # blue
    (YELLOW, RED, GREEN),  # white
    (BLUE, WHITE, GREEN),  # black
    (BLUE, WHITE, RED),  # yellow
    (WHITE, BLACK, YELLOW),  # red
    (BLUE, BLACK, YELLOW),  # green
)

# C5: business kinds.
KINDS: Final[tuple[Kind, ...]] = ("antique", "restaurant", "laundry")
KIND_INDEX: Final[dict[str, int]] = {name: i for i, name in enumerate(KINDS)}
N_BUSINESSES: Final = N_COLOURS * len(KINDS)

# C6/S1: two notes of each value per seat.
NOTE_VALUES: Final[tuple[int, ...]] = (5_000, 10_000, 20_000, 40_000, 50_000)
NOTE_INDEX: Final[dict[int, int]] = {value: i for i, value in enumerate(NOTE_VALUES)}
NOTES_PER_VALUE: Final = 2
START_MONEY: Final = NOTES_PER_VALUE * sum(NOTE_VALUES)  # 250,000

# C7: the action die's faces; the default split (two of each) is [A].
DIE_ACTIONS: Final[tuple[DieAction, ...]] = ("take2", "take1", "steal")
DIE_FACES: Final = 6

# T0 and S3.
HAND_LIMIT: Final = 10
SETUP_CARDS: Final = 4

# E3 bonuses.
SET_BONUS: Final = 50_000
MAJORITY_BONUS: Final = 100_000


def card_id(colour: int, value: int) -> int:
    """The card number of ``colour``'s card of ``value`` (1..11)."""
    return colour * VALUES_PER_COLOUR + value - 1


def colour_of(card: int) -> int:
    """The family colour of a card number."""
    return card // VALUES_PER_COLOUR


def value_of(card: int) -> int:
    """The face value (1..11) of a card number."""
    return card % VALUES_PER_COLOUR + 1


def pair_of(colour: int) -> int:
    """One id per Renegade pair (C3), shared by both of its colours."""
    return min(colour, PARTNER[colour])


def parse_action_die(text: str) -> tuple[int, ...]:
    """The action die as six face indices into ``DIE_ACTIONS``, from counts "a-b-c".

    "2-2-2" means two faces each of take 2, take 1 and steal. ValueError when the
    text is not three non-negative counts that add up to six.
    """
    parts = text.strip().split("-")
    if len(parts) != 3 or not all(p.isascii() and p.isdigit() for p in parts):
        raise ValueError(f"action_die {text!r} is not three counts a-b-c")
    counts = [int(p) for p in parts]
    if sum(counts) != DIE_FACES:
        raise ValueError(f"action_die {text!r}: the counts add up to {sum(counts)}, not 6")
    return tuple(i for i, count in enumerate(counts) for _ in range(count))
