"""A short-lived cache of what anonymous readers get: the same page for everyone, rendered once a second.

Fifty people watching a leaderboard would otherwise each have it rendered
from the store, on the Trio thread that also referees the games. A page
without a token is the same for every reader, so it is kept for
``max_age_s`` (a second by default: a reader never sees standings older than
that) and served from memory. Responses to requests that carry a token are
never kept: they may hold what only their owner may read. ``KeepAnonymous``
is the ASGI middleware that serves and keeps them, in front of the app.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ladder.web.auth import is_admin_address
from ladder.web.guard import COOKIE
from ladder.web.site import PAGE_HEADERS

__all__ = ["KeepAnonymous", "PageCache"]

_MOST_KEPT = 1 << 20
"""The largest body kept: a page is far smaller; a replay download is not buffered to be kept."""


class PageCache:
    """Bounded in entries and in bytes: a game's viewer page is megabytes, and readers choose which games."""

    def __init__(self, max_age_s: float = 1.0, max_entries: int = 1000, max_bytes: int = 64 << 20) -> None:
        self.max_age_s = max_age_s
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: dict[str, tuple[float, int, bytes, str]] = {}
        self._bytes = 0

    def get(self, key: str) -> tuple[int, bytes, str] | None:
        """(status, body, media type) of a fresh entry, or None."""
        entry = self._entries.get(key)
        if entry is None or time.monotonic() - entry[0] > self.max_age_s:
            return None
        return entry[1], entry[2], entry[3]

    def put(self, key: str, status: int, body: bytes, media_type: str) -> None:
        if len(body) > self.max_bytes // 8:
            return  # one page alone would push out the many it is worth keeping for
        now = time.monotonic()
        self._drop(key)
        if len(self._entries) >= self.max_entries or self._bytes + len(body) > self.max_bytes:
            # Addresses are chosen by readers: a flood of distinct ones or of large pages costs the
            # stale entries first, then the oldest, never more room.
            for old in [k for k, entry in self._entries.items() if now - entry[0] > self.max_age_s]:
                self._drop(old)
            while self._entries and (
                len(self._entries) >= self.max_entries or self._bytes + len(body) > self.max_bytes
            ):
                self._drop(next(iter(self._entries)))
        self._entries[key] = (now, status, body, media_type)
        self._bytes += len(body)

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= len(entry[2])


class KeepAnonymous:
    """ASGI middleware: anonymous GETs answered from ``PageCache`` when it has them, and kept when it has not.

    The host's pages are never kept: the admin's page holds its CSRF token, and is the host's alone.
    """

    def __init__(self, app: ASGIApp, cache: PageCache) -> None:
        self.app = app
        self.cache = cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or _carries_token(scope)
            or is_admin_address(str(scope["path"]))
        ):
            await self.app(scope, receive, send)
            return
        key = scope["path"] + "?" + scope.get("query_string", b"").decode("latin-1")
        hit = self.cache.get(key)
        if hit is not None:
            status, body, media_type = hit
            headers = PAGE_HEADERS if media_type.startswith("text/html") else {"x-content-type-options": "nosniff"}
            await Response(body, status_code=status, media_type=media_type, headers=headers)(scope, receive, send)
            return
        started: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def keep(message: Message) -> None:
            if message["type"] == "http.response.start":
                started.update(message)
                headers = dict(started.get("headers", []))
                # What asks not to be stored (a feed at a secret address, a download) is not kept.
                started["keep"] = b"no-store" not in headers.get(b"cache-control", b"")
            elif message["type"] == "http.response.body" and started.get("keep"):
                chunks.append(message.get("body", b""))
                if sum(map(len, chunks)) > _MOST_KEPT:
                    started["keep"] = False  # a large body streams through; memory holds pages, not files
                    chunks.clear()
                elif not message.get("more_body", False) and started.get("status") in (200, 404):
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
