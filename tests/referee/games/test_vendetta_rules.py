"""Vendetta rules, one or more tests per rule id of shared/rules/vendetta.md.

Edge positions are built with ``position()``: it takes a real view, overwrites the
board, hands and counters, and rebuilds the state with ``VendettaState.from_view``,
feeding the hidden cards (rest of the pile, raid) through a scripted chance.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import msgspec
import pytest

from referee.games.base import ChanceDraw, IllegalAction, ScriptedChance, SeededChance
from referee.games.vendetta import (
    RULES,
    Eliminated,
    Forfeited,
    GameEnded,
    Paid,
    Place,
    PlaceConstraints,
    Placed,
    Placement,
    Raided,
    Reinforced,
    Revealed,
    RoundStarted,
    Scored,
    VendettaConfig,
    VendettaState,
)

EMPTY = Place([])


class Cards:
    """A chance source with chosen round shuffles (1-based districts), then seeded ones."""

    def __init__(self, rounds: Sequence[Sequence[int]] = (), seed: int = 0) -> None:
        self.rounds = [[d - 1 for d in order] for order in rounds]
        self.fallback = SeededChance(seed)

    def shuffle(self, stream: str, n: int) -> list[int]:
        if stream == "round" and self.rounds:
            return self.rounds.pop(0)
        return self.fallback.shuffle(stream, n)

    def below(self, stream: str, n: int) -> int:
        return self.fallback.below(stream, n)


def position(
    n: int = 4,
    *,
    board: Mapping[int, Sequence[int]] | None = None,
    hands: Sequence[int] | None = None,
    box: Sequence[int] | None = None,
    points: Sequence[int] | None = None,
    turn: int = 0,
    start: int = 0,
    round: int = 1,
    pile: Sequence[int] | None = None,
    raid: Sequence[int] = (12, 13),
    forfeited: Sequence[int] = (),
    later: Sequence[Sequence[int]] = (),
    config: VendettaConfig | None = None,
) -> VendettaState:
    """A state at ``turn`` of ``round`` with exactly the given position.

    ``board`` maps district -> counts per seat (unlisted districts are empty).
    ``hands`` defaults to 10 each; ``box`` defaults to what conservation leaves.
    ``pile`` is the rest of the protection pile, top first (11 - turn cards); the
    revealed cards are the districts in neither pile nor raid. ``later`` gives the
    next rounds' shuffles (11 pile cards then 2 raid cards, 1-based); after them
    the rounds are seeded. ``forfeited`` lists seats in forfeit order.
    """
    config = config or VendettaConfig()
    rows = [[0] * n for _ in range(13)]
    for d, counts in (board or {}).items():
        rows[d - 1] = list(counts)
    hand_list = list(hands) if hands is not None else [10] * n
    if box is None:
        box = [50 - hand_list[s] - sum(row[s] for row in rows) for s in range(n)]
    if pile is None:
        rest = [d for d in range(1, 14) if d not in raid]
        pile = rest[turn:]
    assert len(pile) == 11 - turn
    revealed = [d for d in range(1, 14) if d not in pile and d not in raid]
    view = RULES.new_game(n, config, SeededChance(0)).view(0)
    view = msgspec.structs.replace(
        view,
        board=rows,
        hands=hand_list,
        box=list(box),
        points=list(points) if points is not None else [0] * n,
        controlled=[0] * n,
        turn=turn,
        start_seat=start,
        active_seat=(start + turn) % n,
        round=round,
        revealed=revealed,
        pile_left=11 - turn,
        forfeited=[s in forfeited for s in range(n)],
        forfeit_order=list(forfeited),
    )
    chance = Cards([[*revealed, *pile, *raid], *later])
    return VendettaState.from_view(view, chance, RULES)


def kinds(events: Sequence[msgspec.Struct]) -> list[str]:
    return [type(e).__name__ for e in events]


def of(events: Sequence[msgspec.Struct], kind: type[msgspec.Struct]) -> list[msgspec.Struct]:
    return [e for e in events if isinstance(e, kind)]


def place(*pairs: tuple[int, int]) -> Place:
    return Place([Placement(d, c) for d, c in pairs])


def snapshot(state: VendettaState) -> bytes:
    """Every seat's view plus the hidden cards and caches, for before/after checks."""
    views = [state.view(s) for s in range(state.n_players)]
    hidden = (state._pile, state._raid, state._owner, state._minbase, state._revealed)
    return msgspec.msgpack.encode([views, hidden])


def illegal(state: VendettaState, seat: int, action: object, rule: str) -> IllegalAction:
    before = snapshot(state)
    with pytest.raises(IllegalAction) as caught:
        state.apply(seat, action)
    assert caught.value.rule_id == rule, caught.value
    assert snapshot(state) == before
    return caught.value


