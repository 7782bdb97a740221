"""Who plays next: pure choices over the active versions, no I/O.

A table is chosen around the version that most needs games. A version still
in its warm-up (fewer than ``WARMUP_GAMES``) comes first, the fewest games
first, so a new submission is placed at once whatever prior the host chose.
After that the version whose rating is least certain comes first: the widest
interval (OpenSkill's sigma), ties broken by fewer games, then by chance. So
games go where they teach the standings most, not round and round the field
to keep game counts even: a version whose rating has settled plays less often
as the neediest, and still fills other tables' seats. Half of the other
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

from tournaments.hosting.schedule import williams_design

__all__ = ["WARMUP_GAMES", "Candidate", "choose_table", "neediest", "table_seatings", "table_size"]

WARMUP_GAMES = 12
"""Games a new version plays first as the neediest: two tables of three in every seating."""


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


def neediest(candidates: Sequence[Candidate], warmup: int = WARMUP_GAMES) -> Candidate:
    """The version the next table is dealt around; the first of equals in ``candidates`` order."""
    warming = [c for c in candidates if c.games < warmup]
    if warming:
        return min(warming, key=lambda c: (c.games, -c.sigma))
    return max(candidates, key=lambda c: (c.sigma, -c.games))


def choose_table(
    candidates: Sequence[Candidate], size: int, rng: random.Random, *, warmup: int = WARMUP_GAMES
) -> list[int]:
    """``size`` distinct version ids for the next table, the neediest version first."""
    if size > len(candidates):
        raise ValueError(f"{len(candidates)} active versions cannot fill a table of {size}")
    shuffled = list(candidates)
    rng.shuffle(shuffled)  # ties below are broken by chance, not by id
    needy = neediest(shuffled, warmup)
    rest = [c for c in shuffled if c.version != needy.version]
    close = sorted(rest, key=lambda c: abs(c.mu - needy.mu))[: (size - 1) // 2]
    field = [c for c in rest if c not in close]
    drawn = rng.sample(field, size - 1 - len(close))
    return [needy.version, *(c.version for c in close), *(c.version for c in drawn)]


def table_seatings(members: Sequence[int]) -> list[list[int]]:
    """The seatings of one table over a Williams design: seat s of row r is ``members[row[s]]``."""
    return [[members[position] for position in row] for row in williams_design(len(members))]
