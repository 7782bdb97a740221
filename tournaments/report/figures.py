"""Figures for the report's pictures that the standings do not hold: how the live
ratings moved as games came in, and each entrant's thinking time per game."""

from __future__ import annotations

import msgspec

from tournaments.hosting.ratings import LiveRatings, RatedGame
from tournaments.store import Store

__all__ = ["MAX_HISTORY_POINTS", "RatingHistory", "ThinkingTimes", "rating_history", "thinking_times"]

MAX_HISTORY_POINTS = 400
"""Points per line in the rating history; a longer tournament is sampled evenly."""


class RatingHistory(msgspec.Struct, frozen=True, kw_only=True):
    """``values[e][i]``: entrant e's live rating (OpenSkill mu - 3 sigma) after ``games[i]`` games."""

    names: list[str]
    games: list[int]
    values: list[list[float]]


class ThinkingTimes(msgspec.Struct, frozen=True, kw_only=True):
    """``per_game[e]``: entrant e's mean thinking time per decision (ms), one value per game it played."""

    names: list[str]
    per_game: list[list[float]]


def rating_history(store: Store) -> RatingHistory:
    """Replays the finished games, in the order they finished, through the live ratings."""
    names = store.entrant_names()
    finished = sorted(store.finished(), key=lambda g: g.game)
    order = {g: i for i, (g,) in enumerate(store.db.execute("SELECT game FROM result ORDER BY finished, game"))}
    finished.sort(key=lambda g: order.get(g.game, g.game))
    live = LiveRatings(len(names))
    every = max(1, -(-len(finished) // MAX_HISTORY_POINTS))
    games = [0]
    values = [[live.ordinal(e)] for e in range(len(names))]
    for count, game in enumerate(finished, start=1):
        seating = [s.entrant for s in game.seats]
        if len(set(seating)) == len(seating):  # live ratings need distinct entrants at a table
            live.update(RatedGame(seating=seating, ranks=[s.rank for s in game.seats]))
        if count % every == 0 or count == len(finished):
            games.append(count)
            for e in range(len(names)):
                values[e].append(round(live.ordinal(e), 3))
    return RatingHistory(names=names, games=games, values=values)


def thinking_times(store: Store) -> ThinkingTimes:
    names = store.entrant_names()
    per_game: list[list[float]] = [[] for _ in names]
    rows = store.db.execute("SELECT entrant, decisions, total_ms FROM seat WHERE decisions > 0 ORDER BY game, seat")
    for entrant, decisions, total_ms in rows:
        if 0 <= entrant < len(names):
            per_game[entrant].append(total_ms / decisions)
    return ThinkingTimes(names=names, per_game=per_game)
