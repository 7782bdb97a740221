"""An entrant's past, read from the ladder's store: every version's rating after each of its games, and
how each version fared against each other entrant.

Like ``ladder.sessions``, a module that reads the store's tables itself: the
entrant page's chart and matchup table are the only readers, and the store
stays the place of what is written.
"""

from __future__ import annotations

import msgspec

from ladder.store import LadderStore

__all__ = ["RatingStep", "VersionMatchup", "VersionRatings", "rating_histories", "version_matchups"]


class RatingStep(msgspec.Struct, frozen=True, kw_only=True):
    """A version's rating right after one of its games."""

    game: int
    finished: str
    """When the game was recorded (ISO 8601, UTC)."""
    mu: float
    sigma: float | None
    """None for a game recorded before the ladder kept sigma per game."""


class VersionRatings(msgspec.Struct, frozen=True, kw_only=True):
    number: int
    state: str
    steps: list[RatingStep]


class VersionMatchup(msgspec.Struct, frozen=True, kw_only=True):
    """One of the entrant's versions against one other entrant (any of its versions): the games they
    shared, and how often the version finished ahead of it and behind it."""

    version: int
    opponent: str
    games: int
    ahead: int
    behind: int


def rating_histories(store: LadderStore, entrant: str) -> list[VersionRatings]:
    """Each version of ``entrant`` that played, oldest first, with its rating after each game."""
    rows = store.db.execute(
        "SELECT v.number, v.state, s.game, g.finished, s.mu_after, s.sigma_after "
        "FROM seat s JOIN version v ON v.id = s.version JOIN entrant e ON e.id = v.entrant "
        "JOIN game g ON g.id = s.game WHERE e.name = ? AND g.state = 'done' ORDER BY v.number, s.game",
        (entrant,),
    )
    versions: dict[int, VersionRatings] = {}
    for number, state, game, finished, mu, sigma in rows:
        if number not in versions:
            versions[number] = VersionRatings(number=number, state=state, steps=[])
        versions[number].steps.append(
            RatingStep(game=game, finished=finished or "", mu=float(mu), sigma=None if sigma is None else float(sigma))
        )
    return list(versions.values())


def version_matchups(store: LadderStore, entrant: str) -> list[VersionMatchup]:
    """``entrant``'s versions against each other entrant: newest version first, opponents by name."""
    rows = store.db.execute(
        "SELECT mv.number, oe.name, COUNT(*), SUM(me.rank < them.rank), SUM(me.rank > them.rank) "
        "FROM seat me JOIN version mv ON mv.id = me.version JOIN entrant e ON e.id = mv.entrant "
        "JOIN seat them ON them.game = me.game AND them.seat != me.seat "
        "JOIN version ov ON ov.id = them.version JOIN entrant oe ON oe.id = ov.entrant "
        "WHERE e.name = ? AND oe.name != e.name GROUP BY mv.number, oe.name ORDER BY mv.number DESC, oe.name",
        (entrant,),
    ).fetchall()
    return [
        VersionMatchup(version=v, opponent=o, games=int(n), ahead=int(a or 0), behind=int(b or 0))
        for v, o, n, a, b in rows
    ]
