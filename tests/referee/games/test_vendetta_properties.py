"""Property tests over random legal Vendetta games, for every table size and variant.

Each game plays random legal placements, with random forfeits, under a small
round limit so that a hypothesis run stays fast. At every step the invariants
hold; at random steps an illegal action is tried and must change nothing.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games.base import (
    Chance,
    ChanceDraw,
    IllegalAction,
    RecordingChance,
    ScriptedChance,
    SeededChance,
)
from referee.games.vendetta import (
    RULES,
    Place,
    PlaceConstraints,
    Placement,
    Raided,
    Revealed,
    VendettaConfig,
    VendettaState,
)

VARIANTS = list(itertools.product([3, 4, 5], ["except-dealt", "dealt-only"], ["sole", "majority"]))
FAST = settings(max_examples=10, deadline=None)


@dataclass
class Game:
    """A played game: what was done (to replay it) and what happened."""

    moves: list[tuple[str, int, Any]] = field(default_factory=list)
    events: list[msgspec.Struct] = field(default_factory=list)
    rejected: int = 0


def snapshot(state: VendettaState) -> bytes:
    """The whole state but the chance source (and the lazily filled minimum cache)."""
    values = [
        getattr(state, name)
        for name in VendettaState.__slots__
        if name not in ("_chance", "_min_cache", "_order", "_seats")
    ]
    return msgspec.msgpack.encode(values)


def check_invariants(state: VendettaState) -> None:
    view = state.view(0)
    n = view.n_players
    for s in range(n):
        on_board = sum(row[s] for row in view.board)
        assert on_board + view.hands[s] + view.box[s] == 50
    assert all(c >= 0 for row in view.board for c in row)
    assert all(c >= 0 for c in (*view.hands, *view.box, *view.points))
    assert len(view.revealed) + view.pile_left == 11
    # The owner and P4 caches agree with the board.
    for d, row in enumerate(view.board):
        present = [s for s in range(n) if row[s]]
        owner = state._owner[d]
        if not present:
            assert owner == -1
        elif len(present) == 1:
            assert owner == present[0] and state._minbase[d] == row[present[0]]
        else:
            assert owner == -2
    decision = state.decision()
    if decision is None:
        assert state.is_over() and view.active_seat == -1
    else:
        assert not view.forfeited[decision.seat]
        assert decision.seat == view.active_seat == (view.start_seat + view.turn) % n
        c = decision.constraints
        assert c.hand == view.hands[decision.seat]
        assert c.max_districts == (1 if view.turn == 0 else 2)


def illegal_variants(state: VendettaState, seat: int, c: PlaceConstraints) -> list[tuple[int, Any, str]]:
    """Illegal actions for the current position, each with the rule it breaks."""
    n = state.n_players
    other = (seat + 1) % n
    other_rule = "H2" if state.view(0).forfeited[other] else "R2"
    out: list[tuple[int, Any, str]] = [
        (other, Place([]), other_rule),
        (
            seat,
            Place([Placement(1, 1), Placement(2, 1), Placement(3, 1)]),
            "P2" if c.max_districts == 1 else "P1",
        ),
        (seat, Place([Placement(0, 1)]), "P1"),
        (seat, Place([Placement(14, 1)]), "P1"),
        (seat, Place([Placement(5, 0)]), "P3"),
        (seat, Place([Placement(5, c.hand + 1)]), "P3"),
    ]
    if c.max_districts == 2:
        out.append((seat, Place([Placement(6, 1), Placement(6, 1)]), "P1"))
    else:
        out.append((seat, Place([Placement(6, 1), Placement(7, 1)]), "P2"))
    for d, low in enumerate(c.minimum):
        if 1 < low <= c.hand + 1:
            out.append((seat, Place([Placement(d + 1, low - 1)]), "P4"))
    return out


def run(
    n: int,
    config: VendettaConfig,
    chance: Chance,
    seed: int,
    *,
    forfeit_chance: float = 0.0,
    illegal_chance: float = 0.0,
    check: bool = True,
) -> tuple[VendettaState, Game]:
    rng = random.Random(seed)
    state = RULES.new_game(n, config, chance)
    game = Game()
    while not state.is_over():
        if check:
            check_invariants(state)
        decision = state.decision()
        assert decision is not None
        if rng.random() < illegal_chance:
            seat, action, rule = rng.choice(illegal_variants(state, decision.seat, decision.constraints))
            before = snapshot(state)
            with pytest.raises(IllegalAction) as caught:
                state.apply(seat, action)
            assert caught.value.rule_id == rule, (caught.value, action)
            assert snapshot(state) == before
            game.rejected += 1
        if rng.random() < forfeit_chance:
            seat = rng.randrange(n)
            game.moves.append(("forfeit", seat, None))
            game.events += state.forfeit(seat)
            continue
        action = state.random_action(rng)
        game.moves.append(("apply", decision.seat, action))
        game.events += state.apply(decision.seat, action)
    if check:
        check_invariants(state)
    return state, game


def replay(n: int, config: VendettaConfig, chance: Chance, moves: list[tuple[str, int, Any]]) -> list[msgspec.Struct]:
    state = RULES.new_game(n, config, chance)
    events: list[msgspec.Struct] = []
    for kind, seat, action in moves:
        events += state.forfeit(seat) if kind == "forfeit" else state.apply(seat, action)
    assert state.is_over()
    return events


def rounds_of_cards(events: list[msgspec.Struct]) -> list[tuple[list[int], list[int]]]:
    """Each completed round's revealed protection cards and raid cards."""
    out = []
    revealed: list[int] = []
    for event in events:
        if isinstance(event, Revealed):
            revealed.append(event.district)
        elif isinstance(event, Raided):
            out.append((revealed, event.districts))
            revealed = []
    return out


