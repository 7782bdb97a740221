"""``famiglia standings``, ``crosstable`` and ``games``: read a results database."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from tournaments.cli.common import console, err_console, fail, print_json, user_errors
from tournaments.config.paths import file_target_problem, folder_problem
from tournaments.hosting.markup import NAME_CHARS, shown

# What reads and draws the results (the ratings fit with numpy and scipy, the
# page's templates with Jinja) is imported by the commands that use it, not at
# every start of famiglia (tournaments.cli).
if TYPE_CHECKING:
    from tournaments.report.standings import Standings
    from tournaments.store import Store

__all__ = [
    "crosstable_command",
    "games_command",
    "not_a_store",
    "open_store",
    "print_standings",
    "report_command",
    "standings_command",
]

DbOption = Annotated[Path, typer.Option("--db", help="the results database of a tournament")]


def open_store(db: Path) -> Store:
    from referee.private import opened_warning
    from tournaments.store import Store

    if not db.is_file():
        fail(f"{db}: no such results database; run `famiglia tournament run FILE.toml` first")
    if (problem := not_a_store(db)) is not None:
        fail(f"{db}: {problem}")
    with user_errors():
        store = Store(db)
        if store.tournament() is None:
            fail(f"{db}: holds no tournament")
    if (warning := opened_warning(store.tightened)) is not None:
        err_console.print(warning, highlight=False, markup=False, soft_wrap=True)
    return store


def not_a_store(db: Path) -> str | None:
    """Why the file ``db`` is no results database, looked at read-only; None when it may be one.

    Opening a store writes its tables into the file: a command that only reads
    must not do that to an empty file or another program's database given by mistake.
    """
    import sqlite3
    from contextlib import closing

    hint = "give a results database that `famiglia tournament run` wrote"
    try:
        if db.stat().st_size == 0:
            return f"an empty file, not a results database; {hint}"
        with closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as connection:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.OperationalError:
        return None  # a store it cannot open read-only (its folder not writable under WAL): the store says why
    except sqlite3.DatabaseError as exc:
        return f"cannot use as a results database: {exc}; {hint}"
    except OSError as exc:
        return f"cannot read: {exc.strerror}"
    if "tournament" not in tables:
        return f"not a famiglia results database (an SQLite file without its tables); {hint}"
    return None


def print_standings(report: Standings) -> None:
    """Standings, seat advantage, terminations and superiority as terminal tables.

    Entrant names may be a bot author's choice (a ladder takes them from entries):
    they are ``shown``, as the Tables read markup in their cells.
    """
    from rich.table import Table

    from tournaments.report.status import games_words, state_line

    title = f"{shown(report.tournament)} ({shown(report.game)}): {shown(games_words(report))}"
    table = Table(title=title, title_justify="left")
    columns = ("#", "entrant", "rating", "95% interval", "±", "games", "wins", "avg rank", "terminations")
    for column in columns:
        table.add_column(column, justify="left" if column in ("entrant", "terminations") else "right")
    for row in report.standings:
        terms = ", ".join(f"{k} {v}" for k, v in sorted(report.terminations.get(row.name, {}).items())) or "-"
        table.add_row(
            str(row.place), shown(row.name, NAME_CHARS), f"{row.rating:+.0f}", f"{row.lower:+.0f} .. {row.upper:+.0f}",
            f"{(row.upper - row.lower) / 2:.0f}", games_cell(report, row.name, row.games), str(row.wins),
            f"{row.average_rank:.2f}", terms,
        )  # fmt: skip
    console.print(table)
    if report.standings:
        console.print(interval_note(report), highlight=False, soft_wrap=True)
    for offsets in report.seat_offsets:
        seats = "  ".join(f"seat {s}: {v:+.0f}" for s, v in enumerate(offsets.offsets))
        console.print(f"seat advantage at {offsets.table_size}-player tables ({offsets.games} games): {seats}")
    if report.superiority is not None and len(report.superiority.entrants) > 1:
        names = {row.entrant: row.name for row in report.standings}
        los = Table(title="likelihood of superiority (row stronger than column)", title_justify="left")
        los.add_column("")
        for entrant in report.superiority.entrants:
            los.add_column(shown(names[entrant], NAME_CHARS), justify="right")
        for entrant, values in zip(report.superiority.entrants, report.superiority.values, strict=True):
            los.add_row(shown(names[entrant], NAME_CHARS), *(f"{v:.2f}" for v in values))
        console.print(los)
    if report.head_to_head is not None:
        console.print(shown(state_line(report)), highlight=False, soft_wrap=True)


def games_cell(report: Standings, name: str, played: int) -> str:
    """An entrant's games: "12", or "12 of 30" while some of its scheduled games are still to be played."""
    from tournaments.report.status import has_games_left

    planned = report.scheduled_games.get(name, played)
    return str(played) if planned <= played or not has_games_left(report) else f"{played} of {planned}"


