"""A tournament's report written to disk: its page, and beside it a viewer page per game.

What ``famiglia report`` does, in two steps so that the command can show a
progress bar over the second: the results are read from the store when a
``ReportWriter`` is made, ``write_game_pages`` writes the viewer pages (the long
part), ``render`` makes the page and ``save`` writes it (0600, renamed into
place, so a reader never sees half a page).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path

from referee.private import make_private_dirs, write_private
from tournaments.config.sections import cpus_available
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

    def save(self, text: str) -> None:
        """Write the rendered page, readable by the host alone; OSError when it cannot be written."""
        write_private(self.page, text.encode("utf-8"))
