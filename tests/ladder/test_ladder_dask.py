"""The ladder on a Dask cluster: games played on the workers, recorded on the server, faults lose nothing.

A real ``LocalCluster`` of worker processes on 127.0.0.1 (quiet settings of
the executors' tests), the ladder's loop in the test's Trio run with the
tournaments' ``DaskExecutor``; the command line's refusals through the real entry point.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

pytest.importorskip("distributed")

from ladder.config import LadderPaths, load_ladder
from ladder.loop import Ladder, competition_name
from ladder.store import new_token
from ladder.submissions import save_upload
from referee.bot_folder import pack_folder
from tests.ladder.helpers import SAMPLE_BOTS, write_ladder
from tests.ports import free_port
from tests.processes import stop_group
from tests.tournaments.hosting.executors.dask_settings import quiet_environment
from tournaments.hosting.executors.dask import DaskExecutor
from tournaments.hosting.executors.dask_worker import package_plugin

if TYPE_CHECKING:
    from distributed import LocalCluster

_DEADLINE_S = 240.0
"""How long a condition may take to hold: check-bot and games on a loaded machine."""


def new_ladder(folder: Path, scheduler: str, notices: list[str]) -> Ladder:
    path = write_ladder(folder)
    paths = LadderPaths.beside(path)
    config = load_ladder(path)
    executor = DaskExecutor(scheduler, concurrency=config.concurrency, retry_s=1.0, notice=notices.append)
    return Ladder(config, paths, executor=executor)


def submit(ladder: Ladder, name: str, bot: str) -> str:
    """What the web app does with an upload: keep it, record a version (of a new entrant, or of ``name``'s
    again), queue it for the check; its digest."""
    digest, data = pack_folder(SAMPLE_BOTS / bot)
    save_upload(ladder.paths.uploads, digest, data)
    known = ladder.store.entrant(name)
    entrant = known.id if known is not None else ladder.store.add_entrant(name, new_token())
    version = ladder.store.add_version(entrant, digest, (25.0, 25.0 / 3), per_hour=6)
    ladder.enqueue(version.id)
    return digest


async def until(condition: Callable[[], bool], what: str, explain: Callable[[], object] = lambda: "") -> None:
    with trio.move_on_after(_DEADLINE_S):
        while not condition():
            await trio.sleep(0.1)
        return
    raise AssertionError(f"timed out waiting for {what}: {explain()}")


def games_of(ladder: Ladder, entrant: str) -> int:
    return sum(v.games for v in ladder.store.versions(entrant=entrant))


def assert_recorded_once_with_replays(ladder: Ladder) -> None:
    """Every finished game has its seats once and its replay on the server; none failed."""
    counts = ladder.store.counts()
    assert counts.get("failed", 0) == 0, counts
    done = [game for game in ladder.store.games(limit=-1) if game.state == "done"]
    assert len({game.id for game in done}) == len(done) == counts["done"]
    for game in done:
        assert len(game.seats) == 3
        assert game.replay is not None and Path(game.replay).parent == ladder.paths.replays
        assert Path(game.replay).is_file()


@pytest.mark.slow
async def test_games_play_on_the_workers_and_are_recorded_here_as_versions_come_and_go(
    tmp_path: Path, cluster: LocalCluster
) -> None:
    from distributed import Client

    notices: list[str] = []
    ladder = new_ladder(tmp_path, cluster.scheduler_address, notices)
    digests = {name: submit(ladder, name, "random_py") for name in ("ann", "bob", "cat")}
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        await until(
            lambda: ladder.store.counts().get("done", 0) >= 6,
            "six games on the cluster",
            lambda: (ladder.store.counts(), [(v.entrant, v.state, v.reason) for v in ladder.store.versions()]),
        )
        # A version accepted while the ladder runs is sent to the cluster and plays there too.
        digests["dan"] = submit(ladder, "dan", "greedy_py")
        await until(lambda: games_of(ladder, "dan") >= 1, "a game of the late version")
        plugin = competition_name(ladder.paths.db)
        with Client(cluster.scheduler_address, set_as_default=False) as client:

            async def held() -> dict[str, list[str]]:
                return await trio.to_thread.run_sync(
                    lambda: client.run(lambda dask_worker: sorted(dask_worker.plugins))
                )

            greedy = package_plugin(plugin, digests["dan"])
            assert any(plugin in names and greedy in names for names in (await held()).values())
            # dan's next version (random_py, as the others) retires greedy_py: its package leaves the cluster.
            submit(ladder, "dan", "random_py")
            seen: dict[str, list[str]] = {}
            with trio.move_on_after(_DEADLINE_S):
                while not seen or any(greedy in names for names in seen.values()):
                    seen = await held()
                    await trio.sleep(0.2)
            assert seen and not any(greedy in names for names in seen.values()), seen
            assert all(package_plugin(plugin, digests["ann"]) in names for names in seen.values()), seen
        nursery.cancel_scope.cancel()
    assert_recorded_once_with_replays(ladder)
    assert notices == []


@pytest.mark.slow
async def test_a_worker_killed_mid_game_loses_nothing_and_records_nothing_twice(
    tmp_path: Path, cluster: LocalCluster
) -> None:
    from distributed import Client

    notices: list[str] = []
    ladder = new_ladder(tmp_path, cluster.scheduler_address, notices)
    for name in ("ann", "bob", "cat"):
        submit(ladder, name, "random_py")
    killed: int | None = None
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        await until(lambda: ladder.store.counts().get("done", 0) >= 1, "a first game")
        with Client(cluster.scheduler_address, set_as_default=False) as client:
            # The worker playing a game now (a ladder task in its processing set) is killed under it.
            while killed is None:
                busy = {w: keys for w, keys in client.processing().items() if any("-ladder-" in str(k) for k in keys)}
                if not busy:
                    await trio.sleep(0.02)
                    continue
                worker, keys = next(iter(busy.items()))
                pids = client.run(os.getpid, workers=[worker])
                os.kill(next(iter(pids.values())), signal.SIGKILL)
                killed = int(str(next(k for k in keys if "-ladder-" in str(k))).rsplit("-ladder-", 1)[1].split("-")[0])
        before = ladder.store.counts().get("done", 0)
        await until(
            lambda: ladder.store.counts().get("done", 0) >= before + 6 and ladder.store.games(game_id=killed),
            "games after the kill, the one in play then among them",
            lambda: ladder.store.counts(),
        )
        nursery.cancel_scope.cancel()
    assert_recorded_once_with_replays(ladder)
    assert notices == [], notices  # Dask ran the game again elsewhere: the server had nothing to say


@contextmanager
def restartable_cluster(bot_cache: Path) -> Iterator[tuple[str, Callable[[], None], Callable[[], None]]]:
    """A ``dask scheduler`` process and ``famiglia worker start`` with one worker, on 127.0.0.1:
    (the address, kill the scheduler, start it again on the same port)."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, **quiet_environment(), "FAMIGLIA_BOT_CACHE": str(bot_cache)}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env, "start_new_session": True}
    scheduler_command = [sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                         "--dashboard-address", ":0"]  # fmt: skip
    processes = [subprocess.Popen(scheduler_command, **quiet)]  # type: ignore[call-overload]
    worker = [
        sys.executable,
        "-m",
        "tournaments.cli",
        "worker",
        "start",
        address,
        "--nworkers",
        "1",
        "--host",
        "127.0.0.1",
    ]
    processes.append(subprocess.Popen(worker, **quiet))  # type: ignore[call-overload]

    def kill() -> None:
        processes[0].kill()
        processes[0].wait()

    def again() -> None:
        processes[0] = subprocess.Popen(scheduler_command, **quiet)  # type: ignore[call-overload]

    try:
        from distributed import Client

        with Client(address, timeout=120, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=300)
        yield address, kill, again
    finally:
        for process in processes:
            stop_group(process)


