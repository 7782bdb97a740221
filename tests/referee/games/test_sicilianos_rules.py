"""Sicilianos rules, one test (or a few) per rule id of shared/rules/sicilianos.md.

Positions are built directly: ``position`` skips the setup and deals exactly the
named cards, with piles in a fixed order (each pile's top card is its lowest
value) and dice given in advance.
"""

from __future__ import annotations

import random
from bisect import insort
from typing import Any, cast

import msgspec
import pytest

from referee.games.base import IllegalAction, RecordingChance, SeededChance, UnknownVariant, rank_seats
from referee.games.sicilianos import RULES, SicilianosState, pick_option
from referee.games.sicilianos.components import (
    BOMB_TARGETS,
    COLOUR_INDEX,
    COLOURS,
    KIND_INDEX,
    PARTNER,
    START_MONEY,
    Colour,
    card_id,
    colour_of,
    value_of,
)
from referee.games.sicilianos.messages import (
    AsFamily,
    AsRenegade,
    BusinessTaken,
    CardUsed,
    Draw,
    Drew,
    Explode,
    Exploded,
    Give,
    Inspect,
    Inspected,
    Join,
    Laundered,
    NoBusiness,
    Pass,
    Passed,
    Pick,
    Play,
    Returned,
    Revealed,
    Roll,
    Spoils,
    StakesLost,
    StartWar,
    StayedOut,
    StayOut,
    Steal,
    StealView,
    Stole,
    TakeBusiness,
    TookNothing,
    WarResolved,
)
from referee.games.sicilianos.scoring import final_scores, owns_set
from referee.games.sicilianos.state import TURN
from referee.games.sicilianos.testing import snapshot
from referee.games.sicilianos.war import War, winning_seat

FACE = {"take2": 0, "take1": 2, "steal": 4}  # a face of the default "2-2-2" die


def card(text: str) -> int:
    """The card number of "blue 7"."""
    colour, value = text.split()
    return card_id(COLOUR_INDEX[colour], int(value))


class FixedChance:
    """Piles in value order (top card = lowest value); dice and steal picks given in advance."""

    def __init__(self, rolls: list[tuple[str, str, str]], steals: list[int]) -> None:
        self.dice = [v for c1, c2, face in rolls for v in (COLOUR_INDEX[c1], COLOUR_INDEX[c2], FACE[face])]
        self.steals = list(steals)

    def shuffle(self, stream: str, n: int) -> list[int]:
        return list(range(n))

    def below(self, stream: str, n: int) -> int:
        # Once the given draws run out: blue, blue, take 2 (for seats that must roll).
        queue = self.dice if stream == "dice" else self.steals
        value = queue.pop(0) if queue else 0
        assert 0 <= value < n
        return value


def position(
    n: int,
    hands: dict[int, list[str]],
    *,
    seat: int = 0,
    rolls: list[tuple[str, str, str]] | None = None,
    steals: list[int] | None = None,
    variants: dict[str, str] | None = None,
) -> SicilianosState:
    """A game at the start of ``seat``'s turn holding exactly these hands (setup skipped)."""
    state = RULES.new_game(n, RULES.config(variants or {}), FixedChance(rolls or [], steals or []))
    for p, cards in hands.items():
        for text in cards:
            c = card(text)
            state.piles[colour_of(c)].remove(c)
            insort(state.hands[p], c)
    state.setup_step = 4 * n
    state.stage = TURN
    state.turn_seat = seat
    state._decision = None
    state._advance([])
    return state


def act(state: SicilianosState, seat: int, action: Any) -> list[msgspec.Struct]:
    """Apply ``action`` for ``seat``, checking first that it is one of the listed options."""
    decision = state.decision()
    assert decision is not None and decision.seat == seat, decision
    assert decision.options is not None and action in decision.options, (
        action,
        decision,
    )
    return state.apply(seat, action)


