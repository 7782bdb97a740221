"""The viewer page of every game a report lists, written beside the report.

``game_links`` is the one place that decides what a game's row links to: it
checks that the game's replay is there and readable, writes its viewer pages
into ``<report>-games/`` and says why when it cannot, so a check that a replay
belongs to its game slots in here.

The pages share one folder of code and styles (``<report>-games/assets/``) and
carry only their game's data. Re-running a replay through its engine is most
of the work, so a long tournament's games are shared out over worker
processes (``jobs``), and a game whose pages are newer than its replay and
than the viewer's code keeps them: a report run again during a tournament
writes only the new games' pages.
"""

from __future__ import annotations

import importlib
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path

import tournaments.hosting.viewer as viewer_package
from referee.games import get_rules
from referee.replay import ReplayError, read_header
from tournaments.hosting.viewer.page import ASSETS, write_assets
from tournaments.report.page import GameLinks, replay_href
from tournaments.report.standings import GameRow
from tournaments.report.viewer_jobs import write_game, write_games

__all__ = ["PARALLEL_FROM", "game_links", "pages_folder"]

PARALLEL_FROM = 24
"""Fewer games than this are written in this process: starting workers would cost more than it saves."""

_CHUNK = 8
"""Games per task sent to a worker: enough to make the round trip negligible, few enough to balance."""


def pages_folder(page: Path) -> Path:
    """Where the viewer pages of the report written to ``page`` go."""
    return page.with_name(f"{page.stem}-games")


def game_links(
    games: Sequence[GameRow],
    page: Path,
    *,
    progress: Callable[[], None] | None = None,
    viewer: bool = True,
    jobs: int = 1,
) -> dict[int, GameLinks]:
    """Every game's links, relative to ``page``; with ``viewer``, each game's viewer pages written.

    ``jobs`` worker processes write the pages of a long tournament at once.
    """
    folder = pages_folder(page)
    links: dict[int, GameLinks] = {}
    if not viewer:
        for game in games:
            links[game.game] = _replay_only(game, page)
            if progress is not None:
                progress()
        return links
    # What needs no work is settled here (no replay, a page still current);
    # only the games whose pages must be written go to the workers.
    to_write = []
    for game in games:
        settled = _without_writing(game, page, folder)
        if settled is None:
            to_write.append(game)
        else:
            links[game.game] = settled
            if progress is not None:
                progress()
    for number, link in _written(to_write, page, folder, jobs):
        links[number] = link
        if progress is not None:
            progress()
    if any(link.viewer is not None for link in links.values()):
        write_assets(folder / ASSETS, _games_drawn(games, links))
    return links


def _written(games: Sequence[GameRow], page: Path, folder: Path, jobs: int) -> Iterator[tuple[int, GameLinks]]:
    if jobs <= 1 or len(games) < PARALLEL_FROM:
        for game in games:
            yield game.game, _write_pages(game, page, folder)
        return
    chunks = [list(games[i : i + _CHUNK]) for i in range(0, len(games), _CHUNK)]
    # Plain (replay, page) pairs go out and a note per game comes back: the
    # workers then import the viewer and nothing of the report (viewer_jobs).
    tasks = [[(_replay_of(game), _page_of(game, folder)) for game in chunk] for chunk in chunks]
    # spawn: the workers start clean, not as forks of this process and its
    # progress bar's thread (a fork copies whatever locks that thread holds).
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), mp_context=context) as pool:
        for chunk, notes in zip(chunks, pool.map(write_games, tasks), strict=True):
            for game, note in zip(chunk, notes, strict=True):
                yield game.game, _links_of(game, page, folder, note)


def _replay_only(game: GameRow, page: Path) -> GameLinks:
    if game.replay_note:
        return GameLinks(note=f"not linked: {game.replay_note}")
    replay = replay_href(game.replay, page)
    return GameLinks(replay=replay, note="" if replay else "no replay kept")


def _games_drawn(games: Sequence[GameRow], links: dict[int, GameLinks]) -> set[str]:
    """The game (Vendetta, Sicilianos, a plug-in) whose board script the pages load: a tournament plays one."""
    for game in games:
        if links[game.game].viewer is not None and game.replay:
            try:
                return {read_header(Path(game.replay)).game}
            except ReplayError:
                continue
    return set()


def _page_of(game: GameRow, folder: Path) -> Path:
    return folder / f"game-{game.game:06d}.html"


def _without_writing(game: GameRow, page: Path, folder: Path) -> GameLinks | None:
    """A game's links when no page needs writing (no usable replay, or its pages are current); else None."""
    if game.replay_note:  # a replay that is not this game (another tournament's, an edited file)
        return GameLinks(note=f"not linked: {game.replay_note}")
    if not game.replay:
        return GameLinks(note="no replay kept")
    source = Path(game.replay)
    if not source.is_file():
        return GameLinks(replay=None, note="replay missing")
    target = _page_of(game, folder)
    if _still_current(target, source):
        return GameLinks(viewer=replay_href(str(target), page), replay=replay_href(game.replay, page))
    return None


def _replay_of(game: GameRow) -> str:
    assert game.replay is not None  # a game without one is settled before any page is written
    return game.replay


def _write_pages(game: GameRow, page: Path, folder: Path) -> GameLinks:
    """Write one game's viewer pages (its replay is there); its links, or why it has no page."""
    return _links_of(game, page, folder, write_game(_replay_of(game), _page_of(game, folder)))


def _links_of(game: GameRow, page: Path, folder: Path, note: str) -> GameLinks:
    """A game's links once its pages were written ("") or could not be (``note`` says why)."""
    replay = replay_href(_replay_of(game), page)
    if note:
        return GameLinks(replay=replay, note=note)
    return GameLinks(viewer=replay_href(str(_page_of(game, folder)), page), replay=replay)


def _still_current(page: Path, replay: Path) -> bool:
    """Whether ``page`` (and with it its seat pages) was written from ``replay`` by the viewer of today.

    A report run again while a tournament goes on then writes only the new
    games' pages. The page must be newer than its replay and than the code that
    made it (famiglia's viewer and the game's own view); the shared scripts and
    styles are written afresh every time.
    """
    try:
        written = page.stat().st_mtime_ns
        game = read_header(replay).game
        return written >= replay.stat().st_mtime_ns and written >= _code_time(game)
    except (OSError, ReplayError, ValueError):
        return False


_CODE = (".py", ".js", ".css", ".j2")


@cache
def _code_time(game: str) -> int:
    """When the code behind a game's pages last changed: famiglia's viewer package and the game's package."""
    package = importlib.import_module(type(get_rules(game)).__module__)
    folders = [Path(viewer_package.__file__).parent, Path(package.__file__ or ".").parent]
    return max(
        path.stat().st_mtime_ns
        for folder in folders
        for path in folder.rglob("*")
        if path.suffix in _CODE and "__pycache__" not in path.parts
    )
