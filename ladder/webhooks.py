"""Webhooks: the ladder calls an entrant's own address when one of its versions is decided.

An entrant sets an https address (``PUT /api/webhook``, or its page); from then
on, each time one of its versions reaches a verdict (active, rejected, retired,
or any state the ladder adds later), the server POSTs a small JSON body there,
signed with a secret shown to the entrant once (``X-Famiglia-Signature:
sha256=HMAC``), so the receiver knows the call is the ladder's.

Nothing in the match loop waits for it. ``deliver_webhooks`` is a task of its
own beside the loop: it reads which (version, state) pairs no call was made
for yet, from the store, so a restart resumes where it stopped and a crash
between a call and its record repeats that call at most once. Every call is
bounded (a few seconds, no redirects, the answer not read past its status)
and retried with a growing wait, a few times, then given up and counted; at
most a few calls are in flight at once, whatever the entrants' receivers do.

An address is refused, when set and again at each call, if its host resolves
to a loopback, private, link-local or otherwise reserved address (the ladder
must not be made to reach the host's own network); a host who wants that for
a club on one network sets ``private_addresses = true``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
import time
from urllib.parse import urlsplit

import httpx
import msgspec
import trio

from ladder.store import LadderStore, new_token

__all__ = ["ATTEMPTS", "WebhookRefused", "check_address", "deliver_webhooks", "set_webhook"]

ATTEMPTS = 5
_TIMEOUT_S = 5.0
_AT_ONCE = 4
_PAUSE_S = 2.0
_FIRST_WAIT_S = 10.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook (
    entrant INTEGER PRIMARY KEY REFERENCES entrant(id),
    url TEXT NOT NULL,
    secret TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_call (
    version INTEGER NOT NULL REFERENCES version(id),
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at REAL NOT NULL DEFAULT 0,
    outcome TEXT,
    PRIMARY KEY (version, state)
);
"""


class WebhookRefused(ValueError):
    """An address the ladder will not call, with the reason shown to the entrant."""


def _ready(store: LadderStore) -> None:
    store.db.executescript(_SCHEMA)


def check_address(url: str, *, private_addresses: bool) -> None:
    """WebhookRefused unless ``url`` is an http(s) address whose host resolves only to public addresses."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise WebhookRefused("a webhook is an https:// address (http:// also works, but is readable on the way)")
    if len(url) > 2000:
        raise WebhookRefused("the webhook address is over 2000 characters")
    if private_addresses:
        return
    try:
        found = socket.getaddrinfo(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    except (socket.gaierror, UnicodeError):
        raise WebhookRefused(f"{parts.hostname}: no such host") from None
    for *_, address in found:
        ip = ipaddress.ip_address(address[0])
        if not ip.is_global or ip.is_multicast:
            raise WebhookRefused(f"{parts.hostname} is a private or reserved address ({ip}); give a public one")


def set_webhook(store: LadderStore, entrant: int, url: str | None) -> str | None:
    """Set (or, with None, remove) ``entrant``'s webhook, whose address ``check_address`` passed; its new
    signing secret, shown once. Versions already decided are marked as told: a new webhook starts with
    what happens next. On the store's own thread: the address's check, which waits on DNS, is the caller's.
    """
    _ready(store)
    if url is None:
        with store.transaction():
            store.db.execute("DELETE FROM webhook WHERE entrant = ?", (entrant,))
        return None
    secret = new_token()
    with store.transaction():
        store.db.execute("INSERT OR REPLACE INTO webhook VALUES (?, ?, ?)", (entrant, url, secret))
        store.db.execute(
            "INSERT OR IGNORE INTO webhook_call (version, state, outcome) "
            "SELECT id, state, 'before the webhook' FROM version WHERE entrant = ?",
            (entrant,),
        )
    return secret


class _Call(msgspec.Struct, frozen=True):
    version: int
    state: str
    attempts: int
    url: str
    secret: str
    body: bytes


def _due(store: LadderStore, now: float) -> list[_Call]:
    rows = store.db.execute(
        "SELECT v.id, v.state, COALESCE(c.attempts, 0), w.url, w.secret, e.name, v.number, v.reason "
        "FROM version v JOIN entrant e ON e.id = v.entrant JOIN webhook w ON w.entrant = v.entrant "
        "LEFT JOIN webhook_call c ON c.version = v.id AND c.state = v.state "
        "WHERE v.state NOT IN ('queued', 'checking') AND (c.version IS NULL OR (c.outcome IS NULL AND c.next_at <= ?)) "
        "ORDER BY v.id LIMIT 50",
        (now,),
    ).fetchall()
    return [
        _Call(
            version,
            state,
            attempts,
            url,
            secret,
            msgspec.json.encode(
                {"entrant": name, "version": number, "state": state, "reason": reason, "page": f"/entrants/{name}"}
            ),
        )
        for version, state, attempts, url, secret, name, number, reason in rows
    ]


def _record(store: LadderStore, call: _Call, outcome: str | None) -> None:
    attempts = call.attempts + 1
    if outcome is None and attempts >= ATTEMPTS:
        outcome = f"given up after {attempts} attempts"
    wait = _FIRST_WAIT_S * 3 ** (attempts - 1)
    with store.transaction():
        store.db.execute(
            "INSERT OR REPLACE INTO webhook_call VALUES (?, ?, ?, ?, ?)",
            (call.version, call.state, attempts, time.time() + wait, outcome),
        )


async def _call(client: httpx.AsyncClient, call: _Call, private_addresses: bool) -> str | None:
    """'delivered' or why it is given up; None to try again later."""
    try:
        await trio.to_thread.run_sync(lambda: check_address(call.url, private_addresses=private_addresses))
    except WebhookRefused as exc:
        return f"refused: {exc}"
    signature = hmac.new(call.secret.encode(), call.body, hashlib.sha256).hexdigest()
    headers = {"content-type": "application/json", "x-famiglia-signature": f"sha256={signature}"}
    try:
        with trio.fail_after(_TIMEOUT_S):
            async with client.stream("POST", call.url, content=call.body, headers=headers) as answer:
                status = answer.status_code  # the body is not read: a receiver cannot make the ladder wait on it
    except (httpx.HTTPError, trio.TooSlowError):
        return None
    return "delivered" if 200 <= status < 300 else None


async def deliver_webhooks(store: LadderStore, *, private_addresses: bool, pause_s: float = _PAUSE_S) -> None:
    """Call every due webhook, for ever (until cancelled); the match loop never waits on it."""
    _ready(store)
    limiter = trio.CapacityLimiter(_AT_ONCE)
    async with httpx.AsyncClient(follow_redirects=False, timeout=_TIMEOUT_S) as client:
        while True:
            calls = _due(store, time.time())

            async def one(call: _Call) -> None:
                async with limiter:
                    outcome = await _call(client, call, private_addresses)
                _record(store, call, outcome)

            async with trio.open_nursery() as nursery:
                for call in calls:
                    nursery.start_soon(one, call)
            await trio.sleep(pause_s)