def of_type(events: list[msgspec.Struct], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


def pile_values(state: SicilianosState, colour: str) -> list[int]:
    """A pile's values, top first."""
    return [value_of(c) for c in reversed(state.piles[COLOUR_INDEX[colour]])]


# ---------------------------------------------------------------------------
# Components and setup


def test_C1_C2_six_families_of_eleven_cards_1_to_11() -> None:
    state = RULES.new_game(4, RULES.config({}), SeededChance(3))
    everything = sorted(state.piles[c][i] for c in range(6) for i in range(len(state.piles[c])))
    everything += [x for hand in state.hands for x in hand]
    assert sorted(everything) == list(range(66))
    assert COLOURS == ("blue", "white", "black", "yellow", "red", "green")


def test_C3_renegade_pairs_are_symmetric_with_red_green_as_the_A_pair() -> None:
    names = {COLOURS[c]: COLOURS[PARTNER[c]] for c in range(6)}
    assert names == {
        "yellow": "black",
        "black": "yellow",
        "blue": "white",
        "white": "blue",
        "red": "green",
        "green": "red",
    }


def test_C4_every_colour_hit_by_three_bombs_never_by_itself_or_its_pair() -> None:
    assert {COLOURS[c] for c in BOMB_TARGETS[COLOUR_INDEX["black"]]} == {"green", "white", "blue"}
    hits = [0] * 6
    for colour, targets in enumerate(BOMB_TARGETS):
        assert len(set(targets)) == 3
        assert colour not in targets and PARTNER[colour] not in targets
        for t in targets:
            hits[t] += 1
    assert hits == [3] * 6


def test_C5_S1_eighteen_businesses_and_250000_dirty_money_each() -> None:
    state = RULES.new_game(6, RULES.config({}), SeededChance(1))
    assert state.business_piles == [[0, 1, 2]] * 6
    view = state.view(0)
    assert all(p.dirty == START_MONEY == 250_000 for p in view.players)
    assert view.players[0].notes == [50_000] * 2 + [40_000] * 2 + [20_000] * 2 + [10_000] * 2 + [5_000] * 2
    assert state.bank == 0


def test_S2_H3_one_shuffle_per_colour_pile_before_anything_else() -> None:
    chance = RecordingChance(SeededChance(9))
    RULES.new_game(3, RULES.config({}), chance)
    assert [(d.stream, d.kind, d.n) for d in chance.draws] == [(f"pile:{name}", "shuffle", 11) for name in COLOURS]


def test_S3_S4_setup_draws_clockwise_four_colours_each_then_seat_0_starts() -> None:
    state = RULES.new_game(3, RULES.config({}), SeededChance(5))
    rng = random.Random(0)
    seats = []
    while state.stage != TURN:
        decision = state.decision()
        assert decision is not None and decision.kind == "setup"
        held = {COLOURS[colour_of(c)] for c in state.hands[decision.seat]}
        offered = {o.colour for o in decision.options or []}
        assert offered == set(COLOURS) - held
        seats.append(decision.seat)
        state.apply(decision.seat, pick_option(decision, rng))
    assert seats == [0, 1, 2] * 4
    for hand in state.hands:
        assert len({colour_of(c) for c in hand}) == 4
    decision = state.decision()
    assert decision is not None and decision.seat == 0 and decision.kind == "turn"


def test_S3_drawing_a_colour_already_held_is_illegal() -> None:
    state = RULES.new_game(3, RULES.config({}), FixedChance([], []))
    act(state, 0, Draw("blue"))
    act(state, 1, Draw("blue"))
    act(state, 2, Draw("red"))
    before = snapshot(state)
    with pytest.raises(IllegalAction, match="S3: your 4 cards must have 4 colours"):
        state.apply(0, Draw("blue"))
    assert snapshot(state) == before


# ---------------------------------------------------------------------------
# The turn


def test_T0_ten_cards_force_a_war() -> None:
    hand = ["blue 1", "blue 2", "white 3", "white 4", "black 5", "black 6", "yellow 7", "red 8"]
    state = position(3, {0: [*hand, "green 9", "green 10"], 1: ["blue 3"]})
    decision = state.decision()
    assert decision is not None and decision.kind == "turn"
    assert Roll() not in (decision.options or [])
    assert len(decision.options or []) == 10 * 5
    with pytest.raises(IllegalAction, match="T0: you hold 10 cards and must start a gang war"):
        state.apply(0, Roll())


def test_T0_no_card_means_the_engine_rolls() -> None:
    state = position(3, {0: [], 1: ["blue 3"], 2: ["red 4"]}, rolls=[("blue", "white", "take2")])
    # Seat 0 had a single option (roll), so the engine played it: seat 1 decides now.
    decision = state.decision()
    assert decision is not None and decision.seat == 1
    assert [value_of(c) for c in state.hands[0]] == [1, 1]  # top blue and top white


def test_T0_A_no_dirty_note_means_roll_only() -> None:
    state = position(3, {0: ["blue 3"], 1: ["red 4"]}, rolls=[("red", "red", "take2")])
    state.notes[0] = [0] * 5
    state._decision = None
    state._advance([])
    # The only option was to roll, so it was played: seat 0 drew two red cards.
    assert sorted(state.hands[0]) == sorted([card("blue 3"), card("red 1"), card("red 2")])


def test_T1_D2_take_two_cards_of_the_rolled_colours_then_turn_passes() -> None:
    state = position(3, {0: ["blue 3"], 1: ["red 4"]}, rolls=[("green", "yellow", "take2")])
    events = act(state, 0, Roll())
    assert [(e.colour, e.value) for e in of_type(events, Drew)] == [("green", 1), ("yellow", 1)]
    decision = state.decision()
    assert decision is not None and decision.seat == 1


def test_D2_same_colour_twice_gives_two_cards_of_it_and_empty_pile_gives_nothing() -> None:
    state = position(3, {0: ["blue 3"], 1: ["red 4"]}, rolls=[("green", "green", "take2")])
    events = act(state, 0, Roll())
    assert [(e.colour, e.value) for e in of_type(events, Drew)] == [("green", 1), ("green", 2)]
    state = position(3, {0: ["blue 3"], 1: ["red 4"]}, rolls=[("green", "white", "take2")])
    state.piles[COLOUR_INDEX["white"]].clear()
    events = act(state, 0, Roll())
    assert [(e.colour, e.value) for e in of_type(events, Drew)] == [("green", 1)]
    assert [e.rule for e in of_type(events, TookNothing)] == ["D2"]


def test_D2_with_nine_cards_take_one_of_a_rolled_colour() -> None:
    hand = ["blue 2", "blue 3", "white 3", "white 4", "black 5", "black 6", "yellow 7", "red 8", "red 9"]
    state = position(3, {0: hand, 1: ["red 4"]}, rolls=[("green", "yellow", "take2")])
    act(state, 0, Roll())
    decision = state.decision()
    assert decision is not None and decision.kind == "take2_colour"
    assert decision.options == [Draw("yellow"), Draw("green")]
    with pytest.raises(IllegalAction, match="D2: with 9 cards you take one card of a rolled colour"):
        state.apply(0, Draw("blue"))
    act(state, 0, Draw("green"))
    assert len(state.hands[0]) == 10


def test_D1_take_one_top_of_any_pile_or_inspect_a_rolled_colour() -> None:
    state = position(3, {0: ["blue 3"], 1: ["red 4"]}, rolls=[("green", "yellow", "take1")])
    act(state, 0, Roll())
    decision = state.decision()
    assert decision is not None and decision.kind == "take1"
    assert decision.options == [Draw(c) for c in COLOURS] + [Inspect("yellow"), Inspect("green")]
    with pytest.raises(IllegalAction, match="D1: you may look through a rolled colour's pile"):
        state.apply(0, Inspect("blue"))


def test_D1_inspect_shows_the_pile_then_the_rest_keeps_its_order() -> None:
    state = position(3, {0: ["blue 3"], 1: ["red 4"]}, rolls=[("green", "green", "take1")])
    green = state.piles[COLOUR_INDEX["green"]]
    random.Random(4).shuffle(green)
    order = pile_values(state, "green")
    act(state, 0, Roll())
    events = act(state, 0, Inspect("green"))
    assert of_type(events, Inspected)[0].order == order
    decision = state.decision()
    assert decision is not None and decision.kind == "pick"
    assert decision.options == [Pick(v) for v in range(1, 12)]
    known = state.view(0).known_piles
    assert [(k.colour, k.order) for k in known] == [("green", order)]
    assert state.view(1).known_piles == []
    act(state, 0, Pick(order[4]))
    rest = order[:4] + order[5:]
    assert pile_values(state, "green") == rest
    assert [(k.colour, k.order) for k in state.view(0).known_piles] == [("green", rest)]
    # I2: the knowledge lasts until the pile changes.
    state._take_top(1, COLOUR_INDEX["green"], "top", [])
    assert state.view(0).known_piles == []


def test_D1_when_no_rolled_colour_has_cards_only_top_cards_remain() -> None:
    state = position(3, {0: ["blue 3"], 1: ["red 4"]}, rolls=[("green", "yellow", "take1")])
    state.piles[COLOUR_INDEX["green"]].clear()
    state.piles[COLOUR_INDEX["yellow"]].clear()
    act(state, 0, Roll())
    decision = state.decision()
    assert decision is not None
    assert decision.options == [Draw(c) for c in ("blue", "white", "black", "red")]


def test_DS_steal_a_rolled_colour_at_random_from_the_steal_stream() -> None:
    state = position(
        3,
        {0: ["blue 3"], 1: ["red 4", "red 9", "white 2"], 2: ["green 5"]},
        rolls=[("red", "green", "steal")],
        steals=[1],
    )
    act(state, 0, Roll())
    decision = state.decision()
    assert decision is not None and decision.kind == "steal"
    assert decision.options == [Steal(1, "red"), Steal(2, "green")]
    with pytest.raises(IllegalAction, match="DS: you may steal a rolled colour"):
        state.apply(0, Steal(1, "white"))
    events = act(state, 0, Steal(1, "red"))
    (stole,) = of_type(events, Stole)
    assert (stole.thief, stole.victim, stole.value, stole.picked_by) == (0, 1, 9, "chance")
    assert card("red 9") in state.hands[0]
    # I2: thief and victim see the value, the third seat only the colour.
    assert of_type(state.events_for(2, events), Stole)[0].value is None
    assert of_type(state.events_for(1, events), Stole)[0].value == 9
    assert state.view(2).last_steal == StealView(0, 1, "red", None)
    assert state.view(1).last_steal == StealView(0, 1, "red", 9)


def test_DS_nothing_when_nobody_holds_a_rolled_colour() -> None:
    state = position(3, {0: ["blue 3"], 1: ["red 4"], 2: ["green 5"]}, rolls=[("yellow", "yellow", "steal")])
    events = act(state, 0, Roll())
    assert [e.rule for e in of_type(events, TookNothing)] == ["DS"]
    decision = state.decision()
    assert decision is not None and decision.seat == 1


def test_DS_variant_victim_chooses_the_card() -> None:
    state = position(
        3,
        {0: ["blue 3"], 1: ["red 4", "red 9"], 2: ["green 5"]},
        rolls=[("red", "red", "steal")],
        variants={"steal_pick": "victim"},
    )
    act(state, 0, Roll())
    # Seat 0's only option, steal red from seat 1, was played by the engine.
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (1, "give")
    assert decision.options == [Give(4), Give(9)]
    events = act(state, 1, Give(4))
    assert of_type(events, Stole)[0].picked_by == "victim"
    assert card("red 4") in state.hands[0]


# ---------------------------------------------------------------------------
# Gang wars


def war_of_three(
    hands: dict[int, list[str]], first: dict[int, tuple[str, int]], variants: dict[str, str] | None = None
) -> SicilianosState:
    """Seat 0 starts a war and seats 1 and 2 join, each with the given card and note."""
    state = position(3, hands, variants=variants)
    colour, value = first[0][0].split()
    act(state, 0, StartWar(cast(Colour, colour), int(value), first[0][1]))
    for seat in (1, 2):
        if seat in first:
            colour, value = first[seat][0].split()
            act(state, seat, Join(cast(Colour, colour), int(value), first[seat][1]))
    return state


def test_G1_G2_war_start_and_join_options_exclude_played_colours() -> None:
    state = position(3, {0: ["blue 7", "red 2"], 1: ["blue 4", "red 9"], 2: []})
    act(state, 0, StartWar("blue", 7, 20_000))
    assert state.notes[0] == [2, 2, 1, 2, 2]
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (1, "join")
    assert decision.options == [Join("red", 9, v) for v in (5_000, 10_000, 20_000, 40_000, 50_000)] + [StayOut()]
    before = snapshot(state)
    with pytest.raises(IllegalAction) as info:
        state.apply(1, Join("blue", 4, 5_000))
    assert str(info.value) == "G2: blue is already played in this war; you offered blue 4"
    assert info.value.rule_id == "G2"
    assert snapshot(state) == before
    view = state.view(1)
    assert view.war is not None
    (initiator,) = view.war.participants
    assert initiator.cards[0].colour == "blue" and initiator.cards[0].value is None
    assert state.view(0).war.participants[0].cards[0].value == 7  # type: ignore[union-attr]


def test_G2_seats_without_a_free_colour_or_a_note_stay_out_unasked() -> None:
    state = position(3, {0: ["blue 7"], 1: ["blue 4"], 2: ["red 2"]})
    state.notes[2] = [0] * 5
    events = act(state, 0, StartWar("blue", 7, 5_000))
    assert [(e.seat, e.reason) for e in of_type(events, StayedOut)] == [(1, "unable"), (2, "unable")]
    assert of_type(events, Revealed)[0].first


def test_G3_G4_reveal_then_same_colour_rounds_until_everyone_passes() -> None:
    state = war_of_three(
        {0: ["blue 2", "blue 3", "blue 4"], 1: ["red 6", "red 7"], 2: ["green 9"]},
        {0: ("blue 2", 5_000), 1: ("red 6", 5_000), 2: ("green 9", 5_000)},
    )
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (0, "play")
    assert decision.options == [Play("blue", 3), Play("blue", 4), Pass()]
    act(state, 0, Play("blue", 3))
    with pytest.raises(IllegalAction, match="G4: your family in this war is red; you offered blue 4"):
        state.apply(1, Play("blue", 4))
    events = act(state, 1, Pass())
    # Seat 2 holds no green: it passes unasked; then blue 3 is revealed.
    assert [(e.seat, e.reason) for e in of_type(events, Passed)] == [(1, "chose"), (2, "unable")]
    assert [(c.colour, c.value) for c in of_type(events, Revealed)[0].cards] == [("blue", 3)]
    # Round 2: only seat 0 is still in play (passing is final).
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.options) == (0, [Play("blue", 4), Pass()])
    events = act(state, 0, Play("blue", 4))
    (resolved,) = of_type(events, WarResolved)
    assert [(s.colour, s.strength) for s in resolved.strengths] == [("blue", 9), ("red", 6), ("green", 9)]
    assert resolved.winning_colour == "red" and resolved.winners == [1]


