"""The ladder's HTML pages, rendered on the server.

``/`` (the leaderboard), ``/entrants/NAME`` and its games
(``/entrants/NAME/games``, by version and opponent), ``/games/game-N.html`` (the
replay viewer, everything, with the ladder's links and the reader's seat tabs), ``/games/game-N.seat-S.html`` and
``/games/N/stderr/S`` (the seat's owner only), ``/login``, ``/logout``,
``/register`` (with the host's invite code) and ``/token`` (the entrant
replaces its own token). Every form refuses a POST from another site. A game
page is built in a worker thread, a few at a time, and holds a bounded part of
each seat's log lines (``GAME_PAGE_NOTES_BYTES``): its memory does not grow
with what a bot wrote.

What a reader may not see answers 404 exactly as what does not exist, so a
stranger learns nothing from the difference. Everything an entrant or a bot
controls reaches a page through Jinja's autoescaping (names, reasons, the
check-bot report) or as JSON inside the viewer's own escaping.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from pathlib import Path
from urllib.parse import parse_qs, quote, urlencode

import msgspec
import trio
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ladder.sessions import SESSION_DAYS, close_session, open_session, replace_token
from ladder.store import GameRow, RateLimited
from ladder.views import entrant_view, game_views, standings
from ladder.web.auth import Entrant, Stranger, entrant_for, owns, refused, register
from ladder.web.charts import MOST_POINTS, rating_chart
from ladder.web.feed import feed_key
from ladder.web.guard import COOKIE, FORM_BYTES, BodyTooLarge, read_body, same_origin, session_of
from ladder.web.look import band_scale
from ladder.web.site import PAGE_HEADERS, not_found, page, site
from ladder.web.uploads import Refused, archive_of_form, receive_upload

__all__ = ["routes"]

_GAME_PAGE = re.compile(r"game-(\d{1,12})(?:\.seat-(\d))?\.html")


BOARD_PAGE_ROWS = 100
"""Rows of the leaderboard on one page (``/?page=N`` for the next ones): a contest's 2,000 entrants on one page
took longer to render than the board takes to read, and a phone a megabyte and a half to show. The API's
standings hold every row."""


async def leaderboard(request: Request) -> Response:
    ladder = site(request).ladder
    store = ladder.store
    try:
        number = _number(request.query_params.get("page")) or 1
    except ValueError:
        said = "page takes a number: /?page=2"
        return page(request, "message.html.j2", 400, title="Not a number", message=said)
    rows = standings(store, ladder.fit.rows if ladder.fit else None)
    pages = max(1, -(-len(rows) // BOARD_PAGE_ROWS))
    if number > pages:
        return not_found(request)
    first = (number - 1) * BOARD_PAGE_ROWS
    return page(
        request,
        "leaderboard.html.j2",
        title="Leaderboard",
        rows=rows[first : first + BOARD_PAGE_ROWS],
        scale=band_scale(rows),  # of every row: a band means the same on every page
        board_page=number,
        board_pages=pages,
        first_row=first + 1,
        fit=ladder.fit,
        counts=store.counts(),
        paused=store.paused(),
        entrants=len(rows),  # every entrant has a row
        season=ladder.seasons.current(),
        closed=ladder.season_closed(),
    )


MATCHUP_ROWS = 100
"""Opponents in an entrant page's matchup table: those it shared the most games with."""


