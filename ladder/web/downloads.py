"""What an entrant downloads: a game's replay, its own seat's view, and the API's record of one game.

- ``/games/game-N.jsonl``: the replay file as the referee wrote it (what
  ``famiglia replay verify``, ``show`` and ``view`` read), to anyone once every
  game of its deal is over, as the game's page is; streamed from disk, so its
  size costs the server no memory.
- ``/games/game-N.seat-S.jsonl``: what seat S knew after each decision (the
  engine's view for that seat, as its page shows it), to the seat's owner
  only; anyone else gets the 404 of a game that does not exist. Built as a
  page is, with at most ``GAME_PAGE_NOTES_BYTES`` of the seat's log lines; its
  header's ``left_out`` says how many more there were.
- ``/api/games/N``: one finished game with its seats, versions, result and
  the links above that the reader may follow.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import msgspec
import trio
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from ladder.store import GameRow
from ladder.views import game_views
from ladder.web.auth import owns
from ladder.web.pages import GAME_PAGE_NOTES_BYTES, GAME_PAGES_AT_ONCE, replay_file
from ladder.web.site import PAGE_HEADERS, error, json, not_found, site

__all__ = ["api_routes", "page_routes"]

_JSONL = "application/x-ndjson"


def _open_game(request: Request, game_id: int) -> GameRow | None:
    """The finished game ``game_id`` whose deal may be shown (every game on it over), else None."""
    store = site(request).store
    rows = store.games(game_id=game_id, limit=1)
    if not rows or rows[0].replay is None or not store.table_finished(rows[0].table):
        return None
    return rows[0]


def _attachment(name: str) -> dict[str, str]:
    return {**PAGE_HEADERS, "content-disposition": f'attachment; filename="{name}"', "cache-control": "no-store"}


async def replay_download(request: Request) -> Response:
    game_id = request.path_params["game"]
    row = _open_game(request, game_id)
    path = None if row is None or row.replay is None else replay_file(request, row.replay)
    if path is None or not path.is_file():
        return not_found(request)
    return FileResponse(path, media_type=_JSONL, headers=_attachment(f"game-{game_id:06d}.jsonl"))


async def seat_view_download(request: Request) -> Response:
    from tournaments.hosting.viewer.build import build_viewer_data

    game_id, seat = request.path_params["game"], request.path_params["seat"]
    row = _open_game(request, game_id)
    seats = [s for s in row.seats if s.seat == seat] if row is not None and row.replay is not None else []
    if row is None or row.replay is None or not seats or not owns(request, seats[0].entrant):
        return not_found(request)
    # As a game page is built: a few at a time, with a bounded part of the seat's log lines.
    build = partial(build_viewer_data, replay_file(request, row.replay), notes_bytes=GAME_PAGE_NOTES_BYTES)
    data = await trio.to_thread.run_sync(build, limiter=GAME_PAGES_AT_ONCE)
    steps = data.views.get(str(seat), [])
    header: dict[str, Any] = {
        "game": data.game, "match": data.match, "seat": seat, "seats": data.seats, "steps": len(steps),
    }  # fmt: skip
    if left_out := [msgspec.to_builtins(left) for left in data.left_out if left.seat == seat]:
        header["left_out"] = left_out
    lines = [msgspec.json.encode(header), *(msgspec.json.encode({"step": n, "view": v}) for n, v in enumerate(steps))]
    body = b"\n".join(lines) + b"\n"
    return Response(body, media_type=_JSONL, headers=_attachment(f"game-{game_id:06d}.seat-{seat}.jsonl"))


class GameLinks(msgspec.Struct, frozen=True, kw_only=True):
    page: str | None
    """The game's page and ``replay`` its file: None until every game of its deal is over."""
    replay: str | None
    seats: dict[int, str]
    """The views of the reader's own seats, once the deal is over (the owner only)."""
    stderr: dict[int, str]
    """What the reader's own seats wrote to stderr (the owner only)."""


async def api_game(request: Request) -> Response:
    game_id = request.path_params["game"]
    store = site(request).store
    rows = store.games(game_id=game_id, limit=1)
    if not rows:
        return error(f"there is no finished game {game_id}", 404)
    (view,) = game_views(store, rows)
    mine = [s.seat for s in rows[0].seats if owns(request, s.entrant)]
    shown = view.viewable
    links = GameLinks(
        page=f"/games/game-{game_id}.html" if shown else None,
        replay=f"/games/game-{game_id}.jsonl" if shown else None,
        seats={seat: f"/games/game-{game_id}.seat-{seat}.jsonl" for seat in mine} if shown else {},
        stderr={seat: f"/games/{game_id}/stderr/{seat}" for seat in mine},
    )
    return json({"game": view, "links": links})


page_routes = [
    Route("/games/game-{game:int}.jsonl", replay_download),
    Route("/games/game-{game:int}.seat-{seat:int}.jsonl", seat_view_download),
]
api_routes = [Route("/games/{game:int}", api_game)]