def constraints(state: VendettaState) -> PlaceConstraints:
    decision = state.decision()
    assert decision is not None and decision.kind == "place" and decision.options is None
    result = decision.constraints
    assert isinstance(result, PlaceConstraints)
    return result


# ---------------------------------------------------------------------------
# Setup


def deal_chance(deal: Sequence[int], *rounds: Sequence[int]) -> ScriptedChance:
    draws = [ChanceDraw("deal", "shuffle", 13, list(deal))]
    draws += [ChanceDraw("round", "shuffle", 13, list(r)) for r in rounds]
    return ScriptedChance(draws)


DEAL = [4, 9, 0, 12, 7, 2, 11, 5, 1, 3, 6, 8, 10]  # 0-based cards
ROUND = [3, 1, 4, 0, 5, 9, 2, 6, 8, 7, 11, 10, 12]


@pytest.mark.parametrize("n", [3, 4, 5])
def test_s1_deal_two_cards_per_seat_from_the_deal_shuffle(n: int) -> None:
    state = RULES.new_game(n, VendettaConfig(), deal_chance(DEAL, ROUND))
    dealt = state.view(0).dealt
    assert dealt == [sorted([DEAL[2 * s] + 1, DEAL[2 * s + 1] + 1]) for s in range(n)]
    assert len({d for cards in dealt for d in cards}) == 2 * n


@pytest.mark.parametrize("n", [3, 4, 5])
def test_s2_two_mafiosi_everywhere_except_the_dealt_districts(n: int) -> None:
    view = RULES.new_game(n, VendettaConfig(), SeededChance(11)).view(0)
    for s in range(n):
        for d in range(1, 14):
            expected = 0 if d in view.dealt[s] else 2
            assert view.board[d - 1][s] == expected
        assert sum(row[s] for row in view.board) == 22


@pytest.mark.parametrize("n", [3, 4, 5])
def test_s3_ten_in_hand_eighteen_in_the_box(n: int) -> None:
    view = RULES.new_game(n, VendettaConfig(), SeededChance(5)).view(2)
    assert view.hands == [10] * n
    assert view.box == [18] * n
    assert view.round == 1 and view.turn == 0 and view.start_seat == 0
    assert view.points == [0] * n and view.controlled == [0] * n


def test_s2_variant_dealt_only_puts_two_on_each_dealt_district() -> None:
    config = RULES.config({"setup": "dealt-only"})
    view = RULES.new_game(4, config, SeededChance(3)).view(0)
    for s in range(4):
        for d in range(1, 14):
            assert view.board[d - 1][s] == (2 if d in view.dealt[s] else 0)
    assert view.hands == [10] * 4
    assert view.box == [36] * 4


# ---------------------------------------------------------------------------
# A round


def test_r1_round_shuffle_gives_pile_then_raid() -> None:
    state = RULES.new_game(3, VendettaConfig(), deal_chance(DEAL, ROUND, list(range(13))))
    events: list[msgspec.Struct] = []
    for _ in range(11):
        decision = state.decision()
        assert decision is not None
        events += state.apply(decision.seat, EMPTY)
    revealed = [e.district for e in of(events, Revealed)]  # type: ignore[attr-defined]
    assert revealed == [d + 1 for d in ROUND[:11]]
    (raided,) = of(events, Raided)
    assert raided.districts == [d + 1 for d in ROUND[11:]]  # type: ignore[attr-defined]
    assert of(events, RoundStarted) == [RoundStarted(2, 2)]


def test_r1_h5_raid_and_pile_stay_hidden_until_revealed() -> None:
    a = position(4, board={1: [3, 0, 0, 0]}, pile=list(range(1, 12)), raid=(12, 13))
    b = position(4, board={1: [3, 0, 0, 0]}, pile=list(range(13, 2, -1)), raid=(1, 2))
    for seat in range(4):
        assert msgspec.json.encode(a.view(seat)) == msgspec.json.encode(b.view(seat))
    assert a.view(0).pile_left == 11 and a.view(0).revealed == []


@pytest.mark.parametrize("n", [3, 4, 5])
def test_r2_turn_t_belongs_to_start_plus_t(n: int) -> None:
    state = position(n, start=1, pile=list(range(1, 12)))
    for t in range(11):
        decision = state.decision()
        assert decision is not None
        assert decision.seat == (1 + t) % n
        assert state.view(0).turn == t and state.view(0).active_seat == (1 + t) % n
        state.apply(decision.seat, EMPTY)


def test_r2_wrong_seat_is_illegal() -> None:
    state = position(4, turn=2, start=0, pile=list(range(3, 12)))
    error = illegal(state, 1, EMPTY, "R2")
    assert "belongs to seat 2, not seat 1" in str(error)


