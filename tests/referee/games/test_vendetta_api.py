"""Vendetta's interface: configuration, wire shapes, random placements, copies and views."""

from __future__ import annotations

import random
from collections import Counter

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games import get_rules
from referee.games.base import GameRules, IllegalAction, SeededChance, UnknownVariant
from referee.games.vendetta import (
    RULES,
    GameEnded,
    Place,
    PlaceConstraints,
    Placed,
    Placement,
    Revealed,
    RoundStarted,
    VendettaConfig,
    VendettaState,
    VendettaView,
    random_placement,
)

# ---------------------------------------------------------------------------
# Registry and configuration


def test_rules_is_the_registered_vendetta_game() -> None:
    rules: GameRules = RULES  # structural check for mypy
    assert get_rules("vendetta") is rules
    assert (RULES.name, RULES.min_players, RULES.max_players) == ("vendetta", 3, 5)
    assert RULES.config_type is VendettaConfig and RULES.view_type is VendettaView
    assert RULES.action_type is Place


def test_config_defaults_and_every_variant_round_trip() -> None:
    assert RULES.config({}) == VendettaConfig("except-dealt", "sole", 30)
    for setup in ("except-dealt", "dealt-only"):
        for control in ("sole", "majority"):
            text = {"setup": setup, "control": control, "round_limit": "7"}
            config = RULES.config(text)
            assert RULES.variants(VendettaConfig(config.setup, config.control, 7)) == text
            assert RULES.variants(config) == text
    assert RULES.variants(RULES.config({})) == {
        "setup": "except-dealt",
        "control": "sole",
        "round_limit": "30",
    }


@pytest.mark.parametrize(
    ("variants", "words"),
    [
        ({"setup": "all"}, ["setup", "'all'", "except-dealt", "dealt-only"]),
        ({"control": "most"}, ["control", "'most'", "sole", "majority"]),
        ({"round_limit": "0"}, ["round_limit", "'0'", "1 to 1000"]),
        ({"round_limit": "ten"}, ["round_limit", "'ten'", "1 to 1000"]),
        ({"round_limit": "-3"}, ["round_limit", "'-3'"]),
        ({"speed": "fast"}, ["'speed'", "'fast'", "setup, control or round_limit"]),
    ],
)
def test_config_rejects_bad_variants_in_one_line(variants: dict[str, str], words: list[str]) -> None:
    with pytest.raises(UnknownVariant) as caught:
        RULES.config(variants)
    message = str(caught.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_new_game_checks_table_and_config() -> None:
    for n in (2, 6):
        with pytest.raises(ValueError, match="3 to 5"):
            RULES.new_game(n, VendettaConfig(), SeededChance(1))
    with pytest.raises(ValueError, match="round_limit"):
        RULES.new_game(4, VendettaConfig(round_limit=0), SeededChance(1))
    with pytest.raises(TypeError):
        RULES.new_game(4, msgspec.Struct(), SeededChance(1))


# ---------------------------------------------------------------------------
# Wire shapes


def test_wire_place_action() -> None:
    action = Place([Placement(7, 3), Placement(2, 1)])
    assert msgspec.json.encode(action) == (
        b'{"type":"place","placements":[{"district":7,"count":3},{"district":2,"count":1}]}'
    )
    decoded = msgspec.json.decode(
        b'{"type":"place","placements":[{"district":7,"count":3}]}',
        type=RULES.action_type,
    )
    assert decoded == Place([Placement(7, 3)])
    assert msgspec.json.decode(b'{"type":"place","placements":[]}', type=RULES.action_type) == Place([])
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"type":"place","placements":[{"district":"7","count":3}]}', type=Place)


def test_wire_decision_and_constraints() -> None:
    state = RULES.new_game(4, VendettaConfig(), SeededChance(2))
    decision = state.decision()
    assert decision is not None
    assert msgspec.json.decode(msgspec.json.encode(decision)) == {
        "seat": 0,
        "kind": "place",
        "options": None,
        "constraints": {"max_districts": 1, "hand": 10, "minimum": [1] * 13},
    }


def test_wire_view_fields() -> None:
    state = RULES.new_game(3, VendettaConfig(), SeededChance(2))
    data = msgspec.json.decode(msgspec.json.encode(state.view(1)))
    assert data["type"] == "vendetta"
    for key, value in {
        "seat": 1,
        "n_players": 3,
        "round": 1,
        "turn": 0,
        "start_seat": 0,
        "active_seat": 0,
        "hands": [10, 10, 10],
        "box": [18, 18, 18],
        "points": [0, 0, 0],
        "controlled": [0, 0, 0],
        "revealed": [],
        "pile_left": 11,
        "forfeited": [False, False, False],
        "round_limit": 30,
    }.items():
        assert data[key] == value, key
    assert len(data["board"]) == 13 and all(len(row) == 3 for row in data["board"])
    assert len(data["dealt"]) == 3 and all(len(cards) == 2 for cards in data["dealt"])
    assert msgspec.json.decode(msgspec.json.encode(state.view(1)), type=RULES.view_type) == state.view(1)


