"""The two small run_match hooks: an untimed seat (a person) and a given initial state (check-bot)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.messages import TimeControl
from referee.games import get_rules
from referee.games.base import SeededChance
from referee.match import MatchSpec, run_match
from referee.settings import Clock, RefereeSettings
from tournaments.hosting.checkbot.seats import RandomSeat

SETTINGS = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=1000, move_ms=20, bank_ms=0), margin_ms=10))


class SlowSeat(RandomSeat):
    """Thinks 60 ms per answer: three times its allowance."""

    async def readline(self) -> bytes:
        await trio.sleep(0.06)
        return await super().readline()


class UntimedSlowSeat(SlowSeat):
    untimed = True


async def test_an_untimed_seat_is_never_out_of_time_while_the_bots_clock_runs() -> None:
    spec = MatchSpec(game="vendetta", seed=3, variants={"round_limit": "1"})
    record = await run_match(spec, [UntimedSlowSeat("person"), RandomSeat("a"), RandomSeat("b")], SETTINGS)
    assert record.result.terminations == []
    assert record.timings[0].max_ms > 50
    timed = await run_match(spec, [SlowSeat("slow"), RandomSeat("a"), RandomSeat("b")], SETTINGS)
    assert [t.kind for t in timed.result.terminations] == ["timeout"]


async def test_a_given_initial_state_is_the_position_the_bots_are_asked_about() -> None:
    rules = get_rules("vendetta")
    state = rules.new_game(4, rules.config({}), SeededChance(9))
    rng = random.Random(1)
    for _ in range(13):  # into round 2
        decision = state.decision()
        assert decision is not None
        state.apply(decision.seat, state.random_action(rng))
    seen: list[dict[str, Any]] = []

    class Watching(RandomSeat):
        async def respond(self, message: dict[str, Any]) -> dict[str, Any] | None:
            if message.get("type") == "request":
                seen.append(message)
            return await super().respond(message)

    seats = [Watching(f"s{i}") for i in range(4)]
    await run_match(MatchSpec(game="vendetta", seed=0), seats, SETTINGS, initial_state=state)
    assert seen[0]["view"]["round"] == 2 and seen[0]["view"]["turn"] == 2


async def test_an_initial_state_with_a_replay_or_another_table_size_is_refused(tmp_path: Path) -> None:
    rules = get_rules("vendetta")
    state = rules.new_game(3, rules.config({}), SeededChance(0))
    seats = [RandomSeat() for _ in range(3)]
    with pytest.raises(ValueError, match="initial state"):
        await run_match(MatchSpec(game="vendetta", seed=0), seats, initial_state=state, replay_path=tmp_path / "r")
    with pytest.raises(ValueError, match="initial state"):
        await run_match(MatchSpec(game="vendetta", seed=0), seats[:2] + seats, initial_state=state)
