"""Referee overhead: decisions per second against bots that answer at once, and
the same number of bare Trio pipe round trips as the baseline, in one run.

Usage: python bench/referee.py [--seconds N] [--bot FOLDER] [--players N] [--replays]

1. Sizes: one match with a recording wrapper notes the length of every request
   line the referee writes and of every answer line it reads.
2. Referee: four warm bot processes (``bench/bots/instant_c`` by default: a C
   bot that answers every request at once with the empty placement; or
   ``--bot sample_bots/c_bot``) play one Vendetta match after another through
   ``referee.match.run_match`` for ``--seconds`` (default 10). Each decision is
   the whole referee path: engine decision, view, events, request encoding,
   write, deadline, line read, decode, apply. ``--replays`` also writes a
   replay file per match.
3. Floor: the same bot processes and the same deals, with only what every
   decision must do under this protocol: the engine's decision, the seat's
   full view (``transient_view``, as the referee sends it) and the events since
   its last request encoded, one write, the answer polled for as the referee
   polls a bot that answers at once (``QUICK_ANSWER_S``) with one wait in the
   kernel (``poll``) if it has not come, as the referee waits when no other
   Trio task is runnable, one read, the action decoded and applied. No clocks, records,
   events bookkeeping or error handling: what any referee written on this
   engine and Trio would need at the least. Its ratio is the ceiling for the
   referee's.
4. Baseline: a bare Trio ping-pong with ``bench/bots/echo_c`` (a C process that
   answers each line with a line of the size it is asked for), replaying the
   recorded request and answer sizes: ``send_all`` of the request line on the
   process's stdin stream, ``receive_some`` on its stdout until the newline.
   This is the floor for one request and answer over a pipe in Trio.

5. Hand-written harnesses (``bench/hand_written.py``): the same deals and the
   same bot program, with what a host would write by hand around famiglia's
   engine: its own ``subprocess.Popen`` bot processes, blocking write and
   ``readline``, no clocks, no records, no error handling. ``json`` (the
   baseline of issue 15) uses the ``json`` module both ways; ``msgspec`` (the
   baseline of issue 30) encodes the protocol's Structs with a reused
   ``msgspec.json.Encoder`` and decodes the answer with a typed Decoder into
   the engine's action. Their CPU per decision is measured like the referee's:
   this process's CPU time (``time.process_time``, the bots not included) over
   a slice, divided by the decisions played in it.

The measurements alternate in slices of a second so that a change in the
machine's load during the run hits all alike; ratios are medians over the
adjacent slices (the ratio of the totals is printed too), and decisions/s the
median over the referee's slices. The last line is always
``referee: <decisions_per_s> decisions/s <cpu_us> us CPU/decision <ratio>x hand-written msgspec CPU``
(referee CPU per decision over the msgspec hand-written harness's; the ratio
against the ``json`` one, the floor's and the bare pipe's are printed before it).
"""

from __future__ import annotations

import argparse
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

# Run from a checkout without installing: the repository root holds the packages.
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgspec
import trio
from floor import floor_request
from hand_written import HandWritten, HandWrittenMsgspec
from machine import load_average, positive_seconds

import referee.match.trio_peek
from protocol.codec import decode_bot_message, encode_message
from protocol.messages import PROTOCOL_VERSION, End, Start, TimeControl
from referee.bots import BotSpec, load_bot
from referee.channel import BotChannel, ChannelBase
from referee.games import get_rules
from referee.games.base import SeededChance
from referee.match import MatchSpec, result_of, run_match
from referee.match.intake import QUICK_ANSWER_S
from referee.play import prepare_bots
from referee.process import BotProcess, open_bot
from referee.settings import RefereeSettings

SLICE_S = 1.0


class Recording(ChannelBase):
    """A seat's channel that notes the sizes of the request lines and answer lines."""

    def __init__(self, bot: BotProcess) -> None:
        self.bot = bot
        self.sizes: list[tuple[int, int]] = []
        self._request = 0

    @property
    def name(self) -> str:
        return self.bot.name

    async def send(self, data: bytes) -> None:
        if data.startswith(b'{"type":"request"'):
            self._request = len(data)
        await self.bot.send(data)

    async def readline(self) -> bytes:
        line = await self.bot.readline()
        if self._request and line.startswith(b'{"type":"action"'):
            self.sizes.append((self._request, len(line) + 1))
            self._request = 0
        return line

    async def kill(self) -> None:
        await self.bot.kill()

    def stderr_text(self) -> str:
        return self.bot.stderr_text()


