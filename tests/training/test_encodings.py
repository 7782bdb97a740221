"""The games' encodings (GameRules.encoding): every legal action is reachable by masked steps and no
illegal one is, the observation has its declared size and bounds, and the generic default's layout."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

import msgspec
import numpy as np
import pytest

from referee.games import get_rules
from referee.games.base import Decision, GameState, IllegalAction, SeededChance
from referee.games.encoding import GenericEncoding, NoEncoding, SchemaVector
from referee.games.sicilianos.encoding import CATALOGUE
from referee.games.vendetta import Place, Placement
from referee.games.vendetta.encoding import ACTION_SIZE, COUNT_BASE, DONE, VendettaEncoding, constraints_of

_encode = msgspec.json.encode


def _positions(
    game: str, n: int, seeds: range, every: int, variants: dict[str, str] | None = None
) -> Iterator[GameState]:
    rules = get_rules(game)
    config = rules.config(variants or {})
    for seed in seeds:
        state = rules.new_game(n, config, SeededChance(seed))
        rng = random.Random(seed)
        step = 0
        while (decision := state.decision()) is not None:
            if step % every == 0:
                yield state
            state.apply(decision.seat, state.random_action(rng))
            step += 1


def _reachable(encoding: Any, decision: Decision, action: Any) -> bool:
    """Whether masked steps make ``action``: each of ``steps_for``'s steps allowed, and the action they make it."""
    steps = encoding.steps_for(decision, action)
    for i, step in enumerate(steps):
        if not encoding.mask(decision, steps[:i])[step]:
            return False
        made = encoding.action(decision, steps[: i + 1])
        if (made is not None) != (i == len(steps) - 1):
            return False
    return _encode(encoding.action(decision, steps)) == _encode(action)


def _legal(state: GameState, seat: int, action: Any) -> bool:
    try:
        state.copy().apply(seat, action)
    except IllegalAction:
        return False
    return True


def _candidate_places(hand: int) -> Iterator[Place]:
    """Every placement of one or two districts (either order, a district twice too) with counts 0..hand+1."""
    yield Place([])
    counts = range(hand + 2)
    for d in range(1, 14):
        for c in counts:
            yield Place([Placement(d, c)])
    for d1, d2 in itertools.product(range(1, 14), repeat=2):
        for c1, c2 in itertools.product(range(1, hand + 2), repeat=2):
            yield Place([Placement(d1, c1), Placement(d2, c2)])


@pytest.mark.slow  # about 4 s: thousands of placements, each judged by the engine
def test_vendetta_steps_reach_every_legal_placement_and_no_illegal_one() -> None:
    checked = positions = 0
    for state in _positions("vendetta", 4, range(1, 30), 7):
        decision = state.decision()
        assert decision is not None
        limits = constraints_of(decision)
        # Small hands keep the enumeration to thousands per position; a district another seat holds
        # alone within the hand meets P4 too.
        if not 1 <= limits.hand <= 4 or max(m for m in limits.minimum if m <= limits.hand) < 2:
            continue
        positions += 1
        if positions > 4:
            break
        encoding = VendettaEncoding(4)
        for place in _candidate_places(limits.hand):
            legal = _legal(state, decision.seat, place)
            assert _reachable(encoding, decision, place) == legal, (place, decision)
            checked += legal
    assert positions > 4 and checked > 150  # legal ones: 193 in these five positions, among thousands judged


@pytest.mark.parametrize("n_players", [3, 5])
def test_every_masked_walk_of_vendetta_steps_is_a_legal_placement(n_players: int) -> None:
    encoding = VendettaEncoding(n_players)
    rng = np.random.default_rng(n_players)
    walks = 0
    for state in _positions("vendetta", n_players, range(1, 5), 3, {"control": "majority"}):
        decision = state.decision()
        assert decision is not None
        for _ in range(5):
            chosen: list[int] = []
            while (place := encoding.action(decision, chosen)) is None:
                mask = encoding.mask(decision, chosen)
                assert mask.shape == (ACTION_SIZE,) and mask.any()
                chosen.append(int(rng.choice(np.flatnonzero(mask))))
            assert not encoding.mask(decision, chosen).any()  # a made placement takes no further step
            assert _legal(state, decision.seat, place), (chosen, place)
            walks += 1
    assert walks > 200


def test_vendetta_steps_describe_themselves() -> None:
    state = get_rules("vendetta").new_game(3, get_rules("vendetta").config({}), SeededChance(1))
    decision = state.decision()
    assert decision is not None
    encoding = VendettaEncoding(3)
    assert encoding.describe(decision, [], DONE) == "done"
    assert encoding.describe(decision, [], 7) == "district 7"
    assert encoding.describe(decision, [7], COUNT_BASE + 3) == "3 mafiosi"


