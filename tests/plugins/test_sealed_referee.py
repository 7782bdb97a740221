"""The referee asks every seat of a simultaneous step at once (the example game Sealed).

Each seat asked gets its own request, built before any answer is read, and its
own clock; a seat that times out, crashes or bids illegally loses only its own
game; nothing a seat receives depends on another seat's answer before the round
is shown; the replay plays the steps again. Scripted bots on Trio's mock clock
(``autojump_clock``): a wait here costs no wall time and load cannot stretch it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.messages import TimeControl
from referee.errors import BotCrashed
from referee.match import MatchSpec, run_match
from referee.replay import ActionRecord, read_replay, verify_replay
from referee.settings import Clock, RefereeSettings
from tests.referee.fakes import HANG, Response, ScriptedBot, action, line, ready

SPEC = MatchSpec(game="sealed", seed=3, variants={"prizes": "4"})
CLOCK = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=1000, move_ms=1000, bank_ms=0), margin_ms=0))

Bidder = Callable[[dict[str, Any]], list[Response]]


def bidding(pause: float = 0.0, pick: Callable[[dict[str, Any]], int] | None = None) -> Bidder:
    """Ready at start; to every request, after ``pause`` seconds, the card ``pick`` chooses (the lowest by default)."""

    def respond(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "start":
            return [ready()]
        if message["type"] != "request":
            return []
        card = pick(message) if pick else min(option["card"] for option in message["options"])
        answer = action(message["id"], {"type": "bid", "card": card})
        return [pause, answer] if pause else [answer]

    return respond


def on_round(round_: int, misbehave: Bidder, otherwise: Bidder) -> Bidder:
    """``otherwise``, except ``misbehave`` for the request of round ``round_``."""

    def respond(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "request" and message["view"]["round"] == round_:
            return misbehave(message)
        return otherwise(message)

    return respond


class Timed(ScriptedBot):
    """A scripted bot that notes, for each request, the mock clock's time when it was written."""

    def __init__(self, respond: Bidder, name: str = "fake") -> None:
        super().__init__(respond, name)
        self.asked_at: list[float] = []

    async def send(self, data: bytes) -> None:
        if b'"type":"request"' in data:
            self.asked_at.append(trio.current_time())
        await super().send(data)


def shown_rounds(bot: ScriptedBot) -> list[dict[str, Any]]:
    """Every ``bids_shown`` event the bot was sent, in order."""
    events = [e for m in bot.received if m["type"] in ("request", "end") for e in m["events"]]
    return [e for e in events if e["type"] == "bids_shown"]


async def test_every_seat_of_a_simultaneous_step_is_asked_at_once_and_thinks_on_its_own_clock(
    sealed: Path, autojump_clock: Any
) -> None:
    # Each seat takes 0.6 s of its 1 s: one after the other, the third would be asked
    # after 1.2 s; at once, every round is asked together and takes 0.6 s.
    bots = [Timed(bidding(0.6)) for _ in range(3)]
    record = await run_match(SPEC, bots, CLOCK)
    assert record.result.terminations == []
    for round_ in range(4):
        times = {bot.asked_at[round_] for bot in bots}
        assert len(times) == 1, f"round {round_}: seats asked at {times}"
    assert bots[0].asked_at[1] - bots[0].asked_at[0] == pytest.approx(0.6, abs=0.01)
    assert all(t.decisions == 4 and t.max_ms == pytest.approx(600, abs=10) for t in record.timings)


async def test_a_seat_timing_out_in_a_simultaneous_step_does_not_delay_or_forfeit_the_others(
    sealed: Path, autojump_clock: Any
) -> None:
    sleeper = Timed(on_round(1, lambda m: [HANG], bidding(0.1)), name="sleeper")
    quick = [Timed(bidding(0.1)) for _ in range(2)]
    bots = [quick[0], sleeper, quick[1]]
    record = await run_match(SPEC, bots, CLOCK)
    (termination,) = record.result.terminations
    assert termination.seat == 1 and termination.kind == "timeout" and sleeper.killed
    assert record.result.forfeited == [1] and record.result.ranks[1] == 3
    # The others were charged their own 0.1 s, not the sleeper's second: their clocks ran on their own.
    assert record.timings[0].max_ms == pytest.approx(100, abs=10)
    assert record.timings[2].max_ms == pytest.approx(100, abs=10)
    # The round went on without the sleeper's bid, and the game to its end without it.
    rounds = shown_rounds(quick[0])
    assert len(rounds) == 4 and rounds[1]["bids"][1] is None and rounds[1]["bids"][0] is not None
    # Round 1 waited for the sleeper's deadline (1 s), no longer.
    assert quick[0].asked_at[2] - quick[0].asked_at[1] == pytest.approx(1.0, abs=0.01)


