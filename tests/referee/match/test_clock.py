"""The match's clocks: what the cpu clock charges, and the backstop when the referee itself is kept off the CPU.

Trio's mock clock stands in for time. A metered seat's CPU and wait meters
run at set shares of it: a seat that sleeps, one that waits for a core on a
busy host, one whose tasks' waits overlap. Then a referee that wakes late: the
scripted bot jumps the clock past its request's wall-time backstop while the
request goes out, as if the referee had waited that long for a core, and its
answer (or its silence) is there when the referee runs again.
"""

from __future__ import annotations

import itertools
from typing import Any

import trio
import trio.testing

from protocol.messages import TimeControl
from referee.match import MatchSpec, run_match
from referee.settings import Clock, RefereeSettings
from tests.referee.fakes import HANG, PipeBot, Response, ScriptedBot, after, passer, passing, pipe_passing

SPEC = MatchSpec(game="vendetta", seed=11)
# A budget of 100 ms of CPU per request (no bank, no margin); the wall-time backstop at 5 x 100 ms.
CPU_CLOCK = RefereeSettings(
    clock=Clock(time=TimeControl(startup_ms=1000, move_ms=100, bank_ms=0), margin_ms=0, mode="cpu")
)
BACKSTOP_S = 0.5
# For tests on real time: the backstop at 1.5 s, which a stall of a loaded host's event loop
# (CI's, at a load of 10 and more) does not reach, where 0.5 s was once reached.
LOADED_HOST_CPU_CLOCK = RefereeSettings(
    clock=Clock(time=TimeControl(startup_ms=1000, move_ms=300, bank_ms=0), margin_ms=0, mode="cpu")
)


class MeteredSeat(ScriptedBot):
    """A seat whose tree's CPU time and wait for a CPU run at ``cpu_share`` and ``wait_share`` of the
    (mock) wall time; it answers each request ``answer_s`` seconds after it was sent."""

    def __init__(self, answer_s: float, cpu_share: float, wait_share: float) -> None:
        super().__init__(lambda message: self.script(message), name="metered")
        self.answer_s = answer_s
        self.began = trio.current_time()
        self.meter = lambda: round(cpu_share * (trio.current_time() - self.began) * 1e9)
        self.waited = lambda going_on=False: round(wait_share * (trio.current_time() - self.began) * 1e9)

    def script(self, message: dict[str, Any]) -> list[Response]:
        if message["type"] == "request":
            return [self.answer_s, *passing(message)]
        return passing(message)


async def test_a_seat_that_sleeps_times_out_at_its_budget_not_the_backstop(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # 2 s to each answer, 1% of it on a CPU and none waiting for one: it chose to wait.
    sleeper = MeteredSeat(answer_s=2.0, cpu_share=0.01, wait_share=0.0)
    record = await run_match(SPEC, [passer(), sleeper, passer()], CPU_CLOCK)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (1, "timeout")
    assert termination.reason.startswith(f"no answer to request {termination.request} within 100 ms, not counting the ")
    assert record.seconds < BACKSTOP_S * 2  # ended at its budget, long before the backstop


async def test_a_seat_that_waits_for_a_core_is_charged_what_it_used_not_the_wait(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # A busy host: 1 s to each answer, 94% of it waiting for a core, 5% computing. Charged the
    # 6% it was not kept waiting (60 ms, within its 100 ms), not the second; the backstop is far.
    waiter = MeteredSeat(answer_s=1.0, cpu_share=0.05, wait_share=0.94)
    clock = Clock(time=TimeControl(startup_ms=1000, move_ms=100, bank_ms=0), margin_ms=0, backstop=50.0)
    record = await run_match(SPEC, [passer(), waiter, passer()], RefereeSettings(clock=clock))
    assert record.result.terminations == []
    assert 55 < record.timings[1].max_ms < 65


async def test_a_seat_whose_waits_overlap_is_charged_no_less_than_its_cpu(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Tasks waiting at once count once each: the sum of waits (90%) and of CPU (90%, two threads)
    # is more than the wall time. The charge is then its CPU, never less.
    threads = MeteredSeat(answer_s=0.05, cpu_share=0.9, wait_share=0.9)
    record = await run_match(SPEC, [passer(), threads, passer()], CPU_CLOCK)
    assert record.result.terminations == []
    assert 44 < record.timings[1].max_ms < 46


async def test_an_answer_as_quick_as_its_cpu_is_charged_its_wall_time_and_its_waits_are_not_read(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # 50 ms to each answer, 49.5 of them on a CPU: within CLOSE_ENOUGH_S of each other. The wall
    # time is charged (at most that much over what it used), and the wait meter is read once per
    # request, at its start, not again at its end.
    quick = MeteredSeat(answer_s=0.05, cpu_share=0.99, wait_share=0.5)
    reads = 0
    waited = quick.waited

    def counted(going_on: bool = False) -> int:
        nonlocal reads
        reads += 1
        return waited(going_on)

    quick.waited = counted
    record = await run_match(SPEC, [passer(), quick, passer()], CPU_CLOCK)
    assert record.result.terminations == []
    assert 49.9 < record.timings[1].max_ms < 50.1
    assert reads == record.timings[1].decisions + 1  # one per request, and one at the greeting


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
        "the cpu clock's backstop for what its meters cannot see (5 x its 100 ms)"
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
        bots = [PipeBot(trickle, nursery, name="trickler")]
        bots += [PipeBot(pipe_passing, nursery, name=name) for name in "ab"]
        for bot in bots:
            # Each seat's meter moves 10 us a reading: the honest two are charged that CPU, not
            # the wall time a loaded host keeps the test's own process off a core.
            bot.meter = itertools.count(0, 10_000).__next__
        began = trio.current_time()
        try:
            record = await run_match(SPEC, bots, LOADED_HOST_CPU_CLOCK)
        finally:
            nursery.cancel_scope.cancel()
            for bot in bots:
                await bot.aclose()
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (0, "timeout")
    assert "within 1500 ms of wall time" in termination.reason
    assert trio.current_time() - began < 15  # the backstop's 1.5 s, not the trickle's 20 s
