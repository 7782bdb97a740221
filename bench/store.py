"""How many finished games per second one results store records.

Usage: python bench/store.py [--games N] [--feeders N] [--rounds N]

A stand-in executor hands ``tournaments.runner.run_pending`` finished 4-player
Vendetta games at once (records made before the clock starts, each with a
replay path, timings and a termination, as a real game's), from ``--feeders``
concurrent tasks (default 16: the worker processes of a 16-core machine, each
reporting its games one after another). So what is timed is the host's part of
each game: the runner, the store and what a run does per result beside it (the
live OpenSkill ratings of ``famiglia tournament run``). Each run writes
``--games`` games (default 6,000) into a new SQLite store, in one folder on
this machine's disk.

In the same run, alternating ``--rounds`` times (default 3), medians compared:

- **per game** (the baseline): the same finished games and ratings with the
  store as it was written before issue 30: each outcome written in a
  transaction of its own, from a worker thread, one at a time (``Store.record``
  behind a lock), each feeder waiting for its commit;
- **grouped**: ``run_pending`` as it is (``tournaments.runner.StoreWriter``);
- **raw insert** (informative, the floor of this schema): the same rows,
  already made, inserted with ``executemany`` in one transaction, no Trio, no
  ratings.

Last line: ``store: <N> results/s (<ratio>x per-game transactions)``; target 3,000.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

# Run from a checkout without installing: the repository root holds the packages.
BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != BENCH), str(BENCH)]

import trio
from machine import load_average
from tournament import make_config

from protocol.messages import Result, Termination
from referee.match import MatchRecord, MatchSpec, SeatTiming
from tournaments.config.tournament import TournamentConfig
from tournaments.hosting.executors.base import Competition, Seat
from tournaments.hosting.ratings import LiveRatings, RatedGame
from tournaments.hosting.schedule import ScheduledGame
from tournaments.lifecycle.plan import build_schedule
from tournaments.runner import run_pending
from tournaments.store import Store


def finished(game: ScheduledGame) -> MatchRecord:
    """A made-up finished game of ``game``'s seating, shaped like a real one (a forfeit included)."""
    seats = len(game.seating)
    return MatchRecord(
        match=f"bench-{game.index}", game="vendetta", seed=game.seed, variants={},
        names=[f"instant-{e}" for e in game.seating],
        result=Result(
            ranks=[1 + (seat + game.index) % seats for seat in range(seats)],
            scores=[1000 * (seats - seat) for seat in range(seats)], winners=[0],
            forfeited=[3], ended_by="round_limit",
            terminations=[Termination(seat=3, kind="timeout", reason="no answer in 1000 ms (request 12)")],
        ),
        timings=[SeatTiming(decisions=40, total_ms=12.5, max_ms=1.25, bank_left_ms=800.0) for _ in range(seats)],
        seconds=0.05, replay=f"/var/famiglia/replays/bench/game-{game.index:06d}.jsonl", sandbox="standard",
    )  # fmt: skip


class Instant:
    """An executor whose games are finished as soon as they are handed out, ``feeders`` at once."""

    def __init__(self, records: dict[int, MatchRecord], feeders: int) -> None:
        self.records = records
        self.slots = trio.CapacityLimiter(feeders)

    @asynccontextmanager
    async def open(self, competition: Competition) -> AsyncIterator[None]:
        yield

    async def ready(self) -> None:
        return

    async def play(self, spec: MatchSpec, seats: Sequence[Seat], replay: Path | None) -> MatchRecord:
        return self.records[int(spec.match.rsplit("#", 1)[1])]  # a tournament's match id ends with the game's index

    def keep(self, archives: Collection[Path]) -> None:
        return


async def per_game(
    store: Store, records: dict[int, MatchRecord], feeders: int, on_result: Callable[[ScheduledGame, MatchRecord], None]
) -> None:
    """The baseline: what ``run_pending`` did before issue 30, each outcome in its own transaction before its
    feeder goes on (``Store.record`` in a worker thread behind a lock)."""
    games = iter(store.pending())
    lock = trio.Lock()

    async def feeder() -> None:
        for game in games:
            async with lock:
                await trio.to_thread.run_sync(store.record, game, records[game.index])
            on_result(game, records[game.index])

    async with trio.open_nursery() as nursery:
        for _ in range(feeders):
            nursery.start_soon(feeder)


