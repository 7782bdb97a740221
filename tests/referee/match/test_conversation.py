"""The match runner against scripted fake bots: clocks, terminations, events, replays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.messages import TimeControl
from referee.errors import BotCrashed
from referee.match import MatchSpec, run_match
from referee.replay import ReplayMismatch, read_replay, verify_replay
from referee.settings import Clock, RefereeSettings
from tests.referee.fakes import HANG, PASS, Response, ScriptedBot, action, after, line, passer, passing, ready

SPEC = MatchSpec(game="vendetta", seed=11)
FAST = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=1000, move_ms=100, bank_ms=300), margin_ms=0))


async def test_a_game_of_passing_bots_runs_to_the_end_and_everyone_hears_the_result() -> None:
    bots = [passer() for _ in range(4)]
    record = await run_match(SPEC, bots)
    assert record.result.terminations == []
    assert min(record.result.ranks) == 1
    for seat, bot in enumerate(bots):
        start, *_, end = bot.received
        assert start["type"] == "start" and start["seat"] == seat and start["players"] == 4
        assert end["type"] == "end" and end["result"]["ranks"] == record.result.ranks
        assert all(r["decision"] == "place" and r["view"]["seat"] == seat for r in bot.requests())
    assert sum(t.decisions for t in record.timings) == sum(len(b.requests()) for b in bots)


async def test_each_request_carries_the_events_since_that_bots_previous_request() -> None:
    bots = [passer() for _ in range(3)]
    await run_match(SPEC, bots)
    first, second = bots[1].requests()[:2]
    # Seat 1 first decides at turn 1: it has been told of seat 0's turn 0.
    kinds = [e["type"] for e in first["events"]]
    assert kinds[:2] == ["placed", "revealed"] and {e["turn"] for e in first["events"] if "turn" in e} == {0}
    # Its next request (turn 4 of 3 players) brings the three turns in between, no repeats.
    turns = sorted({e["turn"] for e in second["events"] if "turn" in e})
    assert turns == [1, 2, 3]


async def test_a_bot_that_never_answers_forfeits_on_time_and_the_others_finish(autojump_clock: Any) -> None:
    slow = ScriptedBot(after(2, lambda m: [HANG]), name="sleeper")
    bots = [passer(), slow, passer()]
    record = await run_match(SPEC, bots, FAST)
    (termination,) = record.result.terminations
    assert termination.seat == 1 and termination.kind == "timeout"
    assert "within 400 ms" in termination.reason
    assert slow.killed
    assert record.result.forfeited == [1] and record.result.ranks[1] == 3


async def test_time_over_the_move_limit_comes_out_of_the_bank(autojump_clock: Any) -> None:
    # 100 ms per move, a 300 ms bank: answering in 230 ms costs 130 ms of bank each
    # time, so the third slow answer (40 ms of bank left) is too late.
    def slow(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "request":
            return [0.23, action(message["id"], PASS)]
        return passing(message)

    bot = ScriptedBot(slow, name="slow")
    record = await run_match(SPEC, [bot, passer(), passer()], FAST)
    (termination,) = record.result.terminations
    assert termination.kind == "timeout" and termination.seat == 0
    banks = [r["bank_ms"] for r in bot.requests()]
    assert banks == [300, 170, 40]
    assert record.timings[0].decisions == 2 and record.timings[0].max_ms == pytest.approx(230)


def answering_after(seconds: float) -> Any:
    def respond(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "request":
            return [seconds, action(message["id"], PASS)]
        return passing(message)

    return respond


@pytest.mark.parametrize(("margin_ms", "timeouts"), [(50, 0), (0, 1)])
async def test_the_margin_is_added_to_every_deadline_and_not_told_to_bots(
    autojump_clock: Any, margin_ms: int, timeouts: int
) -> None:
    # 100 ms per move and no bank: an answer after 130 ms is late by 30 ms,
    # inside a 50 ms margin and outside none.
    settings = RefereeSettings(clock=Clock(time=TimeControl(move_ms=100, bank_ms=0), margin_ms=margin_ms))
    slow = ScriptedBot(answering_after(0.13), name="slow")
    record = await run_match(SPEC, [slow, passer(), passer()], settings)
    assert len(record.result.terminations) == timeouts
    assert all(r["time_ms"] == 100 and r["bank_ms"] == 0 for r in slow.requests())


async def test_the_game_wall_limit_ends_a_long_game_and_names_the_limit(autojump_clock: Any) -> None:
    # Every answer is on time (40 ms of 100), but 3 s for the whole game runs out
    # long before a game of about 100 decisions is over.
    settings = RefereeSettings(clock=Clock(time=TimeControl(move_ms=100, bank_ms=0), margin_ms=0, game_wall_ms=3000))
    bots = [ScriptedBot(answering_after(0.04), name=f"b{i}") for i in range(3)]
    record = await run_match(SPEC, bots, settings)
    first = record.result.terminations[0]
    assert first.kind == "timeout" and "the game's wall limit of 3 s ran out" in first.reason
    assert record.seconds == pytest.approx(3.0, abs=0.05)
    assert sum(t.decisions for t in record.timings) == pytest.approx(3.0 / 0.04, abs=1)


async def test_no_ready_within_the_startup_limit_is_a_timeout(autojump_clock: Any) -> None:
    mute = ScriptedBot(lambda m: [HANG], name="mute")
    record = await run_match(SPEC, [passer(), passer(), mute], FAST)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind, termination.request) == (2, "timeout", 0)
    assert "startup limit" in termination.reason
    assert mute.requests() == []


class _DeafToStart(ScriptedBot):
    """Never takes its start line: the write waits for room in a pipe the bot does not read."""

    async def send(self, data: bytes) -> None:
        if data.startswith(b'{"type":"start"'):
            await trio.sleep_forever()
        await super().send(data)


@pytest.mark.parametrize("deaf_seat", [0, 1, 2])
async def test_a_bot_that_does_not_take_its_start_times_out_alone_and_the_others_play(
    autojump_clock: Any, deaf_seat: int
) -> None:
    # Every start goes out before any ready line is read: the seats before the
    # deaf one have theirs, the seats after it get theirs once its write is given up.
    bots = [passer() for _ in range(3)]
    bots[deaf_seat] = _DeafToStart(passing, name="deaf")
    record = await run_match(SPEC, bots, FAST)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind, termination.request) == (deaf_seat, "timeout", 0)
    assert "startup limit of 1000 ms" in termination.reason
    assert bots[deaf_seat].received == [] and bots[deaf_seat].killed
    for seat, bot in enumerate(bots):
        if seat != deaf_seat:
            assert bot.received[0]["type"] == "start" and bot.requests() and bot.received[-1]["type"] == "end"
    assert record.seconds == pytest.approx(1.0, abs=0.05)  # one startup limit, not one per seat


class _GoneAtStart(ScriptedBot):
    """A warm process that exited after its previous game: its pipe is broken."""

    async def send(self, data: bytes) -> None:
        raise BotCrashed("stopped reading its input: exited with code 0")


def _gone_before_ready(message: dict[str, Any]) -> list[Response]:
    """Takes its start, then its output closes: it exited on reading it."""
    return [BotCrashed("closed its output: exited with code 0")] if message["type"] == "start" else []


@pytest.mark.parametrize(
    "gone",
    [lambda: _GoneAtStart(passing, name="gone"), lambda: ScriptedBot(_gone_before_ready, name="gone")],
    ids=["before-its-start", "on-reading-its-start"],
)
async def test_a_warm_process_gone_before_ready_is_replaced_by_a_fresh_one_that_plays(
    gone: Any, autojump_clock: Any
) -> None:
    # A virtual clock: a busy machine must not turn the fresh bot's answers into timeouts.
    fresh = passer()
    asked: list[int] = []

    async def replace(seat: int) -> ScriptedBot:
        asked.append(seat)
        return fresh

    bots = [passer(), gone(), passer()]
    record = await run_match(SPEC, bots, FAST, replace=replace)
    assert record.result.terminations == [] and asked == [1]
    assert fresh.received[0]["type"] == "start" and fresh.received[0]["seat"] == 1
    assert fresh.requests() and record.timings[1].decisions == len(fresh.requests())


async def test_a_process_gone_before_ready_with_no_replacement_forfeits_on_a_crash(autojump_clock: Any) -> None:
    async def replace(seat: int) -> None:
        return None

    bots = [passer(), _GoneAtStart(passing, name="gone"), passer()]
    record = await run_match(SPEC, bots, FAST, replace=replace)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind, termination.request) == (1, "crash", 0)


async def test_a_bot_that_answers_start_with_garbage_is_not_replaced_but_forfeits(autojump_clock: Any) -> None:
    asked: list[int] = []

    async def replace(seat: int) -> ScriptedBot:
        asked.append(seat)
        return passer()

    garbage = ScriptedBot(lambda m: [b"not json at all\n"] if m["type"] == "start" else [], name="garbage")
    record = await run_match(SPEC, [garbage, passer(), passer()], FAST, replace=replace)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind, termination.request) == (0, "protocol", 0)
    assert "not valid JSON" in termination.reason and asked == []


async def test_a_log_line_before_ready_is_recorded_and_the_ready_line_still_counts(tmp_path: Path) -> None:
    def chatty(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "start":
            return [line({"type": "log", "message": "warming up"}), ready()]
        return passing(message)

    replay = tmp_path / "m.jsonl"
    record = await run_match(SPEC, [ScriptedBot(chatty, name="chatty"), passer(), passer()], replay_path=replay)
    assert record.result.terminations == []
    logs = [r for r in read_replay(replay) if type(r).__name__ == "LogRecord"]
    assert [(log.seat, log.request, log.message) for log in logs] == [(0, 0, "warming up")]


@pytest.mark.parametrize(
    ("misbehave", "complaint"),
    [
        (lambda m: [b"this is not json"], "not valid JSON"),
        (lambda m: [line({"type": "action", "id": m["id"] + 7, "action": PASS})], "answered request"),
        (
            lambda m: [line({"type": "action", "id": m["id"], "action": {"type": "place", "placements": 3}})],
            "wrong shape",
        ),
        (lambda m: [line({"type": "action", "id": m["id"], "action": {"type": "fold"}})], "wrong shape"),
        (lambda m: [ready()], "instead of an action"),
        (lambda m: [line({"type": "log", "message": "x"})] * 101, "flood"),
    ],
    ids=["bad-json", "wrong-request-id", "missing-field", "unknown-action", "ready-again", "log-flood"],
)
async def test_protocol_errors_forfeit_with_the_reason(misbehave: Any, complaint: str) -> None:
    record = await run_match(SPEC, [passer(), ScriptedBot(after(1, misbehave)), passer()])
    (termination,) = record.result.terminations
    assert termination.kind == "protocol" and termination.seat == 1
    assert complaint in termination.reason


async def test_two_answers_to_one_request_is_a_protocol_error_at_the_next_request() -> None:
    def twice(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "request":
            return [action(message["id"], PASS), action(message["id"], PASS)]
        return passing(message)

    record = await run_match(SPEC, [ScriptedBot(twice), passer(), passer()])
    (termination,) = record.result.terminations
    # Request ids count across seats: seat 0's second request is the fourth.
    assert termination.kind == "protocol" and termination.request == 4
    assert "a second answer to request 1 (it arrived after request 4 was sent)" in termination.reason


async def test_a_crash_is_recorded_with_its_reason() -> None:
    crash = ScriptedBot(after(3, lambda m: [BotCrashed("closed its output: exited with code 3")]))
    record = await run_match(SPEC, [crash, passer(), passer()])
    (termination,) = record.result.terminations
    assert termination.kind == "crash" and "code 3" in termination.reason


def _illegal(message: dict[str, Any]) -> list[Response]:
    placements = [{"district": 1, "count": 1}, {"district": 2, "count": 1}, {"district": 3, "count": 1}]
    return [action(message["id"], {"type": "place", "placements": placements})]


async def test_an_illegal_action_forfeits_by_default_and_the_bot_is_told_the_rule() -> None:
    bot = ScriptedBot(after(0, _illegal))
    record = await run_match(SPEC, [bot, passer(), passer()])
    (termination,) = record.result.terminations
    assert termination.kind == "illegal" and termination.reason.startswith("illegal action: P")
    rejected = [m for m in bot.received if m["type"] == "rejected"]
    assert len(rejected) == 1 and rejected[0]["penalty"] == "forfeit" and rejected[0]["rule"].startswith("P")


async def test_under_the_pass_policy_an_illegal_action_costs_only_the_turn(tmp_path: Path) -> None:
    bot = ScriptedBot(after(0, _illegal))
    settings = RefereeSettings(illegal_action="pass")
    replay = tmp_path / "r.jsonl"
    record = await run_match(SPEC, [bot, passer(), passer()], settings, replay_path=replay)
    assert record.result.terminations == []
    rejected = [m for m in bot.received if m["type"] == "rejected"]
    assert len(rejected) == len(bot.requests()) and rejected[0]["penalty"] == "pass"
    assert verify_replay(read_replay(replay)) == record.result


async def test_the_replay_verifies_and_a_tampered_replay_names_the_first_difference(tmp_path: Path) -> None:
    replay = tmp_path / "game.jsonl"
    record = await run_match(SPEC, [passer(), ScriptedBot(after(5, _illegal)), passer()], replay_path=replay)
    assert not (tmp_path / "game.jsonl.partial").exists()
    assert verify_replay(read_replay(replay)) == record.result
    lines = replay.read_text().splitlines()
    index = next(i for i, text in enumerate(lines) if '"revealed"' in text)
    lines[index] = lines[index].replace('"revealed"', '"revealed_"', 1)
    replay.write_text("\n".join(lines) + "\n")
    with pytest.raises(Exception):  # noqa: B017 - a bad event type no longer decodes as a record
        verify_replay(read_replay(replay))
    lines[index] = lines[index].replace('"revealed_"', '"revealed"', 1)
    record_line = json.loads(lines[index])
    record_line["events"][0]["seat"] = (record_line["events"][0]["seat"] + 1) % 3
    lines[index] = json.dumps(record_line)
    replay.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReplayMismatch, match=f"line {index + 1}: event 0"):
        verify_replay(read_replay(replay))


async def test_a_match_cancelled_midway_leaves_a_partial_replay_not_a_complete_one(tmp_path: Path) -> None:
    replay = tmp_path / "g.jsonl"
    with trio.move_on_after(0.5):
        await run_match(SPEC, [passer(), ScriptedBot(after(2, lambda m: [HANG])), passer()], replay_path=replay)
    assert not replay.exists()
    assert (tmp_path / "g.jsonl.partial").exists()


async def test_wrong_table_size_and_unknown_variant_are_caller_errors() -> None:
    with pytest.raises(ValueError, match="vendetta is for 3 to 5 players, not 2"):
        await run_match(SPEC, [passer(), passer()])
    with pytest.raises(ValueError, match="control"):
        await run_match(MatchSpec(game="vendetta", seed=1, variants={"control": "most"}), [passer()] * 3)


class _DeafAtTheEnd(ScriptedBot):
    """Plays the game, then stops reading its input: the write of ``end`` never completes."""

    async def send(self, data: bytes) -> None:
        if data.startswith(b'{"type":"end"'):
            await trio.sleep_forever()
        await super().send(data)


@pytest.mark.parametrize("deaf_seat", [0, 2])
async def test_a_bot_that_stops_reading_at_the_end_holds_the_others_end_for_at_most_one_grace_period(
    deaf_seat: int, autojump_clock: Any
) -> None:
    bots = [passer() for _ in range(3)]
    bots[deaf_seat] = _DeafAtTheEnd(passing, name="deaf")
    began = trio.current_time()
    record = await run_match(MatchSpec(game="vendetta", seed=5), bots, RefereeSettings(grace_ms=300))
    assert record.result.terminations == []
    assert 0.3 <= trio.current_time() - began < 0.6  # one grace period, not one per seat
    for seat, bot in enumerate(bots):
        if seat != deaf_seat:
            assert bot.received[-1]["type"] == "end" and bot.received[-1]["seat"] == seat
