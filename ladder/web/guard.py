"""The web app's guards: whose token a request carries, how much it may send, how often it may guess.

- ``bearer_of``: the token of a request's ``Authorization: Bearer T`` header
  (scripts); never a query parameter, which would end in logs and browser
  histories. ``session_of``: the login cookie, a session id and never a
  token (``ladder.sessions``).
- ``same_origin``: whether a form's POST comes from this site's own page;
  every form refuses others (login CSRF included).
- ``Throttle``: per client address, a window of failed token attempts; past
  the limit every request with a token is answered 429 until the window
  moves on, so tokens cannot be guessed at speed.
- ``read_body``: a request body read up to a bound and no further: an
  oversized upload is refused after that many bytes, whatever its
  Content-Length claims.
"""

from __future__ import annotations

import time
from collections import deque
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection, Request

__all__ = [
    "COOKIE",
    "FORM_BYTES",
    "BodyTooLarge",
    "Throttle",
    "bearer_of",
    "client_of",
    "read_body",
    "same_origin",
    "session_of",
]

COOKIE = "ladder_token"
FORM_BYTES = 4096
"""The most a form or a small JSON body may send: a login, a registration, a challenge, an admin's action."""


class BodyTooLarge(ValueError):
    """A request body over the bound."""


def bearer_of(request: HTTPConnection) -> str | None:
    """The token of an ``Authorization: Bearer T`` header only: what scripts send."""
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def session_of(request: HTTPConnection) -> str | None:
    """The login cookie's session id (``ladder.sessions``), if the request carries one."""
    return request.cookies.get(COOKIE) or None


def same_origin(request: HTTPConnection) -> bool:
    """Whether a POST may come from this site's own page. No Origin header: a script or an old
    browser (a script's requests carry no cookie, an old browser's form is still refused by the
    cookies' SameSite=Strict); "null" (a sandboxed frame, a data: page) is another site."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc.lower() == request.headers.get("host", "").lower() != ""


def client_of(request: HTTPConnection) -> str:
    """The address the throttle counts a request's failures against: the connection's."""
    return request.client.host if request.client else "?"


class Throttle:
    """At most ``limit`` failures per client in any ``window_s`` seconds."""

    def __init__(self, limit: int = 20, window_s: float = 60.0) -> None:
        self.limit = limit
        self.window_s = window_s
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, client: str) -> deque[float]:
        failures = self._failures.setdefault(client, deque())
        horizon = time.monotonic() - self.window_s
        while failures and failures[0] < horizon:
            failures.popleft()
        if not failures:
            del self._failures[client]  # the table holds only clients with recent failures
            return deque()
        return failures

    def blocked(self, client: str) -> bool:
        return len(self._recent(client)) >= self.limit

    def failed(self, client: str) -> None:
        self._recent(client)
        self._failures.setdefault(client, deque()).append(time.monotonic())


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, or BodyTooLarge as soon as it passes ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"the request body is {declared} bytes; at most {limit} are taken")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"the request body is over {limit} bytes; at most {limit} are taken")
        chunks.append(chunk)
    return b"".join(chunks)