def interval_note(report: Standings) -> str:
    """Where the intervals stand: the widest and narrowest, and how to narrow them (when more games can)."""
    from tournaments.report.status import more_games_hint

    widths = sorted(report.standings, key=lambda row: row.upper - row.lower)
    narrow, wide = widths[0], widths[-1]
    return (
        f"95% intervals: from ±{(narrow.upper - narrow.lower) / 2:.0f} ({shown(narrow.name, NAME_CHARS)}, "
        f"{narrow.games} games) to ±{(wide.upper - wide.lower) / 2:.0f} ({shown(wide.name, NAME_CHARS)}, "
        f"{wide.games} games); {more_games_hint(report)}"
    )


def standings_command(
    db: DbOption,
    format: Annotated[str, typer.Option(help="table, csv or json")] = "table",
) -> None:
    """Final standings: a Plackett-Luce fit with 95% intervals on an Elo-like scale."""
    from tournaments.report.standings import standings

    if format not in ("table", "csv", "json"):
        fail(f"--format {format!r}: choose table, csv or json")
    report = standings(open_store(db))
    if format == "json":
        print_json(msgspec.json.encode(report).decode())
    elif format == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(
            ["place", "entrant", "rating", "lower", "upper", "games", "scheduled_games", "wins", "average_rank"]
        )
        for row in report.standings:
            writer.writerow([row.place, row.name, f"{row.rating:.1f}", f"{row.lower:.1f}", f"{row.upper:.1f}",
                             row.games, report.scheduled_games.get(row.name, row.games), row.wins,
                             f"{row.average_rank:.3f}"])  # fmt: skip
        typer.echo(out.getvalue(), nl=False)
    else:
        print_standings(report)


def crosstable_command(
    db: DbOption,
    format: Annotated[str, typer.Option(help="table, csv or json")] = "table",
) -> None:
    """How often each entrant finished ahead of each other one, where they met.

    csv: one row per entrant and opponent (ahead: games the entrant finished
    ahead of the opponent; games: games they played together). json: the names,
    and ``ahead`` and ``met`` as matrices in the names' order (row against column).
    """
    from rich.table import Table

    from tournaments.report.standings import crosstable

    if format not in ("table", "csv", "json"):
        fail(f"--format {format!r}: choose table, csv or json")
    table_data = crosstable(open_store(db))
    if format == "json":
        print_json(msgspec.json.encode(table_data).decode())
        return
    if format == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["entrant", "opponent", "ahead", "games"])
        for i, name in enumerate(table_data.names):
            for j, opponent in enumerate(table_data.names):
                if i != j:
                    writer.writerow([name, opponent, table_data.ahead[i][j], table_data.met[i][j]])
        typer.echo(out.getvalue(), nl=False)
        return
    table = Table(title="finished ahead / games together (row vs column)", title_justify="left")
    table.add_column("")
    for name in table_data.names:
        table.add_column(shown(name, NAME_CHARS), justify="right")
    for i, name in enumerate(table_data.names):
        cells = [
            "-" if i == j else f"{table_data.ahead[i][j]}/{table_data.met[i][j]}" for j in range(len(table_data.names))
        ]
        table.add_row(shown(name, NAME_CHARS), *cells)
    console.print(table)


