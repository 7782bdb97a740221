"""Properties of random legal Sicilianos games for 3 to 6 players (hypothesis).

Conservation (C1, C5, C6), determinism, duplicate deals (H3), forfeits (H2), and
illegal actions leaving the state untouched.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games.base import IllegalAction, RecordingChance, ScriptedChance, SeededChance
from referee.games.sicilianos import RULES, SicilianosState
from referee.games.sicilianos.components import COLOURS, KINDS, NOTE_VALUES
from referee.games.sicilianos.messages import (
    AsFamily,
    AsRenegade,
    Draw,
    Explode,
    Give,
    Inspect,
    Join,
    Pass,
    Pick,
    Play,
    Roll,
    Rolled,
    Spoils,
    StartWar,
    StayOut,
    Steal,
    TakeBusiness,
)
from referee.games.sicilianos.testing import invariant_problems, snapshot

VARIANTS = [
    {},
    {"steal_pick": "victim", "business_colour": "winning"},
    {"action_die": "1-1-4"},
]
seeds = st.integers(0, 2**32 - 1)
tables = st.integers(3, 6)
variant_sets = st.sampled_from(VARIANTS)
# "uniform" picks among all options, so wars are frequent and games short; "roller"
# rolls 85% of the time it may, which fills hands and reaches 9-card draws,
# longer wars and later Renegades.
policies = st.sampled_from(["uniform", "roller"])

# Every action a bot could send, legal or not.
UNIVERSE: list[Any] = [Roll(), StayOut(), Pass(), AsFamily(), AsRenegade()]
UNIVERSE += [Spoils("business"), Spoils("launder")] + [TakeBusiness(k) for k in KINDS]
UNIVERSE += [cls(c) for cls in (Draw, Inspect) for c in COLOURS]
UNIVERSE += [cls(v) for cls in (Pick, Give) for v in range(13)]
UNIVERSE += [Steal(t, c) for t in range(7) for c in COLOURS]
UNIVERSE += [cls(c, v) for cls in (Play, Explode) for c in COLOURS for v in range(1, 12)]
UNIVERSE += [
    cls(c, v, note) for cls in (StartWar, Join) for c in COLOURS for v in range(1, 12) for note in (*NOTE_VALUES, 1_000)
]


def choose(state: SicilianosState, rng: random.Random, policy: str) -> Any:
    """A random legal action for the seat to move, under ``policy``."""
    decision = state.decision()
    assert decision is not None and decision.options is not None
    if policy == "roller" and decision.options[0] == Roll() and rng.random() < 0.85:
        return Roll()
    return state.random_action(rng)


def play_out(state: SicilianosState, rng: random.Random, forfeit_at: int = -1) -> list[bytes]:
    """Play random legal actions to the end; every step's events, encoded."""
    log = []
    steps = 0
    while not state.is_over():
        decision = state.decision()
        assert decision is not None
        events = state.apply(decision.seat, state.random_action(rng))
        log.append(msgspec.json.encode(events))
        steps += 1
        if steps == forfeit_at:
            log.append(msgspec.json.encode(state.forfeit(rng.randrange(state.n))))
    return log


@settings(max_examples=120, deadline=None)
@given(seed=seeds, n=tables, variants=variant_sets, policy=policies, forfeit=st.booleans())
def test_C1_C5_C6_H2_cards_businesses_and_money_conserved(
    seed: int, n: int, variants: dict[str, str], policy: str, forfeit: bool
) -> None:
    state = RULES.new_game(n, RULES.config(variants), SeededChance(seed))
    rng = random.Random(seed)
    forfeit_at = rng.randrange(5, 60) if forfeit else -1
    steps = 0
    while not state.is_over():
        assert invariant_problems(state) == []
        decision = state.decision()
        assert decision is not None and decision.options
        assert not state.forfeited[decision.seat]  # H2
        assert len(decision.options) >= 2  # single options are played by the engine
        assert state.pass_action() in decision.options
        state.apply(decision.seat, choose(state, rng, policy))
        steps += 1
        if steps == forfeit_at:
            state.forfeit(rng.randrange(n))
    assert invariant_problems(state) == []
    outcome = state.outcome()
    assert min(outcome.ranks) == 1 and len(outcome.scores) == n
    assert outcome.ended_by in {"godfather", "no_dirty_money", "turn_limit", "forfeits"}
    assert set(outcome.forfeited) == {p for p in range(n) if state.forfeited[p]}
    in_play = [p for p in range(n) if not state.forfeited[p]]
    for p in outcome.forfeited:
        assert all(outcome.ranks[p] > outcome.ranks[q] for q in in_play)


