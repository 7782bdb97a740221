"""Random legal Vendetta placements, for the engine's random player and for bots.

A placement is a large decision (P1-P4), so it is described by constraints
rather than listed; this module draws from it in three uniform steps without
listing it either.
"""

from __future__ import annotations

import random
from typing import Any

from referee.games.vendetta.components import N_DISTRICTS
from referee.games.vendetta.messages import Place, PlaceConstraints, Placement

__all__ = ["random_placement", "sample_place"]


def random_placement(constraints: PlaceConstraints, rng: random.Random) -> Place:
    """A random legal placement under ``constraints``, drawn in three uniform steps.

    1. The number of districts k is uniform among the feasible values of
       0..max_districts (k is feasible when some k distinct districts have minimums
       that sum to at most the hand).
    2. The districts are a uniformly random feasible set of k districts.
    3. The counts are uniform among all count vectors with each count at least its
       district's minimum and the total at most the hand.

    Every step draws ``rng.random()`` only (floor of ``random() * m``), and the
    list is in a random order. ``VendettaState.random_action`` uses this same
    sampler, so a bot gets the same distribution as the engine's random player.
    """
    return sample_place(constraints.max_districts, constraints.hand, constraints.minimum, rng)


def sample_place(max_districts: int, hand: int, minimum: list[int], rng: random.Random) -> Place:
    if hand <= 0 or max_districts <= 0:
        return Place([])
    rand = rng.random
    k_choices = 3 if max_districts >= 2 else 2
    pair_ok = k_choices == 3 and hand >= 2  # every minimum is at least 1
    while True:
        # Rejection over k: redrawing an infeasible k leaves k uniform over the feasible ones.
        k = int(rand() * k_choices)
        if k == 0:
            return Place([])
        if k == 1:
            # One rejection try inline (it nearly always fits), the rest in the helper.
            d = int(rand() * N_DISTRICTS)
            if minimum[d] > hand:
                d = _pick_single(hand, minimum, rand)
            if d < 0:  # no single district fits, so no pair does: only k = 0 is left
                return Place([])
            low = minimum[d]
            return Place([Placement(d + 1, low + int(rand() * (hand - low + 1)))])
        if not pair_ok:
            continue
        pair = _pick_pair(hand, minimum, rand)
        if pair is None:
            pair_ok = False
            continue
        a, b = pair
        low_a = minimum[a]
        low_b = minimum[b]
        spare = hand - low_a - low_b
        # Extras (x, y) with x + y <= spare, uniformly: two distinct cut points
        # lo < hi in 0..spare+1 give x = lo, y = hi - lo - 1 (stars and bars).
        lo = int(rand() * (spare + 2))
        hi = int(rand() * (spare + 1))
        if hi >= lo:
            hi += 1
        else:
            lo, hi = hi, lo
        return Place([Placement(a + 1, low_a + lo), Placement(b + 1, low_b + hi - lo - 1)])


def _pick_single(hand: int, minimum: list[int], rand: Any) -> int:
    """A uniformly random district (0-based) whose minimum fits the hand, or -1."""
    # Rejection first (almost always succeeds at once), then an exact fallback; both
    # phases are uniform over the same set, so their mixture is too.
    for _ in range(16):
        d = int(rand() * N_DISTRICTS)
        if minimum[d] <= hand:
            return d
    fits = [d for d in range(N_DISTRICTS) if minimum[d] <= hand]
    if not fits:
        return -1
    return fits[int(rand() * len(fits))]


def _pick_pair(hand: int, minimum: list[int], rand: Any) -> tuple[int, int] | None:
    """A uniformly random ordered pair of distinct districts that fits the hand, or None."""
    for _ in range(16):
        a = int(rand() * N_DISTRICTS)
        b = int(rand() * (N_DISTRICTS - 1))
        if b >= a:
            b += 1
        if minimum[a] + minimum[b] <= hand:
            return a, b
    # Exact fallback over the districts that could be half of a pair at all.
    low = [d for d in range(N_DISTRICTS) if minimum[d] < hand]
    fits = [(a, b) for a in low for b in low if a != b and minimum[a] + minimum[b] <= hand]
    if not fits:
        return None
    return fits[int(rand() * len(fits))]
