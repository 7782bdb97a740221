"""Decisions per second on a busy machine: the referee against the msgspec hand-written harness, beside busy loops.

Usage: python bench/busy.py [--seconds N] [--loops N] [--bot FOLDER] [--players N] [--slice S]
                            [--also-trio-wait | --trio-wait]

Starts ``--loops`` busy loops (default 8), each a Python ``while True: pass``
in a session of its own (``setsid``), as a host's other work would run, and
stops them itself at the end. Beside them it plays Vendetta matches with four
warm bot processes (``bench/bots/instant_c`` by default) alternately through

- the referee (``referee.match.run_match``, default settings: sandbox, control
  groups, cpu clock, freezer, the quick-answer poll, every check), and
- the msgspec hand-written harness (``bench/hand_written.py``:
  ``HandWrittenMsgspec``, its own ``Popen`` bots, blocking write and
  ``readline``), in a process of its own (``bench/hand_written_server.py``)
  started before the referee does anything: it and its bots stay in the bench's
  session and groups, as a host's own program runs, while the referee makes a
  cpu group of its own for itself and its bots on cgroup v1,

in slices of ``--slice`` seconds (default 2; a match started is finished) until
each has had ``--seconds`` (default 20). For each slice it notes the decisions,
and where the time went: from ``/proc/<pid>/schedstat``, the time the referee's
process (this one) or the harness's, and the bots' processes, ran and waited for a core (run
delay); from the bots' cpu control groups, the times they were throttled by
their quota. decisions/s of each is the median over its slices, the ratio the
median over adjacent pairs of slices (the load moves, and both sides of a pair
see about the same). ``--also-trio-wait`` adds a third contender to the same
alternation, the referee waiting for every answer through Trio's run loop as
before 2026-11-26 (``--trio-wait`` makes the referee itself wait so). The
last line is always
``busy: <referee>/s referee <hand>/s hand-written msgspec <ratio>x (<loops> busy loops)``.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import IO, TypeVar

# Run from a checkout without installing: the repository root holds the packages.
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgspec
import trio
from machine import load_average, positive_seconds

from referee.bots import BotSpec, load_bot
from referee.channel import BotChannel
from referee.match import MatchSpec, run_match, trio_peek
from referee.play import prepare_bots
from referee.process import BotProcess, open_bot
from referee.sandbox.cgroup import BotCgroup
from referee.settings import RefereeSettings


def bounded_loops(text: str) -> int:
    """``--loops`` for argparse: 0 to 64 busy loops."""
    try:
        loops = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= loops <= 64:
        raise argparse.ArgumentTypeError(f"{text!r}: the number of busy loops must be from 0 to 64")
    return loops


@contextmanager
def busy_loops(count: int) -> Iterator[list[int]]:
    """``count`` busy loops, each in a session of its own, killed on the way out (by the pids started here)."""
    loops = [
        subprocess.Popen(
            [sys.executable, "-c", "while True: pass"],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]
    try:
        yield [loop.pid for loop in loops]
    finally:
        for loop in loops:
            loop.send_signal(signal.SIGKILL)
        for loop in loops:
            loop.wait()


def schedstat(pid: int) -> tuple[int, int]:
    """(ns run on a CPU, ns waited on a run queue) of every thread of ``pid``; (0, 0) once it has gone."""
    ran = waited = 0
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0, 0
    for tid in threads:
        try:
            fields = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
        except OSError:
            continue
        ran += int(fields[0])
        waited += int(fields[1])
    return ran, waited


def tree_pids(group: BotCgroup | None, root_pid: int) -> list[int]:
    """The processes of a bot's tree: its control group's, or the launcher's own pid without one."""
    if group is not None:
        try:
            return group.pids()
        except OSError:  # the group is going: count the launcher alone
            return [root_pid]
    return [root_pid]


def throttled(group: BotCgroup | None) -> tuple[int, int]:
    """(periods throttled, ns throttled) of a bot's cpu group (cgroup v1 ``cpu.stat``); zeros without."""
    if group is None:
        return 0, 0
    folder = group._folders.get("cpu_bound")  # a bench reads the kernel's counters directly
    if folder is None:
        return 0, 0
    try:
        text = Path(folder, "cpu.stat").read_text()
    except OSError:
        return 0, 0
    stat = dict(line.split() for line in text.splitlines() if line.count(" ") == 1)
    return int(stat.get("nr_throttled", 0)), int(stat.get("throttled_time", stat.get("throttled_usec", 0)))


