"""What a report's page-writing worker process runs: one game's viewer pages, and nothing of the report.

A worker started by ``spawn`` imports the module of the function it is sent.
This one needs the viewer alone; the report's page and standings bring numpy
and scipy, which cost each worker a third of a second of CPU to import for
nothing. The tasks and answers are plain values for the same reason: a
``GameRow`` or ``GameLinks`` would make the worker import the module that
defines it.
"""

from __future__ import annotations

from pathlib import Path

from tournaments.hosting.viewer import NotAReplay, NoViewer, write_viewer
from tournaments.hosting.viewer.page import ASSETS

__all__ = ["write_game", "write_games"]


def write_game(replay: str, target: Path) -> str:
    """Write the viewer pages of ``replay`` (a file that is there) at ``target``; "" when written, else why not."""
    try:
        write_viewer(Path(replay), target, assets=ASSETS)
    except NotAReplay:
        return "not a replay"
    except NoViewer:
        return "this game has no viewer"
    return ""


def write_games(tasks: list[tuple[str, Path]]) -> list[str]:
    """``write_game`` for each (replay, target) of one worker's share, in order."""
    return [write_game(replay, target) for replay, target in tasks]
