"""``famiglia tournament run`` and ``famiglia demo``: play a tournament with live progress."""

from __future__ import annotations

import json
import shutil
import time
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tournaments.cli.common import (
    NAME_CHARS,
    QuickHelp,
    console,
    err_console,
    fail,
    famiglia_command,
    first_leaf,
    interrupted,
    shown,
    user_errors,
)
from tournaments.cli.reports import print_standings
from tournaments.sanity import MAX_CONCURRENCY, MAX_WORKERS, count_problem, file_target_problem, folder_problem

# The library behind these commands (the referee and Trio, the executors, the
# ratings with numpy) is imported in the functions that run them, not at every
# start of famiglia (tournaments.cli).
if TYPE_CHECKING:
    from rich.table import Table

    from referee.match import MatchRecord
    from tournaments.config import TournamentConfig
    from tournaments.executors.base import Executor
    from tournaments.runner import WorkerFailed
    from tournaments.schedule import ScheduledGame
    from tournaments.store import Store, StoreLock

__all__ = ["app", "demo", "play_with_display"]

app = typer.Typer(help="Run tournaments described in TOML files.", no_args_is_help=True, cls=QuickHelp)

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"
DEMO_TABLE = 3  # players per demo table


class LiveTop:
    """A renderable: the current top entrants by OpenSkill (Plackett-Luce)."""

    def __init__(self, names: list[str], size: int = 5) -> None:
        from tournaments.ratings import LiveRatings

        self.names = names
        self.size = size
        self.ratings = LiveRatings(len(names))

    def update(self, game: ScheduledGame, record: MatchRecord) -> None:
        from tournaments.ratings import RatedGame

        self.ratings.update(RatedGame(seating=list(game.seating), ranks=list(record.result.ranks)))

    def __rich__(self) -> Table:
        from rich.table import Table

        table = Table(title="live top 5 (OpenSkill)", title_justify="left", box=None, pad_edge=False)
        table.add_column("#", justify="right")
        table.add_column("entrant")
        table.add_column("ordinal", justify="right")
        for place, (entrant, ordinal) in enumerate(self.ratings.top(self.size), start=1):
            table.add_row(str(place), shown(self.names[entrant], NAME_CHARS), f"{ordinal:.2f}")
        return table


def worker_failure(exc: BaseException) -> WorkerFailed | None:
    """The WorkerFailed in ``exc``, alone or inside Trio's exception groups, if that is all it holds."""
    from tournaments.runner import WorkerFailed

    if isinstance(exc, WorkerFailed):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        failed, rest = exc.split(WorkerFailed)
        if failed is not None and rest is None:
            leaf = first_leaf(failed)
            assert isinstance(leaf, WorkerFailed)
            return leaf
    return None


def deal_key_of(db: Path, config: TournamentConfig) -> bytes:
    """The deal key of another results file, to repeat its deals; ValueError if it has none or deals others."""
    from tournaments.plan import deal_differences
    from tournaments.store import Store

    if not db.is_file():
        raise ValueError(f"--deals-from {db}: no such results file")
    other = Store(db)
    try:
        key = other.deal_key()
        theirs = other.config() if other.tournament() is not None else None
    finally:
        other.close()
    if theirs is None:
        raise ValueError(f"--deals-from {db}: holds no tournament, so no deals to repeat")
    if differences := deal_differences(config, theirs):
        # Its key would deal other cards here: the run would look like a repeat and be none.
        raise ValueError(
            f"--deals-from {db}: holds another tournament ({theirs.name!r}), whose deals this file does not "
            f"repeat: it differs in {', '.join(differences)}; give the same game, variants, seed, format and "
            "table sizes, or leave --deals-from out"
        )
    if key is None:
        raise ValueError(
            f"--deals-from {db}: that store was made before famiglia kept deal keys; its deals cannot be repeated this way"
        )
    return key


def forget_new_store(db: Path) -> None:
    """Remove a results file this run made and that holds no tournament (with SQLite's files beside it)."""
    import sqlite3

    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
            if connection.execute("SELECT 1 FROM tournament").fetchone() is not None:
                return
    except sqlite3.Error:
        pass
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        path.unlink(missing_ok=True)


