"""Where the referee's CPU goes per decision: thread CPU time around each step of run_match.

Usage: python bench/referee_profile.py [--seconds N]

Four warm ``bench/bots/instant_c`` bots play Vendetta matches through
``referee.match.run_match`` for ``--seconds`` (default 10). The steps of a decision
that are separate calls are wrapped with ``time.thread_time_ns`` (CPU time of the
referee's thread, not wall time): the engine's calls, the encoding of the request,
the write (``BotProcess.send``), the look for unasked output before it
(``SeatIntake.check_unasked``), the read of an answer already there
(``SeatIntake.line_now``), the wait in the kernel when no other task is runnable
(``SeatIntake.line_blocking``), the wait and read of the answer otherwise
(``BotProcess.readline``, through Trio's run loop), the decoding, and the
bot's control group: its CPU meter read before each request and after each
answer, and the freezer. What the
wrappers themselves cost is measured first and taken off. "The rest" is the
thread's CPU outside those calls: the match loop, clocks, records, events and
Trio's scheduling outside the wait. Prints a Markdown table, us per decision.
Not a benchmark with a target; bench/README.md quotes its output.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio

from referee.bots import load_bot
from referee.games.vendetta import VendettaState
from referee.match import conversation as match
from referee.match import intake as match_intake
from referee.match.intake import SeatIntake
from referee.play import prepare_bots
from referee.process import BotProcess, open_bot
from referee.sandbox.cgroup import BotCgroup
from referee.settings import RefereeSettings

spent: collections.Counter[str] = collections.Counter()
calls: collections.Counter[str] = collections.Counter()


def timed(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.thread_time_ns()
        result = function(*args, **kwargs)
        spent[label] += time.thread_time_ns() - began
        calls[label] += 1
        return result

    return wrapper


def timed_async(label: str, function: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.thread_time_ns()
        result = await function(*args, **kwargs)
        spent[label] += time.thread_time_ns() - began
        calls[label] += 1
        return result

    return wrapper


def wrapper_cost_ns() -> float:
    nothing = timed("wrapper", lambda: None)
    began = time.thread_time_ns()
    for _ in range(200_000):
        nothing()
    cost = (time.thread_time_ns() - began) / 200_000
    del spent["wrapper"], calls["wrapper"]
    return cost


async def play(seconds: float) -> tuple[int, int]:
    [bot] = prepare_bots([load_bot("bench/bots/instant_c", base=ROOT)])
    settings = RefereeSettings()
    async with AsyncExitStack() as stack:
        bots = [await stack.enter_async_context(open_bot(bot, settings)) for _ in range(4)]
        await match.run_match(match.MatchSpec(game="vendetta", seed=999), bots, settings)  # warm-up
        spent.clear()
        calls.clear()
        began, cpu = time.perf_counter(), time.thread_time_ns()
        decisions = games = 0
        while time.perf_counter() - began < seconds:
            record = await match.run_match(match.MatchSpec(game="vendetta", seed=games), bots, settings)
            decisions += sum(timing.decisions for timing in record.timings)
            games += 1
        return decisions, time.thread_time_ns() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    match.encode_message = timed("encode the request (msgspec)", match.encode_message)  # type: ignore[attr-defined]
    match_intake.decode_bot_message = timed("decode the answer (msgspec)", match_intake.decode_bot_message)  # type: ignore[attr-defined]
    for name, label in [
        ("decision", "engine: decision"),
        ("transient_view", "engine: the seat's view"),
        ("events_for", "engine: events for the seat"),
        ("apply", "engine: apply the action"),
    ]:
        setattr(VendettaState, name, timed(label, getattr(VendettaState, name)))
    BotProcess.send = timed_async("write (BotProcess.send: os.write, wakes the bot)", BotProcess.send)  # type: ignore[method-assign,assignment]
    BotProcess.readline = timed_async("wait and read (BotProcess.readline through Trio)", BotProcess.readline)  # type: ignore[method-assign,assignment]
    SeatIntake.line_now = timed(  # type: ignore[method-assign]
        "read an answer there or polled for (LineReader.line_within: poll, read)", SeatIntake.line_now
    )
    SeatIntake.line_blocking = timed(  # type: ignore[method-assign]
        "wait for the answer in the kernel (LineReader.line_blocking: poll, read)", SeatIntake.line_blocking
    )
    SeatIntake.check_unasked = timed(  # type: ignore[method-assign]
        "look for unasked output before the request (poll)", SeatIntake.check_unasked
    )
    # The control group's CPU meter (read before each request and after each answer)
    # and its freezer: patched on the class, before the bots bind them.
    BotCgroup.cpu_usage_ns = timed("read the bot's CPU meter (its cgroup's usage file)", BotCgroup.cpu_usage_ns)  # type: ignore[method-assign]
    BotCgroup.freeze = timed("freeze the bot's tree", BotCgroup.freeze)  # type: ignore[method-assign]
    BotCgroup.thaw = timed("thaw the bot's tree", BotCgroup.thaw)  # type: ignore[method-assign]
    cost = wrapper_cost_ns()
    decisions, total = trio.run(play, args.seconds)
    wrappers = sum(calls.values()) * cost
    print(
        f"{decisions} decisions; referee thread {total / decisions / 1000:.1f} us CPU/decision with the wrappers, "
        f"{(total - wrappers) / decisions / 1000:.1f} without ({cost / 1000:.2f} us per wrapped call)"
    )
    print("| step | us CPU per decision | calls per decision |\n| --- | --- | --- |")
    rest = total - wrappers
    for label, ns in sorted(spent.items(), key=lambda item: -item[1]):
        net = ns - calls[label] * cost
        rest -= net
        print(f"| {label} | {net / decisions / 1000:.1f} | {calls[label] / decisions:.2f} |")
    print(f"| the rest: match loop, clocks, records, Trio outside the wait | {rest / decisions / 1000:.1f} | |")


if __name__ == "__main__":
    main()
