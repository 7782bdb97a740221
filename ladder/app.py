"""The ladder's web app (Starlette): server-rendered pages and the JSON API behind them.

Pages: ``/`` (the leaderboard), ``/entrants/NAME``, ``/games/game-N.html``
(the replay viewer, everything), ``/games/game-N.seat-S.html`` and
``/games/N/stderr/S`` (the seat's owner only), ``/login``, ``/register``
(with the host's invite code). API: ``POST /api/register``,
``/api/standings``, ``/api/entrants/NAME``, ``/api/games?entrant=NAME``,
``/api/entrants/NAME/versions/N/report`` (owner only) and ``POST
/api/submissions`` (a tar archive as the body, the token as a bearer token).
The host's ``/admin`` pages and ``/api/admin/...`` are in ``ladder.admin``.

What a reader may not see answers 404 exactly as what does not exist, so a
stranger learns nothing from the difference. Everything an entrant or a bot
controls reaches a page through Jinja's autoescaping (names, reasons, the
check-bot report) or as JSON inside the viewer's own escaping.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jinja2
import msgspec
import trio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ladder.admin import admin_routes
from ladder.cache import PageCache
from ladder.guard import COOKIE, BodyTooLarge, Throttle, read_body, token_of
from ladder.intake import save_upload
from ladder.invites import InviteRefused, redeem_invite
from ladder.loop import Ladder
from ladder.names import NAME_RULE, valid_name
from ladder.store import EntrantRow, RateLimited, new_token
from ladder.upload import UploadRefused, inspect_upload
from ladder.views import entrant_view, fit_standings, game_views, rating_points, standings

__all__ = ["make_app"]

_PAGE_HEADERS = {
    # The viewer's player and board scripts are inline: scripts of the page itself only, nothing fetched.
    "content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
_GAME_PAGE = re.compile(r"game-(\d{1,12})(?:\.seat-(\d))?\.html")
_LOGIN_BYTES = 4096
_UPLOAD_S = 300.0
"""How long an upload may take to arrive: max_bytes at a slow link's pace."""


class _Challenge(msgspec.Struct, forbid_unknown_fields=True):
    opponents: list[str]


