"""The host's admin page and API over real HTTP: what each action does to the store and the match loop, and an
attacker's list: no cookie, an entrant's token, wrong and replaced admin tokens, forged forms, other sites."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
import trio

from ladder import loop
from ladder.health import HealthRule
from ladder.store import LadderStore, new_token
from ladder.web.guard import Throttle
from referee.bots import BotSpec
from tests.ladder.server import Running, running_server

FORM = {"content-type": "application/x-www-form-urlencoded"}


def make_admin_token(store: LadderStore) -> str:
    """What ``famiglia ladder admin-token`` does (its own test runs the command)."""
    token = new_token()
    store.set_admin_token(token)
    return token


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def log_in(http: httpx.AsyncClient, token: str) -> str:
    """Log in through the form; the CSRF token the admin page then carries."""
    answer = await http.post("/admin/login", data={"token": token})
    assert answer.status_code == 303 and answer.headers["location"] == "/admin", answer.text
    page = await http.get("/admin")
    assert page.status_code == 200, page.text
    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', page.text)
    assert found is not None
    return found.group(1)


async def press(http: httpx.AsyncClient, action: str, csrf: str, **fields: str) -> str:
    """Submit one of the page's forms as the browser does, follow its redirect; the page's message."""
    answer = await http.post(f"/admin/{action}", data={"csrf": csrf, **fields})
    assert answer.status_code == 303 and answer.headers["location"] == "/admin", answer.text
    page = await http.get("/admin")
    found = re.search(r'<p id="said" role="status">(.*?)</p>', page.text)
    assert found is not None, page.text
    return found.group(1)


def activate(server: Running, *names: str) -> dict[str, int]:
    """Give ``names`` an accepted version each, as check-bot would (no build): their version ids."""
    store = server.ladder.store
    ids = {}
    for name in names:
        entrant = store.entrant(name)
        assert entrant is not None
        version = store.add_version(entrant.id, name * 16, (25.0, 8.3), per_hour=5)
        store.decide(version.id, accepted=True, reason="ok", report="{}")
        ids[name] = version.id
    return ids


def failed_game(store: LadderStore, members: list[int]) -> int:
    """A table of ``members`` whose first game the harness failed: what requeue is for."""
    store.add_table(7, members, [members, members[1:] + members[:1]])
    started = store.start_next()
    assert started is not None
    store.fail(started[0], "the referee's machine went away")
    return started[0]


# --- the host's own use ----------------------------------------------------------------------


async def test_the_admin_logs_in_with_the_token_and_sees_the_ladder_s_state(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        token = make_admin_token(server.ladder.store)
        answer = await http.post("/admin/login", data={"token": token})
        cookie = answer.headers["set-cookie"]
        assert cookie.startswith("ladder_admin=") and "HttpOnly" in cookie and "Path=/admin" in cookie
        assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
        assert "Secure" not in cookie  # plain HTTP here; on https the cookie is Secure
        page = await http.get("/admin")
        assert "<strong>running</strong>" in page.text and "Pause</button>" in page.text
        assert ">ann</a>" in page.text and ">bob</a>" in page.text and "No game failed." in page.text
        assert page.headers["cache-control"] == "no-store"
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert page.headers["x-content-type-options"] == "nosniff"


async def test_pause_and_resume_from_the_page_change_the_store_and_say_so_once(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        csrf = await log_in(http, make_admin_token(server.ladder.store))
        assert (await press(http, "pause", csrf)).startswith("paused")
        assert server.ladder.store.paused()
        page = await http.get("/admin")
        assert "<strong>paused</strong>" in page.text and "Resume</button>" in page.text
        assert 'id="said"' not in page.text  # the message is shown once
        assert (await press(http, "resume", csrf)).startswith("resumed")
        assert not server.ladder.store.paused()


async def test_retire_from_the_page_does_what_the_command_does(tmp_path: Path) -> None:
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        store = server.ladder.store
        ids = activate(server, "ann", "bob", "cat")
        store.add_table(3, list(ids.values()), [list(ids.values())])
        csrf = await log_in(http, make_admin_token(store))
        page = (await http.get("/admin")).text
        assert page.count("Retire</button>") == 3
        assert await press(http, "retire", csrf, entrant="ann") == "retired version 1 of ann"
        assert store.version(ids["ann"]).state == "retired"
        assert store.counts() == {"cancelled": 1}  # its game not yet started, as famiglia ladder retire does
        assert await press(http, "retire", csrf, entrant="ann") == "&#39;ann&#39; has no active version to retire"
        assert await press(http, "retire", csrf, entrant="zed") == "there is no entrant named &#39;zed&#39;"


async def test_requeue_from_the_page_plays_a_failed_game_again(tmp_path: Path) -> None:
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        store = server.ladder.store
        game = failed_game(store, list(activate(server, "ann", "bob", "cat").values()))
        csrf = await log_in(http, make_admin_token(store))
        page = (await http.get("/admin")).text
        assert "the referee&#39;s machine went away" in page and page.count("Requeue</button>") == 1
        assert "1 pending, 0 being played, 0 played, 1 failed." in page
        assert await press(http, "requeue", csrf, game=str(game)) == f"game {game} is queued to be played again"
        assert store.counts() == {"pending": 2} and store.failed_games() == []
        assert "only a failed game" in await press(http, "requeue", csrf, game=str(game))


async def test_requeue_refuses_a_failed_game_of_a_version_that_no_longer_plays(tmp_path: Path) -> None:
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        store = server.ladder.store
        game = failed_game(store, list(activate(server, "ann", "bob", "cat").values()))
        store.retire("bob")
        csrf = await log_in(http, make_admin_token(store))
        said = await press(http, "requeue", csrf, game=str(game))
        assert said.startswith(f"game {game} cannot be played again: version 1 of bob is retired"), said
        assert [failed.id for failed in store.failed_games()] == [game]  # still failed, not pending for ever


async def test_the_api_pauses_resumes_retires_and_requeues_with_the_admin_token(tmp_path: Path) -> None:
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        store = server.ladder.store
        token = make_admin_token(store)
        game = failed_game(store, list(activate(server, "ann", "bob", "cat").values()))
        paused = await http.post("/api/admin/pause", headers=bearer(token))
        assert paused.status_code == 200 and paused.json()["paused"] is True and store.paused()
        resumed = await http.post("/api/admin/resume", headers=bearer(token))
        assert resumed.json()["paused"] is False and not store.paused()
        requeued = await http.post("/api/admin/requeue", json={"game": game}, headers=bearer(token))
        assert requeued.status_code == 200 and requeued.json() == {
            "game": game,
            "state": "pending",
            "said": f"game {game} is queued to be played again",
        }
        retired = await http.post("/api/admin/retire", json={"entrant": "bob"}, headers=bearer(token))
        assert retired.status_code == 200 and retired.json()["retired"] == 1
        assert store.versions(entrant="bob")[0].state == "retired"


@pytest.mark.parametrize(
    ("action", "body", "status", "says"),
    [
        ("retire", {"entrant": "nobody"}, 404, "there is no entrant named 'nobody'"),
        ("retire", {"entrant": "ann"}, 409, "'ann' has no active version to retire"),
        ("retire", {"name": "ann"}, 400, '{"entrant": NAME}'),
        ("requeue", {"game": 99}, 404, "there is no game 99"),
        ("requeue", {"game": "1; DROP TABLE game"}, 400, '{"game": N}'),
        ("requeue", [1], 400, "a JSON object"),
        ("reboot", {}, 404, "there is no admin action 'reboot'"),
    ],
)
async def test_the_api_refuses_what_it_cannot_do_with_a_clear_json_error(
    tmp_path: Path, action: str, body: object, status: int, says: str
) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        token = make_admin_token(server.ladder.store)
        answer = await http.post(f"/api/admin/{action}", json=body, headers=bearer(token))
        assert answer.status_code == status and says in answer.json()["error"], answer.text
        assert (await http.post("/api/admin/pause", content=b"{", headers=bearer(token))).status_code == 400


async def test_resume_and_requeue_wake_the_match_loop_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Idle players would look again only after an hour: whatever they play within seconds, a wake started.
    monkeypatch.setattr(loop, "_IDLE_S", 3600.0)
    async with (
        running_server(tmp_path, ("ann", "bob", "cat"), play=True) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        ladder, store = server.ladder, server.ladder.store
        ladder.health = HealthRule(window=0, failed_fraction=1.0)  # bots that crash at once, never suspended
        token = make_admin_token(store)
        for name, version in activate(server, "ann", "bob", "cat").items():
            ladder.bots[version] = BotSpec(name=name, command=["true"], cwd=str(tmp_path))  # forfeits at once
        assert (await http.post("/api/admin/pause", headers=bearer(token))).status_code == 200
        ladder.wake()
        await trio.sleep(0.5)
        assert store.counts() == {}  # woken but paused: nothing is dealt
        assert (await http.post("/api/admin/resume", headers=bearer(token))).status_code == 200
        with trio.fail_after(60):
            while store.counts().get("done", 0) < 1:
                await trio.sleep(0.05)
        await http.post("/api/admin/pause", headers=bearer(token))
        with trio.fail_after(60):
            while store.counts().get("running", 0):
                await trio.sleep(0.05)
        game = failed_game(store, list(ladder.bots))
        store.set_paused(False)  # as the command would: the sleeping players do not notice
        await trio.sleep(0.5)
        assert store.failed_games()[0].id == game
        assert (await http.post("/api/admin/requeue", json={"game": game}, headers=bearer(token))).status_code == 200
        with trio.fail_after(60):
            while not store.games(game_id=game):
                await trio.sleep(0.05)


# --- an attacker's list ---------------------------------------------------------------------


async def test_without_the_admin_cookie_the_page_sends_to_login_and_forms_are_forbidden(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        make_admin_token(server.ladder.store)
        page = await http.get("/admin")
        assert page.status_code == 303 and page.headers["location"] == "/admin/login"
        for action in ("pause", "retire", "logout"):
            assert (await http.post(f"/admin/{action}", data={"csrf": "0" * 64, "entrant": "ann"})).status_code == 403
        assert (await http.post("/api/admin/pause")).status_code == 401
        assert (await http.get("/admin/login")).status_code == 200
        assert not server.ladder.store.paused()


async def test_no_admin_token_made_means_no_way_in(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        assert (await http.post("/admin/login", data={"token": ""})).status_code == 403
        assert (await http.post("/api/admin/pause", headers=bearer("anything"))).status_code == 403


async def test_an_entrant_s_token_never_grants_admin(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        make_admin_token(server.ladder.store)
        ann = server.tokens["ann"]
        login = await http.post("/admin/login", data={"token": ann})
        assert login.status_code == 403 and "ladder_admin" not in login.headers.get("set-cookie", "")
        for cookie in (f"ladder_admin={ann}", f"ladder_token={ann}"):
            assert (await http.get("/admin", headers={"cookie": cookie})).status_code == 303
            answer = await http.post("/admin/pause", headers={"cookie": cookie, **FORM}, content=b"csrf=x")
            assert answer.status_code == 403
        assert (await http.post("/api/admin/pause", headers=bearer(ann))).status_code == 403
        assert not server.ladder.store.paused()


async def test_wrong_admin_tokens_are_slowed_to_a_stop(tmp_path: Path) -> None:
    throttle = Throttle(limit=3, window_s=600)
    async with running_server(tmp_path, throttle=throttle) as server, httpx.AsyncClient(base_url=server.url) as http:
        token = make_admin_token(server.ladder.store)
        codes = [(await http.post("/admin/login", data={"token": f"guess{i}"})).status_code for i in range(4)]
        assert codes == [403, 403, 403, 429]
        # The right token waits out the window too, by form, cookie and header alike.
        assert (await http.post("/admin/login", data={"token": token})).status_code == 429
        assert (await http.get("/admin", headers={"cookie": f"ladder_admin={token}"})).status_code == 429
        assert (await http.post("/api/admin/pause", headers=bearer(token))).status_code == 429
        assert not server.ladder.store.paused()


async def test_guesses_through_the_cookie_and_the_api_count_as_failures_too(tmp_path: Path) -> None:
    throttle = Throttle(limit=2, window_s=600)
    async with running_server(tmp_path, throttle=throttle) as server, httpx.AsyncClient(base_url=server.url) as http:
        make_admin_token(server.ladder.store)
        await http.get("/admin", headers={"cookie": "ladder_admin=guess"})
        await http.post("/api/admin/pause", headers=bearer("guess"))
        assert (await http.post("/admin/login", data={"token": "guess"})).status_code == 429


async def test_a_replaced_admin_token_stops_working_at_once(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        store = server.ladder.store
        old = make_admin_token(store)
        csrf = await log_in(http, old)
        new = make_admin_token(store)
        assert (await http.post("/admin/pause", data={"csrf": csrf})).status_code == 403
        page = await http.get("/admin")
        assert page.status_code == 303 and page.headers["location"] == "/admin/login"
        assert "ladder_admin=" in page.headers["set-cookie"]  # the stale cookie is dropped
        assert (await http.post("/api/admin/pause", headers=bearer(old))).status_code == 403
        assert not store.paused()
        assert (await http.post("/api/admin/pause", headers=bearer(new))).status_code == 200


async def test_a_form_without_its_csrf_token_or_with_another_changes_nothing(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        csrf = await log_in(http, make_admin_token(server.ladder.store))
        forged = [{}, {"csrf": ""}, {"csrf": "0" * 64}, {"csrf": csrf[:-1]}, {"csrf": csrf + "0"}, {"csrf": "é" * 64}]
        for form in forged:
            answer = await http.post("/admin/pause", data=form)
            assert answer.status_code == 403 and "reload /admin" in answer.text, form
        assert not server.ladder.store.paused()
        assert (await http.post("/admin/pause", data={"csrf": csrf})).status_code == 303


async def test_a_post_from_another_site_is_refused_even_with_the_cookie_and_token(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        token = make_admin_token(server.ladder.store)
        csrf = await log_in(http, token)
        for origin in ("http://evil.example", "null", server.url.replace("127.0.0.1", "localhost")):
            headers = {"origin": origin}
            assert (await http.post("/admin/pause", data={"csrf": csrf}, headers=headers)).status_code == 403
            assert (await http.post("/admin/login", data={"token": token}, headers=headers)).status_code == 403
            assert (await http.post("/api/admin/pause", headers={**headers, **bearer(token)})).status_code == 403
        assert not server.ladder.store.paused()
        same = await http.post("/admin/pause", data={"csrf": csrf}, headers={"origin": server.url})
        assert same.status_code == 303 and server.ladder.store.paused()


async def test_names_and_errors_with_html_in_them_are_escaped_on_the_page(tmp_path: Path) -> None:
    hostile = '<script>alert("x")</script>'
    async with (
        running_server(tmp_path, (hostile, "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        store = server.ladder.store
        members = list(activate(server, hostile, "bob", "cat").values())
        store.add_table(3, members, [members])
        started = store.start_next()
        assert started is not None
        store.fail(started[0], '<img src=x onerror="alert(1)">')
        csrf = await log_in(http, make_admin_token(store))
        page = (await http.get("/admin")).text
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page and "&lt;img src=x" in page
        said = await press(http, "retire", csrf, entrant=hostile)
        assert said == "retired version 1 of &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"


async def test_the_admin_s_page_is_never_served_to_an_anonymous_reader(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        await log_in(http, make_admin_token(server.ladder.store))
        async with httpx.AsyncClient(base_url=server.url) as stranger:
            answer = await stranger.get("/admin")  # within the anonymous page cache's second
            assert answer.status_code == 303 and "csrf" not in answer.text


async def test_logging_out_drops_the_cookie(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
        csrf = await log_in(http, make_admin_token(server.ladder.store))
        answer = await http.post("/admin/logout", data={"csrf": csrf})
        assert answer.status_code == 303 and answer.headers["location"] == "/admin/login"
        assert (await http.get("/admin")).status_code == 303


# --- the command that makes the token -----------------------------------------------------------


def test_admin_token_prints_a_fresh_token_once_and_a_new_one_replaces_it(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tournaments.cli import app

    runner = CliRunner()
    path = tmp_path / "club.toml"
    missing = runner.invoke(app, ["ladder", "admin-token", str(path)])
    assert missing.exit_code == 2 and "no such file" in missing.output and len(missing.output.splitlines()) == 1
    runner.invoke(app, ["ladder", "init", str(path)])
    first = runner.invoke(app, ["ladder", "admin-token", str(path)])
    assert first.exit_code == 0 and "shown only now" in first.output
    old = first.output.strip().splitlines()[-1]
    assert len(old) >= 40 and old.encode() not in (tmp_path / "club.sqlite").read_bytes()
    new = runner.invoke(app, ["ladder", "admin-token", str(path)]).output.strip().splitlines()[-1]
    assert new != old
    store = LadderStore(tmp_path / "club.sqlite")
    try:
        assert store.is_admin_token(new) and not store.is_admin_token(old)
    finally:
        store.close()
    (tmp_path / "broken.toml").write_text("[ladder\n", encoding="utf-8")
    broken = runner.invoke(app, ["ladder", "admin-token", str(tmp_path / "broken.toml")])
    assert broken.exit_code == 2 and "not valid TOML" in broken.output


async def test_on_https_the_admin_cookie_is_secure(tmp_path: Path) -> None:
    from ladder.config import LadderPaths, load_ladder
    from ladder.loop import Ladder
    from ladder.web.app import make_app
    from tests.ladder.helpers import write_ladder

    # A real https server would need certificates; the app reads the scheme from the request all the same.
    path = write_ladder(tmp_path)
    ladder = Ladder(load_ladder(path), LadderPaths.beside(path))
    token = make_admin_token(ladder.store)
    transport = httpx.ASGITransport(app=make_app(ladder))
    async with httpx.AsyncClient(transport=transport, base_url="https://ladder.test") as http:
        answer = await http.post("/admin/login", data={"token": token})
        assert answer.status_code == 303 and "Secure" in answer.headers["set-cookie"]
