"""Seasons: the deadline closes the ladder and freezes its versions, and a resumable final decides it."""

from __future__ import annotations

import datetime
import hashlib
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pytest
import trio

from tests.ladder.helpers import SAMPLE_BOTS, upload_of, write_ladder

if TYPE_CHECKING:
    from ladder.loop import Ladder

FINALISTS = {"ann": "random_py", "bob": "greedy_py", "cat": "random_py"}


def ladder_of_real_bots(folder: Path) -> Ladder:
    """A ladder whose three entrants each have an accepted version of a real sample bot (check-bot skipped)."""
    from ladder.config import LadderPaths, load_ladder
    from ladder.loop import Ladder
    from ladder.store import new_token
    from ladder.submissions import save_upload
    from tournaments.finals import play_final
    from tournaments.hosting.finals import use_final_runner

    use_final_runner(play_final)  # what the command tree does at every start of famiglia
    path = write_ladder(folder)
    ladder = Ladder(load_ladder(path), LadderPaths.beside(path))
    for name, bot in FINALISTS.items():
        package = upload_of(SAMPLE_BOTS / bot)
        digest = hashlib.sha256(package + name.encode()).hexdigest()
        save_upload(ladder.paths.uploads, digest, package)
        entrant = ladder.store.add_entrant(name, new_token())
        version = ladder.store.add_version(entrant, digest, (25.0, 8.3), per_hour=5)
        ladder.store.decide(version.id, accepted=True, reason="ok", report="{}")
    return ladder


def close_now(ladder: Ladder, *, final_games: int = 6) -> None:
    """Set the season's deadline to this moment (after the season opened), as a host's file would."""
    from ladder.config import SeasonSection

    season = SeasonSection(deadline=datetime.datetime.now(datetime.UTC), final_games=final_games)
    ladder.config = msgspec.structs.replace(ladder.config, season=season)


def final_counts(ladder: Ladder, number: int = 1) -> tuple[int, int, int]:
    """(recorded results, distinct games among them, scheduled games) of a season's final store."""
    from ladder.final import season_folder

    with sqlite3.connect(season_folder(ladder.paths, number) / "final.sqlite") as db:
        done, distinct = db.execute("SELECT COUNT(*), COUNT(DISTINCT game) FROM result").fetchone()
        (scheduled,) = db.execute("SELECT COUNT(*) FROM schedule").fetchone()
    return int(done), int(distinct), int(scheduled)


async def test_a_season_past_its_deadline_plays_a_final_among_frozen_versions_and_publishes_it(tmp_path: Path) -> None:
    from ladder.final import play_season_final, report_page

    ladder = ladder_of_real_bots(tmp_path)
    assert ladder.season_closed() is None
    close_now(ladder)
    closed = ladder.season_closed()
    assert closed is not None and closed.startswith("season 1 closed at ")
    await play_season_final(ladder, ladder.seasons)
    season = ladder.seasons.current()
    assert sorted(name for name, _ in season.finalists) == sorted(FINALISTS)
    assert season.published is not None and season.games == 6
    assert sorted(row.name for row in season.standings) == sorted(FINALISTS)
    assert all(row.lower <= row.rating <= row.upper and row.games == 6 for row in season.standings)
    assert final_counts(ladder) == (6, 6, 6)
    page = report_page(ladder.paths, 1).read_text(encoding="utf-8")
    assert all(name in page for name in FINALISTS)
    # Published once: starting again plays nothing more.
    await play_season_final(ladder, ladder.seasons)
    assert final_counts(ladder) == (6, 6, 6)
    ladder.store.close()


async def test_a_final_killed_midway_plays_only_its_missing_games_at_the_next_start(tmp_path: Path) -> None:
    from ladder.final import play_season_final

    ladder = ladder_of_real_bots(tmp_path)
    close_now(ladder, final_games=12)

    async def stop_after_two(scope: trio.CancelScope) -> None:
        while True:
            await trio.sleep(0.05)
            try:
                if final_counts(ladder)[0] >= 2:
                    scope.cancel()
                    return
            except sqlite3.Error:  # the final's store is not made yet
                continue

    async with trio.open_nursery() as nursery:
        nursery.start_soon(stop_after_two, nursery.cancel_scope)
        await play_season_final(ladder, ladder.seasons)
        nursery.cancel_scope.cancel()
    done, _, scheduled = final_counts(ladder)
    assert 2 <= done < scheduled == 12
    assert ladder.seasons.current().published is None
    await play_season_final(ladder, ladder.seasons)
    assert final_counts(ladder) == (12, 12, 12)  # every game once: none lost, none played twice
    assert ladder.seasons.current().published is not None
    ladder.store.close()


