"""The referee's read path against a bot's bytes: unasked output, second answers, bounded reasons.

Seat 1 is a PipeBot (a real pipe read by the referee's LineReader); seats 0 and
2 are scripted passers. Request ids count across seats: seat 1's are 2, 5, 8...
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

import referee.match.intake
from referee.match import MatchRecord, MatchSpec, run_match
from referee.replay import LogRecord, read_replay, verify_replay
from tests.referee.fakes import PASS, PipeBot, Response, ScriptedBot, action, passer, passing, pipe_passing, ready

SPEC = MatchSpec(game="vendetta", seed=3)


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def answer(request_id: int) -> bytes:
    return line({"type": "action", "id": request_id, "action": PASS})


def log(text: str) -> bytes:
    return line({"type": "log", "message": text})


SLOW_UNTIL = 30
"""The request id after which a slow passer answers at once: every case here happens
in the first few requests, and the rest of the game need not take 30 ms a decision."""


def slow_passer(delay: float) -> ScriptedBot:
    """Answers the first requests after ``delay`` seconds, so seat 1 waits between its requests."""

    def respond(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "request":
            if message["id"] > SLOW_UNTIL:
                return [action(message["id"], PASS)]
            return [delay, action(message["id"], PASS)]
        return passing(message)

    return ScriptedBot(respond, name="slow")


def on_request(
    number: int, misbehave: Callable[[int], list[bytes | float]]
) -> Callable[[dict[str, Any]], list[bytes | float]]:
    """Pass, except at this bot's ``number``-th request (from 1): ``misbehave(request id)``."""
    seen = 0

    def respond(message: dict[str, Any]) -> list[bytes | float]:
        nonlocal seen
        if message["type"] == "request":
            seen += 1
            if seen == number:
                return misbehave(message["id"])
        return pipe_passing(message)

    return respond


async def play(
    respond: Callable[[dict[str, Any]], list[bytes | float]], *, delay: float = 0.0, replay: Path | None = None
) -> MatchRecord:
    async with trio.open_nursery() as nursery:
        bot = PipeBot(respond, nursery)
        others = [slow_passer(delay), slow_passer(delay)] if delay else [passer(), passer()]
        try:
            record = await run_match(SPEC, [others[0], bot, others[1]], replay_path=replay)
        finally:
            nursery.cancel_scope.cancel()
            await bot.aclose()
    return record


def termination(record: MatchRecord) -> tuple[int, str, str, int]:
    assert len(record.result.terminations) == 1, record.result.terminations
    t = record.result.terminations[0]
    return t.seat, t.kind, t.reason, t.request


async def test_a_well_behaved_pipe_bot_plays_to_the_end() -> None:
    record = await play(pipe_passing)
    assert record.result.terminations == [] and record.timings[1].decisions > 10


async def test_an_answer_sent_ahead_for_a_request_not_yet_sent_is_a_protocol_error_before_that_request() -> None:
    # Seat 1 answers request 2, then 10 ms later (no request open: the others take
    # 30 ms each) sends an answer for its next request, 5.
    record = await play(on_request(1, lambda rid: [answer(rid), 0.01, answer(rid + 3)]), delay=0.03)
    seat, kind, reason, request = termination(record)
    assert (seat, kind, request) == (1, "protocol", 5)
    assert reason.startswith("unasked output: an action for request 5 arrived after its answer to request 2")
    assert record.timings[1].decisions == 1  # request 5 was never answered by that early line


async def test_two_answers_in_one_write_are_a_protocol_error_at_the_request_they_answer() -> None:
    record = await play(on_request(1, lambda rid: [answer(rid) + answer(rid)]))
    assert termination(record)[1:] == ("protocol", "a second answer to request 2", 2)


async def test_a_second_answer_arriving_later_is_caught_before_the_next_request() -> None:
    record = await play(on_request(1, lambda rid: [answer(rid), 0.01, answer(rid)]), delay=0.03)
    _seat, kind, reason, request = termination(record)
    assert (kind, request) == ("protocol", 5) and reason.startswith("a second answer to request 2")


