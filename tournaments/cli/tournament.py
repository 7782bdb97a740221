"""``famiglia tournament run`` and ``famiglia demo``: play a tournament with live progress."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tournaments.cli.common import QuickHelp, console, err_console, fail, famiglia_command, user_errors
from tournaments.cli.live import play_with_display
from tournaments.cli.options import Concurrency, Workers, check_counts
from tournaments.cli.reports import not_a_store, print_standings
from tournaments.config.paths import folder_problem
from tournaments.hosting.markup import shown

# The library behind these commands (the referee and Trio, the executors, the
# ratings with numpy) is imported in the functions that run them, not at every
# start of famiglia (tournaments.cli).
if TYPE_CHECKING:
    from tournaments.config.tournament import TournamentConfig
    from tournaments.store import Store

__all__ = ["app", "demo"]

app = typer.Typer(help="Run tournaments described in TOML files.", no_args_is_help=True, cls=QuickHelp)

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"
DEMO_TABLE = 3  # players per demo table


def exit_on_harness_errors(store: Store, db: Path) -> None:
    """After the standings: if any game hit a harness error, say how many and exit 1."""
    errors = store.harness_errors()
    if not errors:
        return
    games = ", ".join(str(e.game) for e in errors[:10]) + (", ..." if len(errors) > 10 else "")
    fail(
        f"{len(errors)} game{'s' if len(errors) != 1 else ''} hit a harness error (a fault of famiglia or of its machines, not of a bot) "
        f"and {'are' if len(errors) != 1 else 'is'} recorded without a result, outside the ratings: game "
        f"{games}; tracebacks: famiglia games --db {db} --termination harness --format json",
        1,
    )


@app.command("run")
def run(
    file: Annotated[Path, typer.Argument(help="the tournament file (TOML)")],
    db: Annotated[Path | None, typer.Option(help="results database (default: FILE with .sqlite)")] = None,
    concurrency: Concurrency = None,
    workers: Workers = None,
    executor: Annotated[
        str | None,
        typer.Option(help="local (this machine, the default) or dask (a Dask cluster; needs --scheduler)"),
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="the Dask scheduler's address, tcp://HOST:8786 (default: the file's)")
    ] = None,
    deals_from: Annotated[
        Path | None,
        typer.Option(help="another results file whose deals to repeat (same seed, same deals); new --db only"),
    ] = None,
    new_version: Annotated[
        list[str] | None,
        typer.Option(
            "--new-version",
            metavar="ENTRANT",
            help="record ENTRANT's changed bot as its next version, rated apart (repeat for several)",
        ),
    ] = None,
) -> None:
    """Play a tournament (or resume it) and print the standings."""
    from tournaments.config.tournament import ConfigProblems, load_tournament

    with user_errors():
        check_counts(concurrency, workers)
    if deals_from is not None and not deals_from.is_file():
        fail(f"--deals-from {deals_from}: no such results file" + (" (it is a folder)" if deals_from.is_dir() else ""))
    if deals_from is not None and (problem := not_a_store(deals_from)) is not None:
        fail(f"--deals-from {deals_from}: {problem}")  # before opening it as a store writes its tables in
    if file.is_dir():
        fail(f"{file}: is a folder; give the tournament file (TOML) in it")
    db = db or file.with_suffix(".sqlite")
    default_replays = replays_beside(db)
    try:
        config = load_tournament(file, default_replays=default_replays)
    except ConfigProblems as exc:
        for problem in exc.problems:
            # A problem may quote an entrant's bot.toml, which its author wrote.
            err_console.print(f"famiglia: error: {shown(f'{file}: {problem}')}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    from tournaments.config.notes import config_notes

    notes = config_notes(config)
    if config.replays is None and default_replays is not None:  # off only by the file's replays = false
        notes.append(
            f"replays: off (replays = false in {file.name}): the report will have no game pages, "
            "and no bot's stderr is kept (it goes beside the replay)"
        )
    for note in notes:  # values rounded or not applied, what is not kept: said, never changed in silence
        err_console.print(f"famiglia: note: {shown(f'{file}: {note}')}", highlight=False, soft_wrap=True)
    from tournaments.hosting.executors.choice import check_scheduler

    with user_errors():
        check_scheduler(scheduler, executor or config.executor.kind)
    if config.replays is not None and any(
        Path(config.replays) == part.resolve()
        for part in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm"))
    ):
        fail(
            f"{file}: tournament.replays: {config.replays} is where the results database goes (--db {db}); "
            'name another folder, such as replays = "replays"'
        )
    store = play_with_display(
        config, db, concurrency=concurrency, workers=workers, deals_from=deals_from,
        executor=executor or config.executor.kind, scheduler=scheduler or config.executor.scheduler,
        new_versions=new_version,
    )  # fmt: skip
    from tournaments.report.standings import standings  # numpy and scipy: only once the games are played

    print_standings(standings(store))
    exit_on_harness_errors(store, db)


def replays_beside(db: Path) -> Path | None:
    """Where a run keeps its replays when its file names no folder: beside the results database, named
    after it (``club.sqlite``, ``club-replays/``), as the demo keeps its own. None for a ``--db`` without
    a name ("", ".", ".."), which the run refuses."""
    return db.with_name(f"{db.stem}-replays") if db.name not in ("", "..") else None


def demo_entrants() -> tuple[list[dict[str, str]], list[str]]:
    """The demo's entrants: every sample bot whose toolchain is here, and the tools missing.

    Without Node.js or gcc fewer than three bots are left for 3-player tables, so
    more seats of the Python bots fill the field (one bot may hold several entries).
    """
    entrants = [{"name": "greedy", "bot": str(SAMPLE_BOTS / "greedy_py")},
                {"name": "random", "bot": str(SAMPLE_BOTS / "random_py")}]  # fmt: skip
    missing = []
    for tool, name, folder in (("node", "node", "node_js"), ("gcc", "c", "c_bot")):
        if shutil.which(tool):
            entrants.append({"name": name, "bot": str(SAMPLE_BOTS / folder)})
        else:
            missing.append(tool)
    python_bots = ("random_py", "greedy_py")
    while len(entrants) < DEMO_TABLE:
        folder = python_bots[(len(entrants) - 2) % len(python_bots)]
        copies = sum(1 for e in entrants if e["bot"] == str(SAMPLE_BOTS / folder))
        entrants.append({"name": f"{folder.removesuffix('_py')}-{copies + 1}", "bot": str(SAMPLE_BOTS / folder)})
    return entrants, missing


def demo_toml(root: Path) -> str:
    """The demo's tournament file: every sample bot whose toolchain is on this machine, at 3-player
    Vendetta tables. Written where the demo's results go, so a user can read it, change it and run it."""
    entrants, _ = demo_entrants()
    # json.dumps gives a TOML basic string for these names and paths (the same quotes and escapes).
    lines = [
        "# The tournament famiglia demo played. Change it and run it again with",
        "#   famiglia tournament run demo.toml   (its results go to demo.sqlite beside it)",
        "[tournament]",
        'name = "demo"',
        'game = "vendetta"',
        f"table_size = {DEMO_TABLE}",
        "repetitions = 4",
        "seed = 2026",
        f"replays = {json.dumps(str(root / 'demo-replays'))}",
        "",
        "[tournament.time]",
        "move_ms = 2000",
        "bank_ms = 10000",
    ]
    for entrant in entrants:
        lines += ["", "[[entrant]]", f"name = {json.dumps(entrant['name'])}", f"bot = {json.dumps(entrant['bot'])}"]
    return "\n".join(lines) + "\n"