async def test_a_closed_season_deals_no_table_refuses_challenges_and_keeps_its_first_finalists(tmp_path: Path) -> None:
    from ladder.final import play_season_final
    from referee.bots import BotSpec

    ladder = ladder_of_real_bots(tmp_path)
    for version in ladder.store.versions(states=("active",)):
        ladder.bots[version.id] = BotSpec(name=version.entrant, command=["true"], cwd=str(tmp_path))
    assert ladder.next_game() is not None  # open: a table is dealt
    ladder.store.reset_running()
    close_now(ladder, final_games=6)
    assert ladder.next_game() is None
    challenger = ladder.store.entrant("ann")
    assert challenger is not None
    with pytest.raises(ValueError, match="season 1 closed at .*new season"):
        ladder.challenge(challenger, ["bob", "cat"])
    await play_season_final(ladder, ladder.seasons)
    frozen = ladder.seasons.current().finalists
    ladder.store.retire("ann")  # after the deadline: the final already has its versions
    await play_season_final(ladder, ladder.seasons)
    assert ladder.seasons.current().finalists == frozen
    ladder.store.close()


async def test_a_new_season_opens_only_after_the_final_and_keeps_the_past_one(tmp_path: Path) -> None:
    from ladder.final import play_season_final, report_page

    ladder = ladder_of_real_bots(tmp_path)
    close_now(ladder)
    with pytest.raises(ValueError, match="season 1 is still open: a new season opens once its final is published"):
        ladder.seasons.open_next()
    await play_season_final(ladder, ladder.seasons)
    assert ladder.seasons.open_next() == 2
    # The file still holds season 1's deadline: season 2 opened after it, so it is open.
    assert ladder.season_closed() is None
    past = ladder.seasons.season(1)
    assert past is not None and past.published is not None and len(past.standings) == 3
    assert report_page(ladder.paths, 1).is_file()
    ladder.store.close()


def test_a_deadline_without_a_zone_is_refused_in_one_line(tmp_path: Path) -> None:
    from ladder.config import load_ladder

    path = write_ladder(tmp_path)
    path.write_text(path.read_text() + "[ladder.season]\ndeadline = 2027-03-31T18:00:00\n")
    with pytest.raises(ValueError, match=r"season.deadline 2027-03-31T18:00:00 has no zone; write it with one"):
        load_ladder(path)


async def test_a_closed_season_refuses_an_upload_in_one_line_and_its_pages_say_so(tmp_path: Path) -> None:
    import httpx

    from tests.ladder.server import bearer, running_server

    async with running_server(tmp_path, ("ann", "bob")) as server:
        close_now(server.ladder)
        async with httpx.AsyncClient(base_url=server.url) as client:
            answer = await client.post(
                "/api/submissions", content=upload_of(SAMPLE_BOTS / "random_py"), headers=bearer(server.tokens["ann"])
            )
            assert answer.status_code == 403
            assert answer.json()["error"].startswith("season 1 closed at ")
            assert "new season" in answer.json()["error"]
            assert server.ladder.store.versions() == []  # nothing was kept of it
            board = (await client.get("/")).text
            assert "season 1 closed at" in board
            listed = (await client.get("/seasons")).text
            assert "Season 1: closed, final being played" in listed


async def test_a_published_final_shows_on_the_board_and_serves_its_report_and_nothing_else(tmp_path: Path) -> None:
    import httpx
    from hypercorn.config import Config
    from hypercorn.trio import serve

    from ladder.final import play_season_final, season_folder
    from ladder.web.app import make_app

    ladder = ladder_of_real_bots(tmp_path)
    close_now(ladder)
    await play_season_final(ladder, ladder.seasons)
    web = Config()
    web.bind = ["127.0.0.1:0"]
    web.accesslog = web.errorlog = None
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(serve, make_app(ladder), web)
        async with httpx.AsyncClient(base_url=binds[0]) as client:
            assert "Season 1: final." in (await client.get("/")).text
            listed = (await client.get("/seasons")).text
            assert "Season 1: final" in listed and all(name in listed for name in FINALISTS)
            report = await client.get("/seasons/1/report.html")
            assert report.status_code == 200 and "bob" in report.text
            viewer = sorted((season_folder(ladder.paths, 1) / "report-games").glob("*.html"))
            assert viewer
            assert (await client.get(f"/seasons/1/report-games/{viewer[0].name}")).status_code == 200
            for hidden in ("final.sqlite", "report-games/../final.sqlite", "replays", "../../ladder.toml"):
                assert (await client.get(f"/seasons/1/{hidden}")).status_code == 404
            assert (await client.get("/seasons/2/report.html")).status_code == 404
        nursery.cancel_scope.cancel()
    ladder.store.close()