class Counts:
    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu = 0.0
        self.count = 0
        self.games = 0
        self.rates: list[float] = []  # per slice, per second
        self.cpus: list[float] = []  # per slice, CPU seconds
        self.counts: list[int] = []  # per slice

    def add(self, count: int, seconds: float, cpu: float) -> None:
        self.count += count
        self.seconds += seconds
        self.cpu += cpu
        self.rates.append(count / seconds)
        self.cpus.append(cpu)
        self.counts.append(count)


async def referee_slice(
    bots: list[BotChannel], settings: RefereeSettings, counts: Counts, replays: Path | None
) -> None:
    """Whole matches until the slice is over (a match started is always finished)."""
    began, cpu = time.perf_counter(), time.process_time()
    decisions = 0
    while time.perf_counter() - began < SLICE_S:
        seed = counts.games
        path = replays / f"m{seed % 8}.jsonl" if replays is not None else None
        record = await run_match(MatchSpec(game="vendetta", seed=seed), bots, settings, replay_path=path)
        decisions += sum(timing.decisions for timing in record.timings)
        counts.games += 1
        if record.result.terminations:
            raise SystemExit(f"a bench bot failed: {record.result.terminations}")
    counts.add(decisions, time.perf_counter() - began, time.process_time() - cpu)


async def floor_slice(bots: list[BotProcess], counts: Counts) -> None:
    """Whole games with nothing but the engine, the encoding and the pipes (see the module docstring)."""
    rules = get_rules("vendetta")
    config = rules.config({})
    action_decoder = msgspec.json.Decoder(rules.action_type)
    writes = [bot.process.stdin.fileno() for bot in bots]  # type: ignore[union-attr]
    reads = [bot.process.stdout.fileno() for bot in bots]  # type: ignore[union-attr]
    polls = [select.poll() for _ in bots]
    for poll, fd in zip(polls, reads, strict=True):
        poll.register(fd, select.POLLIN)
    clock = time.perf_counter
    n = len(bots)
    began, cpu = time.perf_counter(), time.process_time()
    decisions = 0
    while time.perf_counter() - began < SLICE_S:
        seed = counts.games
        for seat in range(n):
            start = Start(
                protocol=PROTOCOL_VERSION,
                game="vendetta",
                match=f"floor-{seed}",
                seat=seat,
                players=n,
                names=[b.name for b in bots],
                variants={},
                config=config,
                time=TimeControl(),
            )
            os.write(writes[seat], encode_message(start))
            await trio.lowlevel.wait_readable(reads[seat])
            os.read(reads[seat], 65536)  # ready
        state = rules.new_game(n, config, SeededChance(seed))
        request_id = 0
        events: list[msgspec.Struct] = []
        seen = [0] * n
        while (decision := state.decision()) is not None:
            seat = decision.seat
            request_id += 1
            os.write(writes[seat], floor_request(state, decision, request_id, events, seen))
            # As the referee does for a bot that answers at once: poll for the answer
            # up to QUICK_ANSWER_S, and block in the kernel only if it has not come.
            limit = clock() + QUICK_ANSWER_S
            while not (there := bool(polls[seat].poll(0))) and clock() < limit:
                pass
            if not there:
                polls[seat].poll()  # a wait in the kernel, as the referee's when no other task is runnable
            # instant_c writes each answer with one write: one read is one line.
            message = decode_bot_message(os.read(reads[seat], 65536)[:-1])
            events += state.apply(seat, action_decoder.decode(message.action))  # type: ignore[union-attr]
            decisions += 1
        result = result_of(state.outcome())
        for seat in range(n):
            os.write(writes[seat], encode_message(End(match=f"floor-{seed}", seat=seat, result=result, events=[])))
        counts.games += 1
    counts.add(decisions, time.perf_counter() - began, time.process_time() - cpu)


def hand_written_slice(harness: HandWritten | HandWrittenMsgspec, counts: Counts) -> None:
    """Whole games of the hand-written harness, on the same deals as the referee's."""
    began, cpu = time.perf_counter(), time.process_time()
    decisions = 0
    while time.perf_counter() - began < SLICE_S:
        decisions += harness.play(counts.games)
        counts.games += 1
    counts.add(decisions, time.perf_counter() - began, time.process_time() - cpu)