def demo_config(root: Path) -> TournamentConfig:
    """The demo's tournament, as ``demo_toml`` writes it."""
    from tournaments.config.tournament import parse_tournament

    return parse_tournament(tomllib.loads(demo_toml(root)), base=root, source="demo")


def demo(
    folder: Annotated[Path, typer.Option(help="where the demo's results and replays go")] = Path("runs"),
    workers: Workers = None,
) -> None:
    """Run a small built-in tournament of the sample bots and print the standings."""
    from referee.private import make_private_dirs
    from tournaments.config.tournament import load_tournament
    from tournaments.hosting.storage import database_files, hold_store

    with user_errors():
        check_counts(None, workers)
    if (problem := folder_problem(folder)) is not None:
        fail(f"--folder {folder}: {problem}")
    if not SAMPLE_BOTS.is_dir():
        fail(f"the sample bots are not at {SAMPLE_BOTS}; run the demo from a clone of the famiglia repository")
    entrants, missing = demo_entrants()
    if missing:
        extra = [e["name"] for e in entrants[2:] if e["name"] not in ("node", "c")]
        verb = "fills" if len(extra) == 1 else "fill"
        filled = f"; {' and '.join(extra)} (another seat of a Python bot) {verb} the table" if extra else ""
        err_console.print(
            f"note: {' and '.join(missing)} not found; the demo runs without those sample bots{filled}",
            highlight=False,
        )
    folder = folder.resolve()
    db = folder / "demo.sqlite"
    with user_errors():
        make_private_dirs(folder)
        # Before the last demo's results are cleared: a demo still playing in this folder keeps them.
        lock = hold_store(db)
    with lock:
        for stale in database_files(db):
            stale.unlink(missing_ok=True)
        shutil.rmtree(folder / "demo-replays", ignore_errors=True)
        with user_errors():
            tournament_file = folder / "demo.toml"
            tournament_file.write_text(demo_toml(folder), encoding="utf-8")
            config = load_tournament(tournament_file)
        store = play_with_display(config, db, concurrency=None, workers=workers, lock=lock)
    from tournaments.report.standings import standings  # numpy and scipy: only once the games are played

    print_standings(standings(store))
    famiglia = famiglia_command()
    here = Path.cwd()
    shown_db = db.relative_to(here) if db.is_relative_to(here) else db
    shown_file = tournament_file.relative_to(here) if tournament_file.is_relative_to(here) else tournament_file
    console.print(f"results: {shown_db}  replays: {shown_db.parent / 'demo-replays'}", highlight=False)
    console.print(f"the tournament file: {shown_file} (run it again: {famiglia} tournament run {shown_file})",
                  highlight=False)  # fmt: skip
    console.print(f"as a web page: {famiglia} report --db {shown_db}", highlight=False)
    exit_on_harness_errors(store, db)
