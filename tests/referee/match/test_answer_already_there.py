"""An answer already in the pipe when its request has been written is read without a wait.

Every seat here is a PipeBot that writes its answer inside ``send``: the line
is in the pipe before the referee looks, so every decision takes the path that
reads it at once (``_Match.ask``). What that path must keep: the same checks
as a waited-for answer, the clocks, and the other tasks' turns on the Trio
thread (``FAIR_SLICE_S``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import trio

import referee.match.fair_slice
import referee.match.intake
from protocol.messages import TimeControl
from referee.match import MatchRecord, MatchSpec, run_match
from referee.pipe import LineReader
from referee.replay import LogRecord, read_replay, verify_replay
from referee.settings import Clock, RefereeSettings
from tests.referee.fakes import PASS, PipeBot, pipe_passing

SPEC = MatchSpec(game="vendetta", seed=11)


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def answer(request_id: int) -> bytes:
    return line({"type": "action", "id": request_id, "action": PASS})


async def play_pipes(*responders: Any, replay: Path | None = None, max_line: int | None = None) -> MatchRecord:
    async with trio.open_nursery() as nursery:
        bots = [PipeBot(respond, nursery, name=f"pipe{i}") for i, respond in enumerate(responders)]
        if max_line is not None:
            for bot in bots:
                bot.reader.max_line = max_line
        try:
            record = await run_match(SPEC, bots, replay_path=replay)
        finally:
            nursery.cancel_scope.cancel()
            for bot in bots:
                await bot.aclose()
    return record


def at_every_request(items: Any) -> Any:
    """A PipeBot responder: ready at start, ``items(request id)`` at each request."""

    def respond(message: dict[str, Any]) -> list[bytes | float]:
        if message["type"] == "request":
            return list(items(message["id"]))
        return pipe_passing(message)

    return respond


async def test_answers_already_there_are_read_without_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    waits = 0
    real = LineReader.readline

    async def counting(self: LineReader) -> bytes:
        nonlocal waits
        waits += 1
        return await real(self)

    monkeypatch.setattr(LineReader, "readline", counting)
    record = await play_pipes(pipe_passing, pipe_passing, pipe_passing)
    assert record.result.terminations == []
    decisions = sum(t.decisions for t in record.timings)
    assert decisions > 100
    assert waits == 0  # neither the ready lines nor the answers


async def test_a_log_line_before_an_answer_in_the_same_write_is_recorded_and_the_answer_taken(
    tmp_path: Path,
) -> None:
    replay = tmp_path / "r.jsonl"
    chatty = at_every_request(lambda rid: [line({"type": "log", "message": f"thinking {rid}"}) + answer(rid)])
    record = await play_pipes(chatty, pipe_passing, pipe_passing, replay=replay)
    assert record.result.terminations == []
    records = read_replay(replay)
    logs = [r for r in records if isinstance(r, LogRecord)]
    assert len(logs) == record.timings[0].decisions and logs[0].message == "thinking 1"
    assert verify_replay(records) == record.result


def at_start(items: list[bytes | float]) -> Any:
    """A PipeBot responder: ``items`` in answer to start, then the empty placement to every request."""

    def respond(message: dict[str, Any]) -> list[bytes | float]:
        return list(items) if message["type"] == "start" else pipe_passing(message)

    return respond


READY = line({"type": "ready", "name": "pipe"})


@pytest.mark.parametrize(
    ("items", "complaint"),
    [
        # What comes with the ready line in the same write is not part of the greeting.
        ([READY + answer(1)], "unasked output: an action for request 1 arrived after ready"),
        ([READY + READY], "unasked output: a ready line arrived after ready"),
        ([b"x" * 5000], "more than 4096 bytes without a newline"),
        ([READY[:5], 0.002, READY[5:] + answer(1)], "unasked output: an action for request 1 arrived after ready"),
    ],
    ids=["ready-and-an-answer", "two-readies", "endless-first-line", "split-ready-and-an-answer"],
)
async def test_a_greeting_that_brings_more_than_a_ready_line_is_the_seats_protocol_error(
    items: list[bytes | float], complaint: str
) -> None:
    record = await play_pipes(at_start(items), pipe_passing, pipe_passing, max_line=4096)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (0, "protocol")
    assert complaint in termination.reason
    assert all(timing.decisions > 0 for timing in record.timings[1:])


async def test_log_lines_around_a_ready_line_in_one_write_are_recorded_and_the_seat_plays(tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    chatty = at_start([line({"type": "log", "message": "loading"}) + READY + line({"type": "log", "message": "ok"})])
    record = await play_pipes(chatty, pipe_passing, pipe_passing, replay=replay)
    assert record.result.terminations == [] and record.timings[0].decisions > 10
    logs = [(r.seat, r.request, r.message) for r in read_replay(replay) if isinstance(r, LogRecord)]
    assert logs == [(0, 0, "loading"), (0, 0, "ok")]


async def test_half_an_answer_there_at_once_and_the_rest_later_is_an_answer() -> None:
    split = at_every_request(lambda rid: [answer(rid)[:9], 0.001, answer(rid)[9:]])
    record = await play_pipes(split, pipe_passing, pipe_passing)
    assert record.result.terminations == [] and record.timings[0].decisions > 10


@pytest.mark.parametrize(
    ("items", "request_id", "complaint"),
    [
        (lambda rid: [line({"type": "ready"})], 1, "sent a ready line instead of an action for request 1"),
        (lambda rid: [answer(rid + 1)], 1, "answered request 2, the open request is 1"),
        (lambda rid: [answer(rid) + answer(rid)], 1, "a second answer to request 1"),
        # An unfinished line after the answer is read on with the next request,
        # whose answer then continues it: one malformed line.
        (lambda rid: [answer(rid) + b'{"type":"log"'], 4, "not valid JSON"),
        (lambda rid: [b'{"type":"action","id":1,"action":{"type":"place","placements":7}}\n'], 1, "wrong shape"),
        (lambda rid: [b"\xff" * 100 + b"\n"], 1, "not UTF-8"),
        (lambda rid: [b"[" * 100 + b"]" * 100 + b"\n"], 1, "nested 100 levels deep"),
        (lambda rid: [b"x" * 5000 + b"\n"], 1, "more than 4096 bytes without a newline"),
    ],
    ids=["ready", "wrong-id", "second-answer", "partial-line", "wrong-shape", "not-utf8", "deep", "too-long"],
)
async def test_an_answer_already_there_gets_every_check_of_a_waited_for_one(
    items: Any, request_id: int, complaint: str
) -> None:
    record = await play_pipes(at_every_request(items), pipe_passing, pipe_passing, max_line=4096)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind, termination.request) == (0, "protocol", request_id)
    assert complaint in termination.reason


async def test_a_match_whose_answers_are_always_there_still_lets_other_tasks_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With no slice at all the match yields after every decision, as if it had
    # waited for each answer: a task that counts its turns sees one per decision.
    monkeypatch.setattr(referee.match.fair_slice, "FAIR_SLICE_S", 0.0)
    turns = 0

    async def bystander() -> None:
        nonlocal turns
        while True:
            await trio.lowlevel.checkpoint()
            turns += 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(bystander)
        record = await play_pipes(pipe_passing, pipe_passing, pipe_passing)
        nursery.cancel_scope.cancel()
    decisions = sum(t.decisions for t in record.timings)
    assert record.result.terminations == [] and turns >= decisions


async def test_the_clock_of_an_answer_already_there_is_the_time_from_write_to_read() -> None:
    record = await play_pipes(pipe_passing, pipe_passing, pipe_passing)
    for timing in record.timings:
        assert timing.decisions > 0
        assert 0 <= timing.max_ms < 1000 and timing.total_ms <= timing.max_ms * timing.decisions
        assert timing.bank_left_ms == 5000  # nothing over the allowance


async def test_the_slice_counts_the_threads_cpu_time_not_time_it_was_preempted(monkeypatch: pytest.MonkeyPatch) -> None:
    # Wall time passes (a nanosecond's slice is always over) but the thread's CPU
    # clock stands still, as when the process is off the CPU: the match keeps the thread.
    monkeypatch.setattr(referee.match.fair_slice, "FAIR_SLICE_S", 1e-9)
    monkeypatch.setattr(referee.match.fair_slice.time, "thread_time", lambda: 1.0)
    yields = 0
    real = trio.lowlevel.cancel_shielded_checkpoint

    async def counting() -> None:
        nonlocal yields
        yields += 1
        await real()

    monkeypatch.setattr(trio.lowlevel, "cancel_shielded_checkpoint", counting)
    record = await play_pipes(pipe_passing, pipe_passing, pipe_passing)
    assert record.result.terminations == [] and sum(t.decisions for t in record.timings) > 100
    assert yields == 0


async def test_the_cpu_clock_is_read_only_when_the_wall_clock_says_the_slice_may_be_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The thread's CPU clock is a system call. It stands still here, so each read
    # finds nothing spent, and the slice cannot end before another whole slice
    # of wall time has passed: the CPU clock is read about once per slice of the
    # match's wall time (and at its waits), not once per decision.
    slice_s = 0.005
    monkeypatch.setattr(referee.match.fair_slice, "FAIR_SLICE_S", slice_s)
    reads = 0

    def standing_still() -> float:
        nonlocal reads
        reads += 1
        return 1.0

    monkeypatch.setattr(referee.match.fair_slice.time, "thread_time", standing_still)
    record = await play_pipes(pipe_passing, pipe_passing, pipe_passing)
    decisions = sum(t.decisions for t in record.timings)
    assert record.result.terminations == [] and decisions > 100
    assert reads <= record.seconds / slice_s + 2 < decisions / 2


def _count_polls(monkeypatch: pytest.MonkeyPatch) -> dict[LineReader, int]:
    """How many times each reader was polled for a quick answer (line_within with a bound)."""
    polls: dict[LineReader, int] = {}
    real = LineReader.line_within

    def counting(self: LineReader, seconds: float, clock: Any) -> bytes | None:
        if seconds > 0:
            polls[self] = polls.get(self, 0) + 1
        return real(self, seconds, clock)

    monkeypatch.setattr(LineReader, "line_within", counting)
    return polls


async def test_a_seat_that_answers_at_once_is_polled_for_every_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    polls = _count_polls(monkeypatch)
    async with trio.open_nursery() as nursery:
        bots = [PipeBot(pipe_passing, nursery, name=f"pipe{i}") for i in range(3)]
        record = await run_match(SPEC, bots)
        nursery.cancel_scope.cancel()
    assert record.result.terminations == []
    for bot, timing in zip(bots, record.timings, strict=True):
        assert polls[bot.reader] == timing.decisions + 1 > 10  # and the ready line


async def test_a_seat_that_thinks_is_polled_less_and_less_often(monkeypatch: pytest.MonkeyPatch) -> None:
    # Seat 0 answers after a millisecond: past the poll's bound, so after each
    # poll that finds nothing it is waited for as usual for QUICK_RETRY decisions,
    # then twice as many, and so on.
    polls = _count_polls(monkeypatch)
    thinker = at_every_request(lambda rid: [0.001, answer(rid)])
    async with trio.open_nursery() as nursery:
        bots = [PipeBot(respond, nursery, name=f"pipe{i}") for i, respond in enumerate([thinker, pipe_passing])]
        bots.append(PipeBot(pipe_passing, nursery, name="pipe2"))
        record = await run_match(SPEC, bots)
        nursery.cancel_scope.cancel()
    assert record.result.terminations == []
    decisions = record.timings[0].decisions
    assert decisions > 30
    # Polls at decisions 1, 10, 27, 60, 125, ...: the gaps 8, 16, 32, ... skipped.
    expected, at, skip = 0, 1, referee.match.intake.QUICK_RETRY
    while at <= decisions:
        expected, at, skip = expected + 1, at + skip + 1, min(2 * skip, referee.match.intake.QUICK_RETRY_MAX)
    assert polls[bots[0].reader] == expected + 1 >= 4  # and the ready line, which came at once


async def test_a_warm_process_that_thinks_is_not_polled_for_again_at_the_start_of_each_game(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The same process plays two games (a warm bot): the poll schedule its first
    # game built up goes on in the second, as BotProcess.poll_schedule carries it.
    polls = _count_polls(monkeypatch)
    thinker = at_every_request(lambda rid: [0.001, answer(rid)])
    async with trio.open_nursery() as nursery:
        bots = [PipeBot(thinker, nursery, name="thinker")]
        bots += [PipeBot(pipe_passing, nursery, name=f"pipe{i}") for i in (1, 2)]
        bots[0].poll_schedule = None  # type: ignore[attr-defined]  # a process's, as BotProcess has it
        first = await run_match(SPEC, bots)
        polled_in_first = polls[bots[0].reader]
        second = await run_match(MatchSpec(game="vendetta", seed=12), bots)
        nursery.cancel_scope.cancel()
    assert first.result.terminations == [] == second.result.terminations
    decisions = [record.timings[0].decisions for record in (first, second)]
    assert min(decisions) > 30
    # Polled at decisions 1, 10, 27, ... of the first game (and for its ready
    # line); in the second, where the schedule had got to: at most once.
    assert polled_in_first >= 4
    assert polls[bots[0].reader] - polled_in_first <= 1
    poll_in, poll_skip = bots[0].poll_schedule  # type: ignore[attr-defined]
    assert poll_skip >= 8 * referee.match.intake.QUICK_RETRY and poll_in >= 0


async def test_a_seat_whose_answers_alternate_quick_and_slow_costs_one_bounded_poll_in_quick_retry_plus_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A hostile rhythm, to keep the referee busy-waiting: some answers at once,
    # others late. Each poll that finds nothing is held to its bound, and after
    # one the seat is not polled for QUICK_RETRY decisions.
    empty_polls: list[float] = []
    real = LineReader.line_within

    def timed(self: LineReader, seconds: float, clock: Any) -> bytes | None:
        # The thread's CPU time: what the poll costs, and not the time a loaded
        # machine kept the process off the CPU.
        began = time.thread_time()
        line = real(self, seconds, clock)
        if self is bots[0].reader and seconds > 0 and line is None:
            empty_polls.append(time.thread_time() - began)
        return line

    monkeypatch.setattr(LineReader, "line_within", timed)
    late = 0

    def rhythm(rid: int) -> list[bytes | float]:
        nonlocal late
        late += 1
        return [answer(rid)] if late % 2 else [0.001, answer(rid)]

    async with trio.open_nursery() as nursery:
        bots = [PipeBot(at_every_request(rhythm), nursery, name="rhythm")]
        bots += [PipeBot(pipe_passing, nursery, name=f"pipe{i}") for i in (1, 2)]
        record = await run_match(SPEC, bots)
        nursery.cancel_scope.cancel()
    assert record.result.terminations == []
    decisions = record.timings[0].decisions
    assert decisions > 30
    # Polled every time, half of them would find nothing.
    assert 1 <= len(empty_polls) <= decisions // (referee.match.intake.QUICK_RETRY + 1) + 1 < decisions // 2
    assert max(empty_polls) < referee.match.intake.QUICK_ANSWER_S + 0.001


async def test_an_untimed_seat_is_never_polled_for(monkeypatch: pytest.MonkeyPatch) -> None:
    # A person at the terminal: no busy wait while they think, however fast they were.
    polls = _count_polls(monkeypatch)
    async with trio.open_nursery() as nursery:
        bots = [PipeBot(pipe_passing, nursery, name=f"pipe{i}") for i in range(3)]
        bots[1].untimed = True  # type: ignore[attr-defined]
        record = await run_match(SPEC, bots)
        nursery.cancel_scope.cancel()
    assert record.result.terminations == [] and record.timings[1].decisions > 10
    assert bots[1].reader not in polls and polls[bots[0].reader] == record.timings[0].decisions + 1


class _NotScheduledAtFirst(PipeBot):
    """Its first read never ends, as for a referee kept off the CPU past the startup
    limit: the ready line is in the pipe in time, and no wait for it returns."""

    poll_schedule = (5, 8)  # as a warm process that thinks: no quick look at the pipe after start

    async def readline(self) -> bytes:
        if not self.received or len(self.received) > 1:
            return await super().readline()
        await trio.sleep_forever()
        raise AssertionError("unreachable")


async def test_a_ready_line_in_the_pipe_in_time_counts_though_the_referee_read_it_late() -> None:
    # (Real time: the quick-answer poll is a busy wait on the clock, which a virtual clock never moves.)
    # The ready line is in the pipe when start has been written; the read waiting for
    # it does not return (a starved referee), so at the deadline the pipe is looked into.
    async with trio.open_nursery() as nursery:
        late = _NotScheduledAtFirst(at_start([READY]), nursery, name="late")
        bots = [late, PipeBot(pipe_passing, nursery, name="a"), PipeBot(pipe_passing, nursery, name="b")]
        settings = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=500, move_ms=10_000), mode="wall"))
        try:
            record = await run_match(SPEC, bots, settings)
        finally:
            nursery.cancel_scope.cancel()
            for bot in bots:
                await bot.aclose()
    assert record.result.terminations == [] and record.timings[0].decisions > 0


async def test_half_a_ready_line_in_the_pipe_at_the_deadline_is_still_a_timeout() -> None:
    # Only a whole line counts: the rest of it never came.
    async with trio.open_nursery() as nursery:
        half = _NotScheduledAtFirst(at_start([READY[:10]]), nursery, name="half")
        bots = [half, PipeBot(pipe_passing, nursery, name="a"), PipeBot(pipe_passing, nursery, name="b")]
        settings = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=500, move_ms=10_000), mode="wall"))
        try:
            record = await run_match(SPEC, bots, settings)
        finally:
            nursery.cancel_scope.cancel()
            for bot in bots:
                await bot.aclose()
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (0, "timeout")
    assert termination.reason == "no ready line within the startup limit of 500 ms"
