"""How a game is shown in the replay viewer: its own drawing, or the generic one.

A game may bring two things, both in the package its ``GameRules.viewer_package()``
names (by default the one that holds its ``GameRules`` subclass; docs/writing-a-game.md, "Show it"):

* a module ``viewer`` with ``snapshot(state, seat, events, memory)``, the plain
  JSON the page draws at each step for one seat's view (``seat`` a number) or
  for everything (``seat`` None); and, if a seat's page may show the other
  seats' actions (they are public, as a Vendetta placement), ``PUBLIC_ACTIONS =
  True``. Optionally also ``snapshots(state, seats, events, memories)``: every
  page's snapshot of one step in one call (``seats`` is ``[None, 0, 1, ...]``,
  ``events`` and ``memories`` go with it, one per page), for a game whose page
  of everything is put together from the seats' views and would otherwise take
  each of them twice; it must return what ``snapshot`` would, page by page;
* a file ``board.js``, installed as package data, which defines
  ``window.FamigliaBoard = {draw(root, step, ctx), describeAction?, describeEvent?}``.

Each part that is missing has a default, so every game can be watched: the
snapshot is the engine's view of each seat the page may show (``views``, by
seat), and the drawing (static/generic-board.js) lays every view and the step's
events out as tables. Neither default knows what the engine hides from every
seat, so the page for everything shows what the seats together knew.
"""

from __future__ import annotations

import importlib
import importlib.resources
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import msgspec

from referee.games.base import GameRules, GameState
from tournaments.hosting.viewer.templating import package_text

__all__ = ["DEFAULT_BOARD", "NoViewer", "Presentation", "default_snapshot", "default_snapshots", "presentation_for"]

DEFAULT_BOARD = "generic-board.js"
"""The generic drawing, in tournaments/hosting/viewer/static."""

Snapshot = Callable[[GameState, "int | None", list[Any], dict[str, Any]], dict[str, Any]]
Snapshots = Callable[[GameState, "list[int | None]", list[list[Any]], list[dict[str, Any]]], list[dict[str, Any]]]


class NoViewer(ValueError):
    """A game's own viewer module is there but cannot be loaded (an error in the plug-in)."""


@dataclass(frozen=True)
class Presentation:
    """What the viewer needs of one game: the snapshot per step, the drawing, and
    whether a seat's page shows the other seats' actions."""

    snapshot: Snapshot
    snapshots: Snapshots
    """Every page's snapshot of one step: the game's ``snapshots``, else ``snapshot`` once per page."""
    board_script: str
    public_actions: bool
    own_snapshot: bool
    own_board: bool


def default_snapshot(state: GameState, seat: int | None, events: list[Any], memory: dict[str, Any]) -> dict[str, Any]:
    """The engine's views as plain JSON: the seat's own, or every seat's for the page of everything."""
    seats = range(state.n_players) if seat is None else (seat,)
    return {"seat": seat, "views": {str(s): msgspec.to_builtins(state.view(s)) for s in seats}}


def default_snapshots(
    state: GameState, seats: list[int | None], events: list[list[Any]], memories: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``default_snapshot`` of every page in ``seats`` at once, each seat's view taken once.

    The page of everything and a seat's page hold the same dict for that seat's
    view: nothing changes a snapshot once it is taken, and a page is encoded on
    its own, so sharing it puts nothing of one page into another.
    """
    wanted = range(state.n_players) if None in seats else sorted({s for s in seats if s is not None})
    views = {s: msgspec.to_builtins(state.view(s)) for s in wanted}
    return [
        {"seat": seat, "views": {str(s): view for s, view in views.items()}}
        if seat is None
        else {"seat": seat, "views": {str(seat): views[seat]}}
        for seat in seats
    ]


def _one_by_one(snapshot: Snapshot) -> Snapshots:
    """A game's ``snapshot`` called for each page in turn (a game without ``snapshots``)."""

    def snapshots(
        state: GameState, seats: list[int | None], events: list[list[Any]], memories: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        return [snapshot(state, seat, seen, memory) for seat, seen, memory in zip(seats, events, memories, strict=True)]

    return snapshots


def _own_module(package: str, game: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"{package}.viewer")
    except ModuleNotFoundError as missing:
        if missing.name in (f"{package}.viewer", package):
            return None  # the game brings no viewer module: the default
        raise NoViewer(f"{game}: the viewer module {package}.viewer does not load: {missing}") from None
    except Exception as exc:  # noqa: BLE001 - a plug-in's code: any failure is told in one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise NoViewer(
            f"{game}: the viewer module {package}.viewer does not load: {type(exc).__name__}: {first}"
        ) from None


def _own_board(package: str) -> str | None:
    try:
        return importlib.resources.files(package).joinpath("board.js").read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError, ModuleNotFoundError, TypeError):
        return None


def presentation_for(rules: GameRules) -> Presentation:
    """The game's presentation: its own parts where it brings them, the defaults elsewhere.

    NoViewer when the game's viewer module is there but fails to import, or has no
    ``snapshot``."""
    package = rules.viewer_package()
    module = _own_module(package, rules.name)
    snapshot: Snapshot = default_snapshot
    snapshots: Snapshots = default_snapshots
    if module is not None:
        own = getattr(module, "snapshot", None)
        if not callable(own):
            raise NoViewer(f"{rules.name}: {package}.viewer has no snapshot(state, seat, events, memory) function")
        snapshot = own
        together = getattr(module, "snapshots", None)
        snapshots = together if callable(together) else _one_by_one(own)
    board = _own_board(package)
    return Presentation(
        snapshot=snapshot,
        snapshots=snapshots,
        board_script=board if board is not None else package_text(DEFAULT_BOARD),
        public_actions=bool(getattr(module, "PUBLIC_ACTIONS", False)),
        own_snapshot=module is not None,
        own_board=board is not None,
    )
