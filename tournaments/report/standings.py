"""Reports read from the store: standings, crosstable, the game list, a head-to-head verdict."""

from __future__ import annotations

from pathlib import Path

import msgspec

from referee.replay import replay_mismatch
from tournaments.hosting.ratings import (
    LosMatrix,
    RatedGame,
    SeatOffsets,
    Standing,
    fit_plackett_luce,
    likelihood_of_superiority,
    summarise,
)
from tournaments.hosting.schedule import head_to_head_deals, williams_design
from tournaments.hosting.sprt import Sprt, SprtStatus, pair_score
from tournaments.store import FinishedGame, Store

__all__ = [
    "Crosstable",
    "GameRow",
    "Players",
    "Standings",
    "crosstable",
    "game_rows",
    "head_to_head_status",
    "head_to_head_test",
    "head_to_head_verdict",
    "players",
    "rated_games",
    "standings",
]


class Standings(msgspec.Struct, frozen=True, kw_only=True):
    """Final standings with everything a host publishes."""

    tournament: str
    game: str
    games: int
    scheduled: int
    standings: list[Standing]
    seat_offsets: list[SeatOffsets]
    terminations: dict[str, dict[str, int]]
    superiority: LosMatrix | None
    head_to_head: SprtStatus | None = None
    scheduled_games: dict[str, int] = {}
    """Games each entrant has in the schedule, played or not (a grown tournament adds some)."""
    head_to_head_entrants: list[str] = []
    """A head-to-head's entrants under test: [a, b] (empty for other formats)."""


def head_to_head_verdict(report: Standings) -> str:
    """The head-to-head's decision in words, naming the entrants: "greedy stronger than random", ..."""
    h2h = report.head_to_head
    if h2h is None:
        return ""
    a, b = report.head_to_head_entrants if len(report.head_to_head_entrants) == 2 else ("A", "B")
    if h2h.decision == "A stronger":
        return f"{a} stronger than {b}"
    if h2h.decision == "not stronger":
        return f"{a} not stronger than {b}"
    return "no verdict: the game budget ran out" if h2h.exhausted else "no verdict yet"


class Crosstable(msgspec.Struct, frozen=True, kw_only=True):
    """``ahead[i][j]``: games where entrant i finished ahead of j; ``met[i][j]``: games together."""

    names: list[str]
    ahead: list[list[int]]
    met: list[list[int]]


class GameRow(msgspec.Struct, frozen=True, kw_only=True):
    """One finished game for the game list."""

    game: int
    seed: int
    seconds: float
    ended_by: str
    seats: list[str]
    ranks: list[int]
    scores: list[int]
    terminations: list[str]
    replay: str | None
    """The game's replay, only when its header says it is this game of this tournament."""
    replay_note: str = ""
    """Why a recorded replay is not linked (it is another game's, or unreadable)."""
    error: str = ""
    """For a game the harness failed to referee (ended_by "harness error"): what went wrong."""
    traceback: str = ""


class Players(msgspec.Struct, frozen=True, kw_only=True):
    """Who is rated: each entrant, or each version of an entrant whose bot changed (results kept apart)."""

    names: list[str]
    """A player's name: the entrant's, with " v2" and so on where the entrant has several versions."""
    entrants: list[int]
    """The entrant each player is a version of."""
    index: dict[tuple[int, int], int]
    """(entrant, version) -> player."""

    def of(self, entrant: int, version: int) -> int:
        return self.index[(entrant, version)]


def players(names: list[str], finished: list[FinishedGame]) -> Players:
    """The players of ``finished`` games: one per entrant, one per version where an entrant played as several."""
    played: dict[int, set[int]] = {entrant: set() for entrant in range(len(names))}
    for game in finished:
        for seat in game.seats:
            played[seat.entrant].add(seat.version)
    labels: list[str] = []
    entrants: list[int] = []
    index: dict[tuple[int, int], int] = {}
    for entrant, versions in played.items():
        if len(versions) <= 1:
            for version in versions or {1}:
                index[(entrant, version)] = len(labels)
            labels.append(names[entrant])
            entrants.append(entrant)
            continue
        for version in sorted(versions):
            index[(entrant, version)] = len(labels)
            labels.append(f"{names[entrant]} v{version}")
            entrants.append(entrant)
    return Players(names=labels, entrants=entrants, index=index)


def rated_games(finished: list[FinishedGame], who: Players | None = None) -> list[RatedGame]:
    """The games as the fit takes them; seats as ``who``'s players (default: as entrants, versions pooled)."""
    return [
        RatedGame(
            seating=[s.entrant if who is None else who.of(s.entrant, s.version) for s in game.seats],
            ranks=[s.rank for s in game.seats],
        )
        for game in finished
    ]


def head_to_head_test(store: Store) -> tuple[Sprt, int] | None:
    """The sequential test fed with the stored pairs, and the next pair's number.

    None unless the tournament is a head-to-head. Pair p is games 2p (A seated)
    and 2p+1 (B in A's seat, same deal). Pairs are read in schedule order up to
    the first one not finished, exactly as they are fed while playing.
    """
    config = store.config()
    if config.format.kind != "head-to-head":
        return None
    assert config.format.a is not None and config.format.b is not None
    names = store.entrant_names()
    a, b = names.index(config.format.a), names.index(config.format.b)
    by_index = {game.game: game for game in store.finished()}
    fmt = config.format
    # The budget is the pairs the schedule holds: max_games rounded down to whole deals (tournaments.hosting.schedule).
    k = fmt.table_sizes[0]
    budget = head_to_head_deals(fmt.max_games, k) * len(williams_design(k))
    test = Sprt(fmt.elo0, fmt.elo1, fmt.alpha, fmt.beta, max_pairs=budget)
    pair = 0
    while (first := by_index.get(2 * pair)) is not None and (second := by_index.get(2 * pair + 1)) is not None:
        rank_a = next(s.rank for s in first.seats if s.entrant == a)
        rank_b = next(s.rank for s in second.seats if s.entrant == b)
        test.update(pair_score(rank_a, rank_b))
        pair += 1
    return test, pair


