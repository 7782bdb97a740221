"""The ladder's JSON API, mounted at ``/api``: what the pages show, for scripts, and what entrants send.

``POST /api/register`` (with the host's invite code), ``/api/standings``,
``/api/standings/fit``, ``/api/entrants/NAME``, ``/api/games?entrant=NAME``,
``/api/entrants/NAME/versions/N/report`` (the owner's only: anyone else gets
the 404 of a missing one), and, for the entrant whose token comes as a bearer
token, ``POST /api/submissions`` (a zip or tar archive as the body,
``ladder.web.uploads``), ``POST /api/challenges`` and ``POST /api/token``. The host's ``/api/admin/...`` is in ``ladder.web.admin``.
Every answer is JSON, a refusal ``{"error": "why"}``.
"""

from __future__ import annotations

from urllib.parse import urlencode

import msgspec
import trio
from starlette.authentication import requires
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ladder.sessions import replace_token
from ladder.store import RateLimited, fit_input
from ladder.views import entrant_view, fit_standings, game_views, standings
from ladder.web.auth import Entrant, owns, register
from ladder.web.guard import FORM_BYTES, BodyTooLarge, read_body
from ladder.web.site import error, json, site
from ladder.web.uploads import Refused, archive_of_body, receive_upload
from ladder.webhooks import WebhookRefused, check_address, set_webhook

__all__ = ["routes"]


class _Challenge(msgspec.Struct, forbid_unknown_fields=True):
    opponents: list[str]


class _Registration(msgspec.Struct, forbid_unknown_fields=True):
    code: str
    name: str


async def register_entrant(request: Request) -> Response:
    try:
        asked = msgspec.json.decode(await read_body(request, FORM_BYTES), type=_Registration)
    except BodyTooLarge as exc:
        return error(str(exc), 413)
    except msgspec.DecodeError as exc:
        return error(f'send {{"code": "INVITE CODE", "name": "NAME"}}: {exc}', 400)
    token, said = register(request, asked.code.strip(), asked.name.strip())
    if token is None:
        return error(said, 429 if said.startswith("too many") else 400)
    return json({"entrant": said, "token": token, "page": f"/entrants/{said}"}, 201)


async def live_standings(request: Request) -> Response:
    ladder = site(request).ladder
    return json(standings(ladder.store, ladder.fit.rows if ladder.fit else None))


async def fitted_standings(request: Request) -> Response:
    """The fit of every finished game, made for this request, or the one made for an earlier request while no
    game finished since: a fit of a large ladder takes a minute of CPU, and anyone may ask. One is made at
    a time; the requests that come meanwhile wait for it and are answered with it."""
    shared = site(request)
    async with shared.fit_turn:
        done = shared.store.counts().get("done", 0)
        if shared.fit_answer is None or shared.fit_answer[0] != done:
            # Read and fitted in worker threads, on a connection of their own: seconds, then a minute, at scale.
            rows, versions = await trio.to_thread.run_sync(fit_input, shared.store.path)
            try:
                fitted = await trio.to_thread.run_sync(fit_standings, rows, versions)
            except (ValueError, ArithmeticError, MemoryError) as exc:  # numpy's and scipy's errors among them
                return error(f"the fit of {len(rows)} games failed ({type(exc).__name__}); /api/standings ranks", 503)
            shared.fit_answer = (len(rows), msgspec.json.encode(fitted))
        return json(msgspec.Raw(shared.fit_answer[1]))


async def entrant(request: Request) -> Response:
    name = request.path_params["name"]
    view = entrant_view(site(request).store, name, owner=owns(request, name))
    return error("not found", 404) if view is None else json(view)


_GAMES_PAGE = 100


async def games(request: Request) -> Response:
    """Up to 100 finished games, newest first; a full page links the next in a ``Link: <...>; rel="next"``
    header (the body stays the list it always was), whose ``before`` starts below the page's last game."""
    store = site(request).store
    entrant = request.query_params.get("entrant")
    before_text = request.query_params.get("before")
    if before_text is not None and not before_text.isdigit():
        return error("before: a game number (the last one of the page before)", 400)
    before = None if before_text is None else int(before_text)
    rows = store.games(entrant=entrant, before=before, limit=_GAMES_PAGE)
    answer = json(game_views(store, rows))
    if len(rows) == _GAMES_PAGE:
        query = urlencode({**({"entrant": entrant} if entrant else {}), "before": rows[-1].id})
        answer.headers["link"] = f'</api/games?{query}>; rel="next"'
    return answer