def test_G7_seed_example_blue_13_and_red_13_cancel_green_7_wins() -> None:
    # Built directly: blue 5 + the bicolour 8 played as a family card, red 6 + 7, green 7.
    war = War(0)
    war.enter(0, card("blue 5"), 5_000)
    war.enter(1, card("red 6"), 5_000)
    war.enter(2, card("green 7"), 5_000)
    war.cards[0].append(card("blue 8"))
    war.cards[1].append(card("red 7"))
    war.face_down = []
    strength = war.strengths(revealed_only=False)
    assert strength == {0: 13, 1: 13, 2: 7}
    assert winning_seat(strength) == 2


def test_G7_seed_example_played_through_the_engine() -> None:
    state = war_of_three(
        {0: ["blue 5", "blue 8"], 1: ["red 6", "red 7"], 2: ["green 7"]},
        {0: ("blue 5", 5_000), 1: ("red 6", 5_000), 2: ("green 7", 5_000)},
    )
    act(state, 0, AsFamily())  # the blue Bomb counts 5
    act(state, 0, Play("blue", 8))
    act(state, 1, Play("red", 7))
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (0, "renegade")
    assert decision.options == [AsFamily(), AsRenegade()]
    events = act(state, 0, AsFamily())  # the bicolour card played as a family card
    (resolved,) = of_type(events, WarResolved)
    assert [s.strength for s in resolved.strengths] == [13, 13, 7]
    assert (resolved.winning_colour, resolved.winners) == ("green", [2])


