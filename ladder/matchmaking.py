"""Who plays next: pure choices over the active versions, no I/O.

A table is chosen around the version that most needs games: the one with the
fewest (ties broken by the widest interval, then by chance). Half of the other
seats go to the versions rated closest to it, so the top bots keep meeting
each other, and the rest are drawn at random from the field, so every version
also meets the others and ratings stay connected. The table is then played in
every seating of a Williams design on one deal (``tables_seatings``): each
version sits in each seat equally often on the same cards, as tournaments do.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec

from tournaments.schedule import williams_design

__all__ = ["Candidate", "choose_table", "table_seatings", "table_size"]


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    version: int
    games: int
    mu: float
    sigma: float


def table_size(sizes: Sequence[int], available: int, turn: int) -> int | None:
    """The size of the next table: the ladder's sizes in turn, skipping those the field cannot fill; None if none fits."""
    fitting = [size for size in sizes if size <= available]
    if not fitting:
        return None
    return fitting[turn % len(fitting)]


def choose_table(candidates: Sequence[Candidate], size: int, rng: random.Random) -> list[int]:
    """``size`` distinct version ids for the next table, the neediest version first."""
    if size > len(candidates):
        raise ValueError(f"{len(candidates)} active versions cannot fill a table of {size}")
    shuffled = list(candidates)
    rng.shuffle(shuffled)  # ties below are broken by chance, not by id
    needy = min(shuffled, key=lambda c: (c.games, -c.sigma))
    rest = [c for c in shuffled if c.version != needy.version]
    close = sorted(rest, key=lambda c: abs(c.mu - needy.mu))[: (size - 1) // 2]
    field = [c for c in rest if c not in close]
    drawn = rng.sample(field, size - 1 - len(close))
    return [needy.version, *(c.version for c in close), *(c.version for c in drawn)]


def table_seatings(members: Sequence[int]) -> list[list[int]]:
    """The seatings of one table over a Williams design: seat s of row r is ``members[row[s]]``."""
    return [[members[position] for position in row] for row in williams_design(len(members))]