def test_r3_a_turn_is_a_placement_then_one_vendetta() -> None:
    state = position(4, board={5: [2, 1, 0, 0]}, turn=1, pile=[5, *range(6, 12), 2, 3, 4])
    events = state.apply(1, place((5, 1)))
    assert kinds(events)[:3] == ["Placed", "Revealed", "Eliminated"]
    assert events[0] == Placed(1, 1, [Placement(5, 1)])
    assert state.view(0).pile_left == 9
    # An empty placement still reveals a card.
    events = state.apply(2, EMPTY)
    assert kinds(events)[:2] == ["Placed", "Revealed"]
    assert state.view(0).revealed == [1, 5, 6]


# ---------------------------------------------------------------------------
# Placement


def test_p1_two_distinct_districts_at_most() -> None:
    state = position(4, board={1: [0, 1, 1, 0]}, turn=1)
    assert constraints(state).max_districts == 2
    illegal(state, 1, place((1, 1), (2, 1), (3, 1)), "P1")
    error = illegal(state, 1, place((4, 1), (4, 2)), "P1")
    assert "named twice" in str(error)
    illegal(state, 1, place((0, 1)), "P1")
    illegal(state, 1, place((14, 1)), "P1")
    illegal(state, 1, "pass", "P1")
    events = state.apply(1, place((5, 1), (6, 4)))
    assert events[0] == Placed(1, 1, [Placement(5, 1), Placement(6, 4)])
    assert state.view(0).hands[1] == 5


def test_p1_zero_placement_is_legal() -> None:
    state = position(4, turn=3)
    before = state.view(0)
    state.apply(3, EMPTY)
    assert state.view(0).board == before.board
    assert state.view(0).hands == before.hands


def test_p2_turn_zero_allows_one_district() -> None:
    state = position(4)
    assert constraints(state).max_districts == 1
    error = illegal(state, 0, place((1, 1), (2, 1)), "P2")
    assert "turn 0" in str(error)
    state.apply(0, place((1, 2)))
    assert state.view(0).board[0][0] == 2


def test_p2_start_player_later_turns_allow_two_with_three_players() -> None:
    state = position(3, pile=list(range(1, 12)))
    allowed = {}
    for t in range(11):
        c = constraints(state)
        allowed[t] = c.max_districts
        seat = t % 3
        if t in (3, 6, 9):
            assert seat == 0
            state.apply(seat, place((12, 1), (13, 1)))  # raid districts: never revealed
        else:
            state.apply(seat, EMPTY)
    assert allowed == {t: (1 if t == 0 else 2) for t in range(11)}


def test_p3_each_named_district_gets_at_least_one() -> None:
    state = position(4, turn=1)
    illegal(state, 1, place((2, 0)), "P3")
    illegal(state, 1, place((2, -3)), "P3")
    illegal(state, 1, place((2, 1), (3, 0)), "P3")


def test_p3_total_at_most_the_hand() -> None:
    state = position(4, hands=[10, 4, 10, 10], turn=1)
    assert constraints(state).hand == 4
    error = illegal(state, 1, place((2, 3), (3, 2)), "P3")
    assert "placed 5" in str(error) and "hold 4" in str(error)
    state.apply(1, place((5, 3), (6, 1)))
    assert state.view(0).hands[1] == 0


def test_p4_must_match_a_lone_opponent() -> None:
    state = position(4, board={7: [0, 0, 5, 0]}, turn=1)
    assert constraints(state).minimum[6] == 5
    error = illegal(state, 1, place((7, 3)), "P4")
    assert str(error) == "P4: district 7 holds 5 of seat 2 alone; you placed 3"
    illegal(state, 1, place((1, 1), (7, 4)), "P4")


def test_p4_exactly_the_same_count_is_enough() -> None:
    state = position(4, board={7: [0, 0, 5, 0]}, turn=1)
    state.apply(1, place((7, 5)))
    assert state.view(0).board[6] == [0, 5, 5, 0]


def test_p4_no_minimum_where_the_placer_is_alone() -> None:
    state = position(4, board={7: [0, 6, 0, 0]}, turn=1)
    assert constraints(state).minimum[6] == 1
    state.apply(1, place((7, 1)))
    assert state.view(0).board[6] == [0, 7, 0, 0]


def test_p4_no_minimum_in_an_empty_or_shared_district() -> None:
    state = position(4, board={7: [0, 0, 5, 4]}, turn=1)
    minimum = constraints(state).minimum
    assert minimum == [1] * 13
    state.apply(1, place((7, 1), (8, 1)))
    assert state.view(0).board[6] == [0, 1, 5, 4]
    assert state.view(0).board[7] == [0, 1, 0, 0]


def test_p4_minimum_table_is_per_seat() -> None:
    state = position(4, board={2: [3, 0, 0, 0], 3: [0, 4, 0, 0], 4: [1, 1, 0, 0]}, turn=1)
    expected = [1] * 13
    expected[1] = 3  # seat 0 alone with 3; seat 1 is to move
    assert constraints(state).minimum == expected