def test_G7_ties_cancel_and_every_family_cancelled_means_no_winner() -> None:
    assert winning_seat({0: 9, 1: 9, 2: 7, 3: 7}) is None
    assert winning_seat({0: 9, 1: 9, 2: 7, 3: 3}) == 2
    assert winning_seat({0: 0, 1: 4, 2: 4}) is None  # [A] strength 0 never wins
    state = war_of_three(
        {0: ["blue 6"], 1: ["red 6"], 2: []},
        {0: ("blue 6", 5_000), 1: ("red 6", 10_000)},
    )
    assert state.bank == 15_000 and state.clean == [0, 0, 0]


def test_G5_renegade_revealed_first_must_be_a_renegade_and_allies_both_seats() -> None:
    state = war_of_three(
        {0: ["white 8", "white 3"], 1: ["blue 9"], 2: ["black 3"]},
        {0: ("white 8", 5_000), 1: ("blue 9", 20_000), 2: ("black 3", 5_000)},
    )
    # No decision was asked: the Renegade was forced, seat 0 stopped; blue 9 + 4 wins.
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (1, "spoils")
    view = state.view(2).war
    assert view is not None
    assert [(p.seat, p.ally, p.stopped) for p in view.participants] == [
        (0, 1, True),
        (1, 0, False),
        (2, None, False),
    ]
    assert [p.strength for p in view.participants] == [0, 13, 3]


