"""What a seat's output costs the referee: its CPU for one game against a bot that floods log lines.

Usage: python bench/output_cost.py [--when before|after] [--shape plain|brackets] [--level standard|none]

One 3-player Vendetta game, ``tests/bots/hostile/log_flood`` in seat 1 between
two ``tests/bots/passer``: at each of its requests it writes 100 log lines of
almost 1 MiB (under the line limit), ``--when`` before or after its answer, in
the usual shape (``plain``) or as the dearest line to decode in full
(``brackets``: the keys the other way round, the message all brackets).
Clocks ``move_ms`` 200, ``bank_ms`` 600 (issue 42, item 3). Printed: the
referee process's own CPU for the game (not its bots'), the game's wall time,
the flooding seat's decisions and termination, and the same game with a
passer in seat 1 for comparison. The last line is always
``output cost: <flood> s referee CPU with the flood, <quiet> s without``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio

from protocol.messages import TimeControl
from referee.bots import BotSpec, load_bot
from referee.match import MatchRecord, MatchSpec
from referee.play import play_match
from referee.settings import Clock, RefereeSettings


def own_cpu() -> float:
    """This process's CPU time in seconds (its threads, not its children)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def game(seat: BotSpec, settings: RefereeSettings) -> tuple[MatchRecord, float, float]:
    passer = load_bot(str(ROOT / "tests/bots/passer"))
    began, wall = own_cpu(), time.monotonic()
    record = await play_match(MatchSpec(game="vendetta", seed=42), [passer, seat, passer], settings)
    return record, own_cpu() - began, time.monotonic() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--when", choices=("before", "after"), default="before")
    parser.add_argument("--shape", choices=("plain", "brackets"), default="brackets")
    parser.add_argument("--level", choices=("standard", "none"), default="standard")
    args = parser.parse_args()
    time_control = TimeControl(startup_ms=10_000, move_ms=200, bank_ms=600)
    settings = RefereeSettings(clock=Clock(time=time_control), sandbox=args.level)
    flood = load_bot(str(ROOT / "tests/bots/hostile/log_flood"))
    flood = BotSpec(name=flood.name, command=[*flood.command, args.when, args.shape], cwd=flood.cwd)
    record, flood_cpu, flood_wall = trio.run(game, flood, settings)
    _, quiet_cpu, quiet_wall = trio.run(game, load_bot(str(ROOT / "tests/bots/passer")), settings)
    print(f"flood ({args.when}, {args.shape}): referee CPU {flood_cpu:.2f} s, game {flood_wall:.2f} s wall")
    print(f"  seat 1: {record.timings[1].decisions} decisions, terminations {record.result.terminations}")
    print(f"quiet: referee CPU {quiet_cpu:.2f} s, game {quiet_wall:.2f} s wall")
    print(f"output cost: {flood_cpu:.2f} s referee CPU with the flood, {quiet_cpu:.2f} s without")


if __name__ == "__main__":
    main()