class _Registration(msgspec.Struct, forbid_unknown_fields=True):
    code: str
    name: str


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("ladder", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _json(value: Any, status: int = 200) -> Response:
    return Response(
        msgspec.json.encode(value),
        status_code=status,
        media_type="application/json",
        headers={"x-content-type-options": "nosniff", "cache-control": "no-store"},
    )


def _error(message: str, status: int) -> Response:
    return _json({"error": message}, status)


def make_app(ladder: Ladder, *, throttle: Throttle | None = None) -> Starlette:
    """The web app of ``ladder``; it reads the store and hands submissions to the ladder's intake."""
    store = ladder.store
    pages = _environment()
    guard = throttle or Throttle()
    uploading: set[int] = set()
    """The entrants whose upload is arriving."""

    def page(template: str, status: int = 200, **values: Any) -> Response:
        text = pages.get_template(template).render(ladder=ladder.config.name, **values)
        return Response(text, status_code=status, media_type="text/html; charset=utf-8", headers=_PAGE_HEADERS)

    def not_found() -> Response:
        return page("message.html.j2", 404, title="Not found", message="There is nothing here.")

    def client(request: Request) -> str:
        return request.client.host if request.client else "?"

    def reader(request: Request) -> EntrantRow | None | Response:
        """The entrant whose token the request carries; None without one; a response refusing a bad one."""
        token = token_of(request)
        if token is None:
            return None
        if guard.blocked(client(request)):
            return _error("too many failed token attempts; wait a minute", 429)
        entrant = store.entrant_for_token(token)
        if entrant is None:
            guard.failed(client(request))
            return _error("this token is not valid", 403)
        return entrant

    def is_owner(request: Request, name: str) -> bool:
        who = reader(request)
        return isinstance(who, EntrantRow) and who.name == name

    # --- pages -------------------------------------------------------------------------

    async def leaderboard(request: Request) -> Response:
        return page(
            "leaderboard.html.j2",
            title="Leaderboard",
            rows=standings(store, ladder.fit.rows if ladder.fit else None),
            fit=ladder.fit,
            counts=store.counts(),
            paused=store.paused(),
            entrants=len(store.entrants()),
        )

    async def entrant_page(request: Request) -> Response:
        name = request.path_params["name"]
        view = entrant_view(store, name, owner=is_owner(request, name))
        if view is None:
            return not_found()
        reports = {}
        if view.owner:
            for version in store.versions(entrant=name):
                if version.state == "rejected" and (text := store.report(version.id)):
                    reports[version.number] = msgspec.json.decode(text)
        return page(
            "entrant.html.j2", title=name, view=view, points=rating_points(view.rating_history), reports=reports
        )

    async def game_page(request: Request) -> Response:
        from tournaments.viewer.build import build_viewer_data
        from tournaments.viewer.page import render_view

        found = _GAME_PAGE.fullmatch(request.path_params["page"])
        if found is None:
            return not_found()
        game_id, seat = int(found.group(1)), found.group(2)
        rows = store.games(game_id=game_id, limit=1)
        row = rows[0] if rows else None
        if row is None or row.replay is None or not store.table_finished(row.table):
            return not_found()  # its deal is still being played in other seatings: not shown yet
        replay = row.replay
        if seat is not None:
            seats = [s for s in row.seats if s.seat == int(seat)]
            if not seats or not is_owner(request, seats[0].entrant):
                return not_found()
        data = await trio.to_thread.run_sync(build_viewer_data, Path(replay))
        text = render_view(data, "all" if seat is None else seat, Path(f"game-{game_id}.html"))
        return Response(text, media_type="text/html; charset=utf-8", headers=_PAGE_HEADERS)

    async def seat_stderr(request: Request) -> Response:
        game_id, seat = request.path_params["game"], request.path_params["seat"]
        rows = store.games(game_id=game_id, limit=1)
        seats = [s for s in rows[0].seats if s.seat == seat] if rows else []
        if not seats or rows[0].replay is None or not is_owner(request, seats[0].entrant):
            return not_found()
        path = Path(f"{rows[0].replay}.seat{seat}.stderr")
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        return Response(text, media_type="text/plain; charset=utf-8", headers=_PAGE_HEADERS)

    async def login_form(request: Request) -> Response:
        return page("login.html.j2", title="Log in", failed=False)

    async def login(request: Request) -> Response:
        try:
            body = await read_body(request, _LOGIN_BYTES)
        except BodyTooLarge:
            return page("login.html.j2", 413, title="Log in", failed=True)
        token = (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0].strip()
        if guard.blocked(client(request)):
            return page("message.html.j2", 429, title="Slow down", message="Too many failed attempts; wait a minute.")
        entrant = store.entrant_for_token(token) if token else None
        if entrant is None:
            guard.failed(client(request))
            return page("login.html.j2", 403, title="Log in", failed=True)
        response = RedirectResponse(f"/entrants/{entrant.name}", status_code=303)
        response.set_cookie(
            COOKIE, token, httponly=True, samesite="strict", secure=request.url.scheme == "https", max_age=30 * 86400
        )
        return response

    async def logout(request: Request) -> Response:
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    def register(request: Request, code: str, name: str) -> tuple[str, str] | tuple[None, str]:
        """(token, name) of a new entrant, or (None, why not). Every refusal counts against the
        client as a failed token attempt does, so codes cannot be guessed nor names probed at speed."""
        if guard.blocked(client(request)):
            return None, "too many failed attempts; wait a minute"
        try:
            if not valid_name(name):
                raise InviteRefused(NAME_RULE)
            token = new_token()
            redeem_invite(store, code, name, token)
        except InviteRefused as exc:
            guard.failed(client(request))
            return None, str(exc)
        return token, name

    async def register_form(request: Request) -> Response:
        return page("register.html.j2", title="Register", refused=None, name="")

    async def register_page(request: Request) -> Response:
        try:
            body = await read_body(request, _LOGIN_BYTES)
        except BodyTooLarge:
            return page("register.html.j2", 413, title="Register", refused="The form is too large.", name="")
        form = parse_qs(body.decode("utf-8", "replace"))
        code, name = ((form.get(key) or [""])[0].strip() for key in ("code", "name"))
        token, said = register(request, code, name)
        if token is None:
            status = 429 if said.startswith("too many") else 400
            return page("register.html.j2", status, title="Register", refused=said, name=name)
        return page("registered.html.j2", title="Registered", name=said, token=token)

    # --- API ---------------------------------------------------------------------------

    async def api_register(request: Request) -> Response:
        try:
            asked = msgspec.json.decode(await read_body(request, _LOGIN_BYTES), type=_Registration)
        except BodyTooLarge as exc:
            return _error(str(exc), 413)
        except msgspec.DecodeError as exc:
            return _error(f'send {{"code": "INVITE CODE", "name": "NAME"}}: {exc}', 400)
        token, said = register(request, asked.code.strip(), asked.name.strip())
        if token is None:
            return _error(said, 429 if said.startswith("too many") else 400)
        return _json({"entrant": said, "token": token, "page": f"/entrants/{said}"}, 201)

    async def api_standings(request: Request) -> Response:
        return _json(standings(store, ladder.fit.rows if ladder.fit else None))

    async def api_fit(request: Request) -> Response:
        rows, versions = store.games(limit=-1), store.versions()
        return _json(await trio.to_thread.run_sync(fit_standings, rows, versions))

    async def api_entrant(request: Request) -> Response:
        name = request.path_params["name"]
        view = entrant_view(store, name, owner=is_owner(request, name))
        return _error("not found", 404) if view is None else _json(view)

    async def api_games(request: Request) -> Response:
        entrant = request.query_params.get("entrant")
        return _json(game_views(store, store.games(entrant=entrant, limit=100)))

    async def api_report(request: Request) -> Response:
        name, number = request.path_params["name"], request.path_params["number"]
        if not is_owner(request, name):
            return _error("not found", 404)
        versions = [v for v in store.versions(entrant=name) if v.number == number]
        if not versions:
            return _error("not found", 404)
        version = versions[0]
        report = store.report(version.id)
        return _json(
            {
                "number": number,
                "state": version.state,
                "reason": version.reason,
                "report": msgspec.json.decode(report) if report else None,
            }
        )

    async def api_submit(request: Request) -> Response:
        who = reader(request)
        if who is None:
            return _error("send your token: Authorization: Bearer TOKEN", 401)
        if isinstance(who, Response):
            return who
        limits = ladder.config.submissions
        if who.id in uploading:  # each upload arriving holds up to max_bytes of memory
            return _error("an upload of yours is still arriving; send one at a time", 429)
        uploading.add(who.id)
        try:
            # A deadline: an upload stalled for good (its sender's network gone) must not hold its
            # entrant's one upload at a time for as long as the connection lingers.
            with trio.move_on_after(_UPLOAD_S) as arriving:
                data = await read_body(request, limits.max_bytes)
            if arriving.cancelled_caught:
                return _error(f"the upload took over {_UPLOAD_S:.0f} s to arrive; send it again", 408)
            digest = inspect_upload(data, limits)
        except BodyTooLarge as exc:
            return _error(str(exc), 413)
        except UploadRefused as exc:
            return _error(str(exc), 400)
        finally:
            uploading.discard(who.id)
        prior = (ladder.config.rating.prior_mu, ladder.config.rating.prior_sigma)
        try:
            # No await from here to add_version: no other request of this entrant's comes in between.
            store.check_rate(who.id, limits.per_hour)
            save_upload(ladder.paths.uploads, digest, data)
            version = store.add_version(who.id, digest, prior, limits.per_hour)
        except RateLimited as exc:
            return _error(str(exc), 429)
        ladder.enqueue(version.id)
        return _json(
            {"entrant": who.name, "version": version.number, "state": version.state, "page": f"/entrants/{who.name}"},
            202,
        )

    async def api_challenge(request: Request) -> Response:
        who = reader(request)
        if who is None:
            return _error("send your token: Authorization: Bearer TOKEN", 401)
        if isinstance(who, Response):
            return who
        try:
            asked = msgspec.json.decode(await read_body(request, _LOGIN_BYTES), type=_Challenge)
            table, games = ladder.challenge(who, asked.opponents)
        except BodyTooLarge as exc:
            return _error(str(exc), 413)
        except msgspec.DecodeError as exc:
            return _error(f'send {{"opponents": ["NAME", ...]}}: {exc}', 400)
        except RateLimited as exc:
            return _error(str(exc), 429)
        except ValueError as exc:
            return _error(str(exc), 400)
        return _json({"table": table, "games": games, "page": f"/entrants/{who.name}"}, 202)

    routes = [
        Route("/", leaderboard),
        Route("/entrants/{name}", entrant_page),
        Route("/games/{game:int}/stderr/{seat:int}", seat_stderr),
        Route("/games/{page}", game_page),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/register", register_form, methods=["GET"]),
        Route("/register", register_page, methods=["POST"]),
        Route("/api/register", api_register, methods=["POST"]),
        Route("/api/standings", api_standings),
        Route("/api/standings/fit", api_fit),
        Route("/api/entrants/{name}", api_entrant),
        Route("/api/entrants/{name}/versions/{number:int}/report", api_report),
        Route("/api/games", api_games),
        Route("/api/submissions", api_submit, methods=["POST"]),
        Route("/api/challenges", api_challenge, methods=["POST"]),
        *admin_routes(ladder, guard, page, _json),
    ]
    return Starlette(routes=routes, middleware=[Middleware(_Cached, cache=PageCache())])


class _Cached:
    """ASGI middleware: anonymous GETs answered from ``PageCache`` when it has them, and kept when it has not."""

    def __init__(self, app: ASGIApp, cache: PageCache) -> None:
        self.app = app
        self.cache = cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or _carries_token(scope) or _is_admin(scope):
            await self.app(scope, receive, send)
            return
        key = scope["path"] + "?" + scope.get("query_string", b"").decode("latin-1")
        hit = self.cache.get(key)
        if hit is not None:
            status, body, media_type = hit
            headers = _PAGE_HEADERS if media_type.startswith("text/html") else {"x-content-type-options": "nosniff"}
            await Response(body, status_code=status, media_type=media_type, headers=headers)(scope, receive, send)
            return
        started: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def keep(message: Message) -> None:
            if message["type"] == "http.response.start":
                started.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False) and started.get("status") in (200, 404):
                    headers = dict(started.get("headers", []))
                    media_type = headers.get(b"content-type", b"").decode("latin-1")
                    self.cache.put(key, started["status"], b"".join(chunks), media_type)
            await send(message)

        await self.app(scope, receive, keep)


def _carries_token(scope: Scope) -> bool:
    for name, value in scope.get("headers", []):
        if name == b"authorization" or (name == b"cookie" and COOKIE.encode() in value):
            return True
    return False


def _is_admin(scope: Scope) -> bool:
    """The host's pages are never kept: the admin's page holds its CSRF token, and is the host's alone."""
    path = str(scope["path"])
    return path == "/admin" or path.startswith(("/admin/", "/api/admin/"))
