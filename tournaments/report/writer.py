"""A tournament's report written to disk: its page, and beside it a viewer page per game.

What ``famiglia report`` does, in two steps so that the command can show a
progress bar over the second: the results are read from the store when a
``ReportWriter`` is made, ``write_game_pages`` writes the viewer pages (the long
part), ``render`` makes the page and ``save`` writes it (0600, renamed into
place, so a reader never sees half a page).
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable
from pathlib import Path

from referee.private import make_private_dirs, write_private
from tournaments.hosting.settings import cpus_available
from tournaments.report.figures import rating_history, thinking_times
from tournaments.report.game_pages import game_links, pages_folder
from tournaments.report.page import MAX_GAME_ROWS, GameLinks, render_report
from tournaments.report.standings import crosstable, game_rows, standings
from tournaments.store import Store

__all__ = ["ReportWriter"]


class ReportWriter:
    """The report of the tournament in ``store``, to be written at ``page``."""

    def __init__(self, store: Store, page: Path) -> None:
        self.store = store
        self.page = page
        """Where the page goes, as the caller named it (the messages show it so)."""
        make_private_dirs(page.parent)  # a missing folder is made, as for every file famiglia writes
        self.standings = standings(store)
        self.crosstable = crosstable(store)
        self.games = game_rows(store)
        self.listed = self.games[:MAX_GAME_ROWS]
        """The games the page lists, each with its links; past the cap the page says how many it left out."""
        self.links: dict[int, GameLinks] = {}

    @property
    def pages_folder(self) -> Path:
        """Where the viewer pages go: beside the page."""
        return pages_folder(self.page)

    def write_game_pages(
        self, *, viewer: bool = True, jobs: int | None = None, progress: Callable[[], None] | None = None
    ) -> None:
        """Each listed game's links; with ``viewer``, its viewer pages written by ``jobs`` processes
        (default: one per CPU). ``progress`` is called once per game."""
        self.links = game_links(
            self.listed, self.page.resolve(), progress=progress, viewer=viewer, jobs=jobs or cpus_available()
        )

    def render(self) -> str:
        """The page, as of now."""
        when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        return render_report(
            self.standings, self.crosstable, self.games, generated=when, page_path=self.page.resolve(),
            history=rating_history(self.store), times=thinking_times(self.store), links=self.links,
        )  # fmt: skip

    def missing_replays(self) -> str | None:
        """One line for the host when played games have no replay to show, else None: how many, and why.

        Each such game is listed without a viewer page (its row says why); this
        says it once where the host is looking, naming the folder where the
        replays recorded for them were looked for.
        """
        recorded = {played.game: played.replay for played in self.store.finished()}
        absent: list[Path] = []
        foreign = kept_none = played = 0
        for row in self.games:
            if row.error:  # a harness error: no game was played, no replay is due
                continue
            played += 1
            if row.replay is not None and Path(row.replay).is_file():
                continue
            path = recorded.get(row.game)
            if path is None:
                kept_none += 1
            elif Path(path).is_file():
                foreign += 1  # a file is there, but not this game's replay (replay_note says whose)
            else:
                absent.append(Path(path))
        reasons = [
            (len(absent), f"not found in {_folders(absent)}"),
            (foreign, "another game's replay at their path (famiglia games shows whose)"),
            (kept_none, "kept none (their run had replays off)"),
        ]
        given = [(count, reason) for count, reason in reasons if count]
        if not given:
            return None
        total = sum(count for count, _ in given)
        said = given[0][1] if len(given) == 1 else ", ".join(f"{count} {reason}" for count, reason in given)
        return (
            f"{total} of {played} games have no replay: {said}; the report lists them without a replay or viewer page"
        )

    def save(self, text: str) -> None:
        """Write the rendered page, readable by the host alone; OSError when it cannot be written."""
        write_private(self.page, text.encode("utf-8"))


def _folders(paths: list[Path]) -> str:
    """The folder ``paths`` are in, or how many folders under which one."""
    folders = sorted({str(path.parent) for path in paths})
    if len(folders) <= 1:
        return "".join(folders)
    return f"{len(folders)} folders under {os.path.commonpath(folders)}"
