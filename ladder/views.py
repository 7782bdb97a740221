"""What the pages and the JSON API show, as plain values read from the store.

One function per view; the web app renders the same value as HTML (Jinja2)
or encodes it as JSON, so a page and its API never disagree. ``owner`` says
whether the reader holds the entrant's token: only then are a version's
reasons (its check-bot verdict and its build's words) part of the value.
"""

from __future__ import annotations

import msgspec

from ladder.history import VersionMatchup, VersionRatings, rating_histories, version_matchups
from ladder.store import GameRow, LadderStore, VersionRow

__all__ = [
    "EntrantView",
    "FitStanding",
    "GameView",
    "Matchup",
    "Standing",
    "VersionView",
    "entrant_view",
    "fit_standings",
    "game_views",
    "standings",
]


class Standing(msgspec.Struct, frozen=True, kw_only=True):
    rank: int
    entrant: str
    version: int
    rating: float
    """mu - 3 sigma: what the version is surely worth at least; the order of the board."""
    mu: float
    low: float
    high: float
    """mu -/+ 2 sigma: where the version's skill lies with about 95% belief."""
    games: int
    last_submission: str
    fitted: FitStanding | None = None
    """The version's place in the server's latest scheduled Plackett-Luce fit (None before one covers it)."""


class VersionView(msgspec.Struct, frozen=True, kw_only=True):
    number: int
    state: str
    submitted: str
    games: int
    mu: float
    sigma: float
    reason: str | None = None
    """Only for the owner."""


class Matchup(msgspec.Struct, frozen=True, kw_only=True):
    opponent: str
    games: int
    ahead: int
    behind: int


class SeatView(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    entrant: str
    version: int
    rank: int
    score: int
    termination: str | None


class GameView(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    finished: str | None
    seconds: float | None
    ended_by: str | None
    seats: list[SeatView]
    viewable: bool
    """Whether its replay page is open: only once every game on its deal is over."""


class EntrantView(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    owner: bool
    versions: list[VersionView]
    matchups: list[Matchup]
    games: list[GameView]
    rating_history: list[float]
    """The active version's mu after each of its games."""
    ratings: list[VersionRatings] = []
    """Every version that played, oldest first, with its mu and sigma after each game and when it ended."""
    version_matchups: list[VersionMatchup] = []
    """Each version against each other entrant, newest version first."""


def standings(store: LadderStore, fit: list[FitStanding] | None = None) -> list[Standing]:
    """The active versions, best first; each with its figures from ``fit`` (the latest scheduled fit) if there."""
    fitted = {(row.entrant, row.version): row for row in fit or []}
    active = sorted(store.versions(states=("active",)), key=lambda v: -v.ordinal)
    latest: dict[str, str] = {}
    for version in store.versions():
        latest[version.entrant] = version.submitted
    return [
        Standing(
            rank=rank,
            entrant=v.entrant,
            version=v.number,
            rating=round(v.ordinal, 2),
            mu=round(v.mu, 2),
            low=round(v.mu - 2 * v.sigma, 2),
            high=round(v.mu + 2 * v.sigma, 2),
            games=v.games,
            last_submission=latest[v.entrant],
            fitted=fitted.get((v.entrant, v.number)),
        )
        for rank, v in enumerate(active, start=1)
    ]


def _version_view(version: VersionRow, owner: bool) -> VersionView:
    return VersionView(
        number=version.number,
        state=version.state,
        submitted=version.submitted,
        games=version.games,
        mu=round(version.mu, 2),
        sigma=round(version.sigma, 2),
        reason=version.reason if owner else None,
    )


def game_views(store: LadderStore, rows: list[GameRow]) -> list[GameView]:
    finished: dict[int, bool] = {}
    views = []
    for row in rows:
        if row.table not in finished:
            finished[row.table] = store.table_finished(row.table)
        seats = [
            SeatView(
                seat=s.seat, entrant=s.entrant, version=s.number, rank=s.rank, score=s.score, termination=s.termination
            )
            for s in row.seats
        ]
        views.append(
            GameView(
                id=row.id,
                finished=row.finished,
                seconds=row.seconds,
                ended_by=row.ended_by,
                seats=seats,
                viewable=finished[row.table] and row.replay is not None,
            )
        )
    return views


def entrant_view(store: LadderStore, name: str, *, owner: bool) -> EntrantView | None:
    """An entrant's page, or None when there is no such entrant."""
    if store.entrant(name) is None:
        return None
    versions = store.versions(entrant=name)
    active = [v for v in versions if v.state == "active"]
    return EntrantView(
        name=name,
        owner=owner,
        versions=[_version_view(v, owner) for v in reversed(versions)],
        matchups=[Matchup(opponent=o, games=n, ahead=a, behind=b) for o, n, a, b in store.matchups(name)],
        games=game_views(store, store.games(entrant=name, limit=30)),
        rating_history=[round(mu, 2) for mu in store.rating_history(active[0].id)] if active else [],
        ratings=rating_histories(store, name),
        version_matchups=version_matchups(store, name),
    )


class FitStanding(msgspec.Struct, frozen=True, kw_only=True):
    place: int
    entrant: str
    version: int
    state: str
    rating: float
    """Elo-like (173.7 x the Plackett-Luce strength), from the maximum-likelihood fit over every game played."""
    lower: float
    upper: float
    """The 95% interval."""
    games: int


def fit_standings(rows: list[GameRow], versions: list[VersionRow]) -> list[FitStanding]:
    """Every version that played, rated together by ``tournaments.hosting.ratings.fit_plackett_luce`` (with seat
    offsets and a weak prior, as ``famiglia standings`` does): slower than the live ratings, and steadier.

    Versions of one entrant are separate players: a new version's games never count for the old one.
    ``rows`` are the finished games and ``versions`` every version, read from the store beforehand:
    the fit is CPU-bound on a large ladder and runs in a thread, which must not share the store's connection.
    """
    from tournaments.hosting.ratings import RatedGame, fit_plackett_luce, summarise

    index: dict[int, int] = {}
    games = []
    for row in rows:
        seating = [index.setdefault(seat.version, len(index)) for seat in row.seats]
        games.append(RatedGame(seating=seating, ranks=[seat.rank for seat in row.seats]))
    if not games:
        return []
    by_id = {v.id: v for v in versions}
    by_index = {i: by_id[v] for v, i in index.items()}
    fit = fit_plackett_luce(games, len(index))
    return [
        FitStanding(
            place=s.place,
            entrant=by_index[s.entrant].entrant,
            version=by_index[s.entrant].number,
            state=by_index[s.entrant].state,
            rating=round(s.rating, 1),
            lower=round(s.lower, 1),
            upper=round(s.upper, 1),
            games=s.games,
        )
        for s in summarise(games, fit)
    ]
