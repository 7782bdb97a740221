"""The Sicilianos heuristic bot (sample_bots/sicilianos_py) plays real matches within the protocol.

One real subprocess match under ``play_match`` with a replay: the heuristic, two
passers (the first option every time) and, when it exists, the random sample
bot. Every line is tapped and checked against protocol/schema.json, every
action must be one of the options of its request, and the replay must verify.
The policy itself is also checked in process: always a listed option, in
every variant and table size, and clearly better than random.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

import referee.seats
from referee.bots import BotSpec, load_bot
from referee.games.base import SeededChance
from referee.games.sicilianos import RULES, pick_option
from referee.match import MatchSpec
from referee.play import play_match
from referee.process import BotProcess, open_bot
from referee.replay import read_replay, verify_replay
from referee.settings import RefereeSettings
from tests.conftest import SAMPLE_BOTS, TEST_BOTS, wait_until_gone
from tests.protocol.test_protocol_doc import Tap, assert_traffic_matches_schema

HEURISTIC = SAMPLE_BOTS / "sicilianos_py"


def policy() -> ModuleType:
    """sample_bots/sicilianos_py/sicilianos_policy.py, imported by path (the bot folder is no package)."""
    name = "sicilianos_policy"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HEURISTIC / "sicilianos_policy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def seats() -> list[BotSpec]:
    passer = load_bot(str(TEST_BOTS / "passer"))
    bots = [load_bot(str(HEURISTIC)), passer, passer]
    if (SAMPLE_BOTS / "random_py" / "bot.toml").is_file():
        bots.append(load_bot(str(SAMPLE_BOTS / "random_py")))
    return bots


@pytest.mark.slow
async def test_the_heuristic_plays_a_real_match_with_a_verified_replay_and_schema_valid_traffic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taps: list[Tap] = []

    @asynccontextmanager
    async def tapped(spec: BotSpec, settings: RefereeSettings) -> AsyncIterator[Tap]:
        bot: BotProcess
        async with open_bot(spec, settings) as bot:
            tap = Tap(bot)
            taps.append(tap)
            yield tap

    monkeypatch.setattr(referee.seats, "open_bot", tapped)
    bots = seats()
    replay = tmp_path / "sicilianos.jsonl"
    spec = MatchSpec(game="sicilianos", seed=29, variants={"steal_pick": "victim"}, match="sicilianos-bots")
    record = await play_match(spec, bots, replay_path=replay)

    assert record.result.terminations == []
    assert record.result.ended_by in ("no_dirty_money", "godfather")
    assert verify_replay(read_replay(replay)) == record.result
    assert len(taps) == len(bots)
    assert assert_traffic_matches_schema("sicilianos", taps) > 200

    # Every answer is one of the options of its request, unchanged.
    kinds: set[str] = set()
    for tap in taps:
        requests = {m["id"]: m for m in tap.to_bot if m["type"] == "request"}
        actions = [m for m in tap.from_bot if m["type"] == "action"]
        assert actions and len(actions) == len(requests)
        for action in actions:
            request = requests[action["id"]]
            assert action["action"] in request["options"], (request["decision"], action)
            kinds.add(request["decision"])
    heuristic = [m["decision"] for m in taps[0].to_bot if m["type"] == "request"]
    assert {"setup", "turn", "join", "play"} <= set(heuristic)
    assert {"setup", "turn", "take1", "pick", "join", "play", "business"} <= kinds
    assert wait_until_gone(HEURISTIC) == []


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_the_policy_always_answers_a_listed_option(players: int) -> None:
    choose = policy().choose
    variants = [{}, {"steal_pick": "victim"}, {"business_colour": "winning"}, {"action_die": "1-3-2"}]
    seen: set[str] = set()
    for seed, variant in enumerate(variants):
        state = RULES.new_game(players, RULES.config(variant), SeededChance(seed))
        rng = random.Random(seed)
        while (decision := state.decision()) is not None:
            options = decision.options
            assert options is not None
            if decision.seat % 2 == 0:
                view = state.view(decision.seat)
                action: Any = choose(view, decision.kind, options)
                assert action in options
                # Pure: the same request gives the same answer.
                assert choose(view, decision.kind, options) == action
                seen.add(decision.kind)
            else:
                action = pick_option(decision, rng)
            state.apply(decision.seat, action)
    assert {"setup", "turn", "join", "play", "take1", "pick"} <= seen


def test_the_policy_reads_the_wire_form_as_the_bot_process_does() -> None:
    """The bot converts JSON views and options to the engine's types: same answers as in process."""
    from referee.games.sicilianos import SicilianosAction, SicilianosView

    choose = policy().choose
    state = RULES.new_game(4, RULES.config({}), SeededChance(3))
    rng = random.Random(3)
    checked = 0
    while (decision := state.decision()) is not None and checked < 300:
        options = decision.options
        assert options is not None
        view = state.view(decision.seat)
        wire_view = msgspec.json.decode(msgspec.json.encode(view))
        wire_options = msgspec.json.decode(msgspec.json.encode(options))
        typed_view = msgspec.convert(wire_view, SicilianosView)
        typed_options = [msgspec.convert(o, SicilianosAction) for o in wire_options]
        assert choose(typed_view, decision.kind, typed_options) == choose(view, decision.kind, options)
        checked += 1
        state.apply(decision.seat, pick_option(decision, rng))
    assert checked > 50


def test_the_heuristic_clearly_beats_three_random_players() -> None:
    choose = policy().choose
    wins = 0.0
    games = 0
    for seed in range(10):
        for seat in range(4):
            state = RULES.new_game(4, RULES.config({}), SeededChance(seed))
            rng = random.Random(f"{seed}:{seat}")
            while (decision := state.decision()) is not None:
                options = decision.options
                assert options is not None
                if decision.seat == seat:
                    action = choose(state.view(seat), decision.kind, options)
                else:
                    action = pick_option(decision, rng)
                state.apply(decision.seat, action)
            winners = state.outcome().winners
            wins += 1 / len(winners) if seat in winners else 0.0
            games += 1
    assert wins / games > 0.5
