"""Self-registration with an invite code, over real HTTP, with an attacker's list."""

from __future__ import annotations

from pathlib import Path

import httpx

from ladder.invites import add_invite
from ladder.web.guard import Throttle
from tests.ladder.server import running_server

CODE = "club-code-for-the-tests"


async def test_a_person_registers_by_api_and_the_token_works(tmp_path: Path) -> None:
    async with running_server(tmp_path, ()) as server, httpx.AsyncClient(base_url=server.url) as http:
        add_invite(server.ladder.store, CODE, 5, 1)
        answer = await http.post("/api/register", json={"code": CODE, "name": "eve.b-2"})
        assert answer.status_code == 201, answer.text
        token = answer.json()["token"]
        assert answer.json()["entrant"] == "eve.b-2"
        mine = await http.get("/api/entrants/eve.b-2", headers={"authorization": f"Bearer {token}"})
        assert mine.json()["owner"] is True
        # Only the hash is kept, as for tokens.
        stored = server.ladder.store.db.execute("SELECT code_hash FROM invite").fetchone()[0]
        assert CODE not in stored


async def test_the_form_registers_and_shows_the_token_once(tmp_path: Path) -> None:
    async with running_server(tmp_path, ()) as server, httpx.AsyncClient(base_url=server.url) as http:
        add_invite(server.ladder.store, CODE, 5, 1)
        form = await http.get("/register")
        content = form.text.split("<main>")[1].split("</main>")[0]  # the site's time tooltips script is outside
        assert form.status_code == 200 and 'action="/register"' in content and "<script" not in content
        done = await http.post("/register", data={"code": CODE, "name": "fay"})
        assert done.status_code == 200, done.text
        assert server.ladder.store.entrant("fay") is not None
        token = done.text.split("<code>")[1].split("</code>")[0]
        assert server.ladder.store.entrant_for_token(token) is not None


async def test_an_attacker_s_registrations_are_refused_and_change_nothing(tmp_path: Path) -> None:
    async with running_server(tmp_path, ("ann",)) as server, httpx.AsyncClient(base_url=server.url) as http:
        add_invite(server.ladder.store, CODE, 1, 1)
        add_invite(server.ladder.store, "expired-code", 5, 0.0)
        refusals = {
            "wrong code": {"code": CODE + "x", "name": "mal"},
            "empty code": {"code": "", "name": "mal"},
            "expired code": {"code": "expired-code", "name": "mal"},
            "taken name": {"code": CODE, "name": "ann"},
            "taken name in capitals": {"code": CODE, "name": "ANN"},
            "markup name": {"code": CODE, "name": "<script>alert(1)</script>"},
            "path name": {"code": CODE, "name": "../ann"},
            "long name": {"code": CODE, "name": "a" * 41},
        }
        for what, body in refusals.items():
            answer = await http.post("/api/register", json=body)
            assert answer.status_code == 400, what
            assert "error" in answer.json() and "token" not in answer.json(), what
        # The wrong, used-up and expired code are refused in the same words: nothing learnt.
        said = {
            (await http.post("/api/register", json={"code": c, "name": "mal"})).text for c in ("no", "expired-code")
        }
        assert len(said) == 1
        assert (await http.post("/api/register", json={"code": CODE, "name": "gil"})).status_code == 201
        replayed = await http.post("/api/register", json={"code": CODE, "name": "hal"})
        assert replayed.status_code == 400 and replayed.text in said  # the code's one use is spent
        malformed = await http.post("/api/register", content=b'{"code": 1}')
        assert malformed.status_code == 400
        oversized = await http.post("/api/register", content=b"x" * 100_000)
        assert oversized.status_code == 413
        page = await http.post("/register", data={"code": CODE, "name": "<b>x</b>"})
        assert page.status_code == 400 and "<b>x</b>" not in page.text and "&lt;b&gt;" in page.text
        assert [e.name for e in server.ladder.store.entrants()] == ["ann", "gil"]


async def test_too_many_refusals_from_one_client_are_slowed_down(tmp_path: Path) -> None:
    async with (
        running_server(tmp_path, (), throttle=Throttle(limit=3)) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        add_invite(server.ladder.store, CODE, 5, 1)
        for _ in range(3):
            assert (await http.post("/api/register", json={"code": "guess", "name": "mal"})).status_code == 400
        # Blocked now even with the right code: the guard does not tell a right guess apart.
        blocked = await http.post("/api/register", json={"code": CODE, "name": "mal"})
        assert blocked.status_code == 429
        page = await http.post("/register", data={"code": CODE, "name": "mal"})
        assert page.status_code == 429
        assert server.ladder.store.entrants() == []


async def test_a_revoked_code_is_refused_like_a_wrong_one(tmp_path: Path) -> None:
    from ladder.invites import revoke_invites

    async with running_server(tmp_path, ()) as server, httpx.AsyncClient(base_url=server.url) as http:
        add_invite(server.ladder.store, CODE, 5, 1)
        assert revoke_invites(server.ladder.store) == 1
        answer = await http.post("/api/register", json={"code": CODE, "name": "ivy"})
        assert answer.status_code == 400 and "not valid" in answer.json()["error"]
        assert server.ladder.store.entrants() == []


def test_the_host_s_invite_command_prints_a_code_once_and_revokes(tmp_path: Path) -> None:
    from tests.ladder.conftest import famiglia
    from tests.ladder.helpers import write_ladder

    ladder = write_ladder(tmp_path)
    assert famiglia("ladder", "add-entrant", str(ladder), "ann").returncode == 0
    made = famiglia("ladder", "invite", str(ladder), "--uses", "2", "--days", "1")
    assert made.returncode == 0, made.stdout
    code = made.stdout.strip().splitlines()[-1]
    assert len(code) >= 40 and code not in ladder.with_suffix(".sqlite").read_bytes().decode("latin-1")
    revoked = famiglia("ladder", "invite", str(ladder), "--revoke")
    assert revoked.returncode == 0 and "revoked 1" in revoked.stdout


def test_a_careless_host_s_invite_options_are_one_line_each_and_write_no_code(tmp_path: Path) -> None:
    from tests.ladder.conftest import famiglia
    from tests.ladder.helpers import write_ladder

    ladder = write_ladder(tmp_path)
    for options, said in [
        (["--uses", "0"], "'--uses'"),
        (["--uses", "abc"], "'--uses'"),
        (["--days", "-1"], "'--days'"),
        (["--days", "0"], "'--days'"),
    ]:
        run = famiglia("ladder", "invite", str(ladder), *options)
        lines = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
        assert run.returncode == 2 and len(lines) == 1 and said in lines[0], (options, lines)
        assert "Traceback" not in run.stdout + run.stderr
    missing = famiglia("ladder", "invite", str(tmp_path / "nothere.toml"))
    assert missing.returncode == 2 and "famiglia ladder init" in missing.stdout + missing.stderr
    # Nothing was made: not even the ladder's store.
    assert not ladder.with_suffix(".sqlite").exists()