def games_command(
    db: DbOption,
    entrant: Annotated[str | None, typer.Option(help="only games this entrant played")] = None,
    termination: Annotated[
        str | None,
        typer.Option(
            help="only games with this termination: timeout, crash, illegal, protocol, stall, resigned, harness"
        ),
    ] = None,
    format: Annotated[str, typer.Option(help="table, csv or json")] = "table",
) -> None:
    """List finished games."""
    from rich.table import Table

    from tournaments.report.standings import game_rows

    if format not in ("table", "csv", "json"):
        fail(f"--format {format!r}: choose table, csv or json")
    kinds = ("timeout", "crash", "illegal", "protocol", "stall", "resigned", "harness")
    if termination is not None and termination not in kinds:
        fail(f"--termination {termination!r}: choose {', '.join(kinds[:-1])} or {kinds[-1]}")
    with user_errors():
        store = open_store(db)
        rows = game_rows(store, entrant=entrant, termination=termination)
    if format == "json":
        print_json(msgspec.json.encode(rows).decode())
        return
    if format == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["game", "seed", "ended_by", "seconds", "seat", "entrant", "rank", "score", "termination",
                         "replay"])  # fmt: skip
        for row in rows:
            for seat, name in enumerate(row.seats):
                writer.writerow([row.game, row.seed, row.ended_by, f"{row.seconds:.3f}", seat, name, row.ranks[seat],
                                 row.scores[seat], row.terminations[seat], row.replay or ""])  # fmt: skip
        typer.echo(out.getvalue(), nl=False)
        return
    table = Table(title=f"{len(rows)} games", title_justify="left")
    for column in ("game", "seed", "ended by", "seats (rank)", "terminations", "s", "replay"):
        table.add_column(column)
    for row in rows:
        if row.error:  # a harness error: no ranks, the error instead of terminations
            seats, terms = ", ".join(shown(n, NAME_CHARS) for n in row.seats), shown(row.error)
        else:
            seats = ", ".join(f"{shown(n, NAME_CHARS)} ({r})" for n, r in zip(row.seats, row.ranks, strict=True))
            terms = (
                ", ".join(
                    f"{shown(n, NAME_CHARS)}: {shown(t)}" for n, t in zip(row.seats, row.terminations, strict=True) if t
                )
                or "-"
            )
        replay = row.replay or (f"not linked: {row.replay_note}" if row.replay_note else "-")
        table.add_row(
            str(row.game), str(row.seed), shown(row.ended_by), seats, terms, f"{row.seconds:.2f}", shown(replay)
        )
    console.print(table)
    if store.config().format.kind == "head-to-head":
        # Its unplayed games may be games it no longer needs: say where the test stands.
        from tournaments.report.standings import standings
        from tournaments.report.status import state_line

        console.print(shown(state_line(standings(store))), highlight=False, soft_wrap=True)


def report_command(
    db: DbOption,
    out: Annotated[
        Path | None, typer.Option("--out", help="the HTML file to write (default: beside the database, .html)")
    ] = None,
    viewer: Annotated[
        bool,
        typer.Option(
            "--viewer/--no-viewer", help="write each game's viewer pages into OUT-games/ (--no-viewer: the page alone)"
        ),
    ] = True,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", help="processes writing viewer pages at once (default: one per CPU)", min=1),
    ] = None,
) -> None:
    """Write the results as an HTML page (standings, pictures, crosstable, every game) and a viewer page per game."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from tournaments.hosting.storage import database_files
    from tournaments.report.writer import ReportWriter

    if db.is_dir():  # "", "." or "/": no name to put .html on
        fail(f"--db {db}: is a folder; give the results database in it (FILE.sqlite)")
    page = out if out is not None else db.with_suffix(".html")
    if (problem := file_target_problem(page)) is not None:
        fail(f"--out {page}: {problem}")
    if any(page.resolve() == part.resolve() for part in (*database_files(db), db.with_name(db.name + ".lock"))):
        fail(f"--out {page}: that is the results database itself; choose another file name, e.g. --out results.html")
    from tournaments.report.game_pages import pages_folder

    if viewer and (problem := folder_problem(pages_folder(page))) is not None:
        fail(f"--out {page}: its viewer pages go in {pages_folder(page)}, but {problem}; move it, or give --no-viewer")
    store = open_store(db)
    with user_errors():
        report = ReportWriter(store, page)
        with Progress(
            TextColumn("viewer pages"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=err_console, transient=True, disable=len(report.listed) < 20 or not viewer,
        ) as bar:  # fmt: skip
            task = bar.add_task("pages", total=len(report.listed))
            report.write_game_pages(viewer=viewer, jobs=jobs, progress=lambda: bar.advance(task))
        text = report.render()
    try:
        report.save(text)
    except OSError as exc:
        # Name the user's path, not the temporary file written beside it.
        fail(f"--out {page}: cannot write: {exc.strerror or exc}", code=1)
    console.print(f"report: {page}", highlight=False)
    if (missing := report.missing_replays()) is not None:
        err_console.print(f"famiglia: warning: {shown(missing)}", highlight=False, soft_wrap=True)
    if any(link.viewer for link in report.links.values()):
        console.print(f"viewer pages: {report.pages_folder}/", highlight=False)
