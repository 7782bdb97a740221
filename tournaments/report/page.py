"""A tournament's results as one HTML page a host can publish as it is.

Standings with a forest plot of the intervals, the live ratings as games came
in, seat advantage, terminations and thinking time per entrant, likelihood of
superiority, the crosstable and the list of games, each game linked to its
viewer page. The page comes from the ``report.html.j2`` template (autoescaping
on), its pictures are inline SVG, its one script sorts tables; it fetches
nothing. Every text that came from a tournament file or a bot (names, reasons)
is escaped, so an entrant called ``<script>`` is shown, not run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from tournaments.hosting.sprt import elo_estimate_words
from tournaments.hosting.viewer.templating import environment, package_text
from tournaments.report.charts import (
    forest_plot,
    rating_history_chart,
    seat_advantage_chart,
    terminations_chart,
    thinking_time_chart,
)
from tournaments.report.figures import RatingHistory, ThinkingTimes
from tournaments.report.standings import Crosstable, GameRow, Standings, head_to_head_verdict
from tournaments.report.status import games_words

__all__ = ["MAX_GAME_ROWS", "GameLinks", "render_report", "replay_href"]

MAX_GAME_ROWS = 10_000
"""Games listed on the page; past this the page says how many it left out."""


class GameLinks(msgspec.Struct, frozen=True, kw_only=True):
    """Where a game's row points: its viewer page, its replay file, or why there is no page."""

    viewer: str | None = None
    replay: str | None = None
    note: str = ""


def _cell(
    text: object, sort: float | str | None = None, href: str | None = None, testid: str | None = None
) -> dict[str, Any]:
    return {"text": str(text), "sort": sort, "href": href, "testid": testid}


def render_report(
    report: Standings,
    table: Crosstable,
    games: Sequence[GameRow],
    *,
    generated: str,
    page_path: Path | None = None,
    history: RatingHistory | None = None,
    times: ThinkingTimes | None = None,
    links: Mapping[int, GameLinks] | None = None,
) -> str:
    """The whole page. ``page_path`` (where it will be written) makes replay links relative to it;
    ``links`` (from ``tournaments.report.game_pages``) gives each game its viewer page."""
    charts = {
        "forest": forest_plot(report.standings),
        "history": None if history is None else rating_history_chart(history),
        "seats": seat_advantage_chart(report.seat_offsets),
        "terminations": terminations_chart(report.terminations),
        "thinking": None if times is None else thinking_time_chart(times),
    }
    shown = games[:MAX_GAME_ROWS]
    return (
        environment()
        .get_template("report.html.j2")
        .render(
            title=f"{report.tournament} ({report.game})",
            report=report,
            games_words=games_words(report),
            generated=generated,
            charts=charts,
            standings=_standings(report),
            head_to_head=_head_to_head(report),
            seats=_seat_advantage(report),
            superiority=_superiority(report),
            cross=_crosstable(table),
            game_table=_games(shown, page_path, links),
            games_total=len(games),
            games_shown=len(shown),
            sort_script=package_text("sort.js"),
        )
    )


def _standings(report: Standings) -> dict[str, Any]:
    rows = []
    for row in report.standings:
        terms = report.terminations.get(row.name, {})
        rows.append([
            _cell(row.place, row.place), _cell(row.name), _cell(f"{row.rating:+z.0f}", row.rating),
            _cell(f"{row.lower:+z.0f} .. {row.upper:+z.0f}", row.lower), _cell(row.games, row.games),
            _cell(row.wins, row.wins), _cell(f"{row.average_rank:.2f}", row.average_rank),
            _cell(", ".join(f"{kind} {count}" for kind, count in sorted(terms.items())) or "-", sum(terms.values())),
        ])  # fmt: skip
    headers = ["#", "entrant", "rating", "95% interval", "games", "wins", "avg rank", "terminations"]
    return {"headers": headers, "rows": rows, "numeric": {0, 2, 3, 4, 5, 6}}


