"""An entrant's Atom feed: its verdicts for a feed reader, at an address only its owner is shown."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import httpx

from tests.ladder.server import bearer, logged_in, running_server

ATOM = "{http://www.w3.org/2005/Atom}"


async def test_the_feed_lists_verdicts_escaped_at_a_private_address_that_a_new_token_changes(tmp_path: Path) -> None:
    async with running_server(tmp_path, ("ann", "bob")) as server, httpx.AsyncClient(base_url=server.url) as http:
        store = server.ladder.store
        entrant = store.entrant("ann")
        assert entrant is not None
        first = store.add_version(entrant.id, "a" * 64, (25.0, 8.3), per_hour=5)
        store.decide(
            first.id, accepted=False, reason='check-bot: <script>alert("x")</script> & more', report='{"checks": []}'
        )
        second = store.add_version(entrant.id, "b" * 64, (25.0, 8.3), per_hour=5)
        store.decide(second.id, accepted=True, reason="ok", report="{}")

        own = (await http.get("/entrants/ann", headers=logged_in(server, "ann"))).text
        address = own.split('href="/feeds/ann/')[1].split('"')[0]
        assert "/feeds/" not in (await http.get("/entrants/ann")).text  # shown to its owner only
        answer = await http.get(f"/feeds/ann/{address}")
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/atom+xml")
        root = ET.fromstring(answer.content)  # well-formed, whatever the reasons held
        titles = [entry.findtext(f"{ATOM}title") for entry in root.iter(f"{ATOM}entry")]
        assert "version 1: rejected" in titles and "version 2: active" in titles
        contents = [entry.findtext(f"{ATOM}content") for entry in root.iter(f"{ATOM}entry")]
        assert 'check-bot: <script>alert("x")</script> & more' in contents  # as text, escaped on the wire
        assert b"<script>" not in answer.content

        wrong = address[:-1] + ("0" if address[-1] != "0" else "1")
        assert (await http.get(f"/feeds/ann/{wrong}")).status_code == 404
        assert (await http.get(f"/feeds/bob/{address}")).status_code == 404  # ann's key is not bob's
        assert (await http.post("/api/token", headers=bearer(server.tokens["ann"]))).status_code == 201
        assert (await http.get(f"/feeds/ann/{address}")).status_code == 404  # a new token, a new address
