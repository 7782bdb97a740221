"""Fuzzing the referee's real read path: whatever the bytes, the seat's named outcome, never a crash.

A quick version of bench/fuzz.py (which runs 100,000+ cases): a few hundred
mutated real answers and hypothesis-made lines, each played as seat 1's first
answer in a short match over a real pipe (about 5 s in all).
"""

from __future__ import annotations

import random

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.referee.mutations import ALLOWED, CORPUS, MUTATIONS, check_corpus, mutate, outcome

pytestmark = pytest.mark.slow


def test_the_corpus_is_real_json() -> None:
    check_corpus()


async def test_mutated_real_answers_end_in_a_named_outcome() -> None:
    rng = random.Random(2026)
    seen: dict[str, int] = {}
    for _ in range(250):
        name, line = mutate(rng)
        result = await outcome(line)
        assert result in ALLOWED, (name, line[:200], result)
        seen[result] = seen.get(result, 0) + 1
    assert seen.get("protocol", 0) > 100  # the mutations really do break lines


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base=st.sampled_from(CORPUS),
    steps=st.lists(st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 2**32)), min_size=1, max_size=3),
)
def test_hypothesis_mutations_of_real_answers_end_in_a_named_outcome(base: bytes, steps: list) -> None:  # type: ignore[type-arg]
    line = base
    for mutation, seed in steps:
        line = mutation(random.Random(seed), line)
    line = line.replace(b"\n", b" ")
    assert trio.run(outcome, line) in ALLOWED


@settings(max_examples=80, deadline=None)
@given(st.binary(max_size=400).filter(lambda b: b"\n" not in b))
def test_arbitrary_bytes_as_an_answer_end_in_a_named_outcome(line: bytes) -> None:
    assert trio.run(outcome, line) in ALLOWED
