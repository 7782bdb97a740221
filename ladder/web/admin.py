"""The host's admin page and API: pause, resume, retire, requeue and lift from a browser or a script.

Pages: ``/admin/login`` (a form taking the admin token, which ``famiglia
ladder admin-token`` prints), ``/admin`` (the ladder's state and a button per
action) and ``POST /admin/ACTION`` (each button's form). API: ``POST
/api/admin/ACTION`` with the admin token as a bearer token and a JSON body.

Who is the host: whoever holds the admin token (``ladder.web.auth``: the
cookie on these pages, the ``Authorization`` header on the API); each
endpoint but the login's requires the scope "admin". The login form keeps the
token in a cookie of its own (HttpOnly, SameSite=Strict, path ``/admin``).
Every failed attempt, by form, cookie or header, counts in the app's
``Throttle``. Refused, a page sends to the login and a form answers 403; the
API answers its JSON error.

Forms are the only way a browser changes anything here, and each carries a
CSRF token: an HMAC of the session (the cookie's token) under a secret made
when the app is made (``Site.secret``). A POST without it or with another, or
one whose ``Origin`` is another site's, changes nothing. The actions
themselves are the store's, the same calls ``famiglia ladder
pause|resume|retire|requeue`` make; resuming and requeueing also wake the
match loop's idle players.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, quote, unquote

import msgspec
from starlette.authentication import requires
from starlette.requests import HTTPConnection, Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ladder.health import Health, health_of
from ladder.loop import Ladder
from ladder.store import FailedGame, LadderStore, Unknown, VersionRow
from ladder.web.auth import ADMIN_COOKIE, Admin, Stranger, admin_for, refused
from ladder.web.guard import FORM_BYTES, BodyTooLarge, read_body, same_origin
from ladder.web.site import error, json, page, site

__all__ = ["ACTIONS", "AdminView", "BadRequest", "admin_view", "api_routes", "page_routes", "perform", "refusal_page"]

_SAID_COOKIE = "ladder_admin_said"
"""The short message an action leaves for the page it redirects to, read once."""
_SESSION_S = 12 * 3600
ACTIONS = ("pause", "resume", "retire", "requeue", "lift")

# same-origin, as every page of the site (ladder.web.site), so forms' POSTs carry their true Origin.
_ADMIN_HEADERS = {"referrer-policy": "same-origin", "cache-control": "no-store"}


class BadRequest(ValueError):
    """An action asked without what it needs (the entrant's name, the game's number)."""


class EntrantLine(msgspec.Struct, frozen=True, kw_only=True):
    """One entrant as the admin page lists it."""

    name: str
    active: int | None
    """The active version's number; None when nothing of the entrant plays."""
    newest: str
    """The state of its newest version, or "no version"."""
    games: int
    """Games the active version finished."""
    state: str
    """The entrant's state, as the leaderboard says it (ladder.views.entrant_state)."""
    health: Health
    """The active version's own faults (the suspended one's when none plays)."""
    suspended: int | None
    """The number of its suspended version, which Lift puts back in play; None when none is."""