def play_with_display(
    config: TournamentConfig,
    db: Path,
    *,
    concurrency: int | None,
    workers: int | None,
    deals_from: Path | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    lock: StoreLock | None = None,
    new_versions: list[str] | None = None,
) -> Store:
    """Create, resume or grow the tournament in ``db`` and play what is left, with a live display.

    ``runner.run_tournament`` does the work; this shows it. ``deals_from``:
    another results file whose deal key this tournament uses, so the same
    tournament seed deals the same games as there. ``executor``: local (this
    machine) or dask (the cluster whose scheduler is at ``scheduler``).
    ``lock``: the store's lock (``tournaments.store.hold_store``) when the caller
    holds it already; else it is taken here, before the store is opened, and
    given up once the games are played. A run of the same store in another
    process is refused at once, in one line naming that process, exit 2.
    ``new_versions``: entrants whose changed bot is recorded as a new version
    (else a changed bot is refused in one line, exit 2).
    """
    from tournaments.capacity import check_tournament_capacity
    from tournaments.runner import default_workers, executor_for
    from tournaments.store import hold_store

    if (problem := file_target_problem(db)) is not None:
        fail(f"--db {db}: {problem}")
    workers = workers if workers is not None else (config.executor.workers or default_workers())
    with user_errors():
        chosen = executor_for(executor, workers=workers, scheduler=scheduler)
        check_tournament_capacity(config, concurrency, workers)  # before the store is touched
        held = lock if lock is not None else hold_store(db)
    try:
        return _play_held(
            config, db, chosen, concurrency=concurrency, workers=workers, deals_from=deals_from,
            new_versions=new_versions or [],
        )  # fmt: skip
    finally:
        if held is not lock:
            held.release()


def _play_held(
    config: TournamentConfig,
    db: Path,
    chosen: Executor,
    *,
    concurrency: int | None,
    workers: int,
    deals_from: Path | None,
    new_versions: list[str],
) -> Store:
    """``play_with_display`` once the store's lock is held."""
    from rich.console import Group
    from rich.live import Live
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from referee.sandbox import sandbox_summary
    from tournaments.fingerprint import settle_versions
    from tournaments.finished import games_words, stopped_test
    from tournaments.grow import open_tournament
    from tournaments.ratings import RatedGame
    from tournaments.runner import GameDone, RunStarted, run_tournament
    from tournaments.runner import Progress as RunProgress
    from tournaments.store import Store

    made_here = not db.exists()
    try:
        with user_errors():
            store = Store(db)
            if deals_from is not None:
                store.use_deal_key(deal_key_of(deals_from, config), str(deals_from))
            key = store.deal_key()
            opened = open_tournament(store, config)
            # Before a game is played: a bot edited in place under an old name is refused here.
            versions = settle_versions(store, opened.config, new_versions)
    except BaseException:
        if made_here:
            # Refused before a tournament was stored: leave no empty results file behind.
            forget_new_store(db)
        raise
    config = opened.config
    if key is None:
        err_console.print(
            f"note: {db} was made before famiglia kept deal keys: its deals follow from the tournament "
            "file's seed, which bots that can read that file could compute; use a new --db for secret deals",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:.1f} games/s"),
        TimeRemainingColumn(),
        console=console,
    )
    # The description column reads markup: the tournament's name is shown, not obeyed.
    task = progress.add_task(shown(config.name), total=None, completed=0, rate=0.0)
    top = LiveTop([e.name for e in config.entrants])
    for played in store.finished():
        top.ratings.update(RatedGame(seating=[s.entrant for s in played.seats], ranks=[s.rank for s in played.seats]))
    began = time.monotonic()
    played_now = 0

    def on_progress(event: RunProgress) -> None:
        nonlocal played_now
        if isinstance(event, RunStarted):
            recorded = event.done + event.errors
            stopped = stopped_test(store) if config.format.kind == "head-to-head" else None
            if stopped is not None:
                # A decided head-to-head has nothing left to play, whatever its schedule still holds.
                console.print(
                    f"{shown(repr(config.name))}: {shown(games_words(stopped))}; nothing left to play "
                    f"(results in {shown(str(db))})",
                    highlight=False,
                    soft_wrap=True,
                )
                progress.update(task, total=recorded, completed=recorded, visible=False)
                return
            if event.how == "begun":
                at_most = "at most " if config.format.kind == "head-to-head" else ""
                until = "; it stops once its test decides" if at_most else ""
                console.print(
                    f"{config.name!r}: {at_most}{event.total} games{until}; results database: {db}",
                    markup=False,
                    highlight=False,
                    soft_wrap=True,
                )
            elif event.how == "grown":
                # Entrant names may be their authors' choice: shown, so this line is markup.
                names = ", ".join(shown(name, NAME_CHARS) for name in event.new_entrants)
                added = f"new entrants {names}; " if event.new_entrants else ""
                console.print(
                    f"growing {shown(repr(config.name))}: {added}{event.new_games} new games; {event.done} of "
                    f"{event.total} games already recorded in {shown(str(db))} (kept and counted)",
                    highlight=False,
                    soft_wrap=True,
                )
            else:
                console.print(
                    f"resuming {config.name!r}: {recorded} of {event.total} games already recorded in {db}"
                    + (f" ({event.errors} of them harness errors, not played again)" if event.errors else ""),
                    markup=False,
                    highlight=False,
                    soft_wrap=True,
                )
            console.print(f"sandbox: {config.sandbox.level} ({sandbox_summary(config.sandbox.level)})", highlight=False)
            progress.update(task, total=event.total, completed=recorded)
        elif isinstance(event, GameDone):
            played_now += 1
            top.update(event.game, event.record)
            progress.update(task, advance=1, rate=played_now / max(1e-9, time.monotonic() - began))
        else:
            progress.update(task, advance=1)
            progress.console.print(
                f"game {event.game.index}: harness error (recorded, not rated): {event.error}",
                highlight=False, markup=False,
            )  # fmt: skip

    try:
        with user_errors(), Live(Group(progress, top), console=console, refresh_per_second=4, transient=False):
            run_tournament(
                config, store, on_progress, executor=chosen, concurrency=concurrency, workers=workers, opened=opened,
                versions=versions,
            )  # fmt: skip
            if config.format.kind == "head-to-head" and stopped_test(store) is not None:
                # Decided: the games it did not need are not missing, so the bar ends full.
                done = int(progress.tasks[0].completed)
                progress.update(task, total=done, completed=done)
        console.print()
    except BaseException as exc:
        if not console.is_terminal:
            # Off a terminal the live display's last frame ends without a newline;
            # end it so the message below starts a line of its own.
            console.print()
        if (failure := worker_failure(exc)) is not None:
            done, total = store.counts()
            fail(f"{failure}; {done} of {total} games are recorded in {db}; run the same command again to resume", 1)
        if not interrupted(exc):
            raise
        done, total = store.counts()
        err_console.print(
            f"interrupted: {done} of {total} games are recorded in {db}; run the same command again to resume",
            markup=False,
            highlight=False,
            soft_wrap=True,  # one line however long the path: a script may read it
        )
        raise typer.Exit(130) from None
    return store


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