class Side:
    """One contender's slices: decisions per second, and where the time went."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rates: list[float] = []
        self.own_wait: list[float] = []  # the harness's process: share of the slice waiting for a core
        self.own_ran: list[float] = []  # the harness's process: us run per decision
        self.bot_wait: list[float] = []  # the bots' processes: ms waited for a core per decision
        self.bot_ran: list[float] = []  # the bots' processes: us run per decision
        self.throttles = 0

    def add(self, decisions: int, seconds: float, own: tuple[int, int], bots: tuple[int, int], throttles: int) -> None:
        self.rates.append(decisions / seconds)
        self.own_wait.append(own[1] / 1e9 / seconds)
        self.own_ran.append(own[0] / 1e3 / max(1, decisions))
        self.bot_wait.append(bots[1] / 1e6 / max(1, decisions))
        self.bot_ran.append(bots[0] / 1e3 / max(1, decisions))
        self.throttles += throttles


def groups_of(processes: list[BotProcess]) -> list[BotCgroup | None]:
    """The bots' control groups (the meter is the group's bound ``cpu_usage_ns``)."""
    return [getattr(p.meter, "__self__", None) for p in processes]


def sum_stats(pids: list[int]) -> tuple[int, int]:
    ran = waited = 0
    for pid in pids:
        r, w = schedstat(pid)
        ran += r
        waited += w
    return ran, waited


def diff(after: tuple[int, int], before: tuple[int, int]) -> tuple[int, int]:
    return after[0] - before[0], after[1] - before[1]


async def referee_slice(
    bots: list[BotChannel], groups: list[BotCgroup | None], pids: list[int], settings: RefereeSettings,
    side: Side, seconds: float, seed: int,
) -> int:  # fmt: skip
    """Whole matches through the referee for a slice; the next seed."""
    own0, bots0 = schedstat(os.getpid()), sum_stats(pids)
    throttles0 = sum(throttled(g)[0] for g in groups)
    began = time.perf_counter()
    decisions = 0
    while time.perf_counter() - began < seconds:
        record = await run_match(MatchSpec(game="vendetta", seed=seed), bots, settings)
        if record.result.terminations:
            raise SystemExit(f"a bench bot failed: {record.result.terminations}")
        decisions += sum(timing.decisions for timing in record.timings)
        seed += 1
    elapsed = time.perf_counter() - began
    side.add(
        decisions,
        elapsed,
        diff(schedstat(os.getpid()), own0),
        diff(sum_stats(pids), bots0),
        sum(throttled(g)[0] for g in groups) - throttles0,
    )
    return seed


AnswerT = TypeVar("AnswerT", "Started", "Played")


class Started(msgspec.Struct, frozen=True):
    bots: list[int]


class Played(msgspec.Struct, frozen=True):
    decisions: int
    seed: int


class HarnessProcess:
    """The msgspec hand-written harness in a process of its own (bench/hand_written_server.py)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "hand_written_server.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.bots: list[int] = []

    def _ask(self, message: object, answer: type[AnswerT]) -> AnswerT:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(msgspec.json.encode(message) + b"\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise SystemExit(f"the hand-written harness's process ended (exit status {self.process.wait()})")
        return msgspec.json.decode(line, type=answer)

    def start(self, bot: BotSpec, players: int) -> None:
        self.bots = self._ask({"bot": bot, "players": players}, Started).bots

    def play(self, seconds: float, seed: int) -> tuple[int, int]:
        """Whole games for ``seconds`` from deal ``seed``: (decisions, the next seed)."""
        played = self._ask({"seconds": seconds, "seed": seed}, Played)
        return played.decisions, played.seed

    def close(self) -> None:
        stdin: IO[bytes] | None = self.process.stdin
        if stdin is not None:
            stdin.close()
        self.process.wait()


def hand_slice(harness: HarnessProcess, side: Side, seconds: float, seed: int) -> int:
    """Whole games of the hand-written harness for a slice; the next seed."""
    own0, bots0 = schedstat(harness.process.pid), sum_stats(harness.bots)
    began = time.perf_counter()
    decisions, seed = harness.play(seconds, seed)
    elapsed = time.perf_counter() - began
    side.add(decisions, elapsed, diff(schedstat(harness.process.pid), own0), diff(sum_stats(harness.bots), bots0), 0)
    return seed


def describe(side: Side) -> str:
    return (
        f"{side.name}: decisions/s per slice {' '.join(f'{r:.0f}' for r in side.rates)}; "
        f"its own process ran {statistics.median(side.own_ran):.1f} us per decision and waited for a core "
        f"{statistics.median(side.own_wait) * 100:.0f}% of the time, "
        f"its bots {statistics.median(side.bot_wait):.2f} ms per decision (ran "
        f"{statistics.median(side.bot_ran):.1f} us per decision); periods throttled by a cpu quota: {side.throttles}"
    )


async def bench(args: argparse.Namespace) -> None:
    settings = RefereeSettings()
    print(
        f"busy bench: {args.players}-player Vendetta, bot {args.bot} x{args.players} (warm), "
        f"{os.cpu_count()} cores, {args.loops} busy loops, load average before {load_average()}",
        flush=True,
    )
    referee, hand = Side("referee"), Side("hand-written msgspec")
    usual = Side("referee, every answer waited for through Trio")
    # The loops start first, in this process's groups as the host gave them: they are the
    # host's other work. Started after the first build or bot, they would be born inside the
    # cpu group the referee makes for itself and its bots on cgroup v1
    # (referee.sandbox.cgroup_host), as if they were its own.
    harness = HarnessProcess()
    with busy_loops(args.loops):
        (bot,) = prepare_bots([load_bot(args.bot, base=ROOT)])
        async with AsyncExitStack() as stack:
            processes = [await stack.enter_async_context(open_bot(bot, settings)) for _ in range(args.players)]
            channels: list[BotChannel] = list(processes)
            groups = groups_of(processes)
            try:
                harness.start(bot, args.players)
                await trio.sleep(0.5)  # the loops get going
                seed = 0
                # A short warm-up of both, not counted.
                pids = [pid for g, p in zip(groups, processes, strict=True) for pid in tree_pids(g, p.pid)]
                seed = await referee_slice(channels, groups, pids, settings, Side("warm-up"), 0.3, seed)
                seed = hand_slice(harness, Side("warm-up"), 0.3, seed)
                spent = 0.0
                while spent < args.seconds:
                    # The referee's seats' pids are listed afresh: a warm process is replaced if it broke.
                    pids = [pid for g, p in zip(groups, processes, strict=True) for pid in tree_pids(g, p.pid)]
                    slice_seed = seed
                    seed = await referee_slice(channels, groups, pids, settings, referee, args.slice, slice_seed)
                    hand_slice(harness, hand, args.slice, slice_seed)  # the same deals
                    if args.also_trio_wait:
                        kernel_wait = trio_peek.idle_wait
                        trio_peek.idle_wait = lambda: None
                        try:
                            await referee_slice(channels, groups, pids, settings, usual, args.slice, slice_seed)
                        finally:
                            trio_peek.idle_wait = kernel_wait
                    spent += args.slice
                load = load_average()
            finally:
                harness.close()
    print(describe(referee))
    print(describe(hand))
    ratios = [r / h for r, h in zip(referee.rates, hand.rates, strict=True)]
    ratio = statistics.median(ratios)
    print(f"referee / hand-written per pair of slices: {' '.join(f'{r:.2f}' for r in ratios)}; load average {load}")
    if usual.rates:
        print(describe(usual))
        against = [u / h for u, h in zip(usual.rates, hand.rates, strict=True)]
        print(
            f"  its decisions/s / hand-written per pair of slices: {' '.join(f'{r:.2f}' for r in against)}; "
            f"median {statistics.median(against):.2f}x; the referee's own over it per slice: "
            f"{statistics.median(r / u for r, u in zip(referee.rates, usual.rates, strict=True)):.2f}x"
        )
    print(
        f"busy: {statistics.median(referee.rates):.0f}/s referee {statistics.median(hand.rates):.0f}/s "
        f"hand-written msgspec {ratio:.2f}x ({args.loops} busy loops)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=positive_seconds, default=20.0, help="time per contender (default 20)")
    parser.add_argument("--slice", type=positive_seconds, default=2.0, help="seconds per slice (default 2)")
    parser.add_argument("--loops", type=bounded_loops, default=8, help="busy loops beside it (default 8)")
    parser.add_argument("--bot", default="bench/bots/instant_c", help="bot folder, from the repository root")
    parser.add_argument("--players", type=int, choices=(3, 4, 5), default=4, help="Vendetta table size")
    parser.add_argument(
        "--also-trio-wait",
        action="store_true",
        help="a third contender in the same alternation: the referee waiting for every answer through Trio's "
        "run loop (as before 2026-11-26)",
    )
    parser.add_argument(
        "--trio-wait",
        action="store_true",
        help="the referee waits for every answer through Trio's run loop, never in the kernel (as before "
        "2026-11-26), to compare the two in alternating runs",
    )
    args = parser.parse_args()
    if args.trio_wait:
        trio_peek.idle_wait = lambda: None  # never idle as far as the referee can tell
    trio.run(bench, args)


if __name__ == "__main__":
    main()