async def test_an_illegal_bid_in_a_simultaneous_step_forfeits_only_that_seat(sealed: Path, autojump_clock: Any) -> None:
    cheat = ScriptedBot(on_round(0, lambda m: [action(m["id"], {"type": "bid", "card": 99})], bidding()), name="cheat")
    honest = [ScriptedBot(bidding(pick=lambda m: max(o["card"] for o in m["options"]))) for _ in range(2)]
    bots = [honest[0], honest[1], cheat]
    record = await run_match(SPEC, bots, CLOCK)
    (termination,) = record.result.terminations
    assert termination.seat == 2 and termination.kind == "illegal"
    (notice,) = [m for m in cheat.received if m["type"] == "rejected"]
    assert "99" in notice["message"] and "4" not in notice["message"].replace("99", "")  # its own bid, no other's
    # The round is played with the two legal bids (4 and 4 match: nobody takes the prize).
    first = shown_rounds(honest[0])[0]
    assert first["bids"] == [4, 4, None] and first["taker"] is None
    assert len(shown_rounds(honest[0])) == 4 and record.result.forfeited == [2]


async def test_an_illegal_bid_under_the_pass_policy_is_played_as_the_lowest_card(
    sealed: Path, autojump_clock: Any
) -> None:
    cheat = ScriptedBot(on_round(0, lambda m: [action(m["id"], {"type": "bid", "card": 0})], bidding()), name="cheat")
    bots = [ScriptedBot(bidding(pick=lambda m: 3)), cheat, ScriptedBot(bidding(pick=lambda m: 4))]
    settings = RefereeSettings(clock=CLOCK.clock, illegal_action="pass")
    record = await run_match(SPEC, bots, settings)
    assert record.result.terminations == []
    assert shown_rounds(bots[0])[0]["bids"] == [3, 1, 4]


async def test_a_seat_that_crashes_in_a_simultaneous_step_forfeits_alone(sealed: Path, autojump_clock: Any) -> None:
    crasher = ScriptedBot(on_round(2, lambda m: [BotCrashed("exited with code 1")], bidding()), name="crasher")
    bots = [ScriptedBot(bidding()), crasher, ScriptedBot(bidding())]
    record = await run_match(SPEC, bots, CLOCK)
    (termination,) = record.result.terminations
    assert termination.seat == 1 and termination.kind == "crash"
    assert len(shown_rounds(bots[0])) == 4


async def test_a_hostile_seat_cannot_learn_another_seats_pending_bid_from_anything_it_receives(
    sealed: Path, autojump_clock: Any
) -> None:
    """The same deal played twice, seat 0 bidding differently in round 0 (the rechoose idea, end to end):
    everything the spy at seat 1 receives until the round is shown is the same, byte for byte, though it
    answers last, long after seat 0's bid is in, and probes with an illegal answer under the pass policy."""

    def spy() -> ScriptedBot:
        probe = on_round(0, lambda m: [0.5, action(m["id"], {"type": "bid", "card": 77})], bidding())
        return ScriptedBot(probe, name="spy")

    seen: list[list[bytes]] = []
    for card in (1, 4):
        spy_bot = spy()
        bots = [ScriptedBot(on_round(0, bidding(pick=lambda m, c=card: c), bidding())), spy_bot, ScriptedBot(bidding())]
        settings = RefereeSettings(clock=CLOCK.clock, illegal_action="pass")
        await run_match(SPEC, bots, settings)
        before_shown: list[bytes] = []
        for message in spy_bot.received:
            if any(e["type"] == "bids_shown" for e in message.get("events", [])):
                break
            before_shown.append(line(message))
        assert any(b'"type": "rejected"' in m for m in before_shown)  # its probe was answered, and told nothing
        seen.append(before_shown)
    assert seen[0] == seen[1]


