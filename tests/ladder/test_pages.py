"""Pages escape whatever an entrant or a bot controls, and show a version's reason to its owner only."""

from __future__ import annotations

from pathlib import Path

import httpx
import msgspec

from tests.ladder.server import logged_in, running_server

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


async def test_a_hostile_reason_and_report_reach_the_owner_escaped_and_nobody_else(tmp_path: Path) -> None:
    async with running_server(tmp_path, ("ann",)) as server, httpx.AsyncClient(base_url=server.url) as http:
        store = server.ladder.store
        entrant = store.entrant("ann")
        assert entrant is not None
        version = store.add_version(entrant.id, "a" * 64, (25.0, 8.3), per_hour=5)
        report = {"checks": [{"name": "startup", "status": "fail", "detail": HOSTILE, "wanted": "w", "fix": "f"}]}
        store.decide(
            version.id,
            accepted=False,
            reason=f"check-bot: startup: {HOSTILE}",
            report=msgspec.json.encode(report).decode(),
        )
        mine = (await http.get("/entrants/ann", headers=logged_in(server, "ann"))).text
        # Asked right after the owner, by anyone: the owner's page was not kept for others (ladder.cache).
        public = (await http.get("/entrants/ann")).text
        assert "rejected" in public and "alert" not in public
        assert "<script>alert" not in mine and "onerror=alert(1)>" not in mine
        assert mine.count("&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") == 2  # the reason and the report
        assert (await http.get("/entrants/ann")).headers["content-security-policy"].startswith("default-src 'none'")


async def test_logging_in_sets_an_http_only_cookie_and_a_wrong_token_is_refused(tmp_path: Path) -> None:
    async with running_server(tmp_path, ("ann",)) as server, httpx.AsyncClient(base_url=server.url) as http:
        form = {"content-type": "application/x-www-form-urlencoded"}
        wrong = await http.post("/login", content=b"token=nope", headers=form)
        assert wrong.status_code == 403 and "not valid" in wrong.text
        right = await http.post("/login", content=f"token={server.tokens['ann']}".encode(), headers=form)
        assert right.status_code == 303 and right.headers["location"] == "/entrants/ann"
        cookie = right.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