async def report(request: Request) -> Response:
    store = site(request).store
    name, number = request.path_params["name"], request.path_params["number"]
    if not owns(request, name):
        return error("not found", 404)
    versions = [v for v in store.versions(entrant=name) if v.number == number]
    if not versions:
        return error("not found", 404)
    version = versions[0]
    text = store.report(version.id)
    return json(
        {
            "number": number,
            "state": version.state,
            "reason": version.reason,
            "report": msgspec.json.decode(text) if text else None,
            "build_output": f"/entrants/{name}/versions/{number}/build.txt",
        }
    )


@requires("entrant", status_code=401)
async def submit(request: Request) -> Response:
    who: Entrant = request.user
    try:
        version = await receive_upload(request, who, archive_of_body)
    except Refused as exc:
        return error(exc.said, exc.status)
    name = who.row.name
    return json({"entrant": name, "version": version.number, "state": version.state, "page": f"/entrants/{name}"}, 202)


@requires("entrant", status_code=401)
async def token(request: Request) -> Response:
    """A new token for the sender; the one it sent, and every login session, stop working at once."""
    who: Entrant = request.user
    return json({"entrant": who.row.name, "token": replace_token(site(request).store, who.row.name)}, 201)


class _Webhook(msgspec.Struct, forbid_unknown_fields=True):
    url: str | None


@requires("entrant", status_code=401)
async def webhook(request: Request) -> Response:
    """PUT ``{"url": "https://..."}`` sets the sender's webhook (its signing secret answered once); DELETE removes it."""
    who: Entrant = request.user
    shared = site(request)
    notifications = shared.ladder.config.notifications
    if not notifications.webhooks:
        return error("this ladder calls no webhooks", 400)
    url = None
    if request.method == "PUT":
        try:
            url = msgspec.json.decode(await read_body(request, FORM_BYTES), type=_Webhook).url
        except BodyTooLarge as exc:
            return error(str(exc), 413)
        except msgspec.DecodeError as exc:
            return error(f'send {{"url": "https://..."}}: {exc}', 400)
    try:
        if url is not None:  # DNS in a thread; the store on its own (Trio's) thread
            await trio.to_thread.run_sync(lambda: check_address(url, private_addresses=notifications.private_addresses))
    except WebhookRefused as exc:
        return error(str(exc), 400)
    secret = set_webhook(shared.store, who.row.id, url)
    return json({"webhook": url, "secret": secret})


@requires("entrant", status_code=401)
async def challenge(request: Request) -> Response:
    who: Entrant = request.user
    try:
        asked = msgspec.json.decode(await read_body(request, FORM_BYTES), type=_Challenge)
        table, dealt = site(request).ladder.challenge(who.row, asked.opponents)
    except BodyTooLarge as exc:
        return error(str(exc), 413)
    except msgspec.DecodeError as exc:
        return error(f'send {{"opponents": ["NAME", ...]}}: {exc}', 400)
    except RateLimited as exc:
        return error(str(exc), 429)
    except ValueError as exc:
        return error(str(exc), 400)
    return json({"table": table, "games": dealt, "page": f"/entrants/{who.row.name}"}, 202)


routes = [
    Route("/register", register_entrant, methods=["POST"]),
    Route("/standings", live_standings),
    Route("/standings/fit", fitted_standings),
    Route("/entrants/{name}", entrant),
    Route("/entrants/{name}/versions/{number:int}/report", report),
    Route("/games", games),
    Route("/submissions", submit, methods=["POST"]),
    Route("/challenges", challenge, methods=["POST"]),
    Route("/token", token, methods=["POST"]),
    Route("/webhook", webhook, methods=["PUT", "DELETE"]),
]
"""Under ``Mount("/api", ...)``, with ``ladder.web.admin.api_routes``."""
