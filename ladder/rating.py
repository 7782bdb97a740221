"""Live ratings of versions: one OpenSkill Plackett-Luce update per finished game.

A ladder's versions come and go, so their ratings live in the store as
(mu, sigma) pairs rather than in a fixed list; each update borrows
``tournaments.hosting.ratings.LiveRatings`` for the table that was played.
"""

from __future__ import annotations

from collections.abc import Sequence

from tournaments.hosting.ratings import LiveRatings, RatedGame

__all__ = ["rate_table"]


def rate_table(before: Sequence[tuple[float, float]], ranks: Sequence[int]) -> list[tuple[float, float]]:
    """The (mu, sigma) of each seat after a game, given each seat's before it and its 1-based rank."""
    live = LiveRatings(len(before))
    live.ratings = [live.model.rating(mu=mu, sigma=sigma) for mu, sigma in before]
    live.update(RatedGame(seating=list(range(len(before))), ranks=list(ranks)))
    return [live.mu_sigma(seat) for seat in range(len(before))]