def test_G5_renegade_without_the_other_colour_counts_zero_and_still_stops() -> None:
    state = war_of_three(
        {0: ["red 8", "red 9"], 1: ["blue 2"], 2: []},
        {0: ("red 8", 5_000), 1: ("blue 2", 5_000)},
    )
    # Seat 0 may not play red 9: it stopped. Blue 2 wins against 0.
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (1, "business")


def test_G5_two_renegades_of_one_pair_at_the_first_reveal_only_the_first_is_one() -> None:
    events_seen: list[msgspec.Struct] = []
    state = position(3, {0: ["yellow 8"], 1: ["black 8"], 2: ["blue 3"]})
    events_seen += act(state, 0, StartWar("yellow", 8, 5_000))
    events_seen += act(state, 1, Join("black", 8, 5_000))
    events_seen += act(state, 2, Join("blue", 3, 5_000))
    used = [(e.seat, e.use, e.ally) for e in of_type(events_seen, CardUsed)]
    assert used == [(0, "renegade", 1), (1, "family", None)]
    (resolved,) = of_type(events_seen, WarResolved)
    assert [s.strength for s in resolved.strengths] == [0, 12, 3]
    assert resolved.winners == [1, 0]


def test_G5_two_renegades_of_one_pair_revealed_later_first_in_turn_order_decides() -> None:
    hands = {0: ["yellow 2", "yellow 8"], 1: ["black 3", "black 8"], 2: ["blue 4"]}
    first = {0: ("yellow 2", 5_000), 1: ("black 3", 5_000), 2: ("blue 4", 5_000)}
    # Seat 0 uses its Renegade: seat 1's can only count as a family card.
    state = war_of_three(hands, first)
    act(state, 0, Play("yellow", 8))
    act(state, 1, Play("black", 8))
    with pytest.raises(IllegalAction, match="G5"):
        state.apply(1, AsRenegade())
    events = act(state, 0, AsRenegade())
    assert [(e.seat, e.use) for e in of_type(events, CardUsed)] == [(0, "renegade"), (1, "family")]
    (resolved,) = of_type(events, WarResolved)
    assert [s.strength for s in resolved.strengths] == [2, 15, 4]
    # Seat 0 counts its 8 as a family card: seat 1 may still use its Renegade.
    state = war_of_three(hands, first)
    act(state, 0, Play("yellow", 8))
    act(state, 1, Play("black", 8))
    act(state, 0, AsFamily())
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (1, "renegade")
    assert decision.options == [AsFamily(), AsRenegade()]


def test_G6_bomb_options_and_a_bomb_removing_a_bomb_before_its_owner_decides() -> None:
    state = war_of_three(
        {0: ["black 2", "black 5"], 1: ["green 3", "green 5"], 2: []},
        {0: ("black 2", 5_000), 1: ("green 3", 5_000)},
    )
    act(state, 0, Play("black", 5))
    act(state, 1, Play("green", 5))
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (0, "bomb")
    assert decision.options == [AsFamily(), Explode("green", 3), Explode("green", 5)]
    with pytest.raises(IllegalAction, match="G6: the black Bomb hits blue, white, green; you aimed at red 4"):
        state.apply(0, Explode("red", 4))
    events = act(state, 0, Explode("green", 5))
    (boom,) = of_type(events, Exploded)
    assert (boom.target_seat, boom.removed.value, boom.bodyguard) == (1, 5, False)
    # The green Bomb was gone before seat 1 could decide: nobody was asked.
    assert not [e for e in events if isinstance(e, CardUsed)]
    (resolved,) = of_type(events, WarResolved)
    assert [s.strength for s in resolved.strengths] == [2, 3]  # [A] an exploded Bomb counts 0
    assert pile_values(state, "green")[-1] == 5  # under its pile at once
    act(state, 1, TakeBusiness("antique"))
    # The war's cards follow under their piles when the war is over.
    assert pile_values(state, "green")[-2:] == [5, 3]
    assert pile_values(state, "black")[-2:] == [5, 2]


def test_G6_bodyguard_sacrifices_itself_for_its_family() -> None:
    state = war_of_three(
        {0: ["black 2", "black 5"], 1: ["green 1", "green 9"], 2: []},
        {0: ("black 2", 5_000), 1: ("green 1", 5_000)},
    )
    act(state, 0, Play("black", 5))
    act(state, 1, Play("green", 9))
    events = act(state, 0, Explode("green", 9))
    (boom,) = of_type(events, Exploded)
    assert (boom.aimed.value, boom.removed.value, boom.bodyguard) == (9, 1, True)
    (resolved,) = of_type(events, WarResolved)
    assert [s.strength for s in resolved.strengths] == [2, 9]
    assert resolved.winners == [1]