async def test_a_line_begun_before_the_request_cannot_answer_it() -> None:
    # Half of an answer for request 5 arrives while no request is open; the rest
    # after request 5 is sent (and the bot sends nothing else for it).
    def respond(message: dict[str, Any]) -> list[bytes | float]:
        if message["type"] == "request" and message["id"] == 2:
            early = answer(5)
            return [answer(2), 0.01, early[:10], 0.1, early[10:]]
        if message["type"] == "request" and message["id"] == 5:
            return []
        return pipe_passing(message)

    record = await play(respond, delay=0.03)
    _seat, kind, reason, request = termination(record)
    # The second half comes 0.1 s after the first; on a loaded machine request 5 may go out after both
    # (the whole line early, then): refused either way, never taken as the answer.
    assert (kind, request) == ("protocol", 5)
    assert reason in (
        "unasked output: an action for request 5 began to arrive before request 5 was sent",
        (
            "unasked output: an action for request 5 arrived after its answer to request 2, while no request was "
            "open, before request 5 was sent"
        ),
    ), reason


async def test_log_lines_between_requests_stay_allowed_and_are_recorded(tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    record = await play(
        on_request(1, lambda rid: [answer(rid) + log("same write"), 0.01, log("later")]), delay=0.01, replay=replay
    )
    assert record.result.terminations == []
    records = read_replay(replay)
    assert [r.message for r in records if isinstance(r, LogRecord)] == ["same write", "later"]
    assert verify_replay(records) == record.result


async def test_a_400_digit_request_id_is_quoted_bounded() -> None:
    huge = int("9" * 400)
    record = await play(on_request(1, lambda rid: [line({"type": "action", "id": huge, "action": PASS})]))
    _seat, kind, reason, _ = termination(record)
    assert kind == "protocol" and reason.startswith("answered request 99999")
    assert "(400 digits)" in reason and len(reason) < 200


@pytest.mark.parametrize(
    ("bad", "complaint"),
    [
        (b'{"type":"action","id":2,"action":%s}' % (b"[" * 1000 + b"]" * 1000), "nested 1001 levels deep"),
        (
            b'{"type":"action","id":2,"action":{"type":"place","placements":%s}}' % (b"[{}" * 64 + b"]" * 64),
            "nested 67",
        ),
        (b'{"type":"log","message":"x","extra":%s}' % (b'{"a":' * 999 + b"1" + b"}" * 999), "nested 1000 levels deep"),
        (b"[" * 5000 + b"]" * 5000, "nested 5000 levels deep"),
        (b'{"type":"action","id":2,"action":{"type":"pl\xffce","placements":[]}}', "not UTF-8 (byte 44)"),
        (b'{"type":"action","id":2,"action":{"type":"place","placements":[],"x":"\xed\xa0\x80"}}', "not UTF-8"),
        (b'{"type":"action","id":2,"action":{"type":"place","placements":[],"x":"\\udc00"}}', "lone surrogate"),
    ],
    ids=["deep-action", "deep-placements", "deep-log", "deep-line", "utf8-type", "utf8-surrogate", "escaped-surrogate"],
)
async def test_hostile_bytes_are_a_protocol_error_of_that_seat(bad: bytes, complaint: str) -> None:
    record = await play(on_request(1, lambda rid: [bad + b"\n"]))
    seat, kind, reason, request = termination(record)
    assert (seat, kind, request) == (1, "protocol", 2) and complaint in reason
    assert len(reason) <= 1000


async def test_an_unexpected_exception_handling_a_message_is_that_seats_protocol_error(monkeypatch: Any) -> None:
    real = referee.match.intake.decode_bot_message

    def buggy(data: bytes) -> Any:
        if b"trigger" in data:
            raise KeyError("a bug met by these bytes")
        return real(data)

    monkeypatch.setattr(referee.match.intake, "decode_bot_message", buggy)
    record = await play(on_request(2, lambda rid: [log("trigger") + answer(rid)]))
    seat, kind, reason, request = termination(record)
    assert (seat, kind, request) == (1, "protocol", 5)
    assert reason == "internal error handling this bot's message: KeyError: 'a bug met by these bytes'"
    assert record.result.ended_by != "forfeits" and record.timings[0].decisions > 10


async def test_ready_is_not_needed_twice_and_a_bot_silent_between_requests_costs_nothing() -> None:
    # The pre-request look at the pipe must not misread an idle bot.
    record = await play(pipe_passing, delay=0.001)
    assert record.result.terminations == []
    _ = ready
