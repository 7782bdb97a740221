"""SeededChance: the draws every deal comes from, pinned to one algorithm."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games.chance import SeededChance

STREAMS = st.sampled_from(["round", "deal", "dice", "deck"])


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**63),
    draws=st.lists(st.tuples(STREAMS, st.booleans(), st.integers(min_value=1, max_value=70)), max_size=12),
)
def test_draws_are_those_of_cpython_random_on_the_same_named_streams(
    seed: int, draws: list[tuple[str, bool, int]]
) -> None:
    # Every deal recorded so far came from random.Random's shuffle and randrange.
    chance = SeededChance(seed)
    reference: dict[str, random.Random] = {}
    for stream, is_shuffle, n in draws:
        rng = reference.setdefault(stream, random.Random(f"famiglia:{seed}:{stream}"))
        if is_shuffle:
            expected = list(range(n))
            rng.shuffle(expected)
            assert chance.shuffle(stream, n) == expected
        else:
            assert chance.below(stream, n) == rng.randrange(n)


def test_the_draws_of_a_seed_are_fixed_whatever_python_runs_them() -> None:
    # Written down once: a later Python that changed random.shuffle would still deal these.
    chance = SeededChance(2024)
    assert chance.shuffle("round", 13) == [8, 6, 7, 0, 12, 4, 2, 10, 9, 5, 11, 1, 3]
    assert [chance.below("dice", 6) for _ in range(8)] == [5, 2, 1, 2, 4, 3, 4, 1]
    assert chance.shuffle("round", 1) == [0] and chance.shuffle("round", 0) == []


@pytest.mark.parametrize("n", [0, -3])
def test_below_an_empty_range_is_refused(n: int) -> None:
    with pytest.raises(ValueError, match="no integer"):
        SeededChance(1).below("dice", n)
