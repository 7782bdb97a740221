"""Logs an entrant can act on, over real HTTP: a failed build's first error as the reason, the whole build
output and the check-bot report on the version's page and as files, each game's stderr; the owner's only,
and an empty log said in words."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest
import trio

from ladder.build_logs import build_log, keep_build_log
from ladder.config import LadderPaths
from ladder.submissions import check_submission, save_upload
from referee.settings import RefereeSettings
from tests.ladder.helpers import SAMPLE_BOTS, seed_viewable_game, upload_of, write_ladder
from tests.ladder.server import bearer, logged_in, running_server
from tests.referee.test_build_output import GCC_LIKE


def failing_build(folder: Path) -> Path:
    """A bot folder whose build fails the way a C compiler does, with far more output than is kept."""
    bot = folder / "cbot"
    shutil.copytree(SAMPLE_BOTS / "random_py", bot)
    (bot / "make.py").write_text(GCC_LIKE)
    manifest = (bot / "bot.toml").read_text()
    (bot / "bot.toml").write_text(manifest + '\nbuild = "python3 -u make.py"\n')
    return bot


async def decided(http: httpx.AsyncClient, token: str, name: str, number: int) -> dict[str, object]:
    with trio.move_on_after(240):  # generous: check-bot on a loaded machine
        while True:
            answer = (await http.get(f"/api/entrants/{name}/versions/{number}/report", headers=bearer(token))).json()
            if answer["state"] not in ("queued", "checking"):
                return dict(answer)
            await trio.sleep(0.1)
    raise AssertionError(f"version {number} of {name} was never decided")


async def test_a_failed_build_is_told_by_its_first_error_and_its_whole_output_is_the_owner_s_to_read(
    tmp_path: Path,
) -> None:
    async with (
        running_server(tmp_path, ("ann", "bob"), play=True) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        ann, bob = server.tokens["ann"], server.tokens["bob"]
        package = upload_of(failing_build(tmp_path))
        assert (await http.post("/api/submissions", content=package, headers=bearer(ann))).status_code == 202
        plain = upload_of(SAMPLE_BOTS / "random_py")
        assert (await http.post("/api/submissions", content=plain, headers=bearer(bob))).status_code == 202
        refused = await decided(http, ann, "ann", 1)
        assert refused["state"] == "rejected" and refused["build_output"] == "/entrants/ann/versions/1/build.txt"
        assert refused["reason"] == "build: ann: build failed (exit 2): bot.c:3:5: error: expected ';' before '}' token"

        owner = logged_in(server, "ann")
        mine = (await http.get("/entrants/ann/versions/1", headers=owner)).text
        assert "bot.c:3:5: error: expected &#39;;&#39; before &#39;}&#39; token" in mine
        output = mine.split('<pre class="log" id="build-output">', 1)[1].split("</pre>", 1)[0]
        assert output.startswith("gcc -O2 -o bot bot.c") and "make: *** [Makefile:2: bot] Error 1" in output
        assert "bytes of the build&#39;s output left out here" in output
        assert "<script>alert" not in mine and "&lt;script&gt;alert(&#39;build&#39;)&lt;/script&gt;" in output
        assert "No check-bot report: the version was refused before check-bot could run it" in mine
        page = (await http.get("/entrants/ann", headers=owner)).text
        assert 'href="/entrants/ann/versions/1">build and check</a>' in page

        file = await http.get("/entrants/ann/versions/1/build.txt", headers=owner)
        assert file.status_code == 200 and file.headers["content-type"].startswith("text/plain")
        assert 'filename="ann-v1-build.txt"' in file.headers["content-disposition"]
        assert file.text.startswith("gcc -O2") and file.text.rstrip().endswith("Error 1")
        assert len(file.content) < 2 * (32 << 10) + 200
        by_script = await http.get(str(refused["build_output"]), headers=bearer(ann))  # the API's link, with the token
        assert by_script.content == file.content

        # Nobody else reads it: not a stranger, not another entrant, not by guessing a number.
        for headers in ({}, logged_in(server, "bob"), bearer(bob)):
            for address in ("/entrants/ann/versions/1", "/entrants/ann/versions/1/build.txt"):
                assert (await http.get(address, headers=headers)).status_code == 404
        assert (await http.get("/entrants/ann/versions/9", headers=owner)).status_code == 404
        assert "build and check" not in (await http.get("/entrants/ann")).text

        accepted = await decided(http, bob, "bob", 1)
        assert accepted["state"] == "active"
        theirs = (await http.get("/entrants/bob/versions/1", headers=logged_in(server, "bob"))).text
        assert "No build ran for version 1: its bot.toml has no build command" in theirs
        checks = theirs.split('<table id="checks"', 1)[1].split("</table>", 1)[0]
        assert checks.count('<tr class="check-pass">') >= 5  # every check, the passed ones too
        assert 'href="/api/entrants/bob/versions/1/report"' in theirs


async def test_a_game_s_stderr_downloads_under_its_name_and_an_empty_one_says_so(tmp_path: Path) -> None:
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        game = seed_viewable_game(server.ladder.store, server.ladder.paths.replays, ["ann", "bob", "cat"])
        replays = server.ladder.paths.replays
        (replays / f"game-{game:06d}.jsonl.seat1.stderr").write_text("bob thinks <hard>\n")
        empty = await http.get(f"/games/{game}/stderr/0", headers=logged_in(server, "ann"))
        assert empty.text == f"(seat 0 wrote nothing to stderr in game {game})\n"
        assert f'filename="game-{game:06d}.seat-0.stderr.txt"' in empty.headers["content-disposition"]
        said = await http.get(f"/games/{game}/stderr/1", headers=logged_in(server, "bob"))
        assert said.text == "bob thinks <hard>\n" and said.headers["content-type"].startswith("text/plain")
        assert (await http.get(f"/games/{game}/stderr/1", headers=logged_in(server, "ann"))).status_code == 404
        page = (await http.get("/entrants/bob", headers=logged_in(server, "bob"))).text
        assert f'href="/games/{game}/stderr/1" download="game-{game}.seat-1.stderr.txt"' in page


def test_a_disk_that_refuses_a_build_log_costs_only_the_log(tmp_path: Path) -> None:
    paths = LadderPaths.beside(write_ladder(tmp_path))
    paths.data.mkdir()
    (paths.data / "builds").write_text("a file where the folder goes")
    keep_build_log(paths, 1, "gcc said something")  # no error: the verdict is recorded all the same
    assert build_log(paths, 1) is None


async def test_a_build_cache_that_cannot_be_used_is_the_verdict_s_reason_not_the_ladder_s_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uploads = tmp_path / "uploads"
    package = upload_of(SAMPLE_BOTS / "random_py")
    save_upload(uploads, "f" * 64, package)
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("FAMIGLIA_BOT_CACHE", str(tmp_path / "not-a-folder"))
    verdict, spec = await check_submission(uploads, "f" * 64, "ann", "vendetta", RefereeSettings(sandbox="none"))
    assert spec is None and not verdict.accepted and verdict.build_output is None
    assert verdict.reason.startswith("build: the bot build cache") and "FAMIGLIA_BOT_CACHE" in verdict.reason