async def entrant(request: Request) -> Response:
    store = site(request).store
    name = request.path_params["name"]
    view = entrant_view(store, name, owner=owns(request, name), chart_points=MOST_POINTS)
    if view is None:
        return not_found(request)
    reports = {}
    if view.owner:
        for version in store.versions(entrant=name):
            if version.state == "rejected" and (text := store.report(version.id)):
                reports[version.number] = msgspec.json.decode(text)
    # The opponents it shared most games with, in name order: an entrant of a large contest met thousands,
    # a table of them all took longer to render than the rest of the page (the API lists every one).
    most = sorted(view.matchups, key=lambda m: -m.games)[:MATCHUP_ROWS]
    shown_names = {m.opponent for m in most}
    shown_matchups = [m for m in view.matchups if m.opponent in shown_names]
    ladder = site(request).ladder
    board = site(request).board()
    ranked = [row for row in board if row.rank is not None]  # every entrant has a row; the playing ones a rank
    opponents = sorted({row.entrant for row in ranked} - {name}) if view.owner else []
    return page(
        request,
        "entrant.html.j2",
        title=name,
        view=view,
        standing=next((row for row in ranked if row.entrant == name), None),
        board_size=len(ranked),
        chart=rating_chart(view.ratings),
        matchups=shown_matchups,
        matchups_left=len(view.matchups) - len(shown_matchups),
        matchup_versions=sorted({m.version for m in view.version_matchups}, reverse=True),
        matchup_cells={(m.version, m.opponent): m for m in view.version_matchups if m.opponent in shown_names},
        reports=reports,
        opponents=opponents,
        challenge_sizes=[size - 1 for size in ladder.config.table_sizes],
        challenges_per_hour=ladder.config.challenges.per_hour,
        feed=f"/feeds/{name}/{feed_key(store, name)}.atom" if view.owner else None,
    )


_GAMES_PAGE = 50


def _number(text: str | None) -> int | None:
    """A query's number (a version, a game), None when absent; ValueError when it is no number."""
    if text is None:
        return None
    if not text.isdigit() or len(text) > 12:
        raise ValueError(text)
    return int(text)


async def entrant_games(request: Request) -> Response:
    """``/entrants/NAME/games``: every game of the entrant, newest first, 50 a page; ``version=N`` keeps
    those of its version N, ``opponent=NAME`` those another entrant sat at (a matchup cell's games)."""
    store = site(request).store
    name = request.path_params["name"]
    if store.entrant(name) is None:
        return not_found(request)
    query = request.query_params
    opponent = query.get("opponent") or None
    try:
        version, before = _number(query.get("version")), _number(query.get("before"))
    except ValueError:
        said = "version and before take a number: /entrants/NAME/games?version=2&opponent=NAME"
        return page(request, "message.html.j2", 400, title="Not a number", message=said, back=name)
    rows = store.games(entrant=name, version_number=version, opponent=opponent, before=before, limit=_GAMES_PAGE)
    words = f"the games of {name}" if version is None else f"the games of {name}'s version {version}"
    if opponent is not None:
        words += f" against {opponent}"
    older = None
    if len(rows) == _GAMES_PAGE:
        kept = {"version": version, "opponent": opponent, "before": rows[-1].id}
        older = f"/entrants/{quote(name)}/games?" + urlencode({k: v for k, v in kept.items() if v is not None})
    return page(
        request,
        "games.html.j2",
        title=f"{name}'s games",
        name=name,
        said=words[0].upper() + words[1:] + ", newest first.",
        games=game_views(store, rows),
        owner=owns(request, name),
        version=version,
        opponent=opponent,
        older=older,
    )


async def upload(request: Request) -> Response:
    """The entrant's own page's upload form: a new version, on the same terms as the API's."""
    if not same_origin(request):
        return cross_site(request)
    user = request.user
    if not isinstance(user, Entrant):
        return page(request, "message.html.j2", 403, title="Log in first", message="Log in at /login first.")
    name = user.row.name
    try:
        version = await receive_upload(request, user, archive_of_form)
    except Refused as exc:
        return page(request, "message.html.j2", exc.status, title="Upload refused", message=exc.said, back=name)
    said = f"Version {version.number} received: it is built and checked before it plays; its state shows on your page."
    return page(request, "message.html.j2", 202, title="Upload received", message=said, back=name)


