"""Matchmaking: the neediest version plays (warm-up, then the widest interval), tables mix near and far ratings,
seats are balanced."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from ladder.matchmaking import WARMUP_GAMES, Candidate, choose_table, neediest, table_seatings, table_size


def field(games: list[int]) -> list[Candidate]:
    return [Candidate(version=i, games=g, mu=25.0 + i, sigma=8.0) for i, g in enumerate(games)]


def test_the_version_with_fewest_games_is_always_seated() -> None:
    rng = random.Random(1)
    for _ in range(50):
        assert 3 in choose_table(field([9, 8, 7, 0, 9, 9]), 3, rng)


def test_a_version_in_its_warm_up_comes_first_even_with_a_narrow_prior() -> None:
    # A host's prior narrower than the field's settled intervals must not keep a new version waiting.
    settled = [Candidate(version=i, games=200, mu=25.0, sigma=3.0) for i in range(4)]
    newcomer = Candidate(version=9, games=WARMUP_GAMES - 1, mu=25.0, sigma=1.0)
    assert neediest([*settled, newcomer]).version == 9


def test_among_warm_up_versions_the_fewest_games_go_first() -> None:
    warming = [Candidate(version=1, games=5, mu=25.0, sigma=8.0), Candidate(version=2, games=2, mu=25.0, sigma=7.0)]
    assert neediest(warming).version == 2


def test_after_the_warm_up_the_widest_interval_goes_first_not_the_fewest_games() -> None:
    field = [
        Candidate(version=1, games=40, mu=25.0, sigma=2.0),
        Candidate(version=2, games=90, mu=25.0, sigma=4.5),  # more games, yet its rating is the least certain
        Candidate(version=3, games=60, mu=25.0, sigma=3.0),
    ]
    assert neediest(field).version == 2
    rng = random.Random(4)
    assert all(choose_table(field, 3, rng)[0] == 2 for _ in range(20))


def test_equal_intervals_go_to_the_version_with_fewer_games() -> None:
    field = [Candidate(version=1, games=80, mu=25.0, sigma=3.0), Candidate(version=2, games=30, mu=25.0, sigma=3.0)]
    assert neediest(field).version == 2


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
