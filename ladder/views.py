"""What the pages and the JSON API show, as plain values read from the store.

One function per view; the web app renders the same value as HTML (Jinja2)
or encodes it as JSON, so a page and its API never disagree. ``owner`` says
whether the reader holds the entrant's token: only then are a version's
reasons (its check-bot verdict and its build's words) part of the value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from ladder.health import Health, failing_games, health_of
from ladder.history import VersionMatchup, VersionRatings, rating_histories, version_matchups
from ladder.store import GameRow, LadderStore, RatedSeats, VersionRow

__all__ = [
    "EntrantState",
    "EntrantView",
    "FitStanding",
    "GameView",
    "Matchup",
    "Standing",
    "VersionView",
    "entrant_state",
    "entrant_view",
    "fit_standings",
    "game_views",
    "standings",
]


EntrantState = Literal["active", "suspended", "checking", "rejected", "retired", "no version yet"]
"""Where an entrant stands: a version playing, or why none is."""

_UNRANKED_ORDER: dict[str, int] = {"suspended": 0, "checking": 1, "rejected": 2, "retired": 3, "no version yet": 4}


class Standing(msgspec.Struct, frozen=True, kw_only=True):
    """One entrant on the leaderboard: every entrant has a row, ranked while one of its versions plays."""

    rank: int | None
    """1 for the best playing version; None for an entrant with no version playing (listed after, by state)."""
    entrant: str
    state: EntrantState
    version: int | None
    """The version shown: the active one, else the newest (None when the entrant sent none)."""
    rating: float | None
    """mu - 3 sigma of the active version: what it is surely worth at least, and the board's order. It is the
    low end of ``low``..``high``; None while nothing plays."""
    mu: float | None
    low: float | None
    high: float | None
    """mu -/+ 3 sigma: the interval the rating is the bottom of (about 99.7% belief)."""
    games: int
    health: Health
    """The shown version's games ended by its own fault, by kind."""
    last_submission: str | None
    fitted: FitStanding | None = None
    """The version's place in the server's latest scheduled Plackett-Luce fit (None before one covers it)."""
    note: str = ""
    """What else the entrant's versions are doing: a newer one checking, rejected or suspended."""


class VersionView(msgspec.Struct, frozen=True, kw_only=True):
    number: int
    state: str
    submitted: str
    games: int
    mu: float
    sigma: float
    health: Health = Health()
    reason: str | None = None
    """Only for the owner."""
    suspension: str | None = None
    """Why the version was suspended, for everyone to read (its games are public); None if never."""
    failing_games: list[int] = []
    """Its most recent games ended by its own fault (newest first), for a suspended version: what to look at."""


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
    state: EntrantState
    versions: list[VersionView]
    matchups: list[Matchup]
    games: list[GameView]
    rating_history: list[float]
    """The active version's mu after each of its games."""
    ratings: list[VersionRatings] = []
    """Every version that played, oldest first, with its mu and sigma after each game and when it ended."""
    version_matchups: list[VersionMatchup] = []
    """Each version against each other entrant, newest version first."""


def entrant_state(versions: list[VersionRow]) -> EntrantState:
    """An entrant's state from its versions (oldest first): active while one plays; else suspended, then
    checking, before what its newest version came to."""
    states = {v.state for v in versions}
    if not versions:
        return "no version yet"
    for state in ("active", "suspended"):
        if state in states:
            return state
    if states & {"queued", "checking"}:
        return "checking"
    newest = versions[-1].state
    return "rejected" if newest == "rejected" else "retired"


def _note(versions: list[VersionRow], shown: VersionRow | None) -> str:
    """The newest version's news when it is not the one shown: checking, rejected or suspended."""
    if not versions or shown is None or versions[-1].id == shown.id:
        return ""
    newest = versions[-1]
    said = {"queued": "being checked", "checking": "being checked"}.get(newest.state, newest.state)
    return f"version {newest.number} {said}"


