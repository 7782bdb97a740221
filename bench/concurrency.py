"""Many games in one referee process: no failure, memory per game, fair clocks under load.

Usage: python bench/concurrency.py [--games N] [--bot FOLDER] [--move-ms N] [--decisions N]
                                  [--sandbox LEVEL] [--clock wall|cpu] [--ponder]

1. Scale: ``--games`` (default 100) 4-player Vendetta games of the C sample bot
   (``sample_bots/c_bot``) at once in this process: every game starts its four
   bots (``referee.process.open_bot``, the default sandbox), waits until all
   games' bots are up, then all are refereed together (``run_match``). Every
   game must end without a termination of any kind. The referee's memory is
   read from /proc/self/status: its peak resident size during the run (VmHWM,
   reset just before; a 20 ms sampler of VmRSS as a cross-check) less its size
   before, divided by the number of games.
2. Fair clocks: a tournament (``tournaments.runner.run_pending``, in-process,
   SQLite store and replay files written as in a real run) of
   ``bench/bots/spin_c``, a bot that keeps a core busy for half of each
   request's ``time_ms`` and then answers, at a concurrency of 4 games per core
   (8 busy bots on a 2-core machine), with ``bank_ms = 0``: any decision longer
   than ``move_ms`` + the referee's margin is a time loss. At least
   ``--decisions`` (default 2000) decisions. The baseline, in the same run: one
   game of the same bots alone (concurrency 1). For each, the decision times the
   referee measured (from the replays) and how much they exceed the bots' own
   half-limit.

The last line is always
``concurrency: <games> games <timeouts> timeouts <kib_per_game> KiB/game``
(timeouts: time losses in both parts together).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

# Run from a checkout without installing: the repository root holds the packages.
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio
from machine import load_average

from referee.bots import BotSpec, load_bot
from referee.channel import BotChannel, DeadBot
from referee.errors import BotError
from referee.match import MatchRecord, MatchSpec, run_match
from referee.play import prepare_bots
from referee.process import open_bot
from referee.replay import ActionRecord, read_replay
from referee.settings import Clock, RefereeSettings
from tournaments.config.capacity import CapacityError, check_capacity
from tournaments.config.tournament import parse_tournament
from tournaments.lifecycle.plan import build_schedule
from tournaments.runner import run_pending
from tournaments.store import Store

PLAYERS = 4


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def meminfo_kib(field: str) -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/meminfo")


def reset_peak() -> bool:
    """Reset VmHWM to the current size (Linux: write 5 to clear_refs)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# --- 1. many games at once ---------------------------------------------------


async def many_games(bot: BotSpec, games: int, settings: RefereeSettings) -> dict[str, Any]:
    all_up = trio.Event()
    up = 0
    running = 0
    peak_running = 0
    records: list[MatchRecord] = []
    start_failures = 0

    async def game(index: int) -> None:
        nonlocal up, running, peak_running, start_failures
        async with AsyncExitStack() as stack:
            channels: list[BotChannel] = []
            for _ in range(PLAYERS):
                try:
                    channels.append(await stack.enter_async_context(open_bot(bot, settings)))
                except BotError as error:
                    start_failures += 1
                    channels.append(DeadBot(bot.name, error))
            up += 1
            if up == games:
                all_up.set()
            await all_up.wait()
            running += 1
            peak_running = max(peak_running, running)
            records.append(await run_match(MatchSpec(game="vendetta", seed=1000 + index), channels, settings))
            running -= 1

    sampled = 0
    fds = 0
    available_before = meminfo_kib("MemAvailable")
    available_least = available_before

    async def sampler() -> None:
        nonlocal sampled, fds, available_least
        while True:
            sampled = max(sampled, status_kib("VmRSS"))
            fds = max(fds, len(os.listdir("/proc/self/fd")))
            available_least = min(available_least, meminfo_kib("MemAvailable"))
            await trio.sleep(0.02)

    gc.collect()
    before = status_kib("VmRSS")
    hwm_ok = reset_peak()
    began = time.perf_counter()
    cpu = time.process_time()
    async with trio.open_nursery() as outer:
        outer.start_soon(sampler)
        async with trio.open_nursery() as nursery:
            for index in range(games):
                nursery.start_soon(game, index)
        outer.cancel_scope.cancel()
    seconds = time.perf_counter() - began
    cpu = time.process_time() - cpu
    peak = status_kib("VmHWM") if hwm_ok else sampled
    terminations = [t for record in records for t in record.result.terminations]
    return {
        "games": len(records),
        "peak_running": peak_running,
        "seconds": seconds,
        "decisions": sum(t.decisions for r in records for t in r.timings),
        "terminations": terminations,
        "timeouts": sum(1 for t in terminations if t.kind == "timeout"),
        "start_failures": start_failures,
        "before_kib": before,
        "peak_kib": peak,
        "sampled_kib": sampled,
        "hwm": hwm_ok,
        "cpu": cpu,
        "fds": fds,
        "host_kib": available_before - available_least,
    }


