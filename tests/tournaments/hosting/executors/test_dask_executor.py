"""Tournaments on a real Dask cluster: a ``distributed.LocalCluster`` of 2 worker processes on 127.0.0.1.

Nothing of Dask is mocked: the scheduler, the nannies and the worker processes
are Dask's own, the workers referee the games and the host alone writes the
store. The cluster is shared by the module (it takes about 3 s to start).
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("distributed")

from distributed import Client, LocalCluster

from referee.bot_folder import pack_folder
from referee.match.conversation import _Match
from tests.conftest import ROOT, TEST_BOTS, wait_until_gone
from tournaments.cli import app
from tournaments.config.tournament import TournamentConfig, load_tournament
from tournaments.hosting.executors.dask import DaskExecutor
from tournaments.lifecycle.plan import build_schedule
from tournaments.report.standings import standings
from tournaments.runner import GameDone, Progress, run_tournament
from tournaments.store import Store

pytestmark = pytest.mark.slow

SAMPLES = ROOT / "sample_bots"


@pytest.fixture
def client(cluster: LocalCluster) -> Iterator[Client]:
    with Client(cluster.scheduler_address, set_as_default=False) as connected:
        connected.wait_for_workers(2, timeout=30)
        yield connected


def tournament_file(folder: Path, *, repetitions: int = 1, fourth: str | None = None) -> Path:
    """Four sample bots (Python, Node.js, C) at 3-player Vendetta tables: 24 games per repetition, short ones."""
    entrants = [("greedy", f'"{SAMPLES / "greedy_py"}"'), ("random", f'"{SAMPLES / "random_py"}"'),
                ("node", f'"{SAMPLES / "node_js"}"'), ("c", fourth or f'"{SAMPLES / "c_bot"}"')]  # fmt: skip
    body = (
        f'[tournament]\nname = "t"\ngame = "vendetta"\ntable_size = 3\nseed = 5\nrepetitions = {repetitions}\n'
        'replays = "replays"\n[tournament.variants]\nround_limit = "3"\n[tournament.time]\nmove_ms = 5000\n'
    )
    body += "".join(f'\n[[entrant]]\nname = "{n}"\nbot = {b}\n' for n, b in entrants)
    path = folder / "t.toml"
    path.write_text(body)
    return path


def results(db: Path) -> dict[int, tuple[object, ...]]:
    """Game -> (seed, ended_by, each seat's entrant, rank and score), straight from SQLite."""
    with sqlite3.connect(db) as connection:
        # One read transaction: the host may record a game between the two queries.
        connection.execute("BEGIN")
        seats: dict[int, list[tuple[int, int, int]]] = {}
        for game, entrant, rank, score in connection.execute(
            "SELECT game, entrant, rank, score FROM seat ORDER BY game, seat"
        ):
            seats.setdefault(game, []).append((entrant, rank, score))
        rows = connection.execute("SELECT game, seed, ended_by FROM result JOIN schedule USING (game)").fetchall()
    return {game: (seed, ended, tuple(seats[game])) for game, seed, ended in rows}


def assert_no_bot_left(cache: Path) -> None:
    for package in cache.iterdir():
        if package.is_dir():
            assert wait_until_gone(package) == [], f"a bot of {package.name[:12]} outlived its game"


def test_a_round_robin_on_dask_records_every_game_once_with_the_local_executors_results(
    tmp_path: Path, cluster: LocalCluster, bot_cache: Path
) -> None:
    config = load_tournament(tournament_file(tmp_path))
    # Two copies of one new store: the same deal key, tournament id and match ids (the random bots seed from them).
    fresh = Store(tmp_path / "dask.sqlite")
    fresh.begin(config, build_schedule(config, fresh.deal_key()))
    fresh.close()
    shutil.copy(tmp_path / "dask.sqlite", tmp_path / "local.sqlite")
    on_dask = Store(tmp_path / "dask.sqlite")
    events: list[Progress] = []
    played = run_tournament(config, on_dask, events.append, executor=DaskExecutor(cluster.scheduler_address))
    assert played == 24 and on_dask.counts() == (24, 24) and on_dask.harness_errors() == []
    done = [e.game.index for e in events if isinstance(e, GameDone)]
    assert sorted(done) == list(range(24)), "every game reported once"
    # The same deals on this machine's executor: deterministic bots give the same games.
    local = Store(tmp_path / "local.sqlite")
    assert run_tournament(config, local, workers=1) == 24
    assert results(tmp_path / "dask.sqlite") == results(tmp_path / "local.sqlite")
    assert standings(on_dask) == standings(local)
    # The replays came back to the host: one per game, the host's alone, each naming its game.
    for game in on_dask.finished():
        assert game.replay is not None and Path(game.replay).is_file()
        assert Path(game.replay).stat().st_mode & 0o077 == 0
        assert Path(game.replay).parent == tmp_path / "replays" / on_dask.tournament_id()
    assert all(s.termination is None for g in on_dask.finished() for s in g.seats)
    assert_no_bot_left(bot_cache)


def test_folder_bots_are_built_once_per_worker_machine_and_cached_by_content(
    tmp_path: Path, cluster: LocalCluster, bot_cache: Path
) -> None:
    config = load_tournament(tournament_file(tmp_path))
    run_tournament(config, Store(tmp_path / "t.sqlite"), executor=DaskExecutor(cluster.scheduler_address))
    built = {p.name for p in bot_cache.iterdir() if p.is_dir()}
    # One built copy per folder and sandbox level, shared by both worker processes.
    # (Builds never write into the bot's own folder, so the content is the same in every run.)
    packages = {folder.name: pack_folder(folder)[0] + "-standard" for folder in (SAMPLES / "greedy_py",
                SAMPLES / "random_py", SAMPLES / "node_js", SAMPLES / "c_bot")}  # fmt: skip
    assert set(packages.values()) == built, (packages, built)
    assert os.access(bot_cache / packages["c_bot"] / "bot", os.X_OK), "the C bot was built on the worker"


def test_a_worker_killed_mid_run_costs_no_game_and_leaves_no_bot(
    tmp_path: Path, cluster: LocalCluster, client: Client, bot_cache: Path
) -> None:
    # 24 games, 4 to a task: the kill lands with every worker holding a task and games left to play after it.
    config = load_tournament(tournament_file(tmp_path))
    store = Store(tmp_path / "t.sqlite")
    pids = client.run(os.getpid)
    victim = min(pids.values())
    killed: list[int] = []

    def kill_once_some_games_are_in(event: Progress) -> None:
        if isinstance(event, GameDone) and not killed and len(store.finished()) >= 4:
            busy = children_of(victim)
            os.kill(victim, signal.SIGKILL)
            killed.append(busy)

    played = run_tournament(
        config, store, kill_once_some_games_are_in, executor=DaskExecutor(cluster.scheduler_address)
    )
    assert killed and killed[0] > 0, "the worker was killed during the run, with a game (its bots) running"
    assert played == 24 and store.counts() == (24, 24) and store.harness_errors() == []
    assert sorted(g.game for g in store.finished()) == list(range(24))
    assert_no_bot_left(bot_cache)
    client.wait_for_workers(2, timeout=30)  # the nanny restarted it, for the next tests


def children_of(pid: int) -> int:
    """How many child processes the worker has (its bots' launchers): evidence the kill landed mid-game."""
    return sum(1 for entry in Path("/proc").iterdir() if entry.name.isdigit() and _parent(entry) == pid)


def _parent(entry: Path) -> int:
    try:
        return int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def test_a_worker_without_an_entrants_toolchain_fails_that_entrants_games_with_a_clear_reason(
    tmp_path: Path, cluster: LocalCluster, monkeypatch: Any
) -> None:
    # A toolchain the host has and the workers do not: "toylang", on the host's PATH only.
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "toylang").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (tools / "toylang").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    fourth = f'"toylang {TEST_BOTS / "passer" / "bot.py"}"'
    config = load_tournament(tournament_file(tmp_path, fourth=fourth))
    store = Store(tmp_path / "t.sqlite")
    assert run_tournament(config, store, executor=DaskExecutor(cluster.scheduler_address)) == 24
    assert store.harness_errors() == []
    seats = [s for g in store.finished() for s in g.seats]
    missing = [s for s in seats if s.entrant == 3]
    assert len(missing) == 18 and all(s.termination == "crash" for s in missing)
    reason = missing[0].reason or ""
    assert "cannot start on Dask worker tcp://127.0.0.1:" in reason and "'toylang' not found on PATH" in reason
    assert all(s.termination is None for s in seats if s.entrant != 3)