async def ping_pong_slice(process: trio.Process, lines: list[bytes], counts: Counts) -> None:
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    began, cpu = time.perf_counter(), time.process_time()
    count = 0
    while time.perf_counter() - began < SLICE_S:
        for line in lines:
            await stdin.send_all(line)
            answer = await stdout.receive_some(65536)
            while not answer.endswith(b"\n"):
                answer += await stdout.receive_some(65536)
        count += len(lines)
    counts.add(count, time.perf_counter() - began, time.process_time() - cpu)


def blocking_round_trip_us(echo: BotSpec, lines: list[bytes], seconds: float = 1.0) -> float:
    """For reference: the same ping-pong with blocking os.write/os.read, no event loop."""
    process = subprocess.Popen(echo.command, cwd=echo.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    write_fd, read_fd = process.stdin.fileno(), process.stdout.fileno()
    count = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        for line in lines:
            view = memoryview(line)
            while view:
                view = view[os.write(write_fd, view) :]
            answer = os.read(read_fd, 65536)
            while not answer.endswith(b"\n"):
                answer += os.read(read_fd, 65536)
        count += len(lines)
    elapsed = time.perf_counter() - began
    process.stdin.close()
    process.wait()
    return elapsed / count * 1e6


def ping_lines(sizes: list[tuple[int, int]]) -> list[bytes]:
    """Lines of the recorded request sizes, each asking for an answer of the recorded size."""
    lines = []
    for request, answer in sizes:
        head = b"%d " % (answer - 1)
        lines.append(head + b"x" * (request - len(head) - 1) + b"\n")
    return lines


async def bench(args: argparse.Namespace) -> None:
    bot, echo = prepare_bots([load_bot(args.bot, base=ROOT), load_bot("bench/bots/echo_c", base=ROOT)])
    settings = RefereeSettings()
    print(
        f"referee bench: {args.players}-player Vendetta, bot {bot.name} x{args.players} (warm), "
        f"{os.cpu_count()} cores, load average {load_average()}",
        flush=True,
    )
    async with AsyncExitStack() as stack:
        processes = [await stack.enter_async_context(open_bot(bot, settings)) for _ in range(args.players)]

        # 1. The sizes of real traffic.
        recorders = [Recording(p) for p in processes]
        await run_match(MatchSpec(game="vendetta", seed=10_000), recorders, settings)
        sizes = [size for recorder in recorders for size in recorder.sizes]
        lines = ping_lines(sizes)
        print(
            f"traffic: {len(sizes)} decisions in one match, request lines {statistics.mean(s[0] for s in sizes):.0f} "
            f"bytes on average ({min(s[0] for s in sizes)}-{max(s[0] for s in sizes)}), "
            f"answer lines {statistics.mean(s[1] for s in sizes):.0f} bytes",
            flush=True,
        )

        echo_process = await trio.lowlevel.open_process(
            echo.command, cwd=echo.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        referee, floor, bare = Counts(), Counts(), Counts()
        harnesses: list[HandWritten | HandWrittenMsgspec] = [
            HandWritten(bot, args.players),
            HandWrittenMsgspec(bot, args.players),
        ]
        hands = [Counts() for _ in harnesses]
        channels: list[BotChannel] = list(processes)
        with tempfile.TemporaryDirectory(prefix="famiglia-bench-") as tmp:
            replays = Path(tmp) if args.replays else None
            # A short warm-up of each, not counted.
            await referee_slice(channels, settings, Counts(), replays)
            await floor_slice(processes, Counts())
            await ping_pong_slice(echo_process, lines, Counts())
            for harness in harnesses:
                hand_written_slice(harness, Counts())
            while referee.seconds < args.seconds:
                await referee_slice(channels, settings, referee, replays)
                for harness, hand in zip(harnesses, hands, strict=True):
                    hand_written_slice(harness, hand)
                await floor_slice(processes, floor)
                await ping_pong_slice(echo_process, lines, bare)
        for harness in harnesses:
            harness.close()
        assert echo_process.stdin is not None
        await echo_process.stdin.aclose()
        await echo_process.wait()

    decisions_per_s = statistics.median(referee.rates)
    ratio = statistics.median(r / b for r, b in zip(referee.rates, bare.rates, strict=True))
    total_ratio = (referee.count / referee.seconds) / (bare.count / bare.seconds)
    print(
        f"referee: {referee.games} matches, {referee.count} decisions in {referee.seconds:.2f} s: "
        f"{referee.seconds / referee.count * 1e6:.1f} us/decision wall, "
        f"{referee.cpu / referee.count * 1e6:.1f} us/decision of referee CPU"
        + (" (with replay files)" if args.replays else "")
    )
    print(
        f"bare Trio pipe round trips: {bare.count} in {bare.seconds:.2f} s: {bare.count / bare.seconds:.0f}/s, "
        f"{bare.seconds / bare.count * 1e6:.1f} us each, {bare.cpu / bare.count * 1e6:.1f} us of CPU"
    )
    print(
        f"floor (engine, encoding and pipes only): {floor.count} decisions in {floor.seconds:.2f} s: "
        f"{floor.seconds / floor.count * 1e6:.1f} us/decision wall, {floor.cpu / floor.count * 1e6:.1f} us of CPU"
    )
    pairs = " ".join(f"{r / b:.2f}" for r, b in zip(referee.rates, bare.rates, strict=True))
    print(f"ratio per pair of slices: {pairs}; ratio of the totals {total_ratio:.2f}")
    floor_ratio = statistics.median(f / b for f, b in zip(floor.rates, bare.rates, strict=True))
    print(
        f"floor ratio {floor_ratio:.2f} (the most any referee on this engine, protocol and Trio could reach here); "
        f"the referee reaches {ratio / floor_ratio:.2f} of the floor"
    )
    print(f"for reference, a blocking (no event loop) round trip: {blocking_round_trip_us(echo, lines):.1f} us")
    print(f"load average after: {load_average()}")
    cpu_us = referee.cpu / referee.count * 1e6
    cpu_ratio = 0.0
    for harness, hand in zip(harnesses, hands, strict=True):
        print(
            f"hand-written harness ({harness.label}): {hand.games} games, {hand.count} decisions in "
            f"{hand.seconds:.2f} s: {hand.seconds / hand.count * 1e6:.1f} us/decision wall, "
            f"{hand.cpu / hand.count * 1e6:.1f} us of CPU; decisions per game {hand.count / hand.games:.1f} "
            f"(referee {referee.count / referee.games:.1f})"
        )
        cpu_ratio = cpu_ratio_of(referee, hand)  # the last harness, msgspec, is the target's baseline
        floor_vs_hand = cpu_ratio_of(floor, hand)
        print(
            f"  referee CPU / {harness.label} hand-written CPU per pair of slices: "
            + " ".join(f"{r:.2f}" for r in cpu_ratios(referee, hand))
            + f"; median {cpu_ratio:.2f}, ratio of the totals {(referee.cpu / referee.count) / (hand.cpu / hand.count):.2f}"
        )
        print(
            f"  floor CPU / {harness.label} hand-written CPU: {floor_vs_hand:.2f} (the engine, the full view encoded, "
            "one write, the answer polled for, one read per decision, and nothing else: a referee on this engine, "
            "protocol and Trio spends at least this)"
        )
    print(f"bare pipe (informative): the referee reaches {ratio:.2f} of bare Trio pipe round trips")
    print(
        f"referee: {decisions_per_s:.0f} decisions/s {cpu_us:.1f} us CPU/decision {cpu_ratio:.2f}x hand-written "
        "msgspec CPU"
    )


def cpu_ratios(a: Counts, b: Counts) -> list[float]:
    """CPU per decision of ``a`` over ``b``'s, per pair of adjacent slices."""
    return [(ac / an) / (bc / bn) for ac, an, bc, bn in zip(a.cpus, a.counts, b.cpus, b.counts, strict=True)]


def cpu_ratio_of(a: Counts, b: Counts) -> float:
    """The median of ``cpu_ratios``: a change of the machine's speed during the run hits both sides of a pair."""
    return statistics.median(cpu_ratios(a, b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=positive_seconds, default=10.0, help="referee time to measure (default 10)")
    parser.add_argument("--bot", default="bench/bots/instant_c", help="bot folder, from the repository root")
    parser.add_argument("--players", type=int, choices=(3, 4, 5), default=4, help="Vendetta table size")
    parser.add_argument("--replays", action="store_true", help="write a replay file per match")
    parser.add_argument(
        "--trio-wait",
        action="store_true",
        help="the referee waits for every answer through Trio's run loop, never in the kernel (as before "
        "2026-11-26), to compare the two in alternating runs",
    )
    args = parser.parse_args()
    if args.trio_wait:
        referee.match.trio_peek.idle_wait = lambda: None  # never idle as far as the referee can tell
    trio.run(bench, args)


if __name__ == "__main__":
    main()