def test_p5_box_mafiosi_cannot_be_placed_and_the_board_never_moves() -> None:
    state = position(4, board={2: [3, 2, 0, 0]}, hands=[10, 0, 10, 10], turn=1)
    assert state.view(0).box[1] == 48
    illegal(state, 1, place((1, 1)), "P3")
    board = {2: [3, 2, 0, 0], 3: [0, 1, 0, 0]}
    state = position(4, board=board, turn=1, pile=[*range(4, 12), 1, 2])
    state.apply(1, place((3, 2)))
    after = state.view(0).board
    assert after[1] == [3, 2, 0, 0] and after[2] == [0, 3, 0, 0]


def test_p6_illegal_actions_change_nothing_and_name_the_rule() -> None:
    state = position(4, board={7: [0, 0, 5, 0]}, hands=[10, 6, 10, 10], turn=1)
    cases: list[tuple[int, object, str]] = [
        (0, EMPTY, "R2"),
        (1, place((1, 1), (2, 1), (3, 1)), "P1"),
        (1, place((2, 1), (2, 1)), "P1"),
        (1, place((99, 1)), "P1"),
        (1, place((2, 0)), "P3"),
        (1, place((2, 4), (3, 3)), "P3"),
        (1, place((7, 4)), "P4"),
        (1, Place([Placement(True, 1)]), "P1"),
        (1, Place("nope"), "P1"),  # type: ignore[arg-type]
    ]
    for seat, action, rule in cases:
        illegal(state, seat, action, rule)


def test_p6_game_over_is_illegal() -> None:
    state = position(
        4,
        board={d: [1, 0, 0, 0] for d in range(1, 6)},
        turn=10,
        pile=[13],
        raid=(11, 12),
    )
    state.apply(2, EMPTY)
    assert state.is_over() and state.decision() is None
    error = illegal(state, 2, EMPTY, "E3")
    assert "over" in str(error)
    with pytest.raises(ValueError, match="over"):
        state.random_action(random.Random(1))


# ---------------------------------------------------------------------------
# Vendetta


def test_v1_the_top_card_is_revealed() -> None:
    state = position(4, turn=0, pile=[9, 3, *range(4, 9), 10, 11, 1, 2])
    events = state.apply(0, EMPTY)
    assert of(events, Revealed) == [Revealed(0, 0, 9)]
    assert state.view(0).revealed == [9] and state.view(0).pile_left == 10
    events = state.apply(1, EMPTY)
    assert of(events, Revealed) == [Revealed(1, 1, 3)]
    assert state.view(0).revealed == [9, 3]


def test_v2_empty_district_nothing_happens() -> None:
    state = position(4, board={2: [1, 1, 0, 0]}, pile=[*range(1, 12)])
    before = state.view(0)
    events = state.apply(0, EMPTY)
    assert kinds(events) == ["Placed", "Revealed"]
    after = state.view(0)
    assert (after.board, after.hands, after.box) == (
        before.board,
        before.hands,
        before.box,
    )


def test_v3_one_player_alone_is_paid_without_a_fight() -> None:
    state = position(4, board={1: [0, 0, 4, 0]}, pile=[*range(1, 12)])
    events = state.apply(0, EMPTY)
    assert of(events, Eliminated) == []
    assert of(events, Paid) == [Paid(1, [2])]
    view = state.view(0)
    assert view.board[0] == [0, 0, 4, 0]
    assert view.hands[2] == 11 and view.box[2] == 50 - 4 - 11


def test_v4_fewest_loses_everything_to_the_box() -> None:
    state = position(4, board={1: [2, 5, 3, 0]}, pile=[*range(1, 12)])
    events = state.apply(0, EMPTY)
    assert of(events, Eliminated) == [Eliminated(1, 0, 2)]
    view = state.view(0)
    assert view.board[0] == [0, 5, 3, 0]
    assert view.box[0] == 50 - 10  # hand 10, nothing left on the board
    assert of(events, Paid) == [Paid(1, [1, 2])]


def test_v4_worked_example_yellow_loses_the_tie() -> None:
    # Red, Yellow, Green, Blue = seats 0..3; Red reveals district 1 where Yellow
    # and Green tie for fewest (2 each): Yellow moves next, so Yellow loses.
    board = {1: [3, 2, 2, 4], 2: [1, 1, 1, 1], 3: [0, 3, 0, 0]}
    state = position(4, board=board, pile=[*range(1, 12)])
    events = state.apply(0, EMPTY)
    assert of(events, Eliminated) == [Eliminated(1, 1, 2)]
    assert of(events, Paid) == [Paid(1, [0, 2, 3])]
    # The book's district 2: everyone ties, Yellow (next) loses again.
    state = position(4, board=board, pile=[2, 1, *range(3, 12)])
    events = state.apply(0, EMPTY)
    assert of(events, Eliminated) == [Eliminated(2, 1, 1)]
    assert of(events, Paid) == [Paid(2, [0, 2, 3])]
    # District 3: Yellow alone, no vendetta; only Yellow is paid.
    state = position(4, board=board, pile=[3, 1, 2, *range(4, 12)])
    events = state.apply(0, EMPTY)
    assert of(events, Eliminated) == [] and of(events, Paid) == [Paid(3, [1])]


