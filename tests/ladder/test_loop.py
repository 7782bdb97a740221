"""The match loop in-process: accepted versions play on balanced seatings, each game recorded with its replay."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import trio

from referee.replay import ReplayWriteFailed
from tests.ladder.helpers import SAMPLE_BOTS, upload_of
from tests.ladder.server import logged_in, running_server

if TYPE_CHECKING:
    from ladder.loop import Ladder


def ladder_of_accepted(folder: Path, names: tuple[str, ...] = ("ann", "bob", "cat"), *, concurrency: int = 2) -> Ladder:
    """An in-process ladder of accepted versions, one per name, whose bots are never started: the test
    deals their games itself, or stands in for the executor."""
    from ladder.config import LadderPaths, load_ladder
    from ladder.loop import Ladder
    from ladder.store import new_token
    from referee.bots import BotSpec
    from tests.ladder.helpers import write_ladder

    path = write_ladder(folder, concurrency=concurrency)
    ladder = Ladder(load_ladder(path), LadderPaths.beside(path))
    store = ladder.store
    for name in names:
        version = store.add_version(store.add_entrant(name, new_token()), name * 16, (25.0, 8.3), per_hour=5)
        store.decide(version.id, accepted=True, reason="ok", report="{}")
        ladder.bots[version.id] = BotSpec(name=name, command=["true"], cwd=str(folder))
    return ladder


class StandInExecutor:
    """An executor whose games only do what a test's ``play`` says."""

    def __init__(self) -> None:
        self.slots = trio.CapacityLimiter(2)

    @asynccontextmanager
    async def open(self, competition: object) -> AsyncIterator[None]:
        yield

    async def ready(self) -> None:
        return

    async def play(self, spec: object, seats: object, replay: Path) -> Any:
        raise NotImplementedError

    def keep(self, archives: object) -> None:
        return


