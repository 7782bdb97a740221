"""A season's end: the deadline closes the ladder, freezes its versions, and a final decides the season.

Once ``[ladder.season] deadline`` has passed (and it is later than the
season's opening: a new season does not inherit its predecessor's deadline),
the season is closed: submissions and challenges are refused with one line,
the loop deals no more tables of its own, and each entrant's active version at
that moment is its finalist (fixed once, in the store, so a restart keeps it).

The final is a tournament among the finalists, played by the tournament wing
through the runner the composition root registered on the floor
(``tournaments.hosting.finals``): a round-robin of balanced tables of every
final table size, each table in every seating of one deal, in a results store
of its own under ``LADDER-data/seasons/N/``. That store is what makes the final
resumable: a server killed mid-final plays, at its next start, only the games
the store lacks. When it is whole, the fitted standings (with intervals) are
published in the ladder's store and the report pages beside the final's store.
"""

from __future__ import annotations

import datetime
import sys
import traceback
from pathlib import Path
from typing import Protocol

import msgspec
import trio

from ladder.config import LadderConfig, LadderPaths
from ladder.seasons import SeasonBook, SeasonRow
from ladder.store import LadderStore
from ladder.submissions import ready_bot
from protocol.untrusted import terminal_text
from referee.settings import RefereeSettings
from tournaments.hosting.faults import machine_fault
from tournaments.hosting.finals import FinalPlan, final_runner


class Ladder(Protocol):
    """What a season's end needs of the ladder (``ladder.loop.Ladder``, which imports this module)."""

    config: LadderConfig
    paths: LadderPaths
    store: LadderStore
    settings: RefereeSettings


__all__ = [
    "RETRY_S",
    "closed_line",
    "deadline_passed",
    "final_plan",
    "report_page",
    "run_season",
    "season_folder",
]

RETRY_S = 60.0
"""How long a final that stopped on an error waits before it is tried again (it resumes where it stopped)."""


def season_folder(paths: LadderPaths, number: int) -> Path:
    """Where season ``number``'s final keeps its results store, replays and report pages."""
    return paths.data / "seasons" / str(number)


def report_page(paths: LadderPaths, number: int) -> Path:
    return season_folder(paths, number) / "report.html"


def deadline_passed(config: LadderConfig, season: SeasonRow, now: datetime.datetime) -> bool:
    """Whether the file's deadline closes ``season``: set, later than the season's opening, and past."""
    deadline = config.season.deadline
    if deadline is None:
        return False
    return datetime.datetime.fromisoformat(season.opened) < deadline <= now


def closed_line(config: LadderConfig, season: SeasonRow, now: datetime.datetime) -> str | None:
    """The one line refusing a submission or challenge in a closed season; None while it is open."""
    if season.frozen is None and not deadline_passed(config, season, now):
        return None
    closed_at = season.deadline or (config.season.deadline.isoformat() if config.season.deadline else "")
    return (
        f"season {season.number} closed at {closed_at}: submissions and challenges open again "
        "when the host starts a new season"
    )


def final_plan(ladder: Ladder, season: SeasonRow) -> FinalPlan:
    """The final of ``season`` among its finalists: blocking (each finalist's bot is made ready), run in a thread."""
    config = ladder.config
    folder = season_folder(ladder.paths, season.number)
    entrants = [
        (name, ready_bot(ladder.paths.uploads, ladder.store.version(version).digest, name, ladder.settings))
        for name, version in season.finalists
    ]
    wanted = config.season.final_table_sizes or config.table_sizes
    return FinalPlan(
        name=f"{config.name}, season {season.number} final",
        game=config.game,
        variants=dict(config.variants),
        table_sizes=[size for size in wanted if size <= len(entrants)],
        games_per_entrant=config.season.final_games,
        illegal_action=config.illegal_action,
        time=msgspec.to_builtins(config.time),
        sandbox=msgspec.to_builtins(config.sandbox),
        concurrency=config.concurrency,
        entrants=entrants,
        db=folder / "final.sqlite",
        report=folder / "report.html",
    )


def _freeze(ladder: Ladder, book: SeasonBook, season: SeasonRow) -> SeasonRow:
    """Fix the finalists: each entrant's active version now (the first call after the deadline)."""
    if season.frozen is not None:
        return season
    finalists = [(version.entrant, version.id) for version in ladder.store.versions(states=("active",))]
    deadline = ladder.config.season.deadline
    assert deadline is not None
    return book.freeze(season.number, deadline.isoformat(), finalists)


async def play_season_final(ladder: Ladder, book: SeasonBook) -> None:
    """Freeze the current season if its deadline passed, and play and publish its final unless it is published."""
    season = book.current()
    if season.frozen is None and not deadline_passed(ladder.config, season, datetime.datetime.now(datetime.UTC)):
        return
    season = _freeze(ladder, book, season)
    if season.published is not None:
        return
    plan = await trio.to_thread.run_sync(final_plan, ladder, season)
    if not plan.table_sizes:
        # Fewer finalists than the smallest table: there is no game to play, and the final says so by having none.
        book.publish(season.number, [], 0)
        return
    print(f"season {season.number} closed: its final among {len(plan.entrants)} versions begins", flush=True)
    result = await final_runner()(plan)
    book.publish(season.number, result.standings, result.games)
    print(f"season {season.number}: the final is published ({result.games} games, {result.report})", flush=True)


async def run_season(ladder: Ladder, book: SeasonBook) -> None:
    """Wait for the deadline, then play the final; a final stopped by an error is resumed after ``RETRY_S``."""
    while True:
        season = book.current()
        deadline = ladder.config.season.deadline
        now = datetime.datetime.now(datetime.UTC)
        if season.frozen is None and not deadline_passed(ladder.config, season, now):
            if deadline is None or deadline <= datetime.datetime.fromisoformat(season.opened):
                await trio.sleep_forever()  # no deadline for this season in the file: it never closes by itself
            assert deadline is not None
            await trio.sleep(min(max((deadline - now).total_seconds(), 0.0), 3600.0) + 0.01)
            continue
        try:
            await play_season_final(ladder, book)
        except Exception as exc:  # the final's fault stops the final, not the pages; tried again
            if machine_fault(exc):
                raise  # a full disk, no memory: the server stops, saying why; its restart resumes the final
            traceback.print_exc()
            print(terminal_text(f"season {season.number}: the final stopped ({exc}); retrying in {RETRY_S:.0f} s"),
                  file=sys.stderr, flush=True)  # fmt: skip
            await trio.sleep(RETRY_S)
            continue
        await trio.sleep_forever()
