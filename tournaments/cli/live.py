"""The live display of a tournament run: a progress bar, the live top five, and the lines around them.

``play_with_display`` is what ``famiglia tournament run`` and ``famiglia demo``
share. The library plays (``tournaments.lifecycle.opening.open_for_run`` readies the
store, ``tournaments.runner.run_tournament`` plays it); this module only shows
what happens and turns a stop (a lost worker, Ctrl-C) into one line and an
exit code.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tournaments.cli.common import console, err_console, fail, first_leaf, interrupted, user_errors
from tournaments.config.paths import file_target_problem
from tournaments.hosting.markup import NAME_CHARS, shown

# The library behind a run (the referee and Trio, the executors, the ratings
# with numpy) is imported when a run starts, not at every start of famiglia.
if TYPE_CHECKING:
    from rich.table import Table

    from referee.match import MatchRecord
    from tournaments.config.tournament import TournamentConfig
    from tournaments.hosting.executors.base import Executor
    from tournaments.hosting.schedule import ScheduledGame
    from tournaments.hosting.settings import RunCounts
    from tournaments.hosting.storage import StoreLock
    from tournaments.lifecycle.opening import ReadyToRun
    from tournaments.runner import WorkerFailed
    from tournaments.store import Store

__all__ = ["LiveTop", "play_with_display", "worker_failure"]


class LiveTop:
    """A renderable: the current top entrants by OpenSkill (Plackett-Luce)."""

    def __init__(self, names: list[str], size: int = 5) -> None:
        from tournaments.hosting.ratings import LiveRatings

        self.names = names
        self.size = size
        self.ratings = LiveRatings(len(names))

    def update(self, game: ScheduledGame, record: MatchRecord) -> None:
        from tournaments.hosting.ratings import RatedGame

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

    ``concurrency`` and ``workers``: the command line's (None: the file's).
    ``deals_from``: another results file whose deal key this tournament uses, so
    the same tournament seed deals the same games as there. ``executor``: local
    (this machine) or dask (the cluster whose scheduler is at ``scheduler``).
    ``lock``: the store's lock (``tournaments.hosting.storage.hold_store``) when the caller
    holds it already; else it is taken here, before the store is opened, and
    given up once the games are played. A run of the same store in another
    process is refused at once, in one line naming that process, exit 2.
    ``new_versions``: entrants whose changed bot is recorded as a new version
    (else a changed bot is refused in one line, exit 2).
    """
    from tournaments.config.capacity import check_tournament_capacity
    from tournaments.hosting.executors.choice import executor_for
    from tournaments.hosting.storage import hold_store
    from tournaments.lifecycle.opening import open_for_run

    if (problem := file_target_problem(db)) is not None:
        fail(f"--db {db}: {problem}")
    counts = config.executor.counts(concurrency=concurrency, workers=workers)
    with user_errors():
        chosen = executor_for(
            executor, concurrency=counts.concurrency, workers=counts.workers, scheduler=scheduler,
            file_section="[tournament.executor]",
        )  # fmt: skip
        check_tournament_capacity(config, counts)  # before the store is touched
        held = lock if lock is not None else hold_store(db)
    try:
        with user_errors():
            ready = open_for_run(config, db, deals_from=deals_from, new_versions=new_versions or [])
        return _show_run(ready, db, chosen, counts)
    finally:
        if held is not lock:
            held.release()


def _show_run(ready: ReadyToRun, db: Path, chosen: Executor, counts: RunCounts) -> Store:
    """Play the games ``ready`` has left, showing each as it is recorded; the store once they are played."""
    from rich.console import Group
    from rich.live import Live
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from referee.private import opened_warning
    from referee.sandbox import sandbox_summary
    from tournaments.hosting.ratings import RatedGame
    from tournaments.report.status import games_words, stopped_test
    from tournaments.runner import GameDone, RunStarted, run_tournament
    from tournaments.runner import Progress as RunProgress

    store, config = ready.store, ready.opened.config
    if (warning := opened_warning(ready.tightened)) is not None:
        err_console.print(warning, highlight=False, markup=False, soft_wrap=True)
    if ready.public_deals:
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
                config, store, on_progress, executor=chosen, concurrency=counts.concurrency, workers=counts.workers,
                opened=ready.opened, versions=ready.versions,
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
