"""``famiglia replay``: check a replay against the engine, read it turn by turn, or watch it in a browser."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from tournaments.cli.common import QuickHelp, console, fail, user_errors
from tournaments.config.paths import file_target_problem
from tournaments.hosting.markup import NAME_CHARS, shown

# The engines that re-run a replay and the viewer's templates (Jinja) are
# imported by the commands that use them, not at every start of famiglia.

__all__ = ["app", "describe"]

app = typer.Typer(help="Check and read match replays.", no_args_is_help=True, cls=QuickHelp)


def check_seats(file: Path, records: list[Any], code: int = 2) -> None:
    """One line and exit ``code`` unless the header's seats fit its game and hold every seat the records name.

    A replay edited or damaged by hand can list fewer or more seats than its
    decisions and result use; the engine, the text and the viewer all index
    the seats by those numbers.
    """
    from referee.games import UnknownGame, get_rules
    from referee.replay import ResultRecord

    seats = len(records[0].seats)
    try:
        rules = get_rules(records[0].game)
    except UnknownGame:  # an uninstalled plug-in game: its seats are checked where it is installed
        rules = None
    if rules is not None and not rules.min_players <= seats <= rules.max_players:
        fail(
            f"{file}: its header lists {seats} seat{'s' if seats != 1 else ''}, but {rules.name} is for "
            f"{rules.min_players} to {rules.max_players} players; the replay is damaged, use an unchanged copy",
            code,
        )
    for record in records[1:]:
        if isinstance(record, ResultRecord):
            counts = {len(record.result.ranks), len(record.result.scores)}
            if counts != {seats}:
                fail(
                    f"{file}: its result ranks {len(record.result.ranks)} seats, but its header lists {seats}; "
                    "the replay is damaged, use an unchanged copy",
                    code,
                )
        elif not 0 <= (seat := getattr(record, "seat", 0)) < seats:
            fail(
                f"{file}: decision #{getattr(record, 'request', '?')} names seat {seat}, but its header lists seats "
                f"0 to {seats - 1}; the replay is damaged, use an unchanged copy",
                code,
            )


@app.command()
def verify(file: Annotated[Path, typer.Argument(help="a replay file written by famiglia")]) -> None:
    """Re-run a replay through the engine; exit 1 naming the first difference."""
    from referee.games import UnknownGame
    from referee.replay import Header, ReplayMismatch, read_replay, verify_replay

    with user_errors():
        records = read_replay(file)
    check_seats(file, records, code=1)
    try:
        result = verify_replay(records)
    except ReplayMismatch as exc:
        fail(f"{file}: {exc}", code=1)
    except UnknownGame as exc:  # a plug-in game that is not installed here
        fail(f"{file}: {exc}; install the game's package to verify its replays")
    header = records[0]
    assert isinstance(header, Header)
    # The match id names the game (in a tournament: TOURNAMENT#GAME), so a replay
    # that is some other game than the one expected is visible here too.
    # A replay may come from anywhere: its strings are shown, never obeyed.
    console.print(
        f"{shown(str(file))}: ok, match {shown(header.match)}, ranks {result.ranks}, ended by {shown(result.ended_by)}",
        highlight=False,
    )


def describe(value: Any) -> str:
    """A compact one-line rendering of an event or action: `type key=value ...`."""
    if isinstance(value, dict):
        kind = value.get("type")
        parts = [f"{key}={describe(item)}" for key, item in value.items() if key != "type"]
        return " ".join(([str(kind)] if kind else []) + parts) if kind else "{" + ", ".join(parts) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(describe(item) for item in value) + "]"
    return str(value)


@app.command()
def show(
    file: Annotated[Path, typer.Argument(help="a replay file written by famiglia")],
    events: Annotated[bool, typer.Option(help="also list the events each action caused")] = True,
) -> None:
    """Print a replay as readable text, one decision per line.

    Every string of a replay is a bot's or could be (names, log lines, actions,
    reasons; the whole file, if someone sent it): each is ``shown``, so the
    lines below are markup with nothing of the file read as markup.
    """
    from referee.replay import (
        ActionRecord,
        ChanceRecord,
        CutRecord,
        ForfeitRecord,
        Header,
        LogRecord,
        RejectedRecord,
        ResultRecord,
        read_replay,
    )
    from referee.replay_budget import describe_cut

    with user_errors():
        records = read_replay(file)
    check_seats(file, records)
    names: list[str] = []
    for record in records:
        match record:
            case Header():
                names = [shown(seat.name, NAME_CHARS) for seat in record.seats]
                variants = " ".join(f"{k}={v}" for k, v in record.variants.items())
                console.print(
                    f"{shown(record.game)} match {shown(record.match)}, seed {record.seed}, {shown(variants)}",
                    highlight=False,
                )
                for seat, name in enumerate(names):
                    console.print(f"  seat {seat}: {name}", highlight=False)
            case ActionRecord():
                action = shown(describe(msgspec.json.decode(record.action)))
                note = " (played by the referee)" if record.substituted else ""
                if record.together:  # one of a step's sealed answers; the step's events follow its last
                    note += " (simultaneous)"
                console.print(
                    f"#{record.request} seat {record.seat} {names[record.seat]} {shown(record.decision)}: "
                    f"{action}{note} [{record.ms:.1f} ms]",
                    highlight=False,
                )
                if events:
                    for event in msgspec.json.decode(record.events):
                        console.print(f"    {shown(describe(event))}", highlight=False)
            case RejectedRecord():
                rejected = msgspec.json.decode(record.action)
                action = "(action not kept)" if rejected is None else shown(describe(rejected))
                console.print(
                    f"#{record.request} seat {record.seat} {names[record.seat]}: REJECTED "
                    f"{action}: {shown(record.rule)}: {shown(record.message)}",
                    highlight=False,
                )
            case ForfeitRecord():
                console.print(
                    f"#{record.request} seat {record.seat} {names[record.seat]} FORFEITS ({shown(record.kind)}): "
                    f"{shown(record.reason)}",
                    highlight=False,
                )
            case LogRecord():
                console.print(f"    log seat {record.seat}: {shown(record.message)}", highlight=False)
            case CutRecord():
                console.print(f"    CUT: {shown(describe_cut(record))}", highlight=False)
            case ResultRecord():
                result = record.result
                console.print(f"result ({shown(result.ended_by)}):", highlight=False)
                for seat in sorted(range(len(names)), key=lambda s: result.ranks[s]):
                    console.print(
                        f"  {result.ranks[seat]}. seat {seat} {names[seat]}: score {result.scores[seat]}",
                        highlight=False,
                    )
            case ChanceRecord():
                pass


@app.command()
def view(
    file: Annotated[Path, typer.Argument(help="a replay file written by famiglia")],
    out: Annotated[
        Path | None, typer.Option("--out", help="the HTML page to write (default: the replay's name with .html)")
    ] = None,
) -> None:
    """Write the replay as a web page to watch move by move (one more page per seat's view)."""
    from referee.replay import read_replay
    from tournaments.hosting.viewer import write_viewer

    if file.is_dir():  # "", "." or "/": no name to put .html on
        fail(f"{file}: is a folder; give a replay file in it")
    page = out if out is not None else file.with_suffix(".html")
    if page.resolve() == file.resolve():
        fail(f"--out {page}: that is the replay itself; choose another file name")
    if (problem := file_target_problem(page)) is not None:
        fail(f"--out {page}: {problem}")
    with user_errors():
        if file.is_file():  # a pipe can be read once only: by the viewer
            check_seats(file, read_replay(file))
        # Strict: a header of a game not installed here, or of another game than the decisions, is one line.
        written = write_viewer(file, page, strict=True)
    console.print(f"viewer: {written[0]}", highlight=False)
    console.print(f"  each seat's view: {', '.join(p.name for p in written[1:])}", highlight=False)
