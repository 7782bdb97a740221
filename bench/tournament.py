"""Tournament throughput: fresh processes against warm ones, one worker against two.

Usage: python bench/tournament.py [--games N] [--per-worker N] [--move-ms N]

One round-robin of four Python sample bots (random_py twice, greedy_py twice,
as four entrants) at 4-player Vendetta tables, played three times in this run,
each time into a new SQLite store through ``tournaments.runner.run_pending``:

1. fresh: ``reuse_processes = false``, 1 worker (the in-process Trio executor):
   every game starts its four Python interpreters and stops them again. This
   is the baseline.
2. warm-1w: ``reuse_processes = true`` (the default), 1 worker: each entrant's
   processes are started once and play game after game (referee/seats.py).
3. warm-2w: the same with 2 worker processes (tournaments/hosting/executors/processes.py), each
   refereeing its share of the games with its own warm pool.

A worker plays ``--per-worker`` games at once (default 1), so the 2-worker run
has twice the games in flight: the question is whether a second referee
process turns the second core into games. Games per second are the games over
the whole of ``run_pending`` (what a host waits for: worker and bot starts
included, bot builds and store setup excluded), 400 games by default. The
starts are a fixed cost (the 2-worker run starts two worker interpreters and
eight bots, not four: about 0.4 s more on this machine) that weighs less the
longer the run; each run prints when its first result came. Each run also
reports the CPU time it used (this process, its worker processes and all
bots), in cores.

Informative runs, not in the last line:

4. warm-1w x2: one worker with two games at once in its one Trio referee
   (what ``concurrency = 2, workers = 1`` gives): the other way to use two
   cores, since the bots are processes of their own.
5. warm-1w and warm-2w again with four ``bench/bots/instant_c`` entrants (a C
   bot that answers at once), where nearly all the work is the referee's.

The last line is always
``tournament: <games_per_s> games/s warm-2w <reuse_speedup>x reuse <scaling>x 2 workers``
where reuse_speedup = warm-1w / fresh and scaling = warm-2w / warm-1w.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Run from a checkout without installing: the repository root holds the packages.
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio
from machine import load_average

from tournaments.config.tournament import TournamentConfig, parse_tournament
from tournaments.lifecycle.plan import build_schedule
from tournaments.runner import run_pending
from tournaments.store import Store

ENTRANTS = [
    ("random-a", "sample_bots/random_py"),
    ("greedy-a", "sample_bots/greedy_py"),
    ("random-b", "sample_bots/random_py"),
    ("greedy-b", "sample_bots/greedy_py"),
]
INSTANT = [(f"instant-{i}", "bench/bots/instant_c") for i in range(4)]


def make_config(
    games: int,
    concurrency: int,
    move_ms: int,
    *,
    reuse: bool,
    workers: int,
    entrants: list[tuple[str, str]] = ENTRANTS,
) -> TournamentConfig:
    # Four entrants, tables of four: one table, played once per row of the 4-row
    # Williams design per repetition, so 4 games per repetition.
    data: dict[str, Any] = {
        "tournament": {
            "name": "bench",
            "game": "vendetta",
            "format": "round-robin",
            "table_size": 4,
            "repetitions": max(1, -(-games // 4)),
            "seed": 7,
            "concurrency": concurrency,
            "workers": workers,
            "reuse_processes": reuse,
            "time": {"move_ms": move_ms},
        },
        "entrant": [{"name": name, "bot": bot} for name, bot in entrants],
    }
    return parse_tournament(data, base=ROOT, source="bench")


class Run:
    def __init__(
        self,
        label: str,
        games: int,
        seconds: float,
        decisions: int,
        failures: int,
        cpu: float,
        results: tuple[float, float],
    ) -> None:
        self.label = label
        self.games = games
        self.seconds = seconds
        self.decisions = decisions
        self.failures = failures
        self.cpu = cpu
        self.first_result, self.last_result = results

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds

    @property
    def steady_games_per_s(self) -> float:
        """Games per second between the first result and the last: the run without its starts and stops."""
        return (self.games - 1) / (self.last_result - self.first_result)


def play(label: str, config: TournamentConfig, folder: Path) -> Run:
    store = Store(folder / f"{label}.sqlite")
    schedule = build_schedule(config)
    store.begin(config, schedule)
    decisions = 0
    failures = 0

    first_result = last_result = 0.0

    def on_result(game: object, record: Any) -> None:
        nonlocal decisions, failures, first_result, last_result
        last_result = time.perf_counter() - began
        if not first_result:
            first_result = last_result
        decisions += sum(t.decisions for t in record.timings)
        failures += len(record.result.terminations)

    workers = config.executor.workers or 1
    cpu_before = _cpu_seconds()
    busy_before = _machine_busy()
    began = time.perf_counter()
    played = trio.run(
        lambda: run_pending(
            config, store, concurrency=config.executor.concurrency, workers=workers, on_result=on_result
        )
    )
    seconds = time.perf_counter() - began
    cpu = _cpu_seconds() - cpu_before
    busy = _machine_busy() - busy_before
    store.close()
    assert played == len(schedule), (played, len(schedule))
    run = Run(label, played, seconds, decisions, failures, cpu, (first_result, last_result))
    print(
        f"{label:10s} {played} games in {seconds:6.2f} s: {run.games_per_s:7.2f} games/s, "
        f"{decisions / seconds:8.0f} decisions/s, {failures} failures, "
        f"CPU (referee + workers + bots) {cpu:6.2f} s = {cpu / seconds:4.2f} cores, machine busy {busy / seconds:4.2f} cores, "
        f"results from {first_result:.2f} s to {last_result:.2f} s",
        flush=True,
    )
    return run


def _machine_busy() -> float:
    """Seconds of CPU the whole machine has spent busy (Linux /proc/stat; 0 elsewhere).

    Sandboxed bots are reaped inside their PID namespace, so their CPU never
    reaches this process's children's times: this counts it, with anything
    else running on the machine.
    """
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except OSError:
        return 0.0
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--games", type=int, default=400, help="games per run (rounded up to a multiple of 4; default 400)"
    )
    parser.add_argument("--per-worker", type=int, default=1, help="games at once per worker (default 1)")
    parser.add_argument("--move-ms", type=int, default=1000, help="per-decision limit (default 1000)")
    args = parser.parse_args()
    k = args.per_worker

    def config(workers: int, *, reuse: bool = True, per_worker: int = k, entrants: list[tuple[str, str]] = ENTRANTS):
        return make_config(
            args.games, per_worker * workers, args.move_ms, reuse=reuse, workers=workers, entrants=entrants
        )

    print(
        f"tournament bench: 4 Python entrants (random_py x2, greedy_py x2), 4-player Vendetta, "
        f"{args.games} games a run, {k} at once per worker, {os.cpu_count()} cores, load average {load_average()}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="famiglia-bench-") as tmp:
        folder = Path(tmp)
        fresh = play("fresh", config(1, reuse=False), folder)
        warm1 = play("warm-1w", config(1), folder)
        warm2 = play("warm-2w", config(2), folder)
        print("informative: one worker with twice the games at once; then C bots that answer at once", flush=True)
        play("warm-1w x2", config(1, per_worker=2 * k), folder)
        c_warm1 = play("c-1w", config(1, entrants=INSTANT), folder)
        c_warm2 = play("c-2w", config(2, entrants=INSTANT), folder)
    reuse = warm1.games_per_s / fresh.games_per_s
    scaling = warm2.games_per_s / warm1.games_per_s
    print(f"decisions per game {warm1.decisions / warm1.games:.1f}; load average after {load_average()}")
    print(f"2-worker scaling with C bots {c_warm2.games_per_s / c_warm1.games_per_s:.2f}x")
    steady = warm2.steady_games_per_s / warm1.steady_games_per_s
    print(
        f"between each run's first and last result (starts and stops left out): warm-1w "
        f"{warm1.steady_games_per_s:.2f} games/s, warm-2w {warm2.steady_games_per_s:.2f} games/s, "
        f"2-worker scaling {steady:.2f}x; starts: first result after {warm1.first_result:.2f} s (1 worker) "
        f"and {warm2.first_result:.2f} s (2 workers)"
    )
    print(f"reuse speedup {reuse:.2f}x (target 5x), 2-worker scaling {scaling:.2f}x (target 1.7x), whole runs")
    print(f"tournament: {warm2.games_per_s:.2f} games/s warm-2w {reuse:.2f}x reuse {scaling:.2f}x 2 workers")


if __name__ == "__main__":
    main()
