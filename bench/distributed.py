"""The Dask executor against this machine's worker processes, and the host's ceiling.

Usage: python bench/distributed.py [--games N] [--synthetic N] [--rounds N] [--games-per-task N]

1. The same warm tournament twice (``bench/tournament.py``'s: four Python
   entrants, random_py and greedy_py twice each, at 4-player Vendetta tables,
   400 games by default), each into a new SQLite store through
   ``tournaments.runner.run_pending``:
   - local: the worker-process executor with 2 workers, one game at a time
     each (the baseline);
   - dask: a ``distributed.LocalCluster`` on 127.0.0.1 with 2 worker
     processes of 1 thread each, through ``DaskExecutor``.
   Games per second over the whole call (the local run starts its worker
   processes in it; the Dask run connects, ships the bots and starts the
   workers' referees in it; the cluster itself is started before). The two
   alternate ``--rounds`` times (default 3) and their medians are compared, so
   a change in the machine's load falls on both; each round's own ratio is
   printed too. Target: dask at least 0.85x local. ``--games-per-task`` sets
   how many games one Dask task carries (``DaskExecutor``'s default: 4).
2. The host's ceiling: ``--synthetic`` games (default 3000) whose Dask tasks
   return at once made-up finished games (each a record of a 4-player game and a
   replay of 14 KiB, the size of a real short Vendetta replay), through the same
   executor, on a cluster of 2 worker processes with 4 threads each. What is
   measured is what the host does per finished game: receive the answer, write
   the replay file, write the store in its own transaction. Printed with what it
   means: how many 16-core worker machines of bots as fast as these (the local
   run's games per second per worker process) one host can keep busy.

The last line is ``distributed: <ratio>x of local workers <ingest> results/s host ceiling``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# Run from a checkout without installing: the repository root holds the packages.
# This file's own folder goes last on the path: first, this script (named
# distributed.py) would stand in for the distributed package.
BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != BENCH), str(BENCH)]

import msgspec
import trio
from distributed import LocalCluster
from machine import load_average
from tournament import ENTRANTS, make_config

from protocol.messages import Result
from referee.match import MatchRecord, SeatTiming
from tournaments.config.tournament import TournamentConfig
from tournaments.hosting.executors.base import Executor
from tournaments.hosting.executors.dask import GAMES_PER_TASK, DaskExecutor
from tournaments.hosting.executors.dask_worker import DaskAnswer, DaskGame, decode_games, encode_answers
from tournaments.hosting.executors.processes import ProcessExecutor
from tournaments.hosting.schedule import ScheduledGame
from tournaments.lifecycle.plan import build_schedule
from tournaments.playing import replay_path
from tournaments.runner import run_pending
from tournaments.store import Store

SYNTHETIC_REPLAY_BYTES = 14 * 1024
MACHINE_CORES = 16


def play(label: str, config: TournamentConfig, folder: Path, executor: Executor) -> float:
    """Games per second of ``executor`` on ``config`` into a new store."""
    store = Store(folder / f"{label}.sqlite")
    schedule = build_schedule(config)
    store.begin(config, schedule)
    began = time.perf_counter()
    played = trio.run(
        lambda: run_pending(
            config, store, concurrency=config.executor.concurrency, on_result=lambda g, r: None, executor=executor
        )
    )
    seconds = time.perf_counter() - began
    errors = len(store.harness_errors())
    store.close()
    assert played == len(schedule) and errors == 0, (played, len(schedule), errors)
    rate = played / seconds
    print(f"{label:10s} {played} games in {seconds:6.2f} s: {rate:7.2f} games/s", flush=True)
    return rate


def synthetic_games(plugin: str, request: bytes) -> bytes:
    """A Dask task that returns its games finished at once: what a host receives from very fast bots."""
    return encode_answers([synthetic_answer(game) for game in decode_games(request)])


def synthetic_answer(game: DaskGame) -> DaskAnswer:
    seats = len(game.seats)
    record = MatchRecord(
        match=game.spec.match, game="vendetta", seed=game.spec.seed, variants={},
        names=[seat.name for seat in game.seats],
        result=Result(ranks=list(range(1, seats + 1)), scores=[10 * (seats - i) for i in range(seats)],
                      winners=[0], forfeited=[], ended_by="round_limit"),
        timings=[SeatTiming(decisions=40, total_ms=12.0, max_ms=1.0, bank_left_ms=0.0) for _ in range(seats)],
        seconds=0.05, replay=f"/scratch/{game.replay}",
    )  # fmt: skip
    replay = (b'{"type":"action","seat":0,"request":1,"action":{}}\n' * 400)[:SYNTHETIC_REPLAY_BYTES]
    return DaskAnswer(record=record, files={} if game.replay is None else {game.replay: replay})


@contextlib.contextmanager
def separate_cluster(*, workers: int, threads: int) -> Iterator[str]:
    """``dask scheduler`` and ``dask worker`` as processes of their own on 127.0.0.1, as on a real host."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "dask"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen(
        [*dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0"], **quiet
    )
    worker = subprocess.Popen(
        [*dask, "worker", address, "--nworkers", str(workers), "--nthreads", str(threads), "--host", "127.0.0.1",
         "--no-dashboard"], **quiet,
    )  # fmt: skip
    try:
        from distributed import Client

        with Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=60)
        yield address
    finally:
        for process in (worker, scheduler):
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def host_ceiling(games: int, folder: Path, games_per_task: int) -> float:
    """Finished games per second the host receives and records, from synthetic tasks on 8 worker threads.

    The scheduler and the workers are processes of their own, as in the
    documented setup: the host process holds only the client and the store.
    """
    # A window of 256 games in flight: the host, not the round trips of a few tasks, is what is measured.
    config = make_config(games, 256, 1000, reuse=True, workers=0)
    config = msgspec.structs.replace(config, replays=str(folder / "replays"))
    store = Store(folder / "ceiling.sqlite")
    store.begin(config, build_schedule(config))
    with separate_cluster(workers=2, threads=4) as address:
        executor = DaskExecutor(address, concurrency=256, task=synthetic_games, games_per_task=games_per_task)
        began = time.perf_counter()
        played = trio.run(
            lambda: run_pending(config, store, concurrency=256, on_result=lambda g, r: None, executor=executor)
        )
        seconds = time.perf_counter() - began
    assert played == store.counts()[0] == store.counts()[1], (played, store.counts())
    written = replay_path(config, store.tournament_id(), ScheduledGame(index=0, table=0, row=0, seed=0, seating=(0,)))
    assert written is not None and written.stat().st_size == SYNTHETIC_REPLAY_BYTES
    store.close()
    rate = played / seconds
    print(f"host ceiling: {played} synthetic finished games in {seconds:.2f} s: {rate:.0f} results/s", flush=True)
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=400, help="games per tournament run (default 400)")
    parser.add_argument("--synthetic", type=int, default=3000, help="synthetic games for the host ceiling")
    parser.add_argument("--rounds", type=int, default=3, help="local and dask runs, alternating (default 3 each)")
    parser.add_argument(
        "--games-per-task", type=int, default=GAMES_PER_TASK, help=f"games in one Dask task (default {GAMES_PER_TASK})"
    )
    args = parser.parse_args()
    print(
        f"distributed bench: 4 Python entrants, 4-player Vendetta, {args.games} warm games a run, "
        f"{args.games_per_task} games per Dask task, {os.cpu_count()} cores, load average {load_average()}",
        flush=True,
    )
    assert len(ENTRANTS) == 4
    with tempfile.TemporaryDirectory(prefix="famiglia-bench-") as tmp:
        folder = Path(tmp)
        config = make_config(args.games, 2, 1000, reuse=True, workers=2)
        locals_, dasks = [], []
        with LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster:
            # Alternating, so a change in the machine's load falls on both; the medians are compared.
            for round_ in range(args.rounds):
                concurrency = config.executor.concurrency
                locals_.append(play(f"local-2w-{round_}", config, folder, ProcessExecutor(2, concurrency)))
                dask_executor = DaskExecutor(
                    cluster.scheduler_address, concurrency=concurrency, games_per_task=args.games_per_task
                )
                dasks.append(play(f"dask-2w-{round_}", config, folder, dask_executor))
        local, dask = statistics.median(locals_), statistics.median(dasks)
        ingest = host_ceiling(args.synthetic, folder, args.games_per_task)
    ratio = dask / local
    pairs = ", ".join(f"{d / lo:.2f}" for lo, d in zip(locals_, dasks, strict=True))
    per_core = local / 2
    machines = ingest / (MACHINE_CORES * per_core)
    print(
        f"dask with 2 worker processes: {ratio:.2f}x the local executor with 2 workers (target 0.85x), medians of "
        f"{args.rounds} runs each (local {', '.join(f'{r:.2f}' for r in locals_)}; "
        f"dask {', '.join(f'{r:.2f}' for r in dasks)} games/s; round by round {pairs})"
    )
    print(
        f"meaning: bots as fast as these finish {per_core:.1f} games/s per worker process, so a "
        f"{MACHINE_CORES}-core worker machine sends {MACHINE_CORES * per_core:.0f} results/s; this host records "
        f"{ingest:.0f} results/s, enough for about {machines:.1f} such machines "
        f"({machines * MACHINE_CORES:.0f} worker processes) before the host is the limit"
    )
    print(f"distributed: {ratio:.2f}x of local workers {ingest:.0f} results/s host ceiling")


if __name__ == "__main__":
    main()
