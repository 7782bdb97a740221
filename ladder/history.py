"""An entrant's past, read from the ladder's store: every version's rating after each of its games, and
how each version fared against each other entrant.

Like ``ladder.sessions``, a module that reads the store's tables itself: the
entrant page's chart and matchup table are the only readers, and the store
stays the place of what is written.
"""

from __future__ import annotations

import msgspec

from ladder.store import LadderStore

__all__ = [
    "RatingStep",
    "VersionMatchup",
    "VersionRatings",
    "rating_histories",
    "sample_indices",
    "version_matchups",
]


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
    sampled_from: int | None = None
    """How many games the version played when ``steps`` is an even sample of them (the entrant page's chart
    draws no more, ``sample_indices``); None when ``steps`` holds every game."""

    @property
    def games(self) -> int:
        return len(self.steps) if self.sampled_from is None else self.sampled_from


class VersionMatchup(msgspec.Struct, frozen=True, kw_only=True):
    """One of the entrant's versions against one other entrant (any of its versions): the games they
    shared, and how often the version finished ahead of it and behind it."""

    version: int
    opponent: str
    games: int
    ahead: int
    behind: int


def sample_indices(count: int, most: int) -> list[int]:
    """Which of ``count`` steps a chart of at most ``most`` points draws: every one, or an even sample of
    them that keeps the first and the last."""
    if count <= most:
        return list(range(count))
    last = count - 1
    return [round(i * last / (most - 1)) for i in range(most)]


def rating_histories(store: LadderStore, entrant: str, most: int | None = None) -> list[VersionRatings]:
    """Each version of ``entrant`` that played, oldest first, with its rating after each game; with ``most``,
    after at most that many of its games, chosen by ``sample_indices``.

    A version may have played tens of thousands of games: the sample reads only their numbers (from the
    seats' index), then the steps it keeps, instead of every step.
    """
    if most is None:
        return _every_step(store, entrant)
    histories = []
    versions = store.db.execute(
        "SELECT v.id, v.number, v.state, v.games FROM version v JOIN entrant e ON e.id = v.entrant "
        "WHERE e.name = ? ORDER BY v.number",
        (entrant,),
    ).fetchall()
    for version, number, state, played in versions:
        if not played:
            continue
        # Every game number from the seats' (version, game) index alone (faster than numbering them in SQL),
        # then only the kept steps' rows.
        games = [
            row[0] for row in store.db.execute("SELECT game FROM seat WHERE version = ? ORDER BY game", (version,))
        ]
        kept = [games[i] for i in sample_indices(len(games), most)]
        rows = store.db.execute(
            "SELECT s.game, g.finished, s.mu_after, s.sigma_after FROM seat s JOIN game g ON g.id = s.game "
            f"WHERE s.version = ? AND s.game IN ({', '.join('?' * len(kept))}) ORDER BY s.game",
            (version, *kept),
        )
        steps = [_step(game, finished, mu, sigma) for game, finished, mu, sigma in rows]
        histories.append(VersionRatings(number=number, state=state, steps=steps, sampled_from=len(games)))
    return histories


def _step(game: int, finished: str | None, mu: float, sigma: float | None) -> RatingStep:
    return RatingStep(game=game, finished=finished or "", mu=float(mu), sigma=None if sigma is None else float(sigma))


def _every_step(store: LadderStore, entrant: str) -> list[VersionRatings]:
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
        versions[number].steps.append(_step(game, finished, mu, sigma))
    return list(versions.values())


def version_matchups(store: LadderStore, entrant: str) -> list[VersionMatchup]:
    """``entrant``'s versions against each other entrant: newest version first, opponents by name (the pairs
    the store counts as seats are written, ``ladder.tallies``)."""
    rows = store.db.execute(
        "SELECT mv.number, oe.name, m.games, m.ahead, m.behind FROM version_matchup m "
        "JOIN version mv ON mv.id = m.version JOIN entrant e ON e.id = mv.entrant "
        "JOIN entrant oe ON oe.id = m.opponent WHERE e.name = ? ORDER BY mv.number DESC, oe.name",
        (entrant,),
    ).fetchall()
    return [VersionMatchup(version=v, opponent=o, games=int(n), ahead=int(a), behind=int(b)) for v, o, n, a, b in rows]