@pytest.mark.slow
async def test_a_lost_scheduler_puts_the_games_back_the_pages_are_served_and_play_resumes_when_it_is_back(
    tmp_path: Path, bot_cache: Path
) -> None:
    import httpx
    from hypercorn.config import Config
    from hypercorn.trio import serve

    from ladder.web.app import make_app

    notices: list[str] = []
    with restartable_cluster(bot_cache) as (address, kill, again):
        ladder = new_ladder(tmp_path, address, notices)
        for name in ("ann", "bob", "cat"):
            submit(ladder, name, "random_py")
        web = Config()
        web.bind = ["127.0.0.1:0"]
        web.accesslog = web.errorlog = None
        counts = ladder.store.counts
        async with trio.open_nursery() as nursery, httpx.AsyncClient() as http:
            await nursery.start(ladder.run)
            url = (await nursery.start(serve, make_app(ladder), web))[0]
            await until(lambda: counts().get("done", 0) >= 2, "games on the first scheduler", counts)
            kill()
            await until(lambda: any("lost the Dask scheduler" in line for line in notices), "the loss said", counts)
            await until(lambda: counts().get("running", 0) == 0, "the games in play back to pending", counts)
            done = counts().get("done", 0)
            assert (await http.get(f"{url}/api/standings")).status_code == 200
            again()
            await until(lambda: counts().get("done", 0) >= done + 3, "games on the scheduler started again", counts)
            nursery.cancel_scope.cancel()
    assert_recorded_once_with_replays(ladder)
    lost = [line for line in notices if "lost the Dask scheduler" in line or "cannot play" in line]
    assert len(lost) == 1, notices  # said once, however long it took to come back
    assert any(f"reached the Dask scheduler at {address} again" in line for line in notices), notices


