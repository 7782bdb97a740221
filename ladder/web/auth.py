"""Who a request comes from: the app's ``AuthenticationBackend`` and what it makes of a token.

``Door``, behind Starlette's ``AuthenticationMiddleware``, reads the one
credential each address takes and makes the request's ``user``:

- ``/admin`` and below, the host's pages: the admin cookie (``ADMIN_COOKIE``,
  HttpOnly, path ``/admin``); ``/api/admin/...``: the ``Authorization``
  header alone, which a browser cannot be made to send. Right: ``Admin``,
  with the scope "admin". The admin token is checked against the one hash the
  store keeps of it, in constant time (``LadderStore.is_admin_token``); an
  entrant's token is kept elsewhere and never matches.
- everywhere else: an entrant's token (``guard.bearer_of``), else the login
  cookie's session (``ladder.sessions``; an ended or unknown one is no
  credential, and counts nothing: its id is 256 random bits). Right:
  ``Entrant``, with the scope "entrant".
- no token, a wrong one, or any token while the client is throttled: a
  ``Stranger``, with no scope, holding the status and the words that refuse
  it: 401, 403 or 429.

An endpoint that serves only the entrant or only the admin says so with
``requires("entrant", status_code=401)`` or ``requires("admin", ...)``; the
app answers that 401 with what the stranger holds (``ladder.web.app``), as
JSON on the API and as a page on the host's pages. A page that merely shows
its owner more (``owns``) serves a stranger as anyone else.

A wrong token counts as a failed attempt in the throttle where it is refused
(``refused``) and where it decides what a page shows (``owns``), so a token
cannot be guessed at speed by any answer that tells a right one from a wrong
one; a page that is the same either way counts nothing. ``register`` makes an
entrant from an invite code, each refusal counted the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from starlette.authentication import AuthCredentials, AuthenticationBackend, BaseUser, SimpleUser, UnauthenticatedUser
from starlette.requests import HTTPConnection, Request

from ladder.invites import InviteRefused, redeem_invite
from ladder.names import NAME_RULE, valid_name
from ladder.sessions import entrant_of_session
from ladder.store import EntrantRow, LadderStore, new_token
from ladder.web.guard import bearer_of, client_of, session_of
from ladder.web.site import site

__all__ = [
    "ADMIN_COOKIE",
    "Admin",
    "Door",
    "Entrant",
    "Stranger",
    "admin_for",
    "entrant_for",
    "is_admin_address",
    "is_admin_page",
    "owns",
    "refused",
    "register",
]

ADMIN_COOKIE = "ladder_admin"
_THROTTLED = "too many failed token attempts; wait a minute"


class Entrant(SimpleUser):
    """A request with an entrant's token."""

    def __init__(self, row: EntrantRow) -> None:
        super().__init__(row.name)
        self.row = row


class Admin(SimpleUser):
    """A request with the admin token."""

    def __init__(self, token: str) -> None:
        super().__init__("admin")
        self.token = token
        """The session the admin page's CSRF tokens are made from."""


class Stranger(UnauthenticatedUser):
    """A request without a token that counts at its address, and why: 401 none, 403 a wrong one, 429 throttled."""

    def __init__(self, status: int, said: str) -> None:
        self.status = status
        self.said = said
        self.counted = False


_User = TypeVar("_User", Entrant, Admin)


@dataclass(frozen=True)
class _Kind(Generic[_User]):
    """One kind of token: who it makes a request's sender, and the words refusing it."""

    scope: str
    known: Callable[[LadderStore, str], _User | None]
    none: str
    wrong: str


def _entrant(store: LadderStore, token: str) -> Entrant | None:
    row = store.entrant_for_token(token) if token else None
    return None if row is None else Entrant(row)


def _admin(store: LadderStore, token: str) -> Admin | None:
    return Admin(token) if store.is_admin_token(token) else None