def test_a_harness_bug_on_a_worker_costs_one_game_recorded_as_such(
    tmp_path: Path, cluster: LocalCluster, client: Client
) -> None:
    def break_game_3() -> None:
        real = _Match.play_decision

        async def play_decision(self: _Match) -> bool:
            if self.spec.match.endswith("#3") and self.request_id > 5:
                raise RuntimeError("an injected harness bug")
            return await real(self)

        _Match.play_decision = play_decision  # type: ignore[method-assign]
        _Match.real_play_decision = real  # type: ignore[attr-defined]

    def mend() -> None:
        _Match.play_decision = _Match.real_play_decision  # type: ignore[attr-defined,method-assign]

    client.run(break_game_3)
    try:
        store = Store(tmp_path / "t.sqlite")
        played = run_tournament(
            load_tournament(tournament_file(tmp_path)), store, executor=DaskExecutor(cluster.scheduler_address)
        )
    finally:
        client.run(mend)
    assert played == 23 and store.counts() == (23, 24) and store.pending() == []
    [error] = store.harness_errors()
    assert error.game == 3 and error.error == "RuntimeError: an injected harness bug"
    assert "play_decision" in error.traceback


def wait_for_results(runner: subprocess.Popen[str], db: Path, count: int) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.05)
        try:
            if db.exists() and len(results(db)) >= count:
                return
        except sqlite3.OperationalError:
            continue
    raise AssertionError(f"the run ended (or stalled) before {count} results: {runner.poll()}")