async def challenge(request: Request) -> Response:
    """The entrant's own page's challenge form: the API's challenge, with its limits and reasons, as a page."""
    if not same_origin(request):
        return cross_site(request)
    user = request.user
    if not isinstance(user, Entrant):
        return page(request, "message.html.j2", 403, title="Log in first", message="Log in at /login first.")
    try:
        body = await read_body(request, FORM_BYTES)
    except BodyTooLarge:
        return page(request, "message.html.j2", 413, title="Challenge", message="The form is too large.")
    opponents = [name.strip() for name in parse_qs(body.decode("utf-8", "replace")).get("opponent", [])]
    try:
        table, games = site(request).ladder.challenge(user.row, opponents)
    except RateLimited as exc:
        return page(request, "message.html.j2", 429, title="Challenge refused", message=str(exc), back=user.row.name)
    except ValueError as exc:
        return page(request, "message.html.j2", 400, title="Challenge refused", message=str(exc), back=user.row.name)
    said = (
        f"Challenge queued: table {table}, {games} games (every seating of one deal), played before the ladder's own."
    )
    return page(request, "message.html.j2", 202, title="Challenge queued", message=said, back=user.row.name)


GAME_PAGE_NOTES_BYTES = 256 << 10
"""The most of each seat's log lines and rejected actions a game page holds, in bytes of its replay.

A replay written before its bytes were bounded may hold hundreds of MiB of a
bot's text, and a page holding it all, built for every reader, took the server
to 1.35 GB; past this the page says how much it leaves out."""

GAME_PAGES_AT_ONCE = trio.CapacityLimiter(2)
"""Game pages built at once: each re-runs its game and holds its snapshots until it is rendered. More
readers wait their turn instead of each holding a page's memory, and the other requests keep the thread."""


def _game_page(
    replay: Path,
    view: str,
    game_id: int,
    readable: Collection[int] | None = None,
    site_links: Sequence[tuple[str, str]] = (),
) -> str:
    """The viewer page of one view of a game, built and rendered (off the Trio thread): with the ladder's
    ``site_links`` above it and a tab only for the seats the reader may open (``readable``; None: every
    seat), since the others answer 404."""
    from tournaments.hosting.viewer.build import build_viewer_data
    from tournaments.hosting.viewer.page import render_view

    data = build_viewer_data(replay, notes_bytes=GAME_PAGE_NOTES_BYTES)
    return render_view(data, view, Path(f"game-{game_id}.html"), seat_tabs=readable, site_links=site_links)