def test_G7_player_stripped_by_bombs_cannot_win_and_its_ally_wins_alone() -> None:
    state = war_of_three(
        {0: ["white 8"], 1: ["blue 2"], 2: ["black 5"]},
        {0: ("white 8", 10_000), 1: ("blue 2", 20_000), 2: ("black 5", 5_000)},
    )
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (2, "bomb")
    assert decision.options == [AsFamily(), Explode("blue", 2), Explode("white", 8)]
    events = act(state, 2, Explode("blue", 2))
    (resolved,) = of_type(events, WarResolved)
    # Blue has 0 + 4 from the white Renegade and wins, but blue's player has no card left.
    assert [s.strength for s in resolved.strengths] == [0, 4, 0]
    assert resolved.winning_colour == "blue"
    # Seat 2's only card was its own exploded Bomb: it has no card left either.
    assert (resolved.winners, resolved.stripped) == ([0], [1, 2])
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (0, "business")
    events = act(state, 0, TakeBusiness("laundry"))
    assert of_type(events, BusinessTaken)[0].colour == "white"  # its own family's colour
    assert [(e.seat, e.amount, e.from_bank) for e in of_type(events, Laundered)] == [(0, 20_000, 10_000)]
    assert of_type(events, StakesLost)[0].seats == [1, 2]
    assert state.bank == 20_000 + 5_000 - 10_000


@pytest.mark.parametrize("take", ["business", "launder"])
def test_G8_allies_winning_family_chooses_business_or_laundering(take: str) -> None:
    state = war_of_three(
        {0: ["white 8"], 1: ["blue 9"], 2: ["black 3"]},
        {0: ("white 8", 5_000), 1: ("blue 9", 20_000), 2: ("black 3", 10_000)},
    )
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (1, "spoils")
    assert decision.options == [Spoils("business"), Spoils("launder")]
    act(state, 1, Spoils(take))  # type: ignore[arg-type]
    taker, launderer = (1, 0) if take == "business" else (0, 1)
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (taker, "business")
    events = act(state, taker, TakeBusiness("antique"))
    # The launderer takes back its stake and the ally's; the bank pays nothing.
    assert [(e.seat, e.amount, e.from_bank) for e in of_type(events, Laundered)] == [(launderer, 25_000, 0)]
    assert state.clean[launderer] == 25_000 and state.clean[taker] == 0
    assert state.bank == 10_000
    colour = "blue" if taker == 1 else "white"  # [A] the taker's own family colour
    assert state.businesses[taker] == [COLOUR_INDEX[colour] * 3 + KIND_INDEX["antique"]]


def test_G8_variant_business_colour_winning_takes_from_the_winning_family_pile() -> None:
    state = war_of_three(
        {0: ["white 8"], 1: ["blue 9"], 2: ["black 3"]},
        {0: ("white 8", 5_000), 1: ("blue 9", 20_000), 2: ("black 3", 10_000)},
        variants={"business_colour": "winning"},
    )
    act(state, 1, Spoils("launder"))
    events = act(state, 0, TakeBusiness("restaurant"))
    assert of_type(events, BusinessTaken)[0].colour == "blue"


def test_G8_single_winner_launders_stake_and_bank_note_and_picks_a_business() -> None:
    state = war_of_three(
        {0: ["green 9"], 1: ["red 2"], 2: []},
        {0: ("green 9", 40_000), 1: ("red 2", 5_000)},
    )
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (0, "business")
    assert decision.options == [TakeBusiness("antique"), TakeBusiness("restaurant"), TakeBusiness("laundry")]
    with pytest.raises(IllegalAction, match="G8"):
        state.apply(0, TakeBusiness("casino"))  # type: ignore[arg-type]
    events = act(state, 0, TakeBusiness("laundry"))
    assert state.clean[0] == 80_000 and state.bank == 5_000 - 40_000
    assert state.business_piles[COLOUR_INDEX["green"]] == [0, 1]
    # The kind is private to its owner until the game ends.
    assert state.events_for(1, events)[0].kind is None  # type: ignore[attr-defined]
    assert [b.kind for b in state.view(1).players[0].businesses] == [None]
    assert [b.kind for b in state.view(0).players[0].businesses] == ["laundry"]


def test_G8_empty_business_pile_gives_no_business_but_still_launders() -> None:
    state = position(3, {0: ["green 9"], 1: [], 2: []})
    state.business_piles[COLOUR_INDEX["green"]].clear()
    events = act(state, 0, StartWar("green", 9, 5_000))
    assert state.clean[0] == 10_000 and state.businesses[0] == []
    assert [e.reason for e in of_type(events, NoBusiness)] == ["pile_empty"]


def test_G9_T2_losing_stakes_to_bank_cards_under_piles_next_seat_after_initiator() -> None:
    state = position(4, {1: ["red 9", "red 2"], 2: ["blue 4"], 3: ["green 3"]}, seat=1)
    act(state, 1, StartWar("red", 9, 5_000))
    act(state, 2, Join("blue", 4, 50_000))
    act(state, 3, Join("green", 3, 10_000))
    act(state, 1, Play("red", 2))
    events = act(state, 1, TakeBusiness("antique"))
    assert state.bank == 60_000 - 5_000
    assert [(c.colour, c.value) for c in of_type(events, Returned)[0].cards] == [
        ("red", 9),
        ("red", 2),
        ("blue", 4),
        ("green", 3),
    ]
    assert pile_values(state, "red")[-2:] == [9, 2]
    decision = state.decision()
    assert decision is not None and decision.seat == 2 and decision.kind == "turn"


# ---------------------------------------------------------------------------
# End of the game


def test_E1_godfather_wins_at_once_whatever_the_scores() -> None:
    state = position(3, {0: ["blue 9"], 1: [], 2: []})
    state.businesses[0] = [0, 1]  # blue antique, blue restaurant
    state.business_piles[0] = [2]
    state.clean[1] = 500_000
    act(state, 0, StartWar("blue", 9, 5_000))
    assert state.is_over()
    outcome = state.outcome()
    assert outcome.ended_by == "godfather" and outcome.winners == [0]
    assert outcome.ranks == [1, 2, 3]