def test_the_host_killed_mid_run_resumes_against_the_same_cluster(tmp_path: Path, cluster: LocalCluster) -> None:
    toml = tournament_file(tmp_path)
    db = tmp_path / "t.sqlite"
    command = [sys.executable, "-m", "tournaments.cli", "tournament", "run", str(toml), "--db", str(db),
               "--executor", "dask", "--scheduler", cluster.scheduler_address]  # fmt: skip
    host = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_results(host, db, 4)
    host.kill()
    host.wait()
    before = results(db)
    assert 4 <= len(before) < 24, "the kill should land mid-tournament"
    again = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert again.returncode == 0, again.stderr
    assert f"resuming 't': {len(before)} of 24 games already recorded" in again.stdout
    after = results(db)
    assert sorted(after) == list(range(24))
    assert all(after[game] == row for game, row in before.items()), "a game recorded before was played again"


def test_ctrl_c_stops_the_games_on_the_workers_and_prints_only_the_resume_line(
    tmp_path: Path, cluster: LocalCluster, bot_cache: Path
) -> None:
    toml = tournament_file(tmp_path)
    db = tmp_path / "t.sqlite"
    command = [sys.executable, "-m", "tournaments.cli", "tournament", "run", str(toml), "--db", str(db),
               "--executor", "dask", "--scheduler", cluster.scheduler_address]  # fmt: skip
    host = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_results(host, db, 2)
    host.send_signal(signal.SIGINT)
    _, stderr = host.communicate(timeout=60)
    assert host.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted: ") and "run the same command again" in lines[0]
    assert_no_bot_left(bot_cache)  # the workers' referees were stopped with the run


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_the_dask_executor_without_a_scheduler_or_an_unreachable_one_is_one_line(tmp_path: Path) -> None:
    toml = tournament_file(tmp_path)
    missing = _cli("tournament", "run", str(toml), "--executor", "dask")
    assert missing.exit_code == 2 and len(missing.output.strip().splitlines()) == 1, missing.output
    assert "--scheduler tcp://HOST:8786" in missing.output
    unreachable = _cli("tournament", "run", str(toml), "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9")
    assert unreachable.exit_code == 2 and len(unreachable.output.strip().splitlines()) == 1, unreachable.output
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in unreachable.output


def test_without_the_dask_packages_the_command_says_how_to_install_them(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setitem(sys.modules, "tournaments.hosting.executors.dask", None)  # as if distributed were not installed
    toml = tournament_file(tmp_path)
    done = _cli("tournament", "run", str(toml), "--executor", "dask", "--scheduler", "tcp://x:1")
    assert done.exit_code == 2 and done.output.strip().splitlines() == [
        "famiglia: error: the dask executor needs the dask packages; install them with: pip install 'famiglia[dask]'"
    ], done.output


def test_the_tournament_file_can_name_the_scheduler_and_the_flag_wins(tmp_path: Path) -> None:
    toml = tournament_file(tmp_path)
    toml.write_text(toml.read_text().replace(
        "[tournament.variants]", '[tournament.executor]\nkind = "dask"\nscheduler = "tcp://127.0.0.1:9"\n[tournament.variants]'
    ))  # fmt: skip
    config: TournamentConfig = load_tournament(toml)
    assert config.executor.kind == "dask" and config.executor.scheduler == "tcp://127.0.0.1:9"
    from_file = _cli("tournament", "run", str(toml))
    assert from_file.exit_code == 2 and "at tcp://127.0.0.1:9 " in from_file.output, from_file.output
    flag = _cli("tournament", "run", str(toml), "--scheduler", "tcp://127.0.0.1:7")
    assert flag.exit_code == 2 and "at tcp://127.0.0.1:7 " in flag.output, flag.output
    local = _cli("tournament", "run", str(toml), "--executor", "local", "--workers", "1")
    assert local.exit_code == 0 and "'t': 24 games" in local.output, local.output
    toml.write_text(toml.read_text().replace('kind = "dask"', 'kind = "spark"\nport = 1'))
    problems = _cli("tournament", "run", str(toml))
    assert problems.exit_code == 2
    assert "tournament.executor.kind: 'spark' is not local or dask" in problems.output
    assert "tournament.executor.port: unknown key" in problems.output