def test_wire_events_are_tagged_and_round_trip() -> None:
    state = RULES.new_game(4, RULES.config({"round_limit": "2"}), SeededChance(9))
    rng = random.Random(1)
    tags: set[str] = set()
    while not state.is_over():
        decision = state.decision()
        assert decision is not None
        for event in state.apply(decision.seat, state.random_action(rng)):
            raw = msgspec.json.encode(event)
            tags.add(msgspec.json.decode(raw)["type"])
            assert msgspec.json.decode(raw, type=RULES.event_type) == event
    assert {"placed", "revealed", "raided", "scored", "game_over"} <= tags
    assert tags <= {
        "round_start",
        "placed",
        "revealed",
        "eliminated",
        "paid",
        "raided",
    } | {
        "scored",
        "reinforced",
        "forfeited",
        "game_over",
    }


def test_h5_events_for_returns_every_event() -> None:
    state = RULES.new_game(5, VendettaConfig(), SeededChance(3))
    events = state.apply(0, Place([Placement(3, 2)]))
    for seat in range(5):
        assert state.events_for(seat, events) == events
    assert isinstance(events[0], Placed) and isinstance(events[1], Revealed)


def test_h5_views_differ_only_in_seat() -> None:
    state = RULES.new_game(4, VendettaConfig(), SeededChance(3))
    views = [msgspec.structs.replace(state.view(s), seat=0) for s in range(4)]
    assert all(v == views[0] for v in views)
    with pytest.raises(ValueError, match="seat 4"):
        state.view(4)


def test_outcome_only_when_over() -> None:
    state = RULES.new_game(3, VendettaConfig(), SeededChance(3))
    with pytest.raises(ValueError, match="not over"):
        state.outcome()


# ---------------------------------------------------------------------------
# Random placements


def legal_under(place: Place, c: PlaceConstraints) -> bool:
    districts = [p.district for p in place.placements]
    return (
        len(districts) <= c.max_districts
        and len(set(districts)) == len(districts)
        and all(1 <= d <= 13 for d in districts)
        and all(p.count >= c.minimum[p.district - 1] and p.count >= 1 for p in place.placements)
        and sum(p.count for p in place.placements) <= c.hand
    )


@settings(max_examples=300, deadline=None)
@given(
    max_districts=st.integers(1, 2),
    hand=st.integers(0, 30),
    minimum=st.lists(st.integers(1, 25), min_size=13, max_size=13),
    seed=st.integers(0, 2**32),
)
def test_p1_p4_random_placement_is_always_legal(max_districts: int, hand: int, minimum: list[int], seed: int) -> None:
    c = PlaceConstraints(max_districts, hand, minimum)
    rng = random.Random(seed)
    for _ in range(20):
        assert legal_under(random_placement(c, rng), c)


def test_random_placement_infeasible_cases_give_the_empty_placement() -> None:
    rng = random.Random(0)
    assert random_placement(PlaceConstraints(2, 0, [1] * 13), rng) == Place([])
    assert random_placement(PlaceConstraints(2, 4, [5] * 13), rng) == Place([])
    # A single fits but no pair does: only 0 or 1 district.
    lone = [9] * 13
    lone[4] = 3
    seen = {len(random_placement(PlaceConstraints(2, 5, lone), rng).placements) for _ in range(200)}
    assert seen == {0, 1}


def test_random_placement_follows_the_documented_distribution() -> None:
    # hand 2, one district allowed, district 13 needs 3: k is 0 or 1 with
    # probability 1/2 each; then 12 districts x counts {1, 2} uniformly.
    minimum = [1] * 12 + [3]
    c = PlaceConstraints(1, 2, minimum)
    rng = random.Random(5)
    draws = 24000
    counts = Counter(tuple((p.district, p.count) for p in random_placement(c, rng).placements) for _ in range(draws))
    assert abs(counts[()] / draws - 0.5) < 0.02
    singles = [k for k in counts if k]
    assert len(singles) == 24 and all(k[0][0] != 13 for k in singles)
    for key in singles:
        assert abs(counts[key] / draws - 1 / 48) < 0.006
    # Pairs: counts uniform over the (spare+1)(spare+2)/2 extra splits.
    c = PlaceConstraints(2, 4, [1] * 13)
    splits: Counter[tuple[int, int]] = Counter()
    for _ in range(draws):
        placements = random_placement(c, rng).placements
        if len(placements) == 2:
            splits[(placements[0].count, placements[1].count)] += 1
    total = sum(splits.values())
    assert set(splits) == {(1, 1), (1, 2), (2, 1), (1, 3), (3, 1), (2, 2)}
    for share in splits.values():
        assert abs(share / total - 1 / 6) < 0.02


def test_random_action_equals_random_placement_of_the_decision() -> None:
    state = RULES.new_game(4, VendettaConfig(), SeededChance(8))
    rng = random.Random(4)
    for _ in range(60):
        decision = state.decision()
        assert decision is not None
        a = state.random_action(random.Random(rng.random()))
        b = random_placement(decision.constraints, random.Random(rng.random()))
        seed = rng.random()
        assert state.random_action(random.Random(seed)) == random_placement(decision.constraints, random.Random(seed))
        state.apply(decision.seat, a if legal_under(a, decision.constraints) else b)