@pytest.mark.parametrize(("n", "setup", "control"), VARIANTS)
@FAST
@given(
    seed=st.integers(0, 2**31),
    limit=st.integers(1, 5),
    forfeits=st.sampled_from([0.0, 0.0, 0.01]),
)
def test_s3_p5_conservation_and_caches_at_every_step(
    n: int, setup: str, control: str, seed: int, limit: int, forfeits: float
) -> None:
    config = RULES.config({"setup": setup, "control": control, "round_limit": str(limit)})
    state, game = run(n, config, SeededChance(seed), seed, forfeit_chance=forfeits, illegal_chance=0.1)
    outcome = state.outcome()
    assert min(outcome.ranks) == 1 and len(outcome.ranks) == n
    # H1: forfeits in order, ranked below every seat in play, later ones higher.
    forfeited = list(dict.fromkeys(s for kind, s, _ in game.moves if kind == "forfeit"))
    assert outcome.forfeited == forfeited
    in_play = [outcome.ranks[s] for s in range(n) if s not in forfeited]
    assert [outcome.ranks[s] for s in reversed(forfeited)] == list(range(len(in_play) + 1, n + 1))
    assert all(outcome.ranks[w] == 1 for w in outcome.winners)
    assert outcome.stats["districts"] == state.view(0).controlled
    assert state.view(0).round <= limit


@pytest.mark.parametrize(("n", "setup", "control"), VARIANTS)
@FAST
@given(seed=st.integers(0, 2**31))
def test_p6_illegal_actions_leave_the_state_unchanged(n: int, setup: str, control: str, seed: int) -> None:
    config = RULES.config({"setup": setup, "control": control, "round_limit": "3"})
    _, game = run(n, config, SeededChance(seed), seed, illegal_chance=0.5, check=False)
    assert game.rejected > 0


@pytest.mark.parametrize("n", [3, 4, 5])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), variant=st.sampled_from(VARIANTS))
def test_h4_same_seed_and_actions_give_the_same_game(n: int, seed: int, variant: tuple[int, str, str]) -> None:
    config = RULES.config({"setup": variant[1], "control": variant[2], "round_limit": "4"})
    _, first = run(n, config, SeededChance(seed), seed, forfeit_chance=0.01, check=False)
    again = replay(n, config, SeededChance(seed), first.moves)
    assert msgspec.msgpack.encode(again) == msgspec.msgpack.encode(first.events)


@pytest.mark.parametrize("n", [3, 4, 5])
@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    players_a=st.integers(0, 2**31),
    players_b=st.integers(0, 2**31),
)
def test_h4_same_seed_other_players_same_deal_and_round_cards(
    n: int, seed: int, players_a: int, players_b: int
) -> None:
    # Rotated seats mean other decisions in every seat: model that with other action seeds.
    config = RULES.config({"round_limit": "6"})
    record_a = RecordingChance(SeededChance(seed))
    record_b = RecordingChance(SeededChance(seed))
    state_a, a = run(n, config, record_a, players_a, check=False)
    state_b, b = run(n, config, record_b, players_b, check=False)
    assert state_a.view(0).dealt == state_b.view(0).dealt
    cards_a, cards_b = rounds_of_cards(a.events), rounds_of_cards(b.events)
    common = min(len(cards_a), len(cards_b))
    assert common >= 1 and cards_a[:common] == cards_b[:common]
    # Only the deal and one shuffle per round are ever drawn.
    for record, state in ((record_a, state_a), (record_b, state_b)):
        streams = [(d.stream, d.kind, d.n) for d in record.draws]
        rounds = state.view(0).round
        assert streams == [("deal", "shuffle", 13)] + [("round", "shuffle", 13)] * rounds
    shorter = min(len(record_a.draws), len(record_b.draws))
    assert record_a.draws[:shorter] == record_b.draws[:shorter]


@pytest.mark.parametrize("n", [3, 4, 5])
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31), variant=st.sampled_from(VARIANTS))
def test_h4_scripted_chance_from_a_recording_reproduces_the_game(
    n: int, seed: int, variant: tuple[int, str, str]
) -> None:
    config = RULES.config({"setup": variant[1], "control": variant[2], "round_limit": "4"})
    recording = RecordingChance(SeededChance(seed))
    _, game = run(n, config, recording, seed, forfeit_chance=0.01, check=False)
    draws = msgspec.json.decode(msgspec.json.encode(recording.draws), type=list[ChanceDraw])
    scripted = ScriptedChance(draws)
    events = replay(n, config, scripted, game.moves)
    assert scripted.exhausted
    assert msgspec.json.encode(events) == msgspec.json.encode(game.events)


def test_h4_draw_types_round_trip_for_replays() -> None:
    recording = RecordingChance(SeededChance(1))
    RULES.new_game(4, VendettaConfig(), recording)
    raw = msgspec.json.encode(recording.draws)
    assert raw.startswith(b'[["deal","shuffle",13,[')
