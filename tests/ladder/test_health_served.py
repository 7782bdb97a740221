"""Health on a real server with real bots (issue 40 items 1 and 6): an entrant who passes check-bot and
then times out in every ladder game is suspended, its previous version plays again, the pages say why,
and a resubmission that lifts it is checked first."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import trio

from ladder.config import LadderPaths, load_ladder
from ladder.loop import Ladder
from ladder.store import new_token
from ladder.submissions import save_upload
from ladder.views import standings
from tests.ladder.helpers import ROOT, SAMPLE_BOTS, upload_of
from tests.ladder.server import running_server
from tests.ladder.test_health import RULE, accept, record

pytestmark = pytest.mark.slow

SLEEPER = ROOT / "tests" / "bots" / "hostile" / "ladder_sleeper"


def quick_ladder(folder: Path, startup_ms: int = 20000) -> Ladder:
    """A 3-seat ladder on short clocks (a timeout costs 2 s), health at 3 faults of 6 games."""
    path = folder / "ladder.toml"
    path.write_text(
        '[ladder]\nname = "health"\ngame = "vendetta"\ntable_sizes = [3]\nconcurrency = 2\nchecks_at_once = 2\n'
        f'[ladder.time]\nstartup_ms = {startup_ms}\nmove_ms = 1000\nbank_ms = 1000\nclock = "wall"\n'
        '[ladder.sandbox]\nlevel = "none"\n[ladder.health]\nwindow = 6\nfailed_fraction = 0.5\n',
        encoding="utf-8",
    )
    return Ladder(load_ladder(path), LadderPaths.beside(path))


def submit(ladder: Ladder, name: str, folder: Path) -> int:
    entrant = ladder.store.entrant(name)
    entrant_id = entrant.id if entrant else ladder.store.add_entrant(name, new_token())
    data = upload_of(folder)
    digest = hashlib.sha256(data).hexdigest()
    save_upload(ladder.paths.uploads, digest, data)
    version = ladder.store.add_version(entrant_id, digest, (25.0, 25.0 / 3), per_hour=50)
    ladder.enqueue(version.id)
    return version.id


async def until(condition: Callable[[], bool], seconds: float = 300) -> None:
    """A generous bound for a loaded machine; the conditions are states, never elapsed times."""
    with trio.fail_after(seconds):
        while not condition():
            await trio.sleep(0.2)


async def test_a_bot_that_passes_check_bot_then_times_out_in_ladder_games_is_suspended(tmp_path: Path) -> None:
    ladder = quick_ladder(tmp_path)
    store = ladder.store
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        for name, bot in (("ann", "random_py"), ("bob", "greedy_py"), ("cat", "random_py")):
            submit(ladder, name, SAMPLE_BOTS / bot)
        good = submit(ladder, "eve", SAMPLE_BOTS / "random_py")
        await until(lambda: store.version(good).state == "active")
        bad = submit(ladder, "eve", SLEEPER)  # passes check-bot: its games there are named check-...
        await until(lambda: store.version(bad).state in ("active", "rejected", "suspended"))
        assert store.version(bad).state != "rejected", store.version(bad).reason
        await until(lambda: store.version(bad).state == "suspended")
        # Suspended within its first window of games, its own timeouts counted, its previous version back.
        suspended = store.version(bad)
        assert suspended.games <= 6 and "timeout" in suspended.suspension
        await until(lambda: good in ladder.bots)
        assert store.version(good).state == "active"
        row = next(r for r in standings(store) if r.entrant == "eve")
        assert row.state == "active" and row.version == 1 and "version 2 suspended" in row.note
        # The other seats' health is theirs: not one fault of ann, bob or cat from eve's timeouts.
        assert all(r.health.failed == 0 for r in standings(store) if r.entrant != "eve")
        # A resubmission of the same sleeper is checked first, passes again, and lifts the suspension by
        # replacing it: the ladder's health catches it again, its earlier faults are not held against it.
        again = submit(ladder, "eve", SLEEPER / ".." / "ladder_sleeper")
        await until(lambda: store.version(again).state != "queued" and store.version(again).state != "checking")
        assert store.version(bad).state == "retired" and store.version(good).state == "retired"
        await until(lambda: store.version(again).state == "suspended")
        assert store.version(good).state == "active"  # the working version it replaced plays again
        nursery.cancel_scope.cancel()


async def test_a_slow_check_does_not_hold_another_entrants_check(tmp_path: Path) -> None:
    """checks_at_once = 2: a submission whose check sleeps to its clock's bound in every game leaves the
    other checker free, and is itself turned away within its bound."""
    # The silent bot costs each check game its whole start-up bound: 5 s, room for random_py to start
    # on a loaded machine, instead of the 20 s that made this the suite's longest wait.
    ladder = quick_ladder(tmp_path, startup_ms=5000)
    store = ladder.store
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        slow = submit(ladder, "sly", ROOT / "tests" / "bots" / "hostile" / "mute_handshake")
        await until(lambda: store.version(slow).state == "checking")
        quick = submit(ladder, "ann", SAMPLE_BOTS / "random_py")
        await until(lambda: store.version(quick).state == "active")
        assert store.version(slow).state == "checking"  # still being checked: it did not hold ann's
        await until(lambda: store.version(slow).state == "rejected", 600)
        nursery.cancel_scope.cancel()


async def test_the_pages_show_the_faults_and_why_a_version_is_suspended(tmp_path: Path) -> None:
    async with (
        running_server(tmp_path, ("ann", "bob", "cat")) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        store = server.ladder.store
        ann, bob, cat = (accept(store, n, n * 8) for n in ("ann", "bob", "cat"))
        games = []
        for _ in range(3):
            store.add_table(1, [ann, bob, cat], [[ann, bob, cat]])
            started = store.start_next()
            assert started is not None
            store.finish(started[0], record({0: "timeout"}), RULE)
            games.append(started[0])
        board = (await http.get("/api/standings")).json()
        row = next(r for r in board if r["entrant"] == "ann")
        assert row["state"] == "suspended" and row["health"]["timeout"] == 3 and row["rank"] is None
        page = (await http.get("/entrants/ann")).text
        assert "is suspended: 3 of its last 3 games" in page
        assert all(f'href="/games/game-{g}.html"' in page for g in games)
        assert ">suspended<" in (await http.get("/")).text