async def test_accepted_versions_play_every_seat_of_a_deal_and_the_deal_is_shown_only_after(tmp_path: Path) -> None:
    package = upload_of(SAMPLE_BOTS / "random_py")
    async with (
        running_server(tmp_path, ("ann", "bob", "cat"), play=True) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        for token in server.tokens.values():
            answer = await http.post("/api/submissions", content=package, headers={"authorization": f"Bearer {token}"})
            assert answer.status_code == 202
        store = server.ladder.store
        with trio.move_on_after(240):  # generous: check-bot and games on a loaded machine
            while store.counts().get("done", 0) < 6 or not store.table_finished(1):
                await trio.sleep(0.1)
        states = [(v.entrant, v.state, v.reason) for v in store.versions()]
        assert store.counts().get("done", 0) >= 6 and store.table_finished(1), (store.counts(), states)
        games = [game for game in store.games(limit=100) if game.table == 1]
        assert len(games) == 6 and len({game.seed for game in games}) == 1  # one deal, every seating
        seats = Counter((seat.seat, seat.entrant) for game in games for seat in game.seats)
        assert set(seats.values()) == {2}  # each entrant twice in each seat
        assert all(game.replay is not None and Path(game.replay).is_file() for game in games)
        assert (await http.get(f"/games/game-{games[0].id}.html")).status_code == 200
        seat_page = await http.get(f"/games/game-{games[0].id}.seat-0.html")
        assert seat_page.status_code == 404  # a seat's page is its owner's
        owner = games[0].seats[0].entrant
        cookie = logged_in(server, owner)
        assert (await http.get(f"/games/game-{games[0].id}.seat-0.html", headers=cookie)).status_code == 200
        assert (await http.get(f"/games/{games[0].id}/stderr/0")).status_code == 404
        assert (await http.get(f"/games/{games[0].id}/stderr/0", headers=cookie)).status_code == 200
        assert all(v.games >= 6 and v.sigma < 25 / 3 for v in store.versions(states=("active",)))


async def test_a_submission_the_harness_cannot_check_is_rejected_and_the_server_goes_on(tmp_path: Path) -> None:
    async with running_server(tmp_path, ("ann",), play=True) as server:
        store = server.ladder.store
        entrant = store.entrant("ann")
        assert entrant is not None
        version = store.add_version(entrant.id, "0" * 64, (25.0, 8.3), per_hour=5)  # its upload is not on disk
        server.ladder.enqueue(version.id)
        with trio.fail_after(60):
            while store.version(version.id).state in ("queued", "checking"):
                await trio.sleep(0.05)
        assert store.version(version.id).state == "rejected"
        assert "could not check it" in store.version(version.id).reason
        async with httpx.AsyncClient(base_url=server.url) as http:
            assert (await http.get("/api/standings")).status_code == 200


async def test_a_paused_ladder_deals_no_game_and_a_retired_version_is_never_seated(tmp_path: Path) -> None:
    ladder = ladder_of_accepted(tmp_path, ("ann", "bob", "cat", "dan"))
    store = ladder.store
    store.set_paused(True)
    assert ladder.next_game() is None and store.counts() == {}
    store.set_paused(False)
    store.retire("dan")
    dan = store.versions(entrant="dan")[0].id
    for _ in range(12):  # two tables' worth: none of them seats the retired version
        started = ladder.next_game()
        assert started is not None and dan not in started[2]


async def test_a_stopped_loop_leaves_no_game_running_and_no_replay_of_a_game_it_did_not_record(tmp_path: Path) -> None:
    ladder = ladder_of_accepted(tmp_path, concurrency=2)
    store = ladder.store
    in_play: list[Path] = []

    class WholeReplayThenStopped(StandInExecutor):
        """Each game writes its whole replay, then the server stops before the game is recorded."""

        async def play(self, spec: object, seats: object, replay: Path) -> Any:
            replay.write_text("{}\n")
            (replay.parent / f"{replay.name}.seat0.stderr").write_text("")
            in_play.append(replay)
            await trio.sleep_forever()

    ladder.executor = WholeReplayThenStopped()
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        with trio.fail_after(60):
            while len(in_play) < 2:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()

    counts = store.counts()
    assert list(counts) == ["pending"] and counts["pending"] > 2, counts
    assert [path.name for path in ladder.paths.replays.iterdir()] == []


async def test_a_loop_stopped_by_an_error_shows_that_error_even_when_the_store_fails_too(tmp_path: Path) -> None:
    ladder = ladder_of_accepted(tmp_path, concurrency=1)
    store = ladder.store

    class DiskFull(StandInExecutor):
        """The machine fails mid-game, and the store's writes with it."""

        async def play(self, spec: object, seats: object, replay: Path) -> Any:
            def disk_io_error() -> list[int]:
                raise sqlite3.OperationalError("disk I/O error")

            store.reset_running = disk_io_error  # type: ignore[method-assign]
            raise OSError(28, "No space left on device")

    ladder.executor = DiskFull()
    with pytest.raises(BaseExceptionGroup) as stopped:
        async with trio.open_nursery() as nursery:
            await nursery.start(ladder.run)

    def leaves(error: BaseException) -> list[BaseException]:
        if isinstance(error, BaseExceptionGroup):
            return [leaf for inner in error.exceptions for leaf in leaves(inner)]
        return [error]

    [error] = leaves(stopped.value)
    assert isinstance(error, OSError) and "No space left" in str(error)


async def test_a_replay_the_full_disk_cannot_take_stops_the_ladder_and_leaves_the_game_to_play_again(
    tmp_path: Path,
) -> None:
    # The referee's nursery wraps the disk's fault: seen through the group, it stops the server (every game
    # would fail alike) instead of failing game after game, each with a traceback.
    ladder = ladder_of_accepted(tmp_path, concurrency=1)
    store = ladder.store
    games: list[str] = []

    class FullReplays(StandInExecutor):
        async def play(self, spec: Any, seats: object, replay: Path) -> Any:
            games.append(spec.match)
            raise ExceptionGroup("the referee's tasks", [ReplayWriteFailed(f"cannot write replay {replay}")])

    ladder.executor = FullReplays()
    with pytest.raises(BaseExceptionGroup) as stopped, trio.fail_after(120):  # not forever, if it plays on
        async with trio.open_nursery() as nursery:
            await nursery.start(ladder.run)
    assert stopped.value.subgroup(ReplayWriteFailed) is not None
    assert len(games) == 1  # stopped at the first, not dealt again and again
    assert store.counts().get("failed", 0) == 0  # not recorded as that game's fault: played again at restart


async def test_a_restarted_ladder_serves_its_board_while_its_bots_are_still_being_readied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 2,000 active versions readying their bots takes a minute: the board must not wait for it, the games do."""
    import threading

    import ladder.loop
    from ladder.config import LadderPaths, load_ladder
    from ladder.store import new_token
    from ladder.web.app import make_app
    from referee.bots import BotSpec
    from tests.ladder.helpers import write_ladder

    release = threading.Event()
    readied: list[str] = []

    def slow_ready_bot(uploads: Path, digest: str, name: str, settings: object) -> BotSpec:
        release.wait(60)  # a large ladder's minute of readying, held until the board was read
        readied.append(name)
        return BotSpec(name=name, command=["true"], cwd=str(tmp_path))

    monkeypatch.setattr(ladder.loop, "ready_bot", slow_ready_bot)
    path = write_ladder(tmp_path)
    restarted = ladder.loop.Ladder(load_ladder(path), LadderPaths.beside(path))
    store = restarted.store
    for name in ("ann", "bob", "cat"):  # a ladder stopped with three versions playing
        version = store.add_version(store.add_entrant(name, new_token()), name * 8, (25.0, 25 / 3), per_hour=5)
        store.decide(version.id, accepted=True, reason="ok", report="{}")
    transport = httpx.ASGITransport(app=make_app(restarted))
    async with httpx.AsyncClient(transport=transport, base_url="http://ladder") as http, trio.open_nursery() as nursery:
        with trio.fail_after(30):
            await nursery.start(restarted.run)
            answer = await http.get("/")
        assert answer.status_code == 200 and "ann" in answer.text and readied == []  # served before any bot
        assert restarted.next_game() is None  # and no game is dealt to versions whose bots are not ready
        release.set()
        with trio.fail_after(30):
            while len(restarted.bots) < 3:
                await trio.sleep(0.02)
        assert sorted(readied) == ["ann", "bob", "cat"]
        nursery.cancel_scope.cancel()
