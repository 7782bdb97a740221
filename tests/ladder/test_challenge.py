"""An entrant asks for a game against chosen opponents: played first, checked, rate-limited."""

from __future__ import annotations

from pathlib import Path

import httpx
import trio

from referee.bots import BotSpec
from tests.ladder.server import Running, running_server


def activate(server: Running, tmp_path: Path, names: tuple[str, ...]) -> None:
    """Accepted versions for ``names``, with stand-in bots: nothing is played in these tests."""
    store = server.ladder.store
    for name in names:
        entrant = store.entrant(name)
        assert entrant is not None
        version = store.add_version(entrant.id, name * 16, (25.0, 8.3), per_hour=5)
        store.decide(version.id, accepted=True, reason="ok", report="{}")
        server.ladder.bots[version.id] = BotSpec(name=name, command=["true"], cwd=str(tmp_path))


async def test_a_challenge_is_played_before_the_loop_s_own_tables_in_every_seating(tmp_path: Path) -> None:
    names = ("ann", "bob", "cat", "dan")
    async with running_server(tmp_path, names) as server, httpx.AsyncClient(base_url=server.url) as http:
        activate(server, tmp_path, names)
        versions = {v.entrant: v.id for v in server.ladder.store.versions()}
        server.ladder.store.add_table(1, [versions["ann"], versions["bob"], versions["cat"]], [[1, 2, 3]])
        answer = await http.post(
            "/api/challenges",
            json={"opponents": ["bob", "cat"]},
            headers={"authorization": f"Bearer {server.tokens['dan']}"},
        )
        assert answer.status_code == 202 and answer.json()["games"] == 6
        started = server.ladder.store.start_next()
        assert started is not None and sorted(started[2]) == sorted([versions["dan"], versions["bob"], versions["cat"]])


async def test_a_wrong_challenge_is_refused_with_its_reason_and_the_hourly_limit_holds(tmp_path: Path) -> None:
    names = ("ann", "bob", "cat")
    async with running_server(tmp_path, (*names, "eve")) as server, httpx.AsyncClient(base_url=server.url) as http:
        activate(server, tmp_path, names)
        ann = {"authorization": f"Bearer {server.tokens['ann']}"}

        async def ask(body: object, headers: dict[str, str] = ann) -> tuple[int, str]:
            answer = await http.post("/api/challenges", json=body, headers=headers)
            return answer.status_code, str(answer.json().get("error", ""))

        assert (await ask({"opponents": ["bob"]}))[1].startswith("name 2 opponents")
        assert "not yourself" in (await ask({"opponents": ["ann", "bob"]}))[1]
        assert "no version of 'eve'" in (await ask({"opponents": ["bob", "eve"]}))[1]
        assert (await ask({"opponents": "bob"}))[0] == 400
        assert (await ask({"opponents": ["bob", "cat"], "seed": 1}))[0] == 400
        assert (
            "no version playing yet"
            in (await ask({"opponents": ["bob", "cat"]}, {"authorization": f"Bearer {server.tokens['eve']}"}))[1]
        )
        assert (await ask({"opponents": ["bob", "cat"]}, {}))[0] == 401
        codes = [(await ask({"opponents": ["bob", "cat"]}))[0] for _ in range(3)]
        assert codes == [202, 202, 429]


async def test_the_challenge_command_queues_games_or_says_why_not_in_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tournaments.cli import app

    names = ("ann", "bob", "cat")
    async with running_server(tmp_path, names) as server:
        activate(server, tmp_path, names)

        def challenge(*opponents: str) -> tuple[int, str]:
            args = ["ladder", "challenge", *opponents, "--server", server.url, "--token", server.tokens["ann"]]
            done = CliRunner().invoke(app, args)
            return done.exit_code, done.output

        assert await trio.to_thread.run_sync(challenge, "bob", "cat") == (
            0,
            "queued 6 games against bob, cat; they play before the ladder's own\n",
        )
        code, said = await trio.to_thread.run_sync(challenge, "bob")
        assert code == 2 and "the ladder refused (400): name 2 opponents" in said and said.count("\n") == 1


async def test_the_entrant_s_own_page_challenges_with_the_api_s_limits_and_reasons(tmp_path: Path) -> None:
    from tests.ladder.server import logged_in

    names = ("ann", "bob", "cat")
    async with running_server(tmp_path, (*names, "eve")) as server, httpx.AsyncClient(base_url=server.url) as http:
        activate(server, tmp_path, names)
        mine = logged_in(server, "ann")
        own = (await http.get("/entrants/ann", headers=mine)).text
        assert 'id="challenge"' in own and 'value="bob"' in own and 'value="cat"' in own and 'value="ann"' not in own
        assert 'id="challenge"' not in (await http.get("/entrants/ann")).text  # not on anyone else's view
        form = {**mine, "content-type": "application/x-www-form-urlencoded"}

        async def press(body: bytes, headers: dict[str, str] = form) -> tuple[int, str]:
            answer = await http.post("/challenge", content=body, headers=headers)
            return answer.status_code, answer.text

        status, text = await press(b"opponent=bob")
        assert status == 400 and "name 2 opponents" in text and 'href="/entrants/ann"' in text
        status, text = await press(b"opponent=bob&opponent=cat")
        assert status == 202 and "Challenge queued" in text and "6 games" in text
        assert (await press(b"opponent=bob&opponent=cat"))[0] == 202
        status, text = await press(b"opponent=bob&opponent=cat")
        assert status == 429  # the hourly limit, as on the API
        forged = await press(b"opponent=bob&opponent=cat", {**form, "origin": "http://evil.example"})
        assert forged[0] == 403 and "another site" in forged[1]
        stranger = await http.post("/challenge", content=b"opponent=bob&opponent=cat")
        assert stranger.status_code == 403