class AdminView(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the admin page shows."""

    paused: bool
    entrants: list[EntrantLine]
    counts: dict[str, int]
    failed: list[FailedGame]
    waiting: list[VersionRow]


def admin_view(store: LadderStore) -> AdminView:
    from ladder.views import entrant_state

    versions: dict[str, list[VersionRow]] = {}
    for version in store.versions():
        versions.setdefault(version.entrant, []).append(version)
    health = health_of(store.db)
    lines = []
    for entrant in store.entrants():
        own = versions.get(entrant.name, [])
        active = next((v for v in own if v.state == "active"), None)
        suspended = next((v for v in reversed(own) if v.state == "suspended"), None)
        shown = active or suspended
        lines.append(
            EntrantLine(
                name=entrant.name,
                active=active.number if active else None,
                newest=own[-1].state if own else "no version",
                games=active.games if active else 0,
                state=entrant_state(own),
                health=health.get(shown.id, Health()) if shown else Health(),
                suspended=suspended.number if suspended else None,
            )
        )
    return AdminView(
        paused=store.paused(),
        entrants=lines,
        counts=store.counts(),
        failed=store.failed_games(),
        waiting=store.versions(states=("queued", "checking")),
    )


# --- the actions: one implementation for the page and the API ---------------------------


def _text(fields: Mapping[str, object], key: str, shape: str) -> str:
    value = fields.get(key)
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"send {shape}")
    return value.strip()


def _game(fields: Mapping[str, object]) -> int:
    value = fields.get("game")
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 12:
        return int(value)  # a form's field is text
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise BadRequest('send {"game": N}, the game\'s number')


def perform(ladder: Ladder, action: str, fields: Mapping[str, object]) -> dict[str, Any]:
    """Do ``action`` with what a form or a JSON body gave; the answer holds ``said``, one line for the host.

    Unknown for an entrant or a game the ladder does not have, BadRequest for a missing field, ValueError
    for anything else the store refuses (an entrant with nothing active, a game that did not fail).
    """
    store = ladder.store
    if action == "pause":
        store.set_paused(True)
        return {"paused": True, "said": "paused: no new games are dealt; games in play finish"}
    if action == "resume":
        store.set_paused(False)
        ladder.wake()
        return {"paused": False, "said": "resumed: games are dealt again"}
    if action == "retire":
        name = _text(fields, "entrant", '{"entrant": NAME}')
        number = store.retire(name)
        return {"entrant": name, "retired": number, "said": f"retired version {number} of {name}"}
    if action == "lift":
        name = _text(fields, "entrant", '{"entrant": NAME}')
        number = store.lift(name)
        ladder.wake_bots()
        return {"entrant": name, "lifted": number, "said": f"lifted the suspension of version {number} of {name}"}
    if action == "requeue":
        game = _game(fields)
        store.requeue(game)
        ladder.wake()
        return {"game": game, "state": "pending", "said": f"game {game} is queued to be played again"}
    raise Unknown(f"there is no admin action {action!r}")


# --- the pieces of a request ------------------------------------------------------------------


def _csrf(conn: HTTPConnection, session: str) -> str:
    return hmac.new(site(conn).secret, session.encode("utf-8", "replace"), hashlib.sha256).hexdigest()


def _csrf_ok(conn: HTTPConnection, session: str, offered: str) -> bool:
    return hmac.compare_digest(_csrf(conn, session).encode(), offered.encode("utf-8", "replace"))


def _form(body: bytes) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(body.decode("utf-8", "replace")).items()}


def _keep_cookie(response: Response, request: Request, name: str, value: str, max_age: int | None) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path="/admin",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def _page(request: Request, template: str, status: int = 200, **values: Any) -> Response:
    response = page(request, template, status, **values)
    response.headers.update(_ADMIN_HEADERS)
    return response


def _refused_page(request: Request, status: int) -> Response:
    if status == 429:
        return _page(
            request, "message.html.j2", 429, title="Slow down", message="Too many failed attempts; wait a minute."
        )
    return _page(request, "message.html.j2", status, title="Forbidden", message="Log in at /admin/login first.")


def refusal_page(request: Request, user: Stranger) -> Response:
    """The host's pages' answer to a request without the admin token: the page sends to the login (and drops
    a replaced token's cookie, so it is not counted again and again), a form is forbidden."""
    if user.status == 429:
        return _refused_page(request, 429)
    if request.method == "POST":
        return _refused_page(request, 403)
    response = RedirectResponse("/admin/login", status_code=303)
    if user.status == 403:
        response.delete_cookie(ADMIN_COOKIE, path="/admin")
    return response


# --- the pages -------------------------------------------------------------------------------


async def login_form(request: Request) -> Response:
    return _page(request, "admin_login.html.j2", title="Admin", failed=False)


async def login(request: Request) -> Response:
    if not same_origin(request):
        return _refused_page(request, 403)
    try:
        token = _form(await read_body(request, FORM_BYTES)).get("token", "").strip()
    except BodyTooLarge:
        return _page(request, "admin_login.html.j2", 413, title="Admin", failed=True)
    user = admin_for(request, token or None)
    if isinstance(user, Stranger):
        if refused(request, user).status == 429:
            return _refused_page(request, 429)
        return _page(request, "admin_login.html.j2", 403, title="Admin", failed=True)
    response = RedirectResponse("/admin", status_code=303)
    _keep_cookie(response, request, ADMIN_COOKIE, token, _SESSION_S)
    return response


@requires("admin", status_code=401)
async def home(request: Request) -> Response:
    admin: Admin = request.user
    said = unquote(request.cookies.get(_SAID_COOKIE, ""))[:300]
    view = admin_view(site(request).store)
    shown = _page(request, "admin.html.j2", title="Admin", view=view, csrf=_csrf(request, admin.token), said=said)
    if said:
        shown.delete_cookie(_SAID_COOKIE, path="/admin")
    return shown


@requires("admin", status_code=401)
async def act(request: Request) -> Response:
    admin: Admin = request.user
    action = request.path_params["action"]
    if not same_origin(request):
        return _refused_page(request, 403)
    try:
        form = _form(await read_body(request, FORM_BYTES))
    except BodyTooLarge:
        return _page(request, "message.html.j2", 413, title="Too large", message="The form is too large.")
    if not _csrf_ok(request, admin.token, form.pop("csrf", "")):
        message = "This form is not from this server's admin page, or is stale: reload /admin and try again."
        return _page(request, "message.html.j2", 403, title="Forbidden", message=message)
    if action == "logout":
        response = RedirectResponse("/admin/login", status_code=303)
        response.delete_cookie(ADMIN_COOKIE, path="/admin")
        return response
    if action not in ACTIONS:
        return _page(request, "message.html.j2", 404, title="Not found", message="There is nothing here.")
    try:
        said = str(perform(site(request).ladder, action, form)["said"])
    except ValueError as exc:  # Unknown and BadRequest with it: the page says why, nothing changed
        said = str(exc)
    response = RedirectResponse("/admin", status_code=303)
    _keep_cookie(response, request, _SAID_COOKIE, quote(said[:300], safe=""), None)
    return response


# --- the API ---------------------------------------------------------------------------------


@requires("admin", status_code=401)
async def api_act(request: Request) -> Response:
    action = request.path_params["action"]
    if not same_origin(request):
        return error("requests from another site's page are refused", 403)
    if action not in ACTIONS:
        return error(f"there is no admin action {action!r}; there are {', '.join(ACTIONS)}", 404)
    try:
        body = await read_body(request, FORM_BYTES)
        fields = msgspec.json.decode(body) if body.strip() else {}
    except BodyTooLarge as exc:
        return error(str(exc), 413)
    except msgspec.DecodeError as exc:
        return error(f"the body is not JSON: {exc}", 400)
    if not isinstance(fields, dict):
        return error("send a JSON object", 400)
    try:
        return json(perform(site(request).ladder, action, fields))
    except Unknown as exc:
        return error(str(exc), 404)
    except BadRequest as exc:
        return error(str(exc), 400)
    except ValueError as exc:  # the store's refusal: the entrant or game is not in a state for it
        return error(str(exc), 409)


page_routes = [
    Route("/admin", home, methods=["GET"]),
    Route("/admin/login", login_form, methods=["GET"]),
    Route("/admin/login", login, methods=["POST"]),
    Route("/admin/{action}", act, methods=["POST"]),
]
api_routes = [Route("/admin/{action}", api_act, methods=["POST"])]
"""Under ``Mount("/api", ...)``, with ``ladder.web.api.routes``."""
