"""Logins are server-side sessions, tokens can be replaced without losing an entrant's history, and no form
takes a POST from another site."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.ladder.conftest import famiglia, register
from tests.ladder.server import bearer, running_server

FORM = {"content-type": "application/x-www-form-urlencoded"}
ELSEWHERE = {**FORM, "origin": "http://evil.example"}


def cookie_of(answer: httpx.Response) -> dict[str, str]:
    value = answer.headers["set-cookie"].split(";", 1)[0]
    return {"cookie": value}


async def log_in(http: httpx.AsyncClient, token: str) -> dict[str, str]:
    answer = await http.post("/login", content=f"token={token}".encode(), headers=FORM)
    assert answer.status_code == 303, answer.text
    return cookie_of(answer)


async def test_the_login_cookie_is_a_session_not_the_token_and_logging_out_ends_it(tmp_path: Path) -> None:
    async with running_server(tmp_path, ("ann",)) as server, httpx.AsyncClient(base_url=server.url) as http:
        token = server.tokens["ann"]
        cookie = await log_in(http, token)
        session = cookie["cookie"].split("=", 1)[1]
        assert token not in cookie["cookie"] and len(session) >= 40
        mine = await http.get("/entrants/ann", headers=cookie)
        assert "replace my token" in mine.text and 'href="/entrants/ann">ann</a>' in mine.text
        assert "log out" in mine.text and ">log in<" not in mine.text
        assert session.encode() not in server.ladder.paths.db.read_bytes()  # only its hash is kept
        out = await http.post("/logout", headers=cookie)
        assert out.status_code == 303
        again = await http.get("/entrants/ann", headers=cookie)  # the same cookie, replayed
        assert "replace my token" not in again.text and ">log in<" in again.text


async def test_replacing_the_token_on_the_page_ends_the_old_token_and_every_other_login(tmp_path: Path) -> None:
    async with running_server(tmp_path, ("ann", "bob")) as server, httpx.AsyncClient(base_url=server.url) as http:
        old = server.tokens["ann"]
        elsewhere, here = await log_in(http, old), await log_in(http, old)
        bobs = await log_in(http, server.tokens["bob"])
        answer = await http.post("/token", headers={**here, **FORM})
        assert answer.status_code == 200 and "Your token is replaced" in answer.text
        new = answer.text.split("<code>")[1].split("</code>")[0]
        assert new != old
        assert (await http.get("/api/entrants/ann", headers=bearer(old))).json()["owner"] is False
        assert (await http.get("/api/entrants/ann", headers=bearer(new))).json()["owner"] is True
        assert "replace my token" not in (await http.get("/entrants/ann", headers=elsewhere)).text
        assert "replace my token" in (await http.get("/entrants/ann", headers=cookie_of(answer))).text
        assert "replace my token" in (await http.get("/entrants/bob", headers=bobs)).text  # others untouched
        assert server.ladder.store.entrant("ann") is not None  # the same entrant: name and history kept


async def test_the_api_replaces_the_sender_s_token(tmp_path: Path) -> None:
    async with running_server(tmp_path, ("ann",)) as server, httpx.AsyncClient(base_url=server.url) as http:
        old = server.tokens["ann"]
        answer = await http.post("/api/token", headers=bearer(old))
        assert answer.status_code == 201 and answer.json()["entrant"] == "ann"
        new = answer.json()["token"]
        assert (await http.post("/api/token", headers=bearer(old))).status_code == 403
        assert (await http.post("/api/token")).status_code == 401
        assert (await http.get("/api/entrants/ann", headers=bearer(new))).json()["owner"] is True


async def test_no_form_takes_a_post_from_another_site(tmp_path: Path) -> None:
    from ladder.invites import add_invite

    async with running_server(tmp_path, ("ann",)) as server, httpx.AsyncClient(base_url=server.url) as http:
        add_invite(server.ladder.store, "club-code", 5, 1)
        token = server.tokens["ann"]
        cookie = await log_in(http, token)
        forged = {
            "/login": f"token={token}".encode(),  # login CSRF: the attacker's account in the victim's browser
            "/register": b"code=club-code&name=mallory",
            "/token": b"",
            "/logout": b"",
        }
        for path, body in forged.items():
            answer = await http.post(path, content=body, headers={**ELSEWHERE, **cookie})
            assert answer.status_code == 403 and "another site" in answer.text, path
            assert "set-cookie" not in answer.headers, path
        assert server.ladder.store.entrant("mallory") is None
        assert (await http.get("/api/entrants/ann", headers=bearer(token))).json()["owner"] is True
        assert "replace my token" in (await http.get("/entrants/ann", headers=cookie)).text  # still logged in
        # The site's own pages send their true origin (referrer policy same-origin), and are taken.
        home = {**FORM, "origin": server.url}
        assert (await http.post("/login", content=f"token={token}".encode(), headers=home)).status_code == 303


def test_the_host_resets_a_lost_token_keeping_the_entrant(tmp_path: Path) -> None:
    ladder, tokens = register(tmp_path, ["ann"])
    done = famiglia("ladder", "reset-token", str(ladder), "ann")
    assert done.returncode == 0, done.stderr
    new = done.stdout.strip().splitlines()[-1]
    assert new != tokens["ann"] and len(new) >= 40
    from ladder.store import LadderStore

    store = LadderStore(ladder.with_suffix(".sqlite"))
    assert store.entrant_for_token(tokens["ann"]) is None
    found = store.entrant_for_token(new)
    assert found is not None and found.name == "ann"
    unknown = famiglia("ladder", "reset-token", str(ladder), "zed")
    assert unknown.returncode == 2 and "no entrant named 'zed'" in unknown.stdout + unknown.stderr