def new_store(config: TournamentConfig, folder: Path, label: str) -> Store:
    store = Store(folder / f"{label}.sqlite")
    store.begin(config, build_schedule(config, store.deal_key() or b""))
    return store


def timed_run(config: TournamentConfig, folder: Path, label: str, feeders: int) -> tuple[float, float]:
    """(results per second, microseconds of this process's CPU per result) of one run into a new store.

    ``label`` says which: ``grouped...`` or ``per-game...``. The CPU time is
    every thread's (the writer thread's SQLite work included): on a busy
    machine it moves less than the wall time.
    """
    store = new_store(config, folder, label)
    records = {game.index: finished(game) for game in store.schedule()}
    live = LiveRatings(len(config.entrants))

    def rate(game: ScheduledGame, record: MatchRecord) -> None:
        live.update(RatedGame(seating=list(game.seating), ranks=list(record.result.ranks)))

    instant = Instant(records, feeders)
    if label.startswith("grouped"):

        async def play() -> int:
            return await run_pending(config, store, concurrency=feeders, on_result=rate, executor=instant)

    else:

        async def play() -> int:
            await per_game(store, records, feeders, rate)
            return len(records)

    began, cpu = time.perf_counter(), time.process_time()
    trio.run(play)
    seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
    done, total = store.counts()
    assert done == total == len(records) == live.games, (done, total, len(records), live.games)
    store.close()
    return total / seconds, 1e6 * cpu / total


def raw_insert(config: TournamentConfig, folder: Path) -> float:
    """The floor: the rows of every game, already made, in one executemany transaction."""
    store = new_store(config, folder, "raw")
    games = store.schedule()
    records = [finished(game) for game in games]
    began = time.perf_counter()
    store.record_batch(list(zip(games, records, strict=True)), [])
    seconds = time.perf_counter() - began
    store.close()
    return len(games) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=6000, help="games per run (default 6000)")
    parser.add_argument("--feeders", type=int, default=16, help="tasks reporting games at once (default 16)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    args = parser.parse_args()
    for name in ("games", "feeders", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    config = make_config(args.games, args.feeders, 1000, reuse=True, workers=1)
    print(f"load average before: {load_average()}", flush=True)
    per_game: list[float] = []
    grouped: list[float] = []
    cpu_per_game: list[float] = []
    cpu_grouped: list[float] = []
    with tempfile.TemporaryDirectory(prefix="famiglia-store-bench-") as scratch:
        folder = Path(scratch)
        for round_ in range(args.rounds):
            for label, rates, cpus in (("per-game", per_game, cpu_per_game), ("grouped", grouped, cpu_grouped)):
                rate, cpu = timed_run(config, folder, f"{label}-{round_}", args.feeders)
                rates.append(rate)
                cpus.append(cpu)
            print(
                f"round {round_ + 1}: per game {per_game[-1]:7.0f} results/s {cpu_per_game[-1]:5.0f} us CPU/result  "
                f"grouped {grouped[-1]:7.0f} results/s {cpu_grouped[-1]:5.0f} us CPU/result "
                f"({grouped[-1] / per_game[-1]:.2f}x)",
                flush=True,
            )
        floor = raw_insert(config, folder)
    base, best = statistics.median(per_game), statistics.median(grouped)
    print(f"raw executemany insert of the same rows (floor): {floor:.0f} results/s", flush=True)
    print(
        f"median CPU per result: per game {statistics.median(cpu_per_game):.0f} us, "
        f"grouped {statistics.median(cpu_grouped):.0f} us",
        flush=True,
    )
    print(f"load average after: {load_average()}", flush=True)
    print(f"store: {best:.0f} results/s ({best / base:.2f}x per-game transactions {base:.0f} results/s)")


if __name__ == "__main__":
    main()