# ---------------------------------------------------------------------------
# Copies and views


def play(state: VendettaState, rng: random.Random, turns: int) -> list[bytes]:
    out = []
    for _ in range(turns):
        decision = state.decision()
        if decision is None:
            break
        out.append(msgspec.json.encode(state.apply(decision.seat, state.random_action(rng))))
    return out


def test_copy_with_its_own_chance_draws_other_rounds() -> None:
    state = RULES.new_game(4, VendettaConfig(), SeededChance(12))
    clone = state.copy(SeededChance(99))
    assert play(clone, random.Random(2), 11)[:10] == play(state, random.Random(2), 11)[:10]


def test_from_view_rebuilds_the_visible_state() -> None:
    state = RULES.new_game(5, RULES.config({"control": "majority"}), SeededChance(21))
    play(state, random.Random(3), 30)
    view = state.view(2)
    rebuilt = VendettaState.from_view(view, SeededChance(1), RULES)
    assert rebuilt.view(2) == view
    assert rebuilt.decision() == state.decision()
    assert rebuilt.config == state.config
    bad = msgspec.structs.replace(view, hands=[h + 1 for h in view.hands])
    with pytest.raises(ValueError, match="mafiosi"):
        VendettaState.from_view(bad, SeededChance(1), RULES)


def test_game_over_event_is_last_and_view_shows_it() -> None:
    state = RULES.new_game(3, RULES.config({"round_limit": "1"}), SeededChance(5))
    events = [e for chunk in play(state, random.Random(0), 100) for e in msgspec.json.decode(chunk)]
    assert events[-1]["type"] == "game_over"
    view = state.view(0)
    assert view.over and view.active_seat == -1 and view.revealed and view.pile_left == 0
    assert state.outcome().ended_by in {"victory", "round_limit"}
    assert GameEnded.__struct_config__.tag == "game_over"
    assert RoundStarted.__struct_config__.tag == "round_start"


def test_h2_pass_action_is_the_always_legal_empty_placement() -> None:
    state = RULES.new_game(4, VendettaConfig(), SeededChance(6))
    rng = random.Random(2)
    for _ in range(40):
        decision = state.decision()
        assert decision is not None
        assert state.pass_action() == Place([])
        state.apply(
            decision.seat,
            state.pass_action() if rng.random() < 0.5 else state.random_action(rng),
        )


def test_decision_constraints_are_a_copy() -> None:
    state = RULES.new_game(4, VendettaConfig(), SeededChance(6))
    decision = state.decision()
    assert decision is not None
    decision.constraints.minimum[3] = 99
    again = state.decision()
    assert again is not None and again.constraints.minimum == [1] * 13
    assert legal_under(state.random_action(random.Random(1)), again.constraints)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"board": [[0] * 4] * 12}, "13 lists"),
        ({"hands": [10, 10, 10]}, "hands must have 4"),
        ({"points": [-1, 0, 0, 0]}, "negative"),
        ({"turn": 2}, "revealed cards"),
        ({"turn": 2, "revealed": [3, 3]}, "distinct"),
        ({"start_seat": 4}, "start seat"),
        (
            {"forfeited": [True, False, False, False], "forfeit_order": [0]},
            "seat to move",
        ),
        ({"forfeited": [False, True, False, False]}, "forfeit_order"),
        (
            {"forfeited": [False, True, True, True], "forfeit_order": [1, 2, 3]},
            "fewer than two",
        ),
        ({"over": True}, "over"),
        ({"round_limit": 0}, "round_limit"),
    ],
)
def test_from_view_refuses_inconsistent_views(change: dict[str, object], words: str) -> None:
    view = RULES.new_game(4, VendettaConfig(), SeededChance(1)).view(0)
    with pytest.raises(ValueError, match=words):
        VendettaState.from_view(msgspec.structs.replace(view, **change), SeededChance(1), RULES)


def test_h4_a_chance_source_that_does_not_shuffle_is_refused() -> None:
    class Broken:
        def shuffle(self, stream: str, n: int) -> list[int]:
            return [0] * n

        def below(self, stream: str, n: int) -> int:
            return 0

    with pytest.raises(ValueError, match="not a permutation"):
        RULES.new_game(3, VendettaConfig(), Broken())


def test_config_of_another_type_is_refused() -> None:
    with pytest.raises(TypeError):
        RULES.variants(msgspec.Struct())
    for bad in (VendettaConfig(setup="x"), VendettaConfig(control="x")):  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="use one of"):
            RULES.new_game(3, bad, SeededChance(1))


def test_p1_a_placement_of_another_type_is_illegal() -> None:
    state = RULES.new_game(3, VendettaConfig(), SeededChance(1))
    with pytest.raises(IllegalAction, match="P1: a placement must be a Placement"):
        state.apply(0, Place([{"district": 1, "count": 1}]))  # type: ignore[list-item]
