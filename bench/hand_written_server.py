"""The msgspec hand-written harness in a process of its own, driven over its stdin and stdout (bench/busy.py).

bench/busy.py starts it before its referee does anything, so that the harness and
its bots run where the host put the bench, in the bench's session, as a host's
own program would. In the bench's own process they would run in the control group
the referee makes for itself and its bots on cgroup v1 (referee.sandbox.cgroup).

One JSON line in, one line out:

- ``{"bot": <a BotSpec>, "players": N}`` starts the harness and its bots:
  ``{"bots": [<their pids>]}``;
- ``{"seconds": S, "seed": K}`` plays whole games from deal K until S seconds
  have passed (a game started is finished): ``{"decisions": D, "seed": <the next deal>}``.

The end of its input closes the bots and ends the process.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

# Run as a script: the repository root first, so that the packages win over bench/referee.py.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec
from hand_written import HandWrittenMsgspec

from referee.bots import BotSpec


class Setup(msgspec.Struct, frozen=True):
    bot: BotSpec
    players: int


class Slice(msgspec.Struct, frozen=True):
    seconds: float
    seed: int


def serve() -> None:
    out = sys.stdout.buffer
    setup = msgspec.json.decode(sys.stdin.buffer.readline(), type=Setup)
    harness = HandWrittenMsgspec(setup.bot, setup.players)
    out.write(msgspec.json.encode({"bots": [p.pid for p in harness.processes]}) + b"\n")
    out.flush()
    try:
        for line in sys.stdin.buffer:
            asked = msgspec.json.decode(line, type=Slice)
            seed, decisions = asked.seed, 0
            began = time.perf_counter()
            while time.perf_counter() - began < asked.seconds:
                decisions += harness.play(seed)
                seed += 1
            out.write(msgspec.json.encode({"decisions": decisions, "seed": seed}) + b"\n")
            out.flush()
    finally:
        harness.close()


if __name__ == "__main__":
    serve()