async def test_a_simultaneous_game_is_recorded_and_its_replay_verifies(
    sealed: Path, tmp_path: Path, autojump_clock: Any
) -> None:
    sleeper = ScriptedBot(on_round(2, lambda m: [HANG], bidding(0.1)), name="sleeper")
    cheat = ScriptedBot(on_round(1, lambda m: [action(m["id"], {"type": "bid", "card": 42})], bidding()))
    bots = [
        ScriptedBot(bidding(0.2)),
        sleeper,
        cheat,
        ScriptedBot(bidding(pick=lambda m: max(o["card"] for o in m["options"]))),
    ]
    path = tmp_path / "sealed.jsonl"
    record = await run_match(SPEC, bots, CLOCK, replay_path=path)
    assert sorted((t.seat, t.kind) for t in record.result.terminations) == [(1, "timeout"), (2, "illegal")]
    assert verify_replay(read_replay(path)) == record.result


class Deaf(ScriptedBot):
    """A bot that stops reading its input at round ``round_``: the write of that request never ends."""

    def __init__(self, respond: Bidder, round_: int) -> None:
        super().__init__(respond, name="deaf")
        self.deaf_from = round_

    async def send(self, data: bytes) -> None:
        if b'"type":"request"' in data and f'"round":{self.deaf_from},'.encode() in data:
            await trio.sleep_forever()
        await super().send(data)


async def test_a_seat_that_stops_reading_in_a_simultaneous_step_times_out_alone(
    sealed: Path, autojump_clock: Any
) -> None:
    deaf = Deaf(bidding(), round_=1)
    bots = [Timed(bidding(0.2)), deaf, Timed(bidding(0.2))]
    record = await run_match(SPEC, bots, CLOCK)
    (termination,) = record.result.terminations
    assert termination.seat == 1 and termination.kind == "timeout" and deaf.killed
    assert len(shown_rounds(bots[0])) == 4
    assert record.timings[0].max_ms == pytest.approx(200, abs=10)


async def test_the_game_wall_limit_ends_a_simultaneous_step_and_names_the_limit(
    sealed: Path, autojump_clock: Any
) -> None:
    # Each round takes 0.5 s of its 1 s: the 1.2 s of the whole game run out in the third round.
    settings = RefereeSettings(clock=Clock(time=TimeControl(move_ms=1000, bank_ms=0), margin_ms=0, game_wall_ms=1200))
    bots = [ScriptedBot(bidding(0.5)) for _ in range(3)]
    record = await run_match(SPEC, bots, settings)
    assert record.result.ended_by == "forfeits"
    assert all("the game's wall limit of 1.2 s ran out" in t.reason for t in record.result.terminations)
    assert record.seconds == pytest.approx(1.2, abs=0.05)


async def test_a_bid_played_as_a_pass_is_recorded_as_such_and_the_replay_verifies(
    sealed: Path, tmp_path: Path, autojump_clock: Any
) -> None:
    cheat = ScriptedBot(on_round(0, lambda m: [action(m["id"], {"type": "bid", "card": 9})], bidding()))
    bots = [ScriptedBot(bidding(pick=lambda m: max(o["card"] for o in m["options"]))), cheat, ScriptedBot(bidding())]
    path = tmp_path / "sealed.jsonl"
    settings = RefereeSettings(clock=CLOCK.clock, illegal_action="pass")
    record = await run_match(SPEC, bots, settings, replay_path=path)
    assert record.result.terminations == []
    first_round = [r for r in read_replay(path) if isinstance(r, ActionRecord)][:3]
    assert [(r.seat, r.substituted) for r in first_round] == [(0, False), (1, True), (2, False)]
    assert all(r.together for r in first_round)  # one step's sealed answers, each marked so
    assert verify_replay(read_replay(path)) == record.result


async def test_a_match_cancelled_during_a_simultaneous_step_stops_at_once_and_records_no_part_of_the_step(
    sealed: Path, tmp_path: Path, autojump_clock: Any
) -> None:
    # Every seat is thinking (none answers) when the host gives up on the match (Ctrl-C, a shut-down executor).
    bots = [ScriptedBot(on_round(1, lambda m: [HANG], bidding())) for _ in range(3)]
    path = tmp_path / "sealed.jsonl"
    with trio.move_on_after(0.5) as scope:
        await run_match(SPEC, bots, CLOCK, replay_path=path)
    assert scope.cancelled_caught and trio.current_time() == pytest.approx(0.5)
    assert not path.exists()
    # What stays for inspection (the .partial file) holds round 0 whole and nothing of the step cut short.
    partial = path.with_name(path.name + ".partial").read_bytes().splitlines()
    played = [line for line in partial if b'"type":"action"' in line]
    assert len(played) == 3 and b'"type":"forfeit"' not in b"".join(partial)