_ENTRANT = _Kind("entrant", _entrant, "send your token: Authorization: Bearer TOKEN", "this token is not valid")
_ADMIN = _Kind(
    "admin",
    _admin,
    "send the admin token: Authorization: Bearer TOKEN (famiglia ladder admin-token prints one)",
    "this is not the admin token",
)


def _check(conn: HTTPConnection, token: str | None, kind: _Kind[_User]) -> _User | Stranger:
    """Who ``token`` makes ``conn``'s sender; nothing is counted yet (``refused`` does, when it comes to that)."""
    if token is None:
        return Stranger(401, kind.none)
    shared = site(conn)
    if shared.throttle.blocked(client_of(conn)):
        return Stranger(429, _THROTTLED)
    user = kind.known(shared.store, token)
    return Stranger(403, kind.wrong) if user is None else user


def _credentials(conn: HTTPConnection, token: str | None, kind: _Kind[_User]) -> tuple[AuthCredentials, BaseUser]:
    user = _check(conn, token, kind)
    return AuthCredentials([] if isinstance(user, Stranger) else [kind.scope]), user


def entrant_for(conn: HTTPConnection, token: str) -> Entrant | Stranger:
    """Who a token sent by form makes the sender (the login page): ``Entrant``, or the ``Stranger`` refusing it."""
    return _check(conn, token, _ENTRANT)


def admin_for(conn: HTTPConnection, token: str | None) -> Admin | Stranger:
    """Who a token sent by form makes the sender (the admin login page): ``Admin``, or the ``Stranger`` refusing it."""
    return _check(conn, token, _ADMIN)


def is_admin_page(path: str) -> bool:
    """The host's pages: where the admin cookie is sent and read."""
    return path == "/admin" or path.startswith("/admin/")


def is_admin_address(path: str) -> bool:
    """The host's pages and API: what takes the admin token, and is never kept for others (``ladder.web.cache``)."""
    return is_admin_page(path) or path.startswith("/api/admin/")


class Door(AuthenticationBackend):
    """Who a request comes from, by the one credential its address takes (the module's docstring)."""

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser]:
        path = str(conn.scope["path"])
        if is_admin_page(path):  # the admin page's own cookie, which the browser sends to /admin only
            return _credentials(conn, conn.cookies.get(ADMIN_COOKIE), _ADMIN)
        if is_admin_address(path):  # /api/admin/...: the header alone, which no page can make a browser send
            return _credentials(conn, bearer_of(conn), _ADMIN)
        token = bearer_of(conn)
        if token is None and (session := session_of(conn)) is not None:
            row = entrant_of_session(site(conn).store, session)
            if row is None:
                return AuthCredentials(), Stranger(401, "your login has ended; log in again at /login")
            return AuthCredentials([_ENTRANT.scope]), Entrant(row)
        return _credentials(conn, token, _ENTRANT)


def refused(conn: HTTPConnection, user: Stranger) -> Stranger:
    """``user``, now refused: a wrong token counts as one failed attempt of its client's, once."""
    if user.status == 403 and not user.counted:
        user.counted = True
        site(conn).throttle.failed(client_of(conn))
    return user


def owns(request: Request, name: str) -> bool:
    """Whether the request comes from the entrant ``name``, whose pages show it more than others'."""
    user = request.user
    if isinstance(user, Stranger):
        refused(request, user)  # a right token and a wrong one show differently here
    return isinstance(user, Entrant) and user.row.name == name


def register(request: Request, code: str, name: str) -> tuple[str, str] | tuple[None, str]:
    """(token, name) of a new entrant, or (None, why not). Every refusal counts against the
    client as a failed token attempt does, so codes cannot be guessed nor names probed at speed."""
    shared = site(request)
    if shared.throttle.blocked(client_of(request)):
        return None, "too many failed attempts; wait a minute"
    try:
        if not valid_name(name):
            raise InviteRefused(NAME_RULE)
        token = new_token()
        redeem_invite(shared.store, code, name, token)
    except InviteRefused as exc:
        shared.throttle.failed(client_of(request))
        return None, str(exc)
    return token, name
