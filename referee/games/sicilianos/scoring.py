"""Final scores (E3) and the Godfather (E1); the ranking is the state's, by rank_seats."""

from __future__ import annotations

from referee.games.sicilianos.components import (
    KINDS,
    MAJORITY_BONUS,
    N_COLOURS,
    SET_BONUS,
)


def owns_set(businesses: list[int]) -> bool:
    """True if three of these businesses have three different kinds and three different colours."""
    by_kind: list[set[int]] = [set() for _ in KINDS]
    for business in businesses:
        by_kind[business % 3].add(business // 3)
    return any(
        antique != restaurant and antique != laundry and restaurant != laundry
        for antique in by_kind[0]
        for restaurant in by_kind[1]
        for laundry in by_kind[2]
    )


def godfather_of(businesses: list[list[int]]) -> int | None:
    """The first seat owning all three businesses of one colour (E1), or None."""
    for seat, owned in enumerate(businesses):
        per_colour = [0] * N_COLOURS
        for business in owned:
            per_colour[business // 3] += 1
        if 3 in per_colour:
            return seat
    return None


def final_scores(clean: list[int], dirty: list[int], businesses: list[list[int]]) -> list[int]:
    """E3 per seat: clean minus dirty, +50,000 for a set ([A] once), +100,000 per sole majority."""
    scores = [c - d for c, d in zip(clean, dirty, strict=True)]
    for seat, owned in enumerate(businesses):
        if owns_set(owned):
            scores[seat] += SET_BONUS
    for kind in range(len(KINDS)):
        counts = [sum(1 for b in owned if b % 3 == kind) for owned in businesses]
        most = max(counts)
        if most > 0 and counts.count(most) == 1:
            scores[counts.index(most)] += MAJORITY_BONUS
    return scores