def test_v4_the_active_seat_is_last_in_the_tie_order() -> None:
    # Seat 2 reveals; seats 1 and 2 tie for fewest: seat 3, 0, 1 come before 2.
    state = position(4, board={3: [5, 1, 1, 0]}, turn=2, pile=[3, *range(4, 12)])
    events = state.apply(2, EMPTY)
    assert of(events, Eliminated) == [Eliminated(3, 1, 1)]
    # Seats 0 and 2 tie, seat 3 reveals: seat 0 comes first after 3.
    state = position(4, board={4: [1, 3, 1, 0]}, turn=3, pile=[4, *range(5, 12)])
    events = state.apply(3, EMPTY)
    assert of(events, Eliminated) == [Eliminated(4, 0, 1)]


def test_v4_active_seat_loses_a_tie_only_when_nobody_else_is_tied() -> None:
    state = position(3, board={1: [2, 2, 0]}, turn=1, pile=[1, *range(3, 12)])
    events = state.apply(1, EMPTY)  # seat 1 reveals; order 2, 0, 1: seat 0 loses
    assert of(events, Eliminated) == [Eliminated(1, 0, 2)]
    state = position(3, board={1: [3, 2, 0]}, turn=1, pile=[1, *range(3, 12)])
    events = state.apply(1, EMPTY)  # seat 1 alone has the fewest: it loses
    assert of(events, Eliminated) == [Eliminated(1, 1, 2)]
    assert of(events, Paid) == [Paid(1, [0])]


def test_v4_loser_leaves_one_seat_alone_which_then_sets_the_p4_minimum() -> None:
    state = position(4, board={1: [4, 2, 0, 0]}, pile=[*range(1, 12)])
    state.apply(0, EMPTY)
    assert state.view(0).board[0] == [4, 0, 0, 0]
    assert constraints(state).minimum[0] == 4
    illegal(state, 1, place((1, 3)), "P4")


def test_v5_every_survivor_takes_one_whatever_its_count() -> None:
    state = position(5, board={1: [9, 1, 3, 2, 0]}, pile=[*range(1, 12)])
    events = state.apply(0, EMPTY)
    assert of(events, Eliminated) == [Eliminated(1, 1, 1)]
    assert of(events, Paid) == [Paid(1, [0, 2, 3])]
    assert state.view(0).hands == [11, 10, 11, 11, 10]


def test_v5_empty_box_pays_nothing() -> None:
    # Seat 2's colour is all on the board or in hand: its box is empty.
    state = position(4, board={1: [3, 1, 40, 0]}, pile=[*range(1, 12)])
    assert state.view(0).box[2] == 0
    events = state.apply(0, EMPTY)
    assert of(events, Eliminated) == [Eliminated(1, 1, 1)]
    assert of(events, Paid) == [Paid(1, [0])]
    assert state.view(0).hands[2] == 10
    state = position(4, board={1: [0, 0, 40, 0]}, pile=[*range(1, 12)])
    events = state.apply(0, EMPTY)
    assert of(events, Paid) == []
    assert state.view(0).hands[2] == 10


# ---------------------------------------------------------------------------
# End of the round


def last_turn(n: int, board: Mapping[int, Sequence[int]], **kwargs: object) -> VendettaState:
    """A state at turn 10; by default its last card is 13 and the raid is 11 and 12."""
    kwargs.setdefault("raid", (11, 12))
    kwargs.setdefault("pile", [13])
    return position(n, board=board, turn=10, **kwargs)  # type: ignore[arg-type]


def end_round(state: VendettaState) -> list[msgspec.Struct]:
    decision = state.decision()
    assert decision is not None and state.view(0).turn == 10
    return state.apply(decision.seat, EMPTY)


def test_e1_raid_empties_both_districts_into_the_box() -> None:
    state = last_turn(4, {11: [2, 3, 0, 1], 12: [0, 4, 0, 0], 1: [1, 1, 1, 1]})
    events = end_round(state)
    assert of(events, Raided) == [Raided([11, 12], [2, 7, 0, 1])]
    view = state.view(0)
    assert view.board[10] == [0] * 4 and view.board[11] == [0] * 4
    assert view.board[0] == [1] * 4
    assert view.last_raid == [11, 12]
    # Only district 1's one of each stays on the board; E4 then moves 3 to each hand.
    assert view.box == [50 - 1 - 13] * 4 and view.hands == [13] * 4