def check_counts(concurrency: int | None, workers: int | None) -> None:
    """Refuse --concurrency and --workers values that cannot work, in one line."""
    if concurrency is not None and (problem := count_problem(concurrency, low=1, high=MAX_CONCURRENCY, what="games")):
        fail(f"--concurrency {concurrency}: {problem}")
    if workers is not None and (problem := count_problem(workers, low=1, high=MAX_WORKERS, what="processes")):
        fail(f"--workers {workers}: {problem}")


@app.command("run")
def run(
    file: Annotated[Path, typer.Argument(help="the tournament file (TOML)")],
    db: Annotated[Path | None, typer.Option(help="results database (default: FILE with .sqlite)")] = None,
    concurrency: Annotated[int | None, typer.Option(help="games at once in all (default: the file's)")] = None,
    workers: Annotated[int | None, typer.Option(help="referee processes (default: one per core)")] = None,
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
    from tournaments.config import ConfigProblems, load_tournament

    check_counts(concurrency, workers)
    if deals_from is not None and not deals_from.is_file():
        fail(f"--deals-from {deals_from}: no such results file" + (" (it is a folder)" if deals_from.is_dir() else ""))
    if file.is_dir():
        fail(f"{file}: is a folder; give the tournament file (TOML) in it")
    try:
        config = load_tournament(file)
    except ConfigProblems as exc:
        for problem in exc.problems:
            # A problem may quote an entrant's bot.toml, which its author wrote.
            err_console.print(f"famiglia: error: {shown(f'{file}: {problem}')}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    from tournaments.config_notes import config_notes

    for note in config_notes(config):  # values rounded or not applied: said, never changed in silence
        err_console.print(f"famiglia: note: {shown(f'{file}: {note}')}", highlight=False, soft_wrap=True)
    db = db or file.with_suffix(".sqlite")
    store = play_with_display(
        config, db, concurrency=concurrency, workers=workers, deals_from=deals_from,
        executor=executor or config.executor.kind, scheduler=scheduler or config.executor.scheduler,
        new_versions=new_version,
    )  # fmt: skip
    from tournaments.reports import standings  # numpy and scipy: only once the games are played

    print_standings(standings(store))
    exit_on_harness_errors(store, db)


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
    from tournaments.config import parse_tournament

    return parse_tournament(tomllib.loads(demo_toml(root)), base=root, source="demo")


def demo(
    folder: Annotated[Path, typer.Option(help="where the demo's results and replays go")] = Path("runs"),
    workers: Annotated[int | None, typer.Option(help="referee processes (default: one per core)")] = None,
) -> None:
    """Run a small built-in tournament of the sample bots and print the standings."""
    from referee.private import make_private_dirs
    from tournaments.config import load_tournament
    from tournaments.store import hold_store

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
        for stale in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            stale.unlink(missing_ok=True)
        shutil.rmtree(folder / "demo-replays", ignore_errors=True)
        with user_errors():
            tournament_file = folder / "demo.toml"
            tournament_file.write_text(demo_toml(folder), encoding="utf-8")
            config = load_tournament(tournament_file)
        store = play_with_display(config, db, concurrency=None, workers=workers, lock=lock)
    from tournaments.reports import standings  # numpy and scipy: only once the games are played

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