def test_E2_the_game_ends_after_a_war_leaving_a_seat_without_dirty_money() -> None:
    state = position(3, {0: ["blue 9"], 1: ["red 3"], 2: []})
    state.notes[1] = [1, 0, 0, 0, 0]
    act(state, 0, StartWar("blue", 9, 5_000))
    act(state, 1, Join("red", 3, 5_000))
    act(state, 0, TakeBusiness("antique"))
    assert state.is_over() and state.outcome().ended_by == "no_dirty_money"


def test_E3_scores_set_bonus_once_and_sole_majorities() -> None:
    def b(colour: str, kind: str) -> int:
        return COLOUR_INDEX[colour] * 3 + KIND_INDEX[kind]

    assert owns_set([b("blue", "antique"), b("red", "restaurant"), b("green", "laundry")])
    assert not owns_set([b("blue", "antique"), b("blue", "restaurant"), b("green", "laundry")])
    six = [b(c, k) for c, k in zip(COLOURS, ["antique", "restaurant", "laundry"] * 2, strict=True)]
    businesses = [six, [b("blue", "restaurant")], [b("white", "laundry")]]
    scores = final_scores([100_000, 0, 30_000], [50_000, 0, 0], businesses)
    # Seat 0: 50,000 net, two sets but [A] one bonus, and two of each kind: all
    # three sole majorities.
    assert scores == [50_000 + 50_000 + 3 * 100_000, 0, 30_000]
    tied = final_scores([0, 0, 0], [0, 0, 0], [[b("blue", "antique")], [b("red", "antique")], []])
    assert tied == [0, 0, 0]  # a tie for most antiques: no one gets it


def ranking(scores: list[int], forfeit_order: list[int], godfather: int | None) -> list[int]:
    """The ranks the engine gives: the Godfather first (E1), then by score (E3)."""
    keys = [(1, 0) if seat == godfather else (0, score) for seat, score in enumerate(scores)]
    return rank_seats(keys, forfeit_order)


def test_E3_ties_share_a_rank_and_forfeits_rank_last() -> None:
    assert rank_seats([(1,), (2,), (1,), (0,)], []) == [2, 1, 2, 4]
    assert ranking([10, 30, 30, 50], [], None) == [4, 2, 2, 1]
    assert ranking([10, 30, 30, 50], [3], None) == [3, 1, 1, 4]
    assert ranking([10, 30, 30, 50], [3, 0], 2) == [3, 2, 1, 4]


# ---------------------------------------------------------------------------
# Harness conventions


def test_H1_turn_limit_ends_the_game_ranked_by_score() -> None:
    state = position(
        3,
        {0: ["blue 3"], 1: ["red 4"], 2: ["green 5"]},
        variants={"turn_limit": "2"},
        rolls=[("red", "red", "take2")] * 2,
    )
    act(state, 0, Roll())
    act(state, 1, Roll())
    assert state.is_over()
    outcome = state.outcome()
    assert outcome.ended_by == "turn_limit" and outcome.ranks == [1, 1, 1]
    assert outcome.stats["dirty"] == [250_000] * 3


def test_H2_forfeited_seat_is_skipped_stays_out_passes_and_ranks_last() -> None:
    state = position(4, {0: ["blue 3"], 1: ["red 4", "red 9"], 2: ["green 5"], 3: ["white 2"]})
    state.forfeit(2)
    act(state, 0, StartWar("blue", 3, 5_000))
    events = act(state, 1, Join("red", 4, 5_000))
    events += act(state, 3, StayOut())
    assert (2, "forfeited") in [(e.seat, e.reason) for e in of_type(events, StayedOut)]
    # Seat 1 is in the war and forfeits when asked to play: it passes.
    decision = state.decision()
    assert decision is not None and (decision.seat, decision.kind) == (1, "play")
    events = state.forfeit(1)
    assert [(e.seat, e.reason) for e in of_type(events, Passed)] == [(1, "forfeited")]
    # Red 4 beats blue 3, but seat 1 has forfeited: [A] it launders and takes no business.
    assert state.clean[1] == 10_000 and state.businesses[1] == []
    # Seat 1's next turn, and seat 2's, are skipped: seat 3 plays next.
    decision = state.decision()
    assert decision is not None and decision.seat == 3
    # When a single seat is left in play the game ends.
    state.forfeit(3)
    assert state.is_over()
    outcome = state.outcome()
    assert outcome.ended_by == "forfeits" and outcome.forfeited == [2, 1, 3]
    assert outcome.ranks == [1, 3, 4, 2] and outcome.winners == [0]


def test_H2_forfeited_seat_never_decides_in_random_games() -> None:
    rng = random.Random(11)
    for seed in range(6):
        state = RULES.new_game(5, RULES.config({}), SeededChance(seed))
        state.forfeit(seed % 5)
        steps = 0
        while not state.is_over():
            decision = state.decision()
            assert decision is not None and not state.forfeited[decision.seat]
            state.apply(decision.seat, state.random_action(rng))
            steps += 1
            if steps == 40:
                state.forfeit((seed + 2) % 5)


# ---------------------------------------------------------------------------
# Configuration and actions


def test_config_variants_round_trip_and_defaults() -> None:
    config = RULES.config({})
    assert RULES.variants(config) == {
        "turn_limit": "400",
        "action_die": "2-2-2",
        "steal_pick": "random",
        "business_colour": "own",
    }
    variants = {"turn_limit": "50", "action_die": "3-2-1", "steal_pick": "victim", "business_colour": "winning"}
    assert RULES.variants(RULES.config(variants)) == variants


