"""The referee's own CPU per decision, without bot processes: answers are in the pipe at once.

Usage: python bench/referee_loopback.py [--seconds N] [--players N]

Each seat is an in-process channel with a real pipe, read by the referee's own
``LineReader``: its ``send`` writes the request to ``/dev/null`` (a write of the
same size as to a bot's pipe, without waking anyone) and the answer (the empty
placement, with the request's id) into the pipe the referee reads. So every
decision takes the referee's whole path (checks for unasked output, the clock,
the deadline, the quick read, decoding, the engine, the events, the fair
slice), and nothing waits for a process to be scheduled: the figures move by
a few tenths of a microsecond between runs on this machine, where
``bench/referee.py`` moves by one or two. It is the measure for comparing two
versions of the referee, one after the other.

Interleaved with it in one-second slices, the same channels and deals with only
what every decision needs (the floor of ``bench/referee.py``: the engine's
decision, the transient view and events encoded, one write, one read, the
action decoded and applied). Not a benchmark with a target; bench/README.md
quotes its output. The last line is always
``loopback: <referee_us> us referee <floor_us> us floor CPU/decision``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

# Run from a checkout without installing: the repository root holds the packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec
import trio
from floor import floor_request
from machine import positive_seconds

from protocol.codec import decode_bot_message
from referee.channel import ChannelBase
from referee.games import get_rules
from referee.games.base import SeededChance
from referee.match import MatchSpec, run_match
from referee.pipe import LineReader

SLICE_S = 1.0


class Loopback(ChannelBase):
    """A seat whose answer is in the referee's pipe before ``send`` returns."""

    def __init__(self, index: int) -> None:
        self._name = f"loopback{index}"
        read_fd, self._write_fd = os.pipe()
        self.stream = trio.lowlevel.FdStream(read_fd)  # non-blocking, as a bot's stdout
        self.reader = LineReader(self.stream)
        self._sink = os.open(os.devnull, os.O_WRONLY)

    @property
    def name(self) -> str:
        return self._name

    async def send(self, data: bytes) -> None:
        os.write(self._sink, data)
        if data.startswith(b'{"type":"request"'):
            start = data.index(b'"id":') + 5
            request_id = data[start : data.index(b",", start)]
            os.write(
                self._write_fd,
                b'{"type":"action","id":' + request_id + b',"action":{"type":"place","placements":[]}}\n',
            )
        elif data.startswith(b'{"type":"start"'):
            os.write(self._write_fd, b'{"type":"ready","name":"loopback"}\n')

    async def readline(self) -> bytes:
        return await self.reader.readline()

    async def kill(self) -> None:
        pass

    def stderr_text(self) -> str:
        return ""

    async def aclose(self) -> None:
        await self.stream.aclose()
        os.close(self._write_fd)
        os.close(self._sink)


async def referee_slice(seats: list[Loopback], seed: int) -> tuple[int, int, float]:
    """Whole matches for a slice: (decisions, matches, CPU seconds)."""
    began, cpu = time.perf_counter(), time.process_time()
    decisions = matches = 0
    while time.perf_counter() - began < SLICE_S:
        record = await run_match(MatchSpec(game="vendetta", seed=seed + matches), seats)
        if record.result.terminations:
            raise SystemExit(f"a loopback seat failed: {record.result.terminations}")
        decisions += sum(timing.decisions for timing in record.timings)
        matches += 1
    return decisions, matches, time.process_time() - cpu


async def floor_slice(seats: list[Loopback], seed: int) -> tuple[int, int, float]:
    """The same deals with only what every decision needs: (decisions, games, CPU seconds)."""
    rules = get_rules("vendetta")
    config = rules.config({})
    action_decoder = msgspec.json.Decoder(rules.action_type)
    reads = [seat.stream.fileno() for seat in seats]
    n = len(seats)
    began, cpu = time.perf_counter(), time.process_time()
    decisions = games = 0
    while time.perf_counter() - began < SLICE_S:
        state = rules.new_game(n, config, SeededChance(seed + games))
        request_id = 0
        events: list[msgspec.Struct] = []
        seen = [0] * n
        while (decision := state.decision()) is not None:
            seat = decision.seat
            request_id += 1
            await seats[seat].send(floor_request(state, decision, request_id, events, seen))
            message = decode_bot_message(os.read(reads[seat], 65536)[:-1])
            events += state.apply(seat, action_decoder.decode(message.action))  # type: ignore[union-attr]
            decisions += 1
        games += 1
    return decisions, games, time.process_time() - cpu


async def bench(args: argparse.Namespace) -> None:
    seats = [Loopback(i) for i in range(args.players)]
    referee_us: list[float] = []
    floor_us: list[float] = []
    seed = 0
    await referee_slice(seats, seed)  # warm-up, not counted
    spent = 0.0
    while spent < args.seconds:
        decisions, matches, cpu = await referee_slice(seats, seed)
        referee_us.append(cpu / decisions * 1e6)
        floor_decisions, _, floor_cpu = await floor_slice(seats, seed)
        floor_us.append(floor_cpu / floor_decisions * 1e6)
        seed += matches
        spent += SLICE_S
    for seat in seats:
        await seat.aclose()
    print(f"referee per slice: {' '.join(f'{us:.2f}' for us in referee_us)} us CPU/decision")
    print(f"floor per slice:   {' '.join(f'{us:.2f}' for us in floor_us)} us CPU/decision")
    referee, floor = statistics.median(referee_us), statistics.median(floor_us)
    print(f"the referee's own work over the floor: {referee - floor:.2f} us per decision (medians)")
    print(f"loopback: {referee:.2f} us referee {floor:.2f} us floor CPU/decision")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=positive_seconds, default=5.0, help="referee time to measure (default 5)")
    parser.add_argument("--players", type=int, choices=(3, 4, 5), default=4, help="Vendetta table size")
    trio.run(bench, parser.parse_args())


if __name__ == "__main__":
    main()
