"""Tests for tournaments.hosting.sprt: the statistic, the bounds, and simulated error rates."""

from __future__ import annotations

import math
import random

import pytest

from tournaments.hosting.sprt import Sprt, elo_to_score, pair_score, score_to_elo


def test_elo_score_round_trip() -> None:
    assert elo_to_score(0.0) == 0.5
    assert elo_to_score(400.0) == pytest.approx(10 / 11)
    for elo in (-300.0, -20.0, 0.0, 35.0, 500.0):
        assert score_to_elo(elo_to_score(elo)) == pytest.approx(elo)


def test_pair_score() -> None:
    assert pair_score(1, 3) == 1.0
    assert pair_score(2, 2) == 0.5
    assert pair_score(4, 1) == 0.0


def test_llr_matches_formula() -> None:
    test = Sprt(elo0=0, elo1=30)
    scores = [1.0, 0.5, 0.0, 1.0, 1.0, 0.5, 1.0]
    for s in scores:
        test.update(s)
    s0, s1 = elo_to_score(0), elo_to_score(30)
    padded = [*scores, 1.0, 0.5, 0.0]
    mean = sum(padded) / len(padded)
    var = sum((x - mean) ** 2 for x in padded) / len(padded)
    expected = sum(((x - s0) ** 2 - (x - s1) ** 2) / (2 * var) for x in scores)
    assert test.llr == pytest.approx(expected)
    assert test.lower_bound == pytest.approx(math.log(0.05 / 0.95))
    assert test.upper_bound == pytest.approx(math.log(0.95 / 0.05))
    status = test.status()
    assert (status.wins, status.draws, status.losses, status.pairs) == (4, 2, 1, 7)
    assert status.elo_lower < status.elo < status.elo_upper


def test_short_streak_does_not_decide() -> None:
    test = Sprt(elo0=0, elo1=20)
    for _ in range(5):
        assert test.update(1.0) == "continue"


def test_decision_sticks_and_budget() -> None:
    test = Sprt(elo0=0, elo1=100, max_pairs=1000)
    while test.decision() == "continue":
        test.update(1.0)
    assert test.decision() == "A stronger" and test.done
    for _ in range(50):
        test.update(0.0)
    assert test.decision() == "A stronger"
    capped = Sprt(elo0=0, elo1=5, max_pairs=10)
    for s in [1.0, 0.0] * 5:
        capped.update(s)
    assert capped.decision() == "continue" and capped.exhausted and capped.done


def test_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="elo1"):
        Sprt(elo0=10, elo1=0)
    with pytest.raises(ValueError, match="alpha"):
        Sprt(alpha=0.0)
    with pytest.raises(ValueError, match="pair score"):
        Sprt().update(1.5)


def _run(rng: random.Random, elo: float, draw: float, test: Sprt) -> str:
    """Play simulated pairs whose expected score matches `elo` until the test stops."""
    score = elo_to_score(elo)
    win = score - draw / 2
    while not test.done:
        x = rng.random()
        test.update(1.0 if x < win else 0.5 if x < win + draw else 0.0)
    return test.decision()


def test_simulated_error_rates() -> None:
    # alpha = beta = 0.05 with elo1 = 50 keeps each run to a few hundred pairs.
    rng = random.Random(20240601)
    runs = 300
    false_pos = sum(_run(rng, 0.0, 0.25, Sprt(0, 50, max_pairs=20_000)) == "A stronger" for _ in range(runs))
    misses = sum(_run(rng, 50.0, 0.25, Sprt(0, 50, max_pairs=20_000)) != "A stronger" for _ in range(runs))
    print(f"SPRT simulated: false positives {false_pos / runs:.3f}, misses {misses / runs:.3f}")
    # Nominal 0.05 each; Wald's bounds are conservative, binomial noise over 300 runs.
    assert false_pos / runs <= 0.09
    assert misses / runs <= 0.09
    strong = sum(_run(rng, 120.0, 0.25, Sprt(0, 50)) == "A stronger" for _ in range(50))
    weak = sum(_run(rng, -60.0, 0.25, Sprt(0, 50)) == "not stronger" for _ in range(50))
    assert strong == 50 and weak == 50
