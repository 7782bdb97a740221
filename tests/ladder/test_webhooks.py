"""Webhooks: an entrant's address is called, signed, when its versions are decided; slow or failing receivers
are retried a bounded number of times and hold up nothing; private addresses are refused."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import httpx
import msgspec
import pytest
import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ladder import webhooks
from ladder.store import LadderStore, new_token
from ladder.webhooks import WebhookRefused, check_address, deliver_webhooks, set_webhook
from tests.ladder.server import bearer, running_server


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8000/hook", "https://localhost/hook", "http://10.1.2.3/hook", "http://[::1]/x", "ftp://a.b/c"],
)
def test_a_private_or_odd_address_is_refused(url: str) -> None:
    with pytest.raises(WebhookRefused):
        check_address(url, private_addresses=False)


def test_a_club_on_one_network_may_allow_private_addresses() -> None:
    check_address("http://127.0.0.1:8000/hook", private_addresses=True)


def version_of(store: LadderStore, entrant: int, digest: str, *, accepted: bool) -> None:
    version = store.add_version(entrant, digest * 64, (25.0, 8.3), per_hour=50)
    store.decide(version.id, accepted=accepted, reason="ok" if accepted else "check-bot: startup", report="{}")


async def test_decided_versions_are_called_signed_retried_and_a_hanging_receiver_holds_up_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webhooks, "_FIRST_WAIT_S", 0.05)
    monkeypatch.setattr(webhooks, "_TIMEOUT_S", 0.5)
    received: list[tuple[str, bytes, str]] = []
    failures = {"ann": 1}  # ann's receiver fails once, then takes it

    async def hook(request: Request) -> Response:
        who = request.path_params["who"]
        if who == "cat":
            await trio.sleep(3600)  # a receiver that never answers
        body = await request.body()
        if failures.get(who, 0) > 0:
            failures[who] -= 1
            return Response(status_code=500)
        received.append((who, body, request.headers["x-famiglia-signature"]))
        return Response(status_code=204)

    web = Config()
    web.bind = ["127.0.0.1:0"]
    web.accesslog = web.errorlog = None
    store = LadderStore(tmp_path / "ladder.sqlite")
    ids = {name: store.add_entrant(name, new_token()) for name in ("ann", "bob", "cat")}
    version_of(store, ids["ann"], "0", accepted=True)  # decided before the webhook: never called
    async with trio.open_nursery() as nursery:
        (url,) = await nursery.start(serve, Starlette(routes=[Route("/{who}", hook, methods=["POST"])]), web)
        secrets = {name: set_webhook(store, ids[name], f"{url}/{name}") for name in ("ann", "bob", "cat")}
        nursery.start_soon(lambda: deliver_webhooks(store, private_addresses=True, pause_s=0.05))
        version_of(store, ids["cat"], "1", accepted=True)
        version_of(store, ids["ann"], "2", accepted=False)
        version_of(store, ids["bob"], "3", accepted=True)
        with trio.fail_after(60):  # generous: a loaded machine
            while len(received) < 2:
                await trio.sleep(0.05)
        nursery.cancel_scope.cancel()
    by = {who: (msgspec.json.decode(body), body, signature) for who, body, signature in received}
    assert set(by) == {"ann", "bob"}  # cat's receiver hangs: ann's retry and bob's call came anyway
    assert by["ann"][0] == {
        "entrant": "ann", "version": 2, "state": "rejected", "reason": "check-bot: startup", "page": "/entrants/ann"
    }  # fmt: skip
    for who, (_, body, signature) in by.items():
        secret = secrets[who]
        assert secret is not None
        assert signature == "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    calls = dict(store.db.execute("SELECT version, attempts FROM webhook_call WHERE outcome = 'delivered'"))
    assert len(calls) == 2 and sorted(calls.values()) == [1, 2]  # ann's twice (once failed), bob's once


def test_a_receiver_that_always_fails_is_given_up_after_a_bounded_number_of_calls(tmp_path: Path) -> None:
    store = LadderStore(tmp_path / "ladder.sqlite")
    entrant = store.add_entrant("ann", new_token())
    set_webhook(store, entrant, "https://example.invalid/hook")
    version_of(store, entrant, "1", accepted=True)
    (call,) = webhooks._due(store, now=float("inf"))
    for _ in range(webhooks.ATTEMPTS):
        webhooks._record(store, call, None)
        call = msgspec.structs.replace(call, attempts=call.attempts + 1)
    assert webhooks._due(store, now=float("inf")) == []
    (outcome,) = store.db.execute("SELECT outcome FROM webhook_call WHERE outcome LIKE 'given up%'").fetchone()
    assert outcome == f"given up after {webhooks.ATTEMPTS} attempts"


async def test_the_api_sets_and_removes_a_webhook_and_refuses_a_private_one(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        ann = bearer(server.tokens["ann"])
        private = await http.put("/api/webhook", json={"url": "http://127.0.0.1:9/hook"}, headers=ann)
        assert private.status_code == 400 and "private or reserved" in private.json()["error"]
        assert (await http.put("/api/webhook", json={"url": "http://127.0.0.1:9/hook"})).status_code == 401
        assert (await http.put("/api/webhook", json={"link": "x"}, headers=ann)).status_code == 400
        removed = await http.delete("/api/webhook", headers=ann)
        assert removed.status_code == 200 and removed.json() == {"webhook": None, "secret": None}
