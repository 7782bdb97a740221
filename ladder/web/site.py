"""What every endpoint shares: the state the app keeps, and its ways of answering.

- ``Site``: the ladder, the throttle, the templates and the rest of one app's
  state, kept at ``app.state.site``; an endpoint reaches it with
  ``site(request)``, and no endpoint holds any of it in a closure.
- ``page`` and ``not_found``: an HTML page from ``ladder/templates`` with the
  pages' headers (scripts and styles of the page itself only, no referrer);
  ``json`` and ``error``: the API's answers, never kept by a browser.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import jinja2
import msgspec
import trio
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response

from ladder.loop import Ladder
from ladder.store import LadderStore
from ladder.views import Standing, standings
from ladder.web import look
from ladder.web.guard import Throttle

__all__ = ["BOARD_MAX_AGE_S", "PAGE_HEADERS", "Site", "error", "json", "not_found", "page", "site"]

BOARD_MAX_AGE_S = 1.0
"""How old the board an entrant page places its entrant on may be: as old as the anonymous leaderboard."""

PAGE_HEADERS = {
    # The viewer's player and board scripts are inline: scripts of the page itself only, nothing fetched.
    "content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    # same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with a form's POST
    # even to its own site, and every form here refuses a POST from another origin (guard.same_origin).
    "referrer-policy": "same-origin",
}


class Site:
    """One web app's state: what its endpoints read and keep between requests."""

    def __init__(self, ladder: Ladder, throttle: Throttle) -> None:
        self.ladder = ladder
        self.store: LadderStore = ladder.store
        self.throttle = throttle
        """Failed token attempts per client, by every way a token comes in."""
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("ladder", "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.filters.update(ago=look.ago, exact=look.exact)
        self.templates.globals.update(badges=look.badges, band_scale=look.band_scale)
        self.uploading: set[int] = set()
        """The entrants whose upload is arriving."""
        self.secret = secrets.token_bytes(32)
        """The key of the admin forms' CSRF tokens: drawn when the app is made and kept in memory
        only, so a restart makes open forms stale, nothing worse."""
        self._board: tuple[float, list[Standing]] | None = None
        self.fit_turn = trio.Lock()
        """Held while /api/standings/fit makes a fit: one at a time, whoever asks."""
        self.fit_answer: tuple[int, bytes] | None = None
        """The latest fit /api/standings/fit made: over how many finished games, and its JSON."""

    def board(self) -> list[Standing]:
        """The leaderboard's rows as an entrant page places its entrant: made at most once a second.

        Every entrant page shows its entrant's rank, and the board costs a read of every active version
        and its games: with many entrants polling their pages, one read a second serves them all.
        """
        if self._board is None or time.monotonic() - self._board[0] > BOARD_MAX_AGE_S:
            fit = self.ladder.fit
            rows = standings(self.store, fit.rows if fit else None)
            self._board = (
                time.monotonic(),
                rows,
            )  # its age counts from when it was done: a slow read is not stale at once
        return self._board[1]


def site(conn: HTTPConnection) -> Site:
    """The state of the app serving ``conn``."""
    state = conn.app.state.site
    assert isinstance(state, Site)
    return state


def page(request: Request, template: str, status: int = 200, **values: Any) -> Response:
    shared = site(request)
    # The logged-in entrant, for the navigation bar: an ``auth.Entrant`` carries its store row (auth
    # imports this module, so the type is not named here); the admin and strangers have none.
    row = getattr(request.scope.get("user"), "row", None)
    viewer: str | None = getattr(row, "name", None)
    text = shared.templates.get_template(template).render(ladder=shared.ladder.config.name, viewer=viewer, **values)
    return Response(text, status_code=status, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


def not_found(request: Request) -> Response:
    return page(request, "message.html.j2", 404, title="Not found", message="There is nothing here.")


def json(value: Any, status: int = 200) -> Response:
    return Response(
        msgspec.json.encode(value),
        status_code=status,
        media_type="application/json",
        headers={"x-content-type-options": "nosniff", "cache-control": "no-store"},
    )


def error(message: str, status: int) -> Response:
    return json({"error": message}, status)
