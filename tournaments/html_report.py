"""A tournament's results as one HTML page a host can publish as it is.

Standings with intervals, seat advantage, terminations per entrant, likelihood
of superiority, the crosstable and the list of games, from the same report
values the terminal tables show (``tournaments.reports``). The page is one
self-contained file: no scripts, no fonts or styles fetched from anywhere.
Every text that came from a tournament file or a bot (names, reasons) is
escaped, so an entrant called ``<script>`` is shown, not run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path

from tournaments.reports import Crosstable, GameRow, Standings

__all__ = ["MAX_GAME_ROWS", "render_report"]

MAX_GAME_ROWS = 10_000
"""Games listed on the page; past this the page says how many it left out."""

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #e4e4e4; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
caption { text-align: left; color: #555; padding-bottom: 0.3em; }
.muted { color: #666; }
"""


def render_report(
    report: Standings,
    table: Crosstable,
    games: Sequence[GameRow],
    *,
    generated: str,
    page_path: Path | None = None,
) -> str:
    """The whole page. ``page_path`` (where it will be written) makes replay links relative to it."""
    title = f"{report.tournament} ({report.game})"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">{report.games} of {report.scheduled} games finished; made by famiglia on {escape(generated)}.</p>',
    ]
    parts += _standings(report)
    parts += _head_to_head(report)
    parts += _seat_advantage(report)
    parts += _superiority(report)
    parts += _crosstable(table)
    parts += _games(games, page_path)
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _standings(report: Standings) -> list[str]:
    out = ["<h2>Standings</h2>"]
    if not report.standings:
        return [*out, "<p>No finished game yet.</p>"]
    out.append(
        '<p class="muted">Ratings from a Plackett-Luce fit of every finished game, on an Elo-like scale '
        "(differences matter, not the zero); the interval is 95%.</p>"
    )
    rows = []
    for row in report.standings:
        terms = report.terminations.get(row.name, {})
        rows.append([
            str(row.place), row.name, f"{row.rating:+.0f}", f"{row.lower:+.0f} .. {row.upper:+.0f}",
            str(row.games), str(row.wins), f"{row.average_rank:.2f}",
            ", ".join(f"{kind} {count}" for kind, count in sorted(terms.items())) or "-",
        ])  # fmt: skip
    headers = ["#", "entrant", "rating", "95% interval", "games", "wins", "avg rank", "terminations"]
    return [*out, _table(headers, rows, numeric={0, 2, 3, 4, 5, 6})]


def _head_to_head(report: Standings) -> list[str]:
    h2h = report.head_to_head
    if h2h is None:
        return []
    if h2h.decision == "continue":
        decision = "no verdict: the game budget ran out" if h2h.exhausted else "no verdict yet"
    else:
        decision = h2h.decision
    verdict = (
        f"<p>{escape(decision)} after {h2h.pairs} pairs of games: score {h2h.score:.3f} "
        f"({h2h.wins} wins, {h2h.draws} draws, {h2h.losses} losses), Elo difference {h2h.elo:+.0f} "
        f"({h2h.elo_lower:+.0f} .. {h2h.elo_upper:+.0f}); log-likelihood ratio {h2h.llr:+.2f} "
        f"between the bounds {h2h.lower_bound:+.2f} and {h2h.upper_bound:+.2f}.</p>"
    )
    return ["<h2>Head-to-head</h2>", verdict]


def _seat_advantage(report: Standings) -> list[str]:
    if not report.seat_offsets:
        return []
    out = ["<h2>Seat advantage</h2>", '<p class="muted">Rating points each seat adds, by table size.</p>']
    width = max(len(o.offsets) for o in report.seat_offsets)
    rows = [
        [str(o.table_size), str(o.games), *(f"{v:+.0f}" for v in o.offsets), *([""] * (width - len(o.offsets)))]
        for o in report.seat_offsets
    ]
    headers = ["players", "games", *(f"seat {s}" for s in range(width))]
    return [*out, _table(headers, rows, numeric=set(range(width + 2)))]


def _superiority(report: Standings) -> list[str]:
    los = report.superiority
    if los is None or len(los.entrants) < 2:
        return []
    names = {row.entrant: row.name for row in report.standings}
    header = [""] + [names[e] for e in los.entrants]
    rows = [[names[e], *(f"{v:.2f}" for v in values)] for e, values in zip(los.entrants, los.values, strict=True)]
    return [
        "<h2>Likelihood of superiority</h2>",
        '<p class="muted">The chance that the row entrant is stronger than the column entrant.</p>',
        _table(header, rows, numeric=set(range(1, len(header)))),
    ]


def _crosstable(table: Crosstable) -> list[str]:
    names = table.names
    rows = [
        [name, *("-" if i == j else f"{table.ahead[i][j]}/{table.met[i][j]}" for j in range(len(names)))]
        for i, name in enumerate(names)
    ]
    return [
        "<h2>Crosstable</h2>",
        '<p class="muted">Games the row entrant finished ahead of the column entrant / games they played together.</p>',
        _table(["", *names], rows, numeric=set(range(1, len(names) + 1))),
    ]


def _games(games: Sequence[GameRow], page_path: Path | None) -> list[str]:
    out = [f"<h2>Games ({len(games)})</h2>"]
    shown = games[:MAX_GAME_ROWS]
    if len(games) > len(shown):
        out.append(
            f'<p class="muted">The first {len(shown)} of {len(games)} games; '
            "<code>famiglia games --format json</code> lists them all.</p>"
        )
    cells = []
    for game in shown:
        seats = ", ".join(f"{name} ({rank})" for name, rank in zip(game.seats, game.ranks, strict=True))
        terms = ", ".join(f"{n}: {t}" for n, t in zip(game.seats, game.terminations, strict=True) if t) or "-"
        text = [str(game.game), str(game.seed), game.ended_by, seats, terms, f"{game.seconds:.2f}"]
        cells.append([*(escape(c) for c in text), _link(_replay_href(game.replay, page_path), game.replay_note)])
    headers = ["game", "seed", "ended by", "seats (rank)", "terminations", "seconds", "replay"]
    return [*out, _raw_table(headers, cells, numeric={0, 1, 5})]


def _replay_href(replay: str | None, page_path: Path | None) -> str | None:
    if not replay:
        return None
    if page_path is None:
        return Path(replay).as_uri() if Path(replay).is_absolute() else replay
    # Relative to the page, so the page and its replay folder can be published together.
    return Path(os.path.relpath(replay, page_path.parent)).as_posix()


def _link(href: str | None, note: str = "") -> str:
    if href is None:
        return f'<span class="muted">not linked: {escape(note)}</span>' if note else "-"
    return f'<a href="{escape(href, quote=True)}">replay</a>'


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, numeric: set[int]) -> str:
    return _raw_table(headers, [[escape(cell) for cell in row] for row in rows], numeric=numeric)


def _raw_table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, numeric: set[int]) -> str:
    """A table of cells that are already HTML (escaped by the caller)."""

    def cls(column: int) -> str:
        return ' class="n"' if column in numeric else ""

    head = "".join(f"<th{cls(i)}>{escape(h)}</th>" for i, h in enumerate(headers))
    body = "\n".join(
        "<tr>" + "".join(f"<td{cls(i)}>{cell}</td>" for i, cell in enumerate(row)) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"