def _head_to_head(report: Standings) -> str | None:
    h2h = report.head_to_head
    if h2h is None:
        return None
    decision = head_to_head_verdict(report)
    a = report.head_to_head_entrants[0] if report.head_to_head_entrants else "A"
    return (
        f"{decision} after {h2h.pairs} pairs of games: score {h2h.score:.3f} "
        f"({h2h.wins} wins, {h2h.draws} draws, {h2h.losses} losses), Elo difference {elo_estimate_words(h2h, a)}; "
        f"log-likelihood ratio {h2h.llr:+.2f} "
        f"between the bounds {h2h.lower_bound:+.2f} and {h2h.upper_bound:+.2f}."
    )


def _seat_advantage(report: Standings) -> dict[str, Any] | None:
    if not report.seat_offsets:
        return None
    width = max(len(o.offsets) for o in report.seat_offsets)
    rows = [
        [_cell(o.table_size, o.table_size), _cell(o.games, o.games), *(_cell(f"{v:+z.0f}", v) for v in o.offsets),
         *([_cell("")] * (width - len(o.offsets)))]
        for o in report.seat_offsets
    ]  # fmt: skip
    headers = ["players", "games", *(f"seat {s}" for s in range(width))]
    return {"headers": headers, "rows": rows, "numeric": set(range(width + 2))}


def _superiority(report: Standings) -> dict[str, Any] | None:
    los = report.superiority
    if los is None or len(los.entrants) < 2:
        return None
    names = {row.entrant: row.name for row in report.standings}
    headers = [""] + [names[e] for e in los.entrants]
    rows = [
        [_cell(names[e]), *(_cell(f"{v:.2f}", v) for v in values)]
        for e, values in zip(los.entrants, los.values, strict=True)
    ]
    return {"headers": headers, "rows": rows, "numeric": set(range(1, len(headers)))}


def _crosstable(table: Crosstable) -> dict[str, Any]:
    names = table.names
    rows = [
        [_cell(name), *(_cell("-") if i == j else _cell(f"{table.ahead[i][j]}/{table.met[i][j]}",
                                                        table.ahead[i][j] / max(table.met[i][j], 1))
                        for j in range(len(names)))]
        for i, name in enumerate(names)
    ]  # fmt: skip
    return {"headers": ["", *names], "rows": rows, "numeric": set(range(1, len(names) + 1))}


def _games(games: Sequence[GameRow], page_path: Path | None, links: Mapping[int, GameLinks] | None) -> dict[str, Any]:
    rows = []
    for game in games:
        seats = ", ".join(f"{name} ({rank})" for name, rank in zip(game.seats, game.ranks, strict=True))
        terms = ", ".join(f"{n}: {t}" for n, t in zip(game.seats, game.terminations, strict=True) if t) or "-"
        link = links.get(game.game) if links is not None else None
        if link is None:
            note = f"not linked: {game.replay_note}" if game.replay_note else ""
            link = GameLinks(replay=replay_href(game.replay, page_path), note=note)
        if link.viewer is not None:
            watch = _cell("watch", None, link.viewer, f"watch-{game.game}")
        else:
            watch = _cell(link.note or "-")
        replay = _cell("replay", None, link.replay) if link.replay is not None else _cell("-")
        rows.append([
            _cell(game.game, game.game), _cell(game.seed, game.seed), _cell(game.ended_by), _cell(seats),
            _cell(terms), _cell(f"{game.seconds:.2f}", game.seconds), watch, replay,
        ])  # fmt: skip
    headers = ["game", "seed", "ended by", "seats (rank)", "terminations", "seconds", "viewer", "replay"]
    return {"headers": headers, "rows": rows, "numeric": {0, 1, 5}}


def replay_href(replay: str | None, page_path: Path | None) -> str | None:
    """A link to a file from the page: relative to the page when its place is known."""
    if not replay:
        return None
    if page_path is None:
        return Path(replay).as_uri() if Path(replay).is_absolute() else replay
    # Relative to the page, so the page and its replay folder can be published together.
    return Path(os.path.relpath(replay, page_path.parent)).as_posix()