@pytest.mark.slow
def test_ladder_serve_with_the_dask_executor_plays_and_a_killed_server_restarts_with_nothing_lost(
    tmp_path: Path, cluster: LocalCluster
) -> None:
    from tests.ladder.conftest import register, start_server, stop, wait_for
    from tests.ladder.conftest import submit as upload
    from tests.ladder.test_restart import game_states, seat_rows

    ladder, tokens = register(tmp_path, ["ann", "bob", "cat"])
    db = ladder.with_suffix(".sqlite")
    dask = ("--executor", "dask", "--scheduler", cluster.scheduler_address)
    process, url = start_server(ladder, *dask)
    try:
        for name in tokens:
            assert upload(url, tokens[name], "random_py").returncode == 0
        wait_for(lambda: list(game_states(db).values()).count("done") >= 2, "two games played on the cluster")
        wait_for(lambda: "running" in game_states(db).values(), "a game in play")
    finally:
        assert stop(process, signal.SIGKILL) == -signal.SIGKILL
    before = game_states(db)
    interrupted = [game for game, state in before.items() if state == "running"]
    process, _ = start_server(ladder, *dask, "--stop-after", str(len(interrupted) + 2))
    assert process.wait(timeout=300) == 0
    after = game_states(db)
    assert all(after[game] == "done" for game in interrupted)
    assert all(after[game] == "done" for game, state in before.items() if state == "done")
    assert len(seat_rows(db)) == 3 * list(after.values()).count("done")  # every finished game's seats, once
    replays = [p for p in LadderPaths.beside(ladder).replays.iterdir() if p.suffix == ".jsonl"]
    assert len(replays) == list(after.values()).count("done")


def _serve(ladder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tournaments.cli", "ladder", "serve", str(ladder), "--port", "0", *extra],
        capture_output=True, text=True, timeout=120, check=False, env={**os.environ, **quiet_environment()},
    )  # fmt: skip


def test_the_dask_executor_without_a_scheduler_is_one_line(tmp_path: Path) -> None:
    ladder = write_ladder(tmp_path)
    done = _serve(ladder, "--executor", "dask")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--scheduler tcp://HOST:8786" in lines[0], done.stderr
    # The same from the ladder file, and --executor wins over it.
    text = ladder.read_text(encoding="utf-8").replace("concurrency = 2\n", 'concurrency = 2\nexecutor = "dask"\n')
    ladder.write_text(text, encoding="utf-8")
    from_file = _serve(ladder, "--stop-after", "1", "--executor", "nowhere")
    assert from_file.returncode == 2 and "choose local or dask" in from_file.stderr, from_file.stderr
    from_file = _serve(ladder)
    assert from_file.returncode == 2 and "needs the scheduler's address" in from_file.stderr, from_file.stderr


def test_an_unreachable_scheduler_is_one_line_within_seconds(tmp_path: Path) -> None:
    ladder = write_ladder(tmp_path)
    address = f"tcp://127.0.0.1:{free_port()}"
    began = time.monotonic()
    done = _serve(ladder, "--executor", "dask", "--scheduler", address)
    took = time.monotonic() - began
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"cannot reach the Dask scheduler at {address}" in lines[0], done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert took < 60, (
        f"{took:.0f} s"
    )  # at once with nothing listening; the bound is the interpreter's start on a loaded machine
    assert not LadderPaths.beside(ladder).db.exists(), "nothing is stored before the scheduler answers"


def test_a_tls_scheduler_without_the_servers_certificate_says_which_settings_to_give(tmp_path: Path) -> None:
    ladder = write_ladder(tmp_path)
    env_free = {key: value for key, value in os.environ.items() if "DASK_DISTRIBUTED__COMM__TLS" not in key}
    done = subprocess.run(
        [sys.executable, "-m", "tournaments.cli", "ladder", "serve", str(ladder), "--port", "0",
         "--executor", "dask", "--scheduler", f"tls://127.0.0.1:{free_port()}"],
        capture_output=True, text=True, timeout=120, check=False, env=env_free,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "DASK_DISTRIBUTED__COMM__TLS__CA_FILE" in lines[0], done.stderr