@pytest.mark.parametrize(
    ("count", "gain"),
    [
        (0, 0),
        (1, 1),
        (2, 5),
        (3, 20),
        (4, 75),
        (5, 250),
        (6, 800),
        (7, 1000),
        (8, 1000),
    ],
)
def test_e2_points_for_districts_controlled(count: int, gain: int) -> None:
    # Seat 2 holds ``count`` districts alone; district 10 is shared, so nobody scores it.
    board: dict[int, Sequence[int]] = {d: [0, 0, 3, 0, 0] for d in range(1, count + 1)}
    board[10] = [1, 1, 0, 0, 0]
    state = last_turn(5, board, config=VendettaConfig(round_limit=1))
    events = end_round(state)
    (scored,) = of(events, Scored)
    assert scored.controlled == [0, 0, count, 0, 0]  # type: ignore[attr-defined]
    assert scored.gained == [0, 0, gain, 0, 0]  # type: ignore[attr-defined]
    assert state.view(0).controlled == [0, 0, count, 0, 0]


def test_e2_seven_and_eight_districts_both_score_1000_and_accumulate() -> None:
    board: dict[int, Sequence[int]] = {d: [0, 4, 0] for d in range(1, 8)}
    board.update({d: [0, 0, 2] for d in (8, 9, 10)})
    state = last_turn(3, board, points=[0, 50, 0], config=VendettaConfig(round_limit=1))
    events = end_round(state)
    (scored,) = of(events, Scored)
    assert scored.gained == [0, 1000, 20]  # type: ignore[attr-defined]
    assert scored.points == [0, 1050, 20]  # type: ignore[attr-defined]
    board = {d: [0, 4, 0] for d in range(1, 9)}
    state = last_turn(3, board, config=VendettaConfig(round_limit=1))
    (scored,) = of(end_round(state), Scored)
    assert scored.controlled == [0, 8, 0] and scored.gained == [0, 1000, 0]  # type: ignore[attr-defined]


def test_e2_control_is_sole_presence_by_default() -> None:
    board = {1: [5, 1, 0, 0], 2: [0, 0, 1, 0], 3: [2, 2, 0, 0]}
    state = last_turn(4, board, config=VendettaConfig(round_limit=1))
    (scored,) = of(end_round(state), Scored)
    assert scored.controlled == [0, 0, 1, 0]  # type: ignore[attr-defined]


def test_e2_variant_majority_control() -> None:
    board = {
        1: [5, 1, 0, 0],
        2: [0, 0, 1, 0],
        3: [2, 2, 0, 0],
        4: [3, 3, 4, 0],
        11: [9, 0, 0, 0],
    }
    config = RULES.config({"control": "majority", "round_limit": "1"})
    state = last_turn(4, board, config=config)
    (scored,) = of(end_round(state), Scored)
    # 1: seat 0 has most; 2: seat 2 alone; 3: tie, nobody; 4: seat 2; 11: raided.
    assert scored.controlled == [1, 0, 2, 0]  # type: ignore[attr-defined]
    assert scored.gained == [1, 0, 5, 0]  # type: ignore[attr-defined]


def winners_of(events: Sequence[msgspec.Struct]) -> list[int]:
    (over,) = of(events, GameEnded)
    return over.winners  # type: ignore[attr-defined, no-any-return]


def alone(seat: int, n: int, districts: Sequence[int]) -> dict[int, Sequence[int]]:
    return {d: [3 if s == seat else 0 for s in range(n)] for d in districts}


def test_e3_district_target_wins_and_most_districts_breaks_the_tie() -> None:
    board = {**alone(0, 4, range(1, 7)), **alone(1, 4, range(7, 12))}
    # District 11, the last card, pays seat 1 (V3) before the scoring.
    state = last_turn(4, board, points=[0, 900, 0, 0], raid=(12, 13), pile=[11])
    events = end_round(state)
    assert winners_of(events) == [0]
    assert state.outcome().ended_by == "victory"
    assert state.outcome().ranks == [1, 2, 3, 3]


def test_e3_equal_districts_then_more_points_wins() -> None:
    board = {**alone(0, 4, range(1, 6)), **alone(1, 4, range(6, 11))}
    state = last_turn(4, board, points=[10, 9, 0, 0])
    assert winners_of(end_round(state)) == [0]
    state = last_turn(4, board, points=[9, 10, 0, 0])
    assert winners_of(end_round(state)) == [1]


def test_e3_districts_beat_points() -> None:
    board = {**alone(2, 4, range(1, 6))}
    state = last_turn(4, board, points=[5000, 0, 0, 0])
    events = end_round(state)
    assert winners_of(events) == [2]
    assert state.outcome().ranks == [2, 3, 1, 3]


