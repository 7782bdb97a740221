"""The match's clocks when the referee itself is kept off the CPU (a host busier than its share).

Trio's mock clock stands in for a referee that wakes late: the scripted bot
jumps the clock past its request's wall-time backstop while the request goes
out, as if the referee had waited that long for a core, and its answer (or its
silence) is there when the referee runs again.
"""

from __future__ import annotations

import itertools
from typing import Any

import trio
import trio.testing

from protocol.messages import TimeControl
from referee.match import MatchSpec, run_match
from referee.settings import Clock, RefereeSettings
from tests.referee.fakes import HANG, PipeBot, ScriptedBot, after, passer, passing, pipe_passing

SPEC = MatchSpec(game="vendetta", seed=11)
# A budget of 100 ms of CPU per request (no bank, no margin); the wall-time backstop at 5 x 100 ms.
CPU_CLOCK = RefereeSettings(
    clock=Clock(time=TimeControl(startup_ms=1000, move_ms=100, bank_ms=0), margin_ms=0, mode="cpu")
)
BACKSTOP_S = 0.5


class StarvedReferee(ScriptedBot):
    """A seat with a CPU meter that hardly moves (a bot that answers at once), whose every request
    is followed by the referee losing the CPU for ``late_s`` of wall time."""

    def __init__(self, respond: Any, clock: trio.testing.MockClock, late_s: float) -> None:
        super().__init__(respond, name="starved")
        self.clock = clock
        self.late_s = late_s
        used = itertools.count(0, 50_000)  # 50 us of CPU more at each look
        self.meter = used.__next__

    async def send(self, data: bytes) -> None:
        await super().send(data)
        if b'"type":"request"' in data:
            self.clock.jump(self.late_s)  # the answer is queued; the referee runs again only now


async def test_an_answer_there_when_a_late_referee_passes_the_backstop_counts_on_the_cpu_clock(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Every request of this seat: the referee wakes 0.6 s later, past the 0.5 s backstop, and
    # finds the deadline and the answer in the same pass of its run loop. The bot used 0.1 ms
    # of CPU: it answered, within its budget, whichever the run loop handed over first.
    starved = StarvedReferee(passing, autojump_clock, late_s=BACKSTOP_S + 0.1)
    record = await run_match(SPEC, [passer(), starved, passer()], CPU_CLOCK)
    assert record.result.terminations == []
    assert record.timings[1].decisions == len(starved.requests()) > 20
    assert record.timings[1].max_ms < 1  # charged the CPU it used, not the referee's lateness


async def test_a_seat_silent_past_the_backstop_times_out_on_wall_time_though_the_referee_woke_late(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # No answer at all to its third request: the backstop ends it, and the reason names the
    # wall-time bound, not CPU the bot never used (0.15 ms of it).
    starved = StarvedReferee(after(2, lambda _: [HANG]), autojump_clock, late_s=BACKSTOP_S + 0.1)
    record = await run_match(SPEC, [passer(), starved, passer()], CPU_CLOCK)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (1, "timeout")
    assert termination.reason == (
        f"no answer to request {termination.request} within 500 ms of wall time, "
        "the cpu clock's bound for a bot that sleeps or blocks (5 x its 100 ms)"
    )


async def test_a_seat_trickling_half_a_line_past_the_backstop_times_out_there() -> None:
    # (Real time: the referee's quick-answer poll busy-waits on the clock, which a mock clock never moves.)
    # A hostile seat that uses no CPU and sends a byte of its answer every 10 ms, never the newline:
    # each byte makes the decision loop runnable, and the watchdog lets it go first at the backstop.
    # It must still time out there, not be waited for as long as the bytes come.
    def trickle(message: dict[str, Any]) -> list[bytes | float]:
        if message["type"] == "request":
            return [item for _ in range(2000) for item in (0.01, b" ")]
        return pipe_passing(message)

    async with trio.open_nursery() as nursery:
        trickler = PipeBot(trickle, nursery, name="trickler")
        used = itertools.count(0, 10_000)
        trickler.meter = used.__next__
        bots = [trickler, PipeBot(pipe_passing, nursery, name="a"), PipeBot(pipe_passing, nursery, name="b")]
        began = trio.current_time()
        try:
            record = await run_match(SPEC, bots, CPU_CLOCK)
        finally:
            nursery.cancel_scope.cancel()
            for bot in bots:
                await bot.aclose()
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (0, "timeout")
    assert "within 500 ms of wall time" in termination.reason
    assert trio.current_time() - began < 15  # the backstop's 0.5 s, not the trickle's 20 s
