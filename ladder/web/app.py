"""The ladder's web app: its pages, its API and the host's, put together.

``make_app`` only composes: the routes of ``ladder.web.pages``,
``ladder.web.logs`` and ``ladder.web.downloads``, the API under
``Mount("/api", ...)`` (``ladder.web.api`` and the host's ``/api/admin``),
the host's pages (``ladder.web.admin``); in front of them, anonymous pages
kept a second (``ladder.web.cache``) and who a request comes from
(``ladder.web.auth``); and the answer to a request an endpoint's
``requires`` refuses. Everything the endpoints share is ``app.state.site``
(``ladder.web.site``). The app has no lifespan: it opens nothing, and the
ladder it serves is opened and closed by its caller (``ladder.serve``).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route

from ladder.loop import Ladder
from ladder.web import admin, api, downloads, feed, logs, pages, seasons
from ladder.web.auth import Door, Stranger, is_admin_page, refused
from ladder.web.cache import KeepAnonymous, PageCache
from ladder.web.guard import Throttle
from ladder.web.site import Site, error

__all__ = ["make_app"]


def make_app(ladder: Ladder, *, throttle: Throttle | None = None) -> Starlette:
    """The web app of ``ladder``; it reads the store and hands submissions to the ladder's checks."""
    app = Starlette(
        routes=[
            *downloads.page_routes,  # before the pages: /games/{page} would take a download's address
            *pages.routes,
            *logs.routes,
            *feed.routes,
            *seasons.routes,
            # A bare /api is no page: 404 as before the mount, not the mount's redirect to /api/.
            Route("/api", _no_page, methods=["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"]),
            Mount("/api", routes=[*api.routes, *downloads.api_routes, *admin.api_routes]),
            *admin.page_routes,
        ],
        middleware=[Middleware(KeepAnonymous, cache=PageCache()), Middleware(AuthenticationMiddleware, backend=Door())],
        exception_handlers={401: _refused},
    )
    app.state.site = Site(ladder, throttle or Throttle())
    return app


async def _no_page(request: Request) -> Response:
    return PlainTextResponse("Not Found", status_code=404)


def _refused(request: Request, exc: Exception) -> Response:
    """What an endpoint answers a stranger its ``requires(..., status_code=401)`` refused: what the stranger
    holds (401 no token, 403 a wrong one, 429 throttled), as a page on the host's pages, as JSON elsewhere."""
    user = request.user
    assert isinstance(user, Stranger)  # each address takes one kind of token: no entrant where the admin is needed
    refused(request, user)
    if is_admin_page(str(request.scope["path"])):
        return admin.refusal_page(request, user)
    return error(user.said, user.status)
