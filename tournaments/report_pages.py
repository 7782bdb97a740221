"""The viewer page of every game a report lists, written beside the report.

``game_links`` is the one place that decides what a game's row links to: it
checks that the game's replay is there and readable, writes its viewer pages
into ``<report>-games/`` and says why when it cannot, so a check that a replay
belongs to its game slots in here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from tournaments.html_report import GameLinks, replay_href
from tournaments.reports import GameRow
from tournaments.viewer import NotAReplay, NoViewer, write_viewer

__all__ = ["game_links", "pages_folder"]


def pages_folder(page: Path) -> Path:
    """Where the viewer pages of the report written to ``page`` go."""
    return page.with_name(f"{page.stem}-games")


def game_links(
    games: Sequence[GameRow], page: Path, *, progress: Callable[[], None] | None = None
) -> dict[int, GameLinks]:
    """Write each game's viewer pages; every game's links, relative to ``page``."""
    folder = pages_folder(page)
    links: dict[int, GameLinks] = {}
    for game in games:
        links[game.game] = _one_game(game, page, folder)
        if progress is not None:
            progress()
    return links


def _one_game(game: GameRow, page: Path, folder: Path) -> GameLinks:
    replay = replay_href(game.replay, page)
    if game.replay_note:  # a replay that is not this game (another tournament's, an edited file)
        return GameLinks(note=f"not linked: {game.replay_note}")
    if not game.replay:
        return GameLinks(note="no replay kept")
    source = Path(game.replay)
    if not source.is_file():
        return GameLinks(replay=None, note="replay missing")
    target = folder / f"game-{game.game:06d}.html"
    try:
        write_viewer(source, target)
    except NotAReplay:
        return GameLinks(replay=replay, note="not a replay")
    except NoViewer:
        return GameLinks(replay=replay, note="this game has no viewer")
    return GameLinks(viewer=replay_href(str(target), page), replay=replay)
