"""An entrant's Atom feed: its versions' verdicts and its games, for a feed reader instead of polling pages.

A feed reader sends no ``Authorization`` header, and the ladder never reads a
token from an address; so the feed's address carries a key of its own: an
HMAC of the entrant and its token's hash under the ladder's secret. It shows
what the entrant's own page shows its owner (reasons included), it is
printed on that page only, and replacing the token (``ladder.sessions``)
changes it, ending every copy of the old address at once.
"""

from __future__ import annotations

import hashlib
import hmac

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ladder.store import LadderStore
from ladder.web.site import not_found, site

__all__ = ["feed_key", "routes"]

_ENTRIES = 50


def feed_key(store: LadderStore, name: str) -> str | None:
    """The key of ``name``'s feed address, or None when there is no such entrant."""
    row = store.db.execute("SELECT id, token_hash FROM entrant WHERE name = ?", (name,)).fetchone()
    if row is None:
        return None
    return hmac.new(store.deal_key(), f"feed:{row[0]}:{row[1]}".encode(), hashlib.sha256).hexdigest()[:40]


class FeedEntry(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    updated: str
    title: str
    link: str
    text: str


def _entries(store: LadderStore, name: str, base: str) -> list[FeedEntry]:
    entries = []
    for number, state, reason, submitted, decided in store.db.execute(
        "SELECT v.number, v.state, v.reason, v.submitted, v.decided FROM version v JOIN entrant e ON e.id = v.entrant "
        "WHERE e.name = ? ORDER BY v.id DESC LIMIT ?",
        (name, _ENTRIES),
    ):
        entries.append(
            FeedEntry(
                id=f"{base}/entrants/{name}#version-{number}-{state}",
                updated=decided or submitted,
                title=f"version {number}: {state}",
                link=f"{base}/entrants/{name}",
                text=reason or f"version {number} is {state}",
            )
        )
    for game in store.games(entrant=name, limit=_ENTRIES):
        mine = [seat for seat in game.seats if seat.entrant == name]
        places = ", ".join(f"seat {seat.seat}: rank {seat.rank}" + (f" ({seat.termination})" if seat.termination else "")
                           for seat in mine)  # fmt: skip
        entries.append(
            FeedEntry(
                id=f"{base}/api/games/{game.id}",
                updated=game.finished or "",
                title=f"game {game.id}: {places}",
                link=f"{base}/api/games/{game.id}",
                text=", ".join(f"{seat.entrant} v{seat.number} rank {seat.rank}" for seat in game.seats),
            )
        )
    return sorted(entries, key=lambda entry: entry.updated, reverse=True)[:_ENTRIES]


async def feed(request: Request) -> Response:
    shared = site(request)
    name, offered = request.path_params["name"], request.path_params["key"]
    wanted = feed_key(shared.store, name)
    if wanted is None or not hmac.compare_digest(wanted, offered):
        return not_found(request)  # a wrong key and no such entrant look the same
    base = str(request.base_url).rstrip("/")
    entries = _entries(shared.store, name, base)
    text = shared.templates.get_template("feed.atom.j2").render(
        ladder=shared.ladder.config.name,
        name=name,
        self_link=str(request.url),
        page=f"{base}/entrants/{name}",
        updated=entries[0].updated if entries else "1970-01-01T00:00:00+00:00",
        entries=entries,
    )
    return Response(text, media_type="application/atom+xml; charset=utf-8", headers={"cache-control": "no-store"})


routes = [Route("/feeds/{name}/{key}.atom", feed)]