# --- 2. fair clocks under load -------------------------------------------------


def spin_tournament(games: int, concurrency: int, move_ms: int, replays: Path, clock: dict[str, Any]) -> Any:
    data: dict[str, Any] = {
        "tournament": {
            "name": "clocks",
            "game": "vendetta",
            "table_size": PLAYERS,
            "repetitions": max(1, math.ceil(games / PLAYERS)),
            "seed": 11,
            "concurrency": concurrency,
            "workers": 1,
            "replays": str(replays),
            "variants": {"round_limit": "10"},
            "time": {"move_ms": move_ms, "bank_ms": 0, **clock},
        },
        "entrant": [{"name": f"spin{i}", "bot": "bench/bots/spin_c"} for i in range(PLAYERS)],
    }
    return parse_tournament(data, base=ROOT, source="bench")


def clocks(
    label: str, games: int, concurrency: int, move_ms: int, folder: Path, clock: dict[str, Any]
) -> dict[str, Any]:
    replays = folder / label
    config = spin_tournament(games, concurrency, move_ms, replays, clock)
    store = Store(folder / f"{label}.sqlite")
    schedule = build_schedule(config)[:games]
    store.begin(config, schedule)
    records: list[MatchRecord] = []
    lags: list[float] = []

    async def probe() -> None:
        # How late the referee's Trio loop wakes a task that sleeps 10 ms: any
        # blocking work on the loop (or a starved referee process) shows here.
        while True:
            due = trio.current_time() + 0.01
            await trio.sleep_until(due)
            lags.append((trio.current_time() - due) * 1000)

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(probe)
            await run_pending(
                config, store, concurrency=concurrency, workers=1, on_result=lambda game, record: records.append(record)
            )
            nursery.cancel_scope.cancel()

    began = time.perf_counter()
    trio.run(run)
    seconds = time.perf_counter() - began
    store.close()
    times = sorted(
        record.ms
        for path in sorted(replays.rglob("*.jsonl"))  # replays_folder adds a folder per tournament
        for record in read_replay(path)
        if isinstance(record, ActionRecord)
    )
    terminations = [t for record in records for t in record.result.terminations]
    return {
        "label": label,
        "games": len(records),
        "concurrency": concurrency,
        "seconds": seconds,
        "decisions": sum(t.decisions for r in records for t in r.timings),
        "times": times,
        "lags": sorted(lags),
        "terminations": terminations,
        "timeouts": sum(1 for t in terminations if t.kind == "timeout"),
    }