@pytest.mark.parametrize(
    ("variants", "message"),
    [
        ({"turn_limit": "zero"}, "sicilianos turn_limit='zero': use an integer from 1 to 100000"),
        ({"action_die": "2-2-1"}, "sicilianos action_die='2-2-1': use counts take2-take1-steal"),
        ({"steal_pick": "thief"}, "sicilianos steal_pick='thief': use one of random, victim"),
        ({"business_colour": "any"}, "sicilianos business_colour='any': use one of own, winning"),
        ({"godfather": "off"}, "sicilianos has no variant 'godfather' (given 'off'): use turn_limit"),
    ],
)
def test_config_unknown_variant_names_key_value_and_allowed(variants: dict[str, str], message: str) -> None:
    with pytest.raises(UnknownVariant) as info:
        RULES.config(variants)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_C7_action_die_variant_changes_the_faces() -> None:
    state = position(
        3, {0: ["blue 3"], 1: ["red 4"]}, variants={"action_die": "0-0-6"}, rolls=[("red", "red", "take2")]
    )
    events = act(state, 0, Roll())  # face 0 of a die with six steal faces
    assert events[0].action == "steal"  # type: ignore[attr-defined]


def test_new_game_refuses_bad_table_sizes() -> None:
    with pytest.raises(ValueError, match="3 to 6 players, not 7"):
        RULES.new_game(7, RULES.config({}), SeededChance(0))


def test_actions_encode_small_and_decode_from_json_and_a_dict_is_refused() -> None:
    action = StartWar("blue", 7, 20_000)
    raw = msgspec.json.encode(action)
    assert raw == b'{"type":"war","colour":"blue","value":7,"note":20000}'
    assert msgspec.json.decode(raw, type=RULES.action_type) == action
    state = position(3, {0: ["blue 7"], 1: ["red 4"]})
    before = snapshot(state)
    # The referee decodes every action into the typed union first; the engine
    # takes typed actions only, as every game does.
    with pytest.raises(IllegalAction, match="T0: expected a sicilianos action, got dict"):
        state.apply(0, {"type": "war", "colour": "blue", "value": 7, "note": 20_000})
    assert snapshot(state) == before
    events = state.apply(
        0, msgspec.convert({"type": "war", "colour": "blue", "value": 7, "note": 20_000}, RULES.action_type)
    )
    assert events[0].value == 7  # type: ignore[attr-defined]


def test_illegal_actions_name_the_rule_and_change_nothing() -> None:
    state = position(3, {0: ["blue 7"], 1: ["red 4"]})
    before = snapshot(state)
    cases = [
        (1, Roll(), "T0: seat 0 must decide now (turn), not seat 1"),
        (0, StartWar("blue", 8, 5_000), "G1: you do not hold blue 8"),
        (0, StartWar("blue", 7, 7_000), "G1: you hold no 7000 note to stake"),
        (0, Pass(), "T0: a turn decision takes Roll or StartWar; got Pass"),
        (0, {"type": "war", "colour": "purple"}, "T0: expected a sicilianos action, got dict"),
    ]
    for seat, action, message in cases:
        with pytest.raises(IllegalAction) as info:
            state.apply(seat, action)
        assert str(info.value).startswith(message)
        assert snapshot(state) == before


def test_pass_action_is_the_mildest_option() -> None:
    hand = ["blue 1", "blue 2", "white 3", "white 4", "black 5", "black 6", "yellow 7", "red 8", "green 9"]
    state = position(3, {0: [*hand, "green 10"], 1: ["red 4", "blue 3"], 2: ["green 5"]})
    assert state.pass_action() == StartWar("blue", 1, 5_000)  # a war is forced: the smallest stake
    act(state, 0, StartWar("white", 3, 5_000))
    assert state.pass_action() == StayOut()
    act(state, 1, Join("red", 4, 5_000))
    act(state, 2, StayOut())
    assert state.pass_action() == Pass()
    state = position(3, {0: ["blue 3"], 1: ["red 4"]})
    assert state.pass_action() == Roll()


def test_I2_a_pile_looked_through_stays_known_when_others_forfeits_end_the_game_mid_pick() -> None:
    # Found by an independent reference (3 seats, seed 7100280): seat 0 forfeits, seat 2 inspects
    # black, then seat 1 forfeits and the game ends in seat 2's pick. Black never changed.
    state = position(3, {0: ["blue 3"], 1: ["red 4"], 2: ["green 5"]}, seat=2, rolls=[("black", "black", "take1")])
    state.forfeit(0)
    order = pile_values(state, "black")
    act(state, 2, Roll())
    act(state, 2, Inspect("black"))
    state.forfeit(1)
    assert state.is_over()
    assert [(k.colour, k.order) for k in state.view(2).known_piles] == [("black", order)]
    assert [k.colour for k in state.view(1).known_piles] == [], "seat 1 never looked"


def test_I2_a_seat_that_forfeits_in_its_pick_still_knows_the_pile_it_looked_through() -> None:
    state = position(3, {0: ["blue 3"], 1: ["red 4"], 2: ["green 5"]}, rolls=[("black", "black", "take1")])
    order = pile_values(state, "black")
    act(state, 0, Roll())
    act(state, 0, Inspect("black"))
    state.forfeit(0)  # its pick is skipped: the pile keeps its order
    assert pile_values(state, "black") == order
    assert [(k.colour, k.order) for k in state.view(0).known_piles] == [("black", order)]
