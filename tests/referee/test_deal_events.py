"""Events of the deal (``GameState.deal_events``): told to every seat with its first request, never again.

Sealed bids (tests/referee/games/sealed_bids.py) shows the first prize at the
deal, as an event. The referee sends it to each seat (through ``events_for``)
with the seat's first request; a replay of the match verifies; the viewer
shows it at the start; a match from a given position (check-bot's forced
positions) sends no deal, as that position was dealt long before.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.messages import TimeControl
from referee.channel import InProcessSeat
from referee.games.base import SeededChance
from referee.match import MatchSpec, run_match
from referee.replay import read_replay, verify_replay
from referee.settings import Clock, RefereeSettings
from tests.referee.games.sealed_bids import RULES, PrizeShown, register
from tournaments.hosting.viewer.build import build_viewer_data

SETTINGS = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=5000, move_ms=5000, bank_ms=0)))


class Listener(InProcessSeat):
    """Keeps every message it is sent; bids its first option."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.heard: list[dict[str, Any]] = []

    async def respond(self, message: dict[str, Any]) -> dict[str, Any] | None:
        self.heard.append(message)
        if message["type"] == "start":
            return {"type": "ready", "name": self.name}
        if message["type"] == "request":
            return {"type": "action", "id": message["id"], "action": message["options"][0]}
        return None

    def requests(self) -> list[dict[str, Any]]:
        return [message for message in self.heard if message["type"] == "request"]


@pytest.fixture
def sealed_bids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(register(tmp_path / "site")))
    yield


def prizes_shown(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [event for event in message["events"] if event["type"] == "prize_shown"]


def test_each_seat_is_told_the_deals_events_with_its_first_request_only(sealed_bids: None, tmp_path: Path) -> None:
    seats = [Listener(f"s{i}") for i in range(3)]
    replay = tmp_path / "sealed.jsonl"
    spec = MatchSpec(game="sealed_bids", seed=7, variants={}, match="deal-events")
    record = trio.run(lambda: run_match(spec, seats, SETTINGS, replay_path=replay))
    assert record.result.terminations == []
    first_prize = RULES.new_game(3, RULES.config({}), SeededChance(7)).order[0]
    for seat in seats:
        first, *later = seat.requests()
        assert prizes_shown(first)[0] == {"type": "prize_shown", "round": 0, "prize": first_prize}
        assert first["view"]["prize"] == first_prize
        assert all(event["round"] > 0 for message in later for event in prizes_shown(message))
    assert verify_replay(read_replay(replay)) == record.result
    start = build_viewer_data(replay).views["all"][0]
    assert start["decision"] == "start" and start["events"] == [
        {"type": "prize_shown", "round": 0, "prize": first_prize}
    ]


def test_a_match_from_a_given_position_sends_no_deal(sealed_bids: None) -> None:
    # A forced position (check-bot's) was dealt long ago: its deal events are not news.
    state = RULES.new_game(3, RULES.config({}), SeededChance(3))
    rng = random.Random(3)
    for _ in range(4):  # into the second round
        decision = state.decision()
        assert decision is not None
        state.apply(decision.seat, state.random_action(rng))
    assert state.deal_events == [PrizeShown(0, state.order[0])]
    seats = [Listener(f"s{i}") for i in range(3)]
    spec = MatchSpec(game="sealed_bids", seed=3, variants={}, match="forced")
    trio.run(lambda: run_match(spec, seats, SETTINGS, initial_state=state))
    for seat in seats:
        assert all(event["round"] > 0 for message in seat.requests() for event in prizes_shown(message))