@pytest.mark.parametrize("variants", [{}, {"steal_pick": "victim", "business_colour": "winning"}])
def test_sicilianos_mask_is_exactly_the_options_and_each_number_makes_its_option(variants: dict[str, str]) -> None:
    rules = get_rules("sicilianos")
    for n in (3, 6):
        encoding = rules.encoding(n, rules.config(variants))
        for state in _positions("sicilianos", n, range(1, 4), 2, variants):
            decision = state.decision()
            assert decision is not None and decision.options
            mask = encoding.mask(decision)
            made = {_encode(encoding.action(decision, [int(i)])) for i in np.flatnonzero(mask)}
            assert made == {_encode(option) for option in decision.options}
            for option in decision.options:
                assert _reachable(encoding, decision, option)


def test_the_sicilianos_catalogue_holds_every_action_once() -> None:
    assert len(CATALOGUE) == 866
    assert len({_encode(action) for action in CATALOGUE}) == len(CATALOGUE)


@pytest.mark.parametrize(
    ("game", "n_players"), [("vendetta", 3), ("vendetta", 5), ("sicilianos", 3), ("sicilianos", 6)]
)
def test_observations_have_the_declared_size_and_stay_within_bounds(game: str, n_players: int) -> None:
    rules = get_rules(game)
    encoding = rules.encoding(n_players, rules.config({}))
    for state in _positions(game, n_players, range(1, 4), 4):
        decision = state.decision()
        assert decision is not None
        for seat in range(n_players):
            vector = encoding.observe(state.view(seat), decision if seat == decision.seat else None)
            assert vector.shape == (encoding.observation_size,) and vector.dtype == np.float32
            assert encoding.low <= vector.min() and vector.max() <= encoding.high


def test_observations_turn_the_table_so_the_observing_seat_comes_first() -> None:
    # Vendetta's view is the same for every seat but its seat field: a seat-relative encoding differs by seat.
    rules = get_rules("vendetta")
    state = rules.new_game(3, rules.config({}), SeededChance(4))
    encoding = VendettaEncoding(3)
    seen = [encoding.observe(state.view(seat), None) for seat in range(3)]
    at, size = encoding.at["hands"], 3
    assert not np.array_equal(seen[0], seen[1])
    assert np.array_equal(np.roll(seen[0][at : at + size], -1), seen[1][at : at + size])


class _Inner(msgspec.Struct, tag="inner", tag_field="type"):
    value: int


class _Other(msgspec.Struct, tag="other", tag_field="type"):
    flag: bool


class _View(msgspec.Struct):
    count: int
    name: str
    choice: str | None
    items: list[int]
    table: dict[str, int]
    nested: _Inner | _Other | None


def test_the_generic_layout_reads_any_view_by_its_schema() -> None:
    layout = SchemaVector(_View, slots=2)
    # count 1, name 1, choice 1+1, items 1+2, table 1+2*(1+1), nested 2 tags + 1 + 1 (None: no tag set)
    assert layout.size == 1 + 1 + 2 + 3 + 5 + 4
    out = np.zeros(layout.size, dtype=np.float32)
    layout.write(_View(3, "x", None, [1, 2, 3], {"b": 2, "a": 1}, _Other(True)), out)
    again = np.zeros(layout.size, dtype=np.float32)
    layout.write(msgspec.to_builtins(_View(3, "x", None, [1, 2, 3], {"a": 1, "b": 2}, _Other(True))), again)
    assert np.array_equal(out, again)  # a Struct and its JSON, a dict in any order
    assert out[0] == pytest.approx(np.log1p(3))
    other = np.zeros(layout.size, dtype=np.float32)
    layout.write(_View(3, "x", None, [1, 2, 3], {"b": 2, "a": 1}, _Inner(5)), other)
    assert not np.array_equal(out, other)


def test_the_generic_encoding_refuses_a_decision_without_options_in_one_line() -> None:
    rules = get_rules("vendetta")
    encoding = GenericEncoding(rules, 3, rules.config({}), max_options=8)  # Vendetta's placement lists none
    state = rules.new_game(3, rules.config({}), SeededChance(1))
    decision = state.decision()
    assert decision is not None
    with pytest.raises(NoEncoding, match=r"lists no options, so the generic encoding cannot .*GameRules\.encoding"):
        encoding.mask(decision)


def test_the_generic_encoding_says_how_to_make_room_for_more_options() -> None:
    rules = get_rules("sicilianos")
    encoding = GenericEncoding(rules, 3, rules.config({}), max_options=2)
    state = rules.new_game(3, rules.config({}), SeededChance(1))
    decision = state.decision()
    assert decision is not None and decision.options and len(decision.options) > 2
    with pytest.raises(NoEncoding, match=rf"lists {len(decision.options)} options, more than the 2 .* max_options="):
        encoding.mask(decision)
