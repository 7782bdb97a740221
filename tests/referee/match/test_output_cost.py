"""What a seat's output may cost the referee (issue 42, item 3): its decoding on the seat's clock, its bytes bounded.

Scripted seats: one whose long lines take the referee longer to decode than
the seat has left (Trio's mock clock, so only the referee's CPU clock can run
out), and one behind a real pipe that sends more bytes than its budget allows.
The hostile bot that does both as a real process is in tests/referee/test_hostile.py.
"""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from protocol.messages import TimeControl
from referee.match import MatchSpec, run_match
from referee.match.intake import LONG_LINE_BYTES, OUTPUT_BYTES_PER_S
from referee.settings import Clock, RefereeSettings
from tests.referee.fakes import PipeBot, Response, ScriptedBot, action, line, passer, passing, pipe_passing

SPEC = MatchSpec(game="vendetta", seed=11)
PASS = {"type": "place", "placements": []}
# The dearest shape to decode in full: the keys the other way round, 256 KiB of brackets.
DEAR_LOG = b'{"message":"' + b"[" * (256 << 10) + b'","type":"log"}'


def clock(move_ms: int) -> RefereeSettings:
    return RefereeSettings(clock=Clock(time=TimeControl(startup_ms=1000, move_ms=move_ms, bank_ms=0), margin_ms=0))


async def test_a_seat_whose_lines_take_longer_to_decode_than_it_has_left_times_out(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # 100 lines of 256 KiB of brackets (~4 ms each to decode in full) before its first answer,
    # on a 20 ms clock: the referee stops decoding once it has spent the seat's 20 ms.
    def flood(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "request":
            return [*[DEAR_LOG] * 100, action(message["id"], PASS)]
        return passing(message)

    flooder = ScriptedBot(flood, name="flooder")
    record = await run_match(SPEC, [passer(), flooder, passer()], clock(move_ms=20))
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (1, "timeout")
    assert termination.reason.startswith("the referee spent ")
    assert termination.reason.endswith(
        f"of its CPU decoding this seat's output (lines of up to {len(DEAR_LOG)} bytes), more than the 20 ms it had left"
    )


async def test_a_seat_is_charged_what_its_lines_cost_the_referee_to_decode(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # On a mock clock its answers take no time at all: all it is charged is the decoding of its
    # five long log lines per request, a few milliseconds, where a seat without them costs nothing.
    def chatty(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "request":
            return [*[DEAR_LOG] * 5, action(message["id"], PASS)]
        return passing(message)

    record = await run_match(SPEC, [passer(), ScriptedBot(chatty, name="chatty"), passer()], clock(move_ms=1000))
    assert record.result.terminations == []
    assert record.timings[1].total_ms > record.timings[1].decisions * 1.0  # over 1 ms of decoding a request
    assert record.timings[0].total_ms == 0.0


async def test_a_seat_that_sends_more_bytes_than_its_budget_allows_floods() -> None:
    # Plain log lines, cheap to read, 1 MiB each: on a 100 ms clock a seat may send one line of the
    # longest and 1.6 MiB more from one answer to the next. Its fourth line is a flood.
    big = line({"type": "log", "message": "x" * ((1 << 20) - 40)}) + b"\n"
    assert len(big) > LONG_LINE_BYTES

    def flood(message: dict[str, Any]) -> list[bytes | float]:
        if message["type"] == "request":
            return [big] * 10 + [action(message["id"], PASS) + b"\n"]
        return pipe_passing(message)

    async with trio.open_nursery() as nursery:
        flooder = PipeBot(flood, nursery, name="flooder")
        bots = [PipeBot(pipe_passing, nursery, name="a"), flooder, PipeBot(pipe_passing, nursery, name="b")]
        try:
            record = await run_match(SPEC, bots, clock(move_ms=100))
        finally:
            nursery.cancel_scope.cancel()
            for bot in bots:
                await bot.aclose()
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (1, "protocol")
    limit = (1 << 20) + OUTPUT_BYTES_PER_S // 10
    assert termination.reason.startswith(f"flood: more than {limit} bytes of output since its last answer")