def quantile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def report_clocks(run: dict[str, Any], move_ms: int, margin_ms: int) -> None:
    times = run["times"]
    half = move_ms / 2
    over = [t - half for t in times]
    late = sum(1 for t in times if t > move_ms)
    print(
        f"{run['label']:8s} {run['games']} games at concurrency {run['concurrency']}, {run['decisions']} decisions "
        f"in {run['seconds']:.1f} s: {run['timeouts']} time losses, {len(run['terminations'])} terminations; "
        f"measured ms p50 {statistics.median(times):.2f} p99 {quantile(times, 0.99):.2f} max {max(times):.2f}; "
        f"beyond the bot's own {half:g} ms: p50 {statistics.median(over):.2f} p99 {quantile(over, 0.99):.2f} "
        f"max {max(over):.2f} ms; over move_ms {late}, limit with margin {move_ms + margin_ms} ms",
        flush=True,
    )
    lags = run["lags"]
    print(
        f"{'':8s} referee loop lag (a task sleeping 10 ms, {len(lags)} wake-ups): p50 {statistics.median(lags):.2f} "
        f"p99 {quantile(lags, 0.99):.2f} max {max(lags):.2f} ms",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=100, help="games at once in part 1 (default 100)")
    parser.add_argument("--bot", default="sample_bots/c_bot", help="bot folder for part 1, from the repository root")
    parser.add_argument("--move-ms", type=int, default=100, help="per-decision limit in part 2 (default 100)")
    parser.add_argument("--decisions", type=int, default=2000, help="at least this many decisions in part 2")
    parser.add_argument(
        "--sandbox", choices=["none", "standard", "strict"], default="standard", help="sandbox level (default standard)"
    )
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default=RefereeSettings().clock.mode,
        help="what a decision is charged (default: the referee's)",
    )
    parser.add_argument("--ponder", action="store_true", help="let bots run while they are not asked")
    args = parser.parse_args()

    n_cores = cores()
    settings = RefereeSettings(clock=Clock(mode=args.clock, ponder=args.ponder), sandbox=args.sandbox)
    time_keys = {"clock": args.clock, "ponder": args.ponder}
    try:
        # The check the tournament command makes before anything runs.
        check_capacity(args.games, 1, PLAYERS, settings.sandbox)
    except CapacityError as error:
        raise SystemExit(f"concurrency bench: refused: {error}") from None
    print(
        f"concurrency bench: {n_cores} cores, sandbox {settings.sandbox}, clock {settings.clock.mode}"
        f"{', ponder' if settings.clock.ponder else ''}, margin {settings.clock.margin_ms} ms, "
        f"load average {load_average()}",
        flush=True,
    )

    # 1. Scale and memory.
    [bot] = prepare_bots([load_bot(args.bot, base=ROOT)])
    trio.run(many_games, bot, 1, settings)  # warm-up: imports and caches, not counted
    scale = trio.run(many_games, bot, args.games, settings)
    kib_per_game = (scale["peak_kib"] - scale["before_kib"]) / max(1, scale["games"])
    print(
        f"scale: {scale['games']} games of {bot.name} ({scale['games'] * PLAYERS} bot processes), "
        f"{scale['peak_running']} refereed at once, {scale['decisions']} decisions in {scale['seconds']:.1f} s, "
        f"{len(scale['terminations'])} terminations, {scale['start_failures']} bots that did not start",
        flush=True,
    )
    print(
        f"referee process: {scale['cpu']:.1f} s CPU = {scale['cpu'] / scale['seconds']:.2f} cores, "
        f"{scale['decisions'] / scale['seconds']:.0f} decisions/s, "
        f"{scale['cpu'] / max(1, scale['decisions']) * 1e6:.0f} us CPU/decision (bot starts included); "
        f"peak {scale['fds']} open descriptors ({(scale['fds']) / max(1, scale['games'] * PLAYERS):.1f} per bot); "
        f"host memory in use rose by {scale['host_kib'] / 1024:.0f} MB "
        f"({scale['host_kib'] / max(1, scale['games'] * PLAYERS):.0f} KiB per bot, bots and sandboxes included)",
        flush=True,
    )
    for termination in scale["terminations"][:5]:
        print(f"  {termination.kind}: {termination.reason}")
    print(
        f"memory: referee {scale['before_kib']} KiB before, peak {scale['peak_kib']} KiB "
        f"({'VmHWM' if scale['hwm'] else 'sampled VmRSS'}; sampled peak {scale['sampled_kib']} KiB): "
        f"{kib_per_game:.0f} KiB per concurrent game",
        flush=True,
    )

    # 2. Fair clocks under load.
    concurrency = 4 * n_cores
    decisions_per_game = 95  # a 4-player game of passes to round 10 has 100-110
    games = max(concurrency, math.ceil(args.decisions / decisions_per_game / PLAYERS) * PLAYERS)
    with tempfile.TemporaryDirectory(prefix="famiglia-bench-") as tmp:
        folder = Path(tmp)
        baseline = clocks("alone", 1, 1, args.move_ms, folder, time_keys)
        loaded = clocks("loaded", games, concurrency, args.move_ms, folder, time_keys)
    report_clocks(baseline, args.move_ms, settings.clock.margin_ms)
    report_clocks(loaded, args.move_ms, settings.clock.margin_ms)
    if loaded["decisions"] < args.decisions:
        print(f"warning: only {loaded['decisions']} decisions under load, fewer than {args.decisions}")
    timeouts = scale["timeouts"] + baseline["timeouts"] + loaded["timeouts"]
    print(f"load average after: {load_average()}")
    print(f"concurrency: {scale['games']} games {timeouts} timeouts {kib_per_game:.0f} KiB/game")


if __name__ == "__main__":
    main()
