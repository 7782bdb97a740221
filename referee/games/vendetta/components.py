"""The pieces and numbers of Vendetta: districts, turns, targets, and the two
translation variants' values (shared/rules/vendetta.md, rule ids in comments)."""

from __future__ import annotations

from typing import Final, Literal, TypeAlias, get_args

__all__ = [
    "CONTROLS",
    "DEFAULT_ROUND_LIMIT",
    "MAFIOSI_PER_COLOUR",
    "MAX_ROUND_LIMIT",
    "NOBODY",
    "N_DISTRICTS",
    "ORDER_AFTER",
    "POINTS_FOR_CONTROL",
    "REINFORCEMENT",
    "SETUPS",
    "SETUP_PER_DISTRICT",
    "SHARED",
    "START_HAND",
    "TARGETS",
    "TURNS_PER_ROUND",
    "Control",
    "Setup",
]

N_DISTRICTS: Final = 13
TURNS_PER_ROUND: Final = 11
MAFIOSI_PER_COLOUR: Final = 50
SETUP_PER_DISTRICT: Final = 2  # S2
START_HAND: Final = 10  # S3
REINFORCEMENT: Final = 3  # E4
# E2: points for controlling c districts, indexed by c (7 or more all score 1000).
POINTS_FOR_CONTROL: Final[tuple[int, ...]] = (0, 1, 5, 20, 75, 250, 800) + (1000,) * 7
# E3: (district target, points target) by table size.
TARGETS: Final[dict[int, tuple[int, int]]] = {3: (6, 800), 4: (5, 250), 5: (4, 75)}
DEFAULT_ROUND_LIMIT: Final = 30
MAX_ROUND_LIMIT: Final = 1000
NOBODY: Final = -1  # _owner value: no mafioso in the district
SHARED: Final = -2  # _owner value: two or more seats in the district

Setup: TypeAlias = Literal["except-dealt", "dealt-only"]
Control: TypeAlias = Literal["sole", "majority"]
SETUPS: Final[tuple[str, ...]] = get_args(Setup)
CONTROLS: Final[tuple[str, ...]] = get_args(Control)

# V4 tie order: for active seat a at a table of n, the seats from a+1 clockwise, a last.
ORDER_AFTER: Final[dict[int, tuple[tuple[int, ...], ...]]] = {
    n: tuple(tuple((a + i) % n for i in range(1, n + 1)) for a in range(n)) for n in TARGETS
}