def head_to_head_status(store: Store) -> SprtStatus | None:
    """The head-to-head verdict so far, or None for other formats."""
    found = head_to_head_test(store)
    return None if found is None else found[0].status()


def standings(store: Store, *, top: int = 8) -> Standings:
    """Fit the finished games and summarise them."""
    name, game, _ = store.tournament() or ("", "", "")
    entrant_names = store.entrant_names()
    finished = store.finished()
    who = players(entrant_names, finished)
    names = who.names  # an entrant whose bot changed is rated once per version
    rated = rated_games(finished, who)
    done, scheduled = store.counts()
    planned = {n: 0 for n in entrant_names}
    for scheduled_game in store.schedule():
        for entrant in scheduled_game.seating:
            planned[entrant_names[entrant]] += 1
    terminations: dict[str, dict[str, int]] = {n: {} for n in names}
    for played in finished:
        for seat in played.seats:
            if seat.termination is not None:
                counts = terminations[names[who.of(seat.entrant, seat.version)]]
                counts[seat.termination] = counts.get(seat.termination, 0) + 1
    if not rated:
        return Standings(
            tournament=name,
            game=game,
            games=0,
            scheduled=scheduled,
            standings=[],
            seat_offsets=[],
            terminations=terminations,
            superiority=None,
            head_to_head=head_to_head_status(store),
            scheduled_games=planned,
            head_to_head_entrants=_under_test(store),
        )
    fit = fit_plackett_luce(rated, len(names))
    return Standings(
        tournament=name,
        game=game,
        games=done,
        scheduled=scheduled,
        standings=summarise(rated, fit, names),
        seat_offsets=fit.seat_offsets,
        terminations=terminations,
        superiority=likelihood_of_superiority(fit, top=min(top, len(names))),
        head_to_head=head_to_head_status(store),
        scheduled_games=planned,
        head_to_head_entrants=_under_test(store),
    )


def _under_test(store: Store) -> list[str]:
    config = store.config()
    fmt = config.format
    return [fmt.a, fmt.b] if fmt.kind == "head-to-head" and fmt.a and fmt.b else []


def crosstable(store: Store) -> Crosstable:
    """Who finished ahead of whom; an entrant whose bot changed has a row per version."""
    finished = store.finished()
    who = players(store.entrant_names(), finished)
    n = len(who.names)
    ahead = [[0] * n for _ in range(n)]
    met = [[0] * n for _ in range(n)]
    for played in finished:
        for x in played.seats:
            for y in played.seats:
                if x.entrant != y.entrant:
                    i, j = who.of(x.entrant, x.version), who.of(y.entrant, y.version)
                    met[i][j] += 1
                    if x.rank < y.rank:
                        ahead[i][j] += 1
    return Crosstable(names=who.names, ahead=ahead, met=met)


def game_rows(store: Store, *, entrant: str | None = None, termination: str | None = None) -> list[GameRow]:
    """Finished games, optionally only those with an entrant or a kind of termination.

    A seat is named by its player: the entrant, with its version where it has
    several ("greedy v2"). ``entrant`` is an entrant's name (every version) or
    a player's (that version only).
    """
    names = store.entrant_names()
    finished = store.finished()
    who = players(names, finished)
    if entrant is not None and entrant not in names and entrant not in who.names:
        raise ValueError(f"no entrant called {entrant!r}; entrants are {', '.join(names)}")
    rows = []
    tournament = store.tournament_id()
    for played in finished:
        replay, note = played.replay, ""
        if replay is not None and (problem := replay_mismatch(Path(replay), tournament, played.game)) is not None:
            replay, note = None, problem
        seat_names = [who.names[who.of(s.entrant, s.version)] for s in played.seats]
        kinds = [s.termination or "" for s in played.seats]
        entrant_names = [names[s.entrant] for s in played.seats]
        if entrant is not None and entrant not in seat_names and entrant not in entrant_names:
            continue
        if termination is not None and termination not in kinds:
            continue
        rows.append(
            GameRow(
                game=played.game,
                seed=played.seed,
                seconds=played.seconds,
                ended_by=played.ended_by,
                seats=seat_names,
                ranks=[s.rank for s in played.seats],
                scores=[s.score for s in played.seats],
                terminations=kinds,
                replay=replay,
                replay_note=note,
            )
        )
    if termination in (None, "harness"):
        # Games the harness failed to referee: listed (with no ranks), never rated.
        seeds = {game.index: game.seed for game in store.schedule()}
        for failed in store.harness_errors():
            seat_names = [names[e] for e in failed.seating]
            if entrant is not None and entrant not in seat_names:
                continue
            n = len(seat_names)
            rows.append(
                GameRow(
                    game=failed.game,
                    seed=seeds[failed.game],
                    seconds=0.0,
                    ended_by="harness error",
                    seats=seat_names,
                    ranks=[0] * n,
                    scores=[0] * n,
                    terminations=[""] * n,
                    replay=None,
                    error=failed.error,
                    traceback=failed.traceback,
                )
            )
        rows.sort(key=lambda row: row.game)
    return rows
