"""Matchmaking: the neediest version plays, tables mix near and far ratings, seats are balanced."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from ladder.matchmaking import Candidate, choose_table, table_seatings, table_size


def field(games: list[int]) -> list[Candidate]:
    return [Candidate(version=i, games=g, mu=25.0 + i, sigma=8.0) for i, g in enumerate(games)]


def test_the_version_with_fewest_games_is_always_seated() -> None:
    rng = random.Random(1)
    for _ in range(50):
        assert 3 in choose_table(field([9, 8, 7, 0, 9, 9]), 3, rng)


def test_a_table_holds_distinct_versions_with_a_close_rival() -> None:
    rng = random.Random(2)
    candidates = field([5, 5, 5, 0, 5, 5])
    for _ in range(50):
        table = choose_table(candidates, 3, rng)
        assert len(set(table)) == 3 and table[0] == 3
        assert table[1] in (2, 4)  # rated closest to version 3


def test_every_version_meets_the_field_over_many_tables() -> None:
    rng = random.Random(3)
    met = Counter(v for _ in range(300) for v in choose_table(field([0] * 8), 3, rng))
    assert set(met) == set(range(8))


def test_each_version_sits_in_each_seat_equally_often_at_a_table() -> None:
    seatings = table_seatings([10, 20, 30])
    assert len(seatings) == 6
    for seat in range(3):
        assert Counter(s[seat] for s in seatings) == {10: 2, 20: 2, 30: 2}


def test_table_sizes_take_turns_and_skip_those_the_field_cannot_fill() -> None:
    assert [table_size([3, 4], 5, turn) for turn in range(3)] == [3, 4, 3]
    assert table_size([3, 4], 3, 1) == 3
    assert table_size([3], 2, 0) is None
    with pytest.raises(ValueError, match="cannot fill"):
        choose_table(field([0, 0]), 3, random.Random(0))