async def game(request: Request) -> Response:
    store = site(request).store
    found = _GAME_PAGE.fullmatch(request.path_params["page"])
    if found is None:
        return not_found(request)
    game_id, seat = int(found.group(1)), found.group(2)
    rows = store.games(game_id=game_id, limit=1)
    row = rows[0] if rows else None
    if row is None or row.replay is None or not store.table_finished(row.table):
        return not_found(request)  # its deal is still being played in other seatings: not shown yet
    replay = row.replay
    mine = {s.seat for s in row.seats if owns(request, s.entrant)}
    if seat is not None and int(seat) not in mine:
        return not_found(request)
    view = "all" if seat is None else seat
    file = replay_file(request, replay)
    links = _site_links(site(request).ladder.config.name, row)
    text = await trio.to_thread.run_sync(_game_page, file, view, game_id, mine, links, limiter=GAME_PAGES_AT_ONCE)
    return Response(text, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


def _site_links(ladder: str, row: GameRow) -> list[tuple[str, str]]:
    """The ladder's links above a game's viewer: its leaderboard (under the ladder's name), then the page
    of each entrant at the table, best placed first."""
    entrants = dict.fromkeys(s.entrant for s in sorted(row.seats, key=lambda s: s.rank))
    return [(f"{ladder}: leaderboard", "/"), *((name, f"/entrants/{quote(name)}") for name in entrants)]


async def seat_stderr(request: Request) -> Response:
    game_id, seat = request.path_params["game"], request.path_params["seat"]
    rows = site(request).store.games(game_id=game_id, limit=1)
    seats = [s for s in rows[0].seats if s.seat == seat] if rows else []
    if not seats or rows[0].replay is None or not owns(request, seats[0].entrant):
        return not_found(request)
    path = replay_file(request, f"{rows[0].replay}.seat{seat}.stderr")
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    if not text:  # a blank page reads as a broken one
        text = f"(seat {seat} wrote nothing to stderr in game {game_id})\n"
    # Shown in the browser, saved under a name that says which game and seat it is.
    saved = f'inline; filename="game-{game_id:06d}.seat-{seat}.stderr.txt"'
    headers = {**PAGE_HEADERS, "cache-control": "no-store", "content-disposition": saved}
    return Response(text, media_type="text/plain; charset=utf-8", headers=headers)


def replay_file(request: Request, stored: str) -> Path:
    """A file of a game's replay in this ladder's replay folder: the store keeps the path it was written
    at, and a ladder restored from a backup, or moved, has its replays somewhere else."""
    return site(request).ladder.paths.replays / Path(stored).name


async def login_form(request: Request) -> Response:
    return page(request, "login.html.j2", title="Log in", failed=False)


def cross_site(request: Request) -> Response:
    """What a form's POST from another site gets (login CSRF, a forged logout or token change)."""
    return page(
        request,
        "message.html.j2",
        403,
        title="Sent from another site",
        message="This form was sent from another site. Open it on this site and send it again.",
    )


def _keep_session(response: Response, request: Request, entrant: int) -> None:
    response.set_cookie(
        COOKIE,
        open_session(site(request).store, entrant),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        max_age=SESSION_DAYS * 86400,
    )


async def login(request: Request) -> Response:
    if not same_origin(request):
        return cross_site(request)
    try:
        body = await read_body(request, FORM_BYTES)
    except BodyTooLarge:
        return page(request, "login.html.j2", 413, title="Log in", failed=True)
    token = (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0].strip()
    user = entrant_for(request, token)
    if isinstance(user, Stranger):
        if refused(request, user).status == 429:
            return page(
                request, "message.html.j2", 429, title="Slow down", message="Too many failed attempts; wait a minute."
            )
        return page(request, "login.html.j2", 403, title="Log in", failed=True)
    response = RedirectResponse(f"/entrants/{user.row.name}", status_code=303)
    _keep_session(response, request, user.row.id)  # the cookie holds a session id, never the token
    return response


async def logout(request: Request) -> Response:
    if not same_origin(request):
        return cross_site(request)
    if (session := session_of(request)) is not None:
        close_session(site(request).store, session)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(COOKIE)
    return response


async def new_token(request: Request) -> Response:
    """The logged-in entrant replaces its token: the old one and every session end; the new one is shown once."""
    if not same_origin(request):
        return cross_site(request)
    user = request.user
    if not isinstance(user, Entrant):
        return page(request, "message.html.j2", 403, title="Log in first", message="Log in at /login first.")
    token = replace_token(site(request).store, user.row.name)
    shown = page(request, "registered.html.j2", title="Your new token", name=user.row.name, token=token, replaced=True)
    _keep_session(shown, request, user.row.id)  # this browser stays logged in; every other one is logged out
    return shown


async def register_form(request: Request) -> Response:
    return page(request, "register.html.j2", title="Register", refused=None, name="")


async def register_page(request: Request) -> Response:
    if not same_origin(request):
        return cross_site(request)
    try:
        body = await read_body(request, FORM_BYTES)
    except BodyTooLarge:
        return page(request, "register.html.j2", 413, title="Register", refused="The form is too large.", name="")
    form = parse_qs(body.decode("utf-8", "replace"))
    code, name = ((form.get(key) or [""])[0].strip() for key in ("code", "name"))
    token, said = register(request, code, name)
    if token is None:
        status = 429 if said.startswith("too many") else 400
        return page(request, "register.html.j2", status, title="Register", refused=said, name=name)
    return page(request, "registered.html.j2", title="Registered", name=said, token=token, replaced=False)


routes = [
    Route("/", leaderboard),
    Route("/entrants/{name}", entrant),
    Route("/entrants/{name}/games", entrant_games),
    Route("/games/{game:int}/stderr/{seat:int}", seat_stderr),
    Route("/games/{page}", game),
    Route("/login", login_form, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/register", register_form, methods=["GET"]),
    Route("/register", register_page, methods=["POST"]),
    Route("/token", new_token, methods=["POST"]),
    Route("/challenge", challenge, methods=["POST"]),
    Route("/upload", upload, methods=["POST"]),
]
