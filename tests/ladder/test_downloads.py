"""An entrant downloads replays, its own seats' views and logs, and reads one game or every game through the API."""

from __future__ import annotations

from pathlib import Path

import httpx
import msgspec
import pytest
import trio

from referee.replay import read_replay, verify_replay
from tests.ladder.helpers import SAMPLE_BOTS, upload_of
from tests.ladder.server import bearer, logged_in, running_server


async def test_a_finished_deal_s_replay_seat_views_and_record_are_downloaded_by_those_who_may(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ladder.web import api

    monkeypatch.setattr(api, "_GAMES_PAGE", 4)  # pages of 4 games: the link to the next page is seen
    package = upload_of(SAMPLE_BOTS / "random_py")
    async with (
        running_server(tmp_path, ("ann", "bob", "cat"), play=True) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        for token in server.tokens.values():
            assert (await http.post("/api/submissions", content=package, headers=bearer(token))).status_code == 202
        store = server.ladder.store
        with trio.move_on_after(240):  # generous: check-bot and games on a loaded machine
            while not store.table_finished(1) or store.counts().get("done", 0) < 6:
                await trio.sleep(0.1)
        game = next(g for g in store.games(limit=100) if g.table == 1)
        owner = game.seats[0].entrant

        replay = await http.get(f"/games/game-{game.id}.jsonl")
        assert replay.status_code == 200 and "attachment" in replay.headers["content-disposition"]
        saved = tmp_path / "downloaded.jsonl"
        saved.write_bytes(replay.content)
        verify_replay(read_replay(saved))  # the very file famiglia replay verify takes

        assert (await http.get(f"/games/game-{game.id}.seat-0.jsonl")).status_code == 404  # not a stranger's
        other = next(s.entrant for s in game.seats if s.entrant != owner)
        assert (
            await http.get(f"/games/game-{game.id}.seat-0.jsonl", headers=logged_in(server, other))
        ).status_code == 404
        mine = await http.get(f"/games/game-{game.id}.seat-0.jsonl", headers=logged_in(server, owner))
        assert mine.status_code == 200
        lines = [msgspec.json.decode(line) for line in mine.content.splitlines()]
        assert lines[0]["seat"] == 0 and lines[0]["steps"] == len(lines) - 1 > 1
        assert [line["step"] for line in lines[1:]] == list(range(len(lines) - 1))

        record = (await http.get(f"/api/games/{game.id}", headers=bearer(server.tokens[owner]))).json()
        assert record["game"]["id"] == game.id and len(record["game"]["seats"]) == 3
        assert record["links"]["replay"] == f"/games/game-{game.id}.jsonl"
        assert "0" in record["links"]["seats"] and "0" in record["links"]["stderr"]
        public = (await http.get(f"/api/games/{game.id}")).json()
        assert public["links"]["seats"] == {} and public["links"]["stderr"] == {}
        assert (await http.get("/api/games/999999")).status_code == 404

        first = await http.get("/api/games")
        assert len(first.json()) == 4 and 'rel="next"' in first.headers["link"]
        following = first.headers["link"].split(">")[0].lstrip("<")
        second = (await http.get(following)).json()
        assert second and max(g["id"] for g in second) < min(g["id"] for g in first.json())
        assert (await http.get("/api/games?before=x")).status_code == 400

        stderr = await http.get(f"/games/{game.id}/stderr/0", headers=logged_in(server, owner))
        assert stderr.status_code == 200 and stderr.text.strip()  # an empty log says so, never a blank page


async def test_a_deal_still_being_played_is_not_downloaded(tmp_path: Path) -> None:
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        assert (await http.get("/games/game-1.jsonl")).status_code == 404
        assert (await http.get("/games/game-1.seat-0.jsonl")).status_code == 404