def test_e3_points_target_then_most_points_then_most_districts() -> None:
    board = {**alone(0, 4, range(1, 3)), **alone(1, 4, range(3, 6)), **alone(3, 4, [6])}
    # Nobody has 5 districts; seats 0 and 1 pass 250.
    state = last_turn(4, board, points=[300, 270, 0, 249])
    events = end_round(state)
    (scored,) = of(events, Scored)
    assert scored.points == [305, 290, 0, 250]  # type: ignore[attr-defined]
    assert winners_of(events) == [0]
    # Equal points after scoring: more districts wins.
    state = last_turn(4, board, points=[300, 285, 0, 0])
    assert winners_of(end_round(state)) == [1]


def test_e3_tied_on_both_share_the_win() -> None:
    board = {**alone(0, 3, range(1, 4)), **alone(1, 3, range(4, 7))}
    state = last_turn(3, board, points=[800, 800, 10])
    events = end_round(state)
    assert winners_of(events) == [0, 1]
    outcome = state.outcome()
    assert outcome.winners == [0, 1] and outcome.ranks == [1, 1, 3]
    # The same through the district target: 4 districts each at a 5-player table.
    board = {**alone(0, 5, range(1, 5)), **alone(1, 5, range(5, 9))}
    state = last_turn(5, board, points=[3, 3, 0, 90, 0])
    assert winners_of(end_round(state)) == [0, 1]
    assert state.outcome().ranks == [1, 1, 4, 3, 4]


def test_e3_no_winner_below_both_targets() -> None:
    state = last_turn(4, alone(0, 4, range(1, 5)), points=[100, 0, 0, 0])
    events = end_round(state)
    assert of(events, GameEnded) == []
    assert not state.is_over()
    assert state.view(0).points == [175, 0, 0, 0]


def test_e4_reinforcement_of_three_from_the_box() -> None:
    state = last_turn(4, {1: [1, 1, 0, 0]}, hands=[0, 5, 10, 2])
    events = end_round(state)
    assert of(events, Reinforced) == [Reinforced([3, 3, 3, 3])]
    assert state.view(0).hands == [3, 8, 13, 5]


def test_e4_reinforcement_with_an_empty_or_short_box() -> None:
    # Seat 1 has 1 left in its box, seat 2 none.
    state = last_turn(4, {1: [1, 38, 40, 0]}, hands=[0, 11, 10, 2])
    assert state.view(0).box[1:3] == [1, 0]
    events = end_round(state)
    assert of(events, Reinforced) == [Reinforced([3, 1, 0, 3])]
    assert state.view(0).hands == [3, 12, 10, 5]
    assert state.view(0).box[1:3] == [0, 0]


@pytest.mark.parametrize(
    ("n", "start", "next_start"),
    [(3, 0, 2), (3, 2, 1), (4, 0, 3), (4, 1, 0), (5, 0, 1), (5, 4, 0)],
)
def test_e4_next_start_player_is_start_plus_eleven(n: int, start: int, next_start: int) -> None:
    state = last_turn(n, {}, start=start)
    assert state.decision().seat == (start + 10) % n  # type: ignore[union-attr]
    events = end_round(state)
    assert of(events, RoundStarted) == [RoundStarted(2, next_start)]
    view = state.view(0)
    assert (view.round, view.turn, view.start_seat, view.active_seat) == (
        2,
        0,
        next_start,
        next_start,
    )
    assert view.revealed == [] and view.pile_left == 11
    c = constraints(state)
    assert c.max_districts == 1  # P2 again for the new start player


def test_e4_order_of_round_end_events() -> None:
    state = last_turn(4, {1: [1, 0, 0, 0]})
    events = end_round(state)
    assert kinds(events) == [
        "Placed",
        "Revealed",
        "Raided",
        "Scored",
        "Reinforced",
        "RoundStarted",
    ]


# ---------------------------------------------------------------------------
# Harness conventions


def test_h1_ranking_by_points_then_districts_with_shared_ranks() -> None:
    board = {**alone(0, 5, [1]), **alone(1, 5, [2]), **alone(3, 5, [3, 4])}
    config = VendettaConfig(round_limit=1)
    state = last_turn(5, board, points=[10, 10, 4, 9, 10], config=config)
    end_round(state)
    outcome = state.outcome()
    # points after scoring: 11, 11, 4, 14, 10; districts 1, 1, 0, 2, 0
    assert outcome.scores == [11, 11, 4, 14, 10]
    assert outcome.ranks == [2, 2, 5, 1, 4]
    assert outcome.winners == [] and outcome.ended_by == "round_limit"
    assert outcome.stats["districts"] == [1, 1, 0, 2, 0]