@settings(max_examples=30, deadline=None)
@given(seed=seeds, n=tables, variants=variant_sets)
def test_determinism_same_seed_same_actions_same_game_and_replay(seed: int, n: int, variants: dict[str, str]) -> None:
    config = RULES.config(variants)
    recording = RecordingChance(SeededChance(seed))
    first = RULES.new_game(n, config, recording)
    log_a = play_out(first, random.Random(seed))
    second = RULES.new_game(n, config, SeededChance(seed))
    log_b = play_out(second, random.Random(seed))
    assert log_a == log_b
    assert first.outcome() == second.outcome()
    # A replay without the seed: the recorded draws, in order.
    script = ScriptedChance(recording.draws)
    replayed = RULES.new_game(n, config, script)
    assert play_out(replayed, random.Random(seed)) == log_a
    assert script.exhausted


@settings(max_examples=30, deadline=None)
@given(seed=seeds, n=tables)
def test_H3_duplicate_deal_same_piles_and_dice_whatever_the_play(seed: int, n: int) -> None:
    config = RULES.config({})
    games = [RULES.new_game(n, config, SeededChance(seed)) for _ in range(2)]
    piles = [pile[:] for pile in games[0].piles]
    assert games[1].piles == piles
    # Rotating the seats changes who plays what: model it with different random play.
    dice: list[list[tuple[str, ...]]] = []
    for k, state in enumerate(games):
        rng = random.Random(seed + 1 + k)
        rolled: list[tuple[str, ...]] = []
        while not state.is_over():
            decision = state.decision()
            assert decision is not None
            for event in state.apply(decision.seat, state.random_action(rng)):
                if isinstance(event, Rolled):
                    rolled.append((*event.colours, event.action))
        dice.append(rolled)
    common = min(len(d) for d in dice)
    assert common > 0 and dice[0][:common] == dice[1][:common]
    other_table = RULES.new_game(3 + (n - 2) % 4, config, SeededChance(seed))
    assert other_table.piles == piles


@settings(max_examples=30, deadline=None)
@given(seed=seeds, n=tables, variants=variant_sets, policy=policies)
def test_illegal_actions_raise_and_leave_the_state_unchanged(
    seed: int, n: int, variants: dict[str, str], policy: str
) -> None:
    state = RULES.new_game(n, RULES.config(variants), SeededChance(seed))
    rng = random.Random(seed)
    while not state.is_over():
        decision = state.decision()
        assert decision is not None and decision.options is not None
        if rng.random() < 0.3:
            before = snapshot(state)
            wrong_seat = (decision.seat + 1 + rng.randrange(n - 1)) % n
            tries = [(wrong_seat, decision.options[0])]
            tries += [(decision.seat, a) for a in rng.sample(UNIVERSE, 6) if a not in decision.options]
            for seat, action in tries:
                try:
                    state.apply(seat, action)
                except IllegalAction as exc:
                    assert exc.rule_id and exc.detail
                else:
                    raise AssertionError(f"{action} by seat {seat} was accepted")
                assert snapshot(state) == before
        state.apply(decision.seat, choose(state, rng, policy))
    before = snapshot(state)
    try:
        state.apply(0, Roll())
    except IllegalAction:
        pass
    else:
        raise AssertionError("an action after the end was accepted")
    assert snapshot(state) == before