def standings(store: LadderStore, fit: list[FitStanding] | None = None) -> list[Standing]:
    """Every entrant, best first: those with a version playing ranked by mu - 3 sigma, then the others by
    state and name; each with its figures from ``fit`` (the latest scheduled fit) where it has some."""
    fitted = {(row.entrant, row.version): row for row in fit or []}
    own: dict[str, list[VersionRow]] = {e.name: [] for e in store.entrants()}
    for version in store.versions():
        own.setdefault(version.entrant, []).append(version)
    health = health_of(store.db)
    ranked: list[tuple[float, Standing]] = []
    unranked: list[Standing] = []
    for name, versions in own.items():
        state = entrant_state(versions)
        shown = next((v for v in versions if v.state == "active"), None)
        if shown is None:
            shown = next((v for v in reversed(versions) if v.state == "suspended"), versions[-1] if versions else None)
        live = shown is not None and shown.state == "active"
        row = Standing(
            rank=None,
            entrant=name,
            state=state,
            version=shown.number if shown else None,
            rating=round(shown.ordinal, 2) if live and shown else None,
            mu=round(shown.mu, 2) if live and shown else None,
            low=round(shown.mu - 3 * shown.sigma, 2) if live and shown else None,
            high=round(shown.mu + 3 * shown.sigma, 2) if live and shown else None,
            games=shown.games if shown else 0,
            health=health.get(shown.id, Health()) if shown else Health(),
            last_submission=versions[-1].submitted if versions else None,
            fitted=fitted.get((name, shown.number)) if shown else None,
            note=_note(versions, shown),
        )
        if live and shown:
            ranked.append((shown.ordinal, row))
        else:
            unranked.append(row)
    ranked.sort(key=lambda pair: -pair[0])
    unranked.sort(key=lambda row: (_UNRANKED_ORDER[row.state], row.entrant))
    return [msgspec.structs.replace(row, rank=rank) for rank, (_, row) in enumerate(ranked, start=1)] + unranked


def _version_view(store: LadderStore, version: VersionRow, owner: bool, health: dict[int, Health]) -> VersionView:
    return VersionView(
        number=version.number,
        state=version.state,
        submitted=version.submitted,
        games=version.games,
        mu=round(version.mu, 2),
        sigma=round(version.sigma, 2),
        health=health.get(version.id, Health()),
        reason=version.reason if owner else None,
        suspension=version.suspension or None,
        failing_games=failing_games(store.db, version.id, 20) if version.state == "suspended" else [],
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


def entrant_view(store: LadderStore, name: str, *, owner: bool, chart_points: int | None = None) -> EntrantView | None:
    """An entrant's page, or None when there is no such entrant. With ``chart_points``, each version's
    ``ratings`` are the sample of at most that many steps its chart draws (the HTML page's; the API's
    view holds every step)."""
    if store.entrant(name) is None:
        return None
    versions = store.versions(entrant=name)
    active = [v for v in versions if v.state == "active"]
    health = health_of(store.db, [v.id for v in versions])
    ratings = rating_histories(store, name, chart_points)
    return EntrantView(
        name=name,
        owner=owner,
        state=entrant_state(versions),
        versions=[_version_view(store, v, owner, health) for v in reversed(versions)],
        matchups=[Matchup(opponent=o, games=n, ahead=a, behind=b) for o, n, a, b in store.matchups(name)],
        games=game_views(store, store.games(entrant=name, limit=30)),
        rating_history=_active_history(store, active[0], ratings) if active else [],
        ratings=ratings,
        version_matchups=version_matchups(store, name),
    )


def _active_history(store: LadderStore, active: VersionRow, ratings: list[VersionRatings]) -> list[float]:
    """The active version's mu after each game: from ``ratings`` when they are the chart's sample (the same
    steps, not 50,000 more read for a page that draws 240), else every step."""
    sampled = next((r for r in ratings if r.number == active.number and r.sampled_from is not None), None)
    if sampled is not None:
        return [round(step.mu, 2) for step in sampled.steps]
    return [round(mu, 2) for mu in store.rating_history(active.id)]


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


def fit_standings(rows: Sequence[RatedSeats], versions: list[VersionRow]) -> list[FitStanding]:
    """Every version that played, rated together by ``tournaments.hosting.ratings.fit_plackett_luce`` (with seat
    offsets and a weak prior, as ``famiglia standings`` does): slower than the live ratings, and steadier.

    Versions of one entrant are separate players: a new version's games never count for the old one.
    ``rows`` are the finished games (``LadderStore.rated_games``: each game's versions and ranks, seat by seat,
    newest game first) and ``versions`` every version, read from the store beforehand: the fit is CPU-bound
    on a large ladder and runs in a thread, which must not share the store's connection.
    """
    from tournaments.hosting.ratings import RatedGame, fit_plackett_luce, summarise

    index: dict[int, int] = {}
    games = []
    for seated, ranks in rows:
        seating = [index.setdefault(version, len(index)) for version in seated]
        games.append(RatedGame(seating=seating, ranks=list(ranks)))
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