def test_h1_winners_first_then_points_even_above_more_points() -> None:
    board = {**alone(1, 4, range(1, 6))}
    state = last_turn(4, board, points=[240, 0, 200, 200])
    end_round(state)
    outcome = state.outcome()
    assert outcome.winners == [1]
    assert outcome.ranks == [2, 1, 3, 3]


def test_h1_forfeited_seats_last_later_forfeit_higher() -> None:
    board = {**alone(0, 5, range(1, 5))}
    state = last_turn(
        5,
        board,
        points=[0, 70, 0, 0, 0],
        forfeited=[1, 4],
        config=VendettaConfig(round_limit=1),
    )
    state.apply(state.decision().seat, EMPTY)  # type: ignore[union-attr]
    outcome = state.outcome()
    # Seat 1 forfeited with 70 points: ranked below every seat in play.
    assert outcome.winners == [0]
    assert outcome.ranks == [1, 5, 2, 2, 4]
    assert outcome.forfeited == [1, 4]


def test_h2_forfeited_seat_plays_empty_turns_and_keeps_its_cards_revealed() -> None:
    state = position(4, board={2: [0, 3, 1, 0]}, turn=1, pile=list(range(2, 12)))
    events = state.forfeit(3)
    assert events == [Forfeited(3)]
    events = state.apply(1, EMPTY)
    assert state.decision().seat == 2  # type: ignore[union-attr]
    events = state.apply(2, EMPTY)
    # Seat 3's turn is played by the engine: an empty placement, its vendetta card.
    assert kinds(events)[:2] == ["Placed", "Revealed"]
    assert Placed(3, 3, []) in events
    assert [e.seat for e in of(events, Revealed)] == [2, 3]  # type: ignore[attr-defined]
    assert state.decision().seat == 0  # type: ignore[union-attr]
    assert state.view(0).forfeited == [False, False, False, True]
    illegal(state, 3, EMPTY, "H2")


def test_h2_forfeit_of_the_seat_to_move_plays_its_turn_at_once() -> None:
    state = position(4, board={1: [0, 2, 2, 0]}, turn=1, pile=[1, *range(3, 12)])
    events = state.forfeit(1)
    assert kinds(events)[:4] == ["Forfeited", "Placed", "Revealed", "Eliminated"]
    # Tie between seats 1 and 2 revealed by seat 1: seat 2 moves next and loses.
    assert of(events, Eliminated) == [Eliminated(1, 2, 2)]
    assert state.decision().seat == 2  # type: ignore[union-attr]
    assert state.forfeit(1) == []


def test_h2_forfeited_seat_still_paid_and_on_the_board_but_never_wins() -> None:
    board = {**alone(3, 4, range(1, 6)), 13: [0, 0, 0, 2]}
    state = last_turn(4, board, forfeited=[3])
    events = end_round(state)
    assert of(events, Paid) == [Paid(13, [3])]
    assert of(events, Reinforced) == [Reinforced([3, 3, 3, 3])]
    # Seat 3 controls 6 districts and scores 800, but it has forfeited: no winner.
    assert of(events, GameEnded) == []
    assert state.view(0).controlled == [0, 0, 0, 6]
    assert state.view(0).points == [0, 0, 0, 800]


def test_h2_last_seat_in_play_wins_at_once() -> None:
    state = RULES.new_game(3, VendettaConfig(), SeededChance(4))
    state.forfeit(2)
    events = state.forfeit(0)
    assert state.is_over() and state.decision() is None
    assert of(events, GameEnded) == [GameEnded("forfeits", [1], [2, 1, 3], [0, 0, 0])]
    outcome = state.outcome()
    assert outcome.ended_by == "forfeits" and outcome.forfeited == [2, 0]
    assert state.forfeit(1) == []  # a finished game stays finished
    with pytest.raises(ValueError, match="seat 3"):
        state.forfeit(3)


def test_h3_round_limit_ends_the_game_without_winners() -> None:
    state = last_turn(4, alone(0, 4, [1, 2]), round=3, config=RULES.config({"round_limit": "3"}))
    events = end_round(state)
    assert kinds(events)[-1] == "GameEnded"
    assert of(events, Reinforced) == []
    outcome = state.outcome()
    assert outcome.ended_by == "round_limit" and outcome.winners == []
    assert outcome.ranks == [1, 2, 2, 2]
    illegal(state, 2, EMPTY, "H3")


def test_h3_round_limit_counts_rounds_in_a_real_game() -> None:
    rng = random.Random(3)
    for seed in range(20):
        state = RULES.new_game(4, RULES.config({"round_limit": "2"}), SeededChance(seed))
        turns = 0
        while not state.is_over():
            state.apply(state.decision().seat, state.random_action(rng))  # type: ignore[union-attr]
            turns += 1
        assert state.view(0).round <= 2
        if state.outcome().ended_by == "round_limit":
            assert turns == 22 and state.view(0).round == 2
