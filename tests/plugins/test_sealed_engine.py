"""The engine contract of a simultaneous step, on the example game Sealed (examples/famiglia-sealed).

A step may ask several seats at once: ``decisions()`` names them, ``apply_together``
plays their answers as one move, and a caller that plays one seat at a time
(``decision()``/``apply``) gets the same game, each answer held out of sight until
the step's last one. The two shipped games keep their one decision a step.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from referee.contract import check_game
from referee.games import get_rules
from referee.games.base import TOGETHER, GameRules, GameState, IllegalAction, SeededChance

_encode = msgspec.json.Encoder().encode


@pytest.fixture
def rules(sealed: Path) -> GameRules:
    return get_rules("sealed")


def bid(rules: GameRules, card: int) -> Any:
    return msgspec.convert({"type": "bid", "card": card}, rules.action_type)


def new(rules: GameRules, n: int = 3, seed: int = 4) -> GameState:
    return rules.new_game(n, rules.config({}), SeededChance(seed))


def test_a_simultaneous_step_asks_every_seat_in_play_at_once(rules: GameRules) -> None:
    state = new(rules, 4)
    assert state.to_move == TOGETHER and type(state).simultaneous()
    assert [d.seat for d in state.decisions()] == [0, 1, 2, 3]
    assert all(d.kind == "bid" and len(d.options or []) == 5 for d in state.decisions())
    state.forfeit(2)
    assert [d.seat for d in state.decisions()] == [0, 1, 3]


def test_the_shipped_games_keep_one_decision_a_step() -> None:
    for name in ("vendetta", "sicilianos"):
        game = get_rules(name)
        state = game.new_game(3, game.config({}), SeededChance(1))
        assert not type(state).simultaneous()
        assert state.decisions() == [state.decision()]


def test_apply_together_plays_every_answer_as_one_move(rules: GameRules) -> None:
    state = new(rules, 3)
    prize = state.view(0).prize
    events = state.apply_together({0: bid(rules, 5), 1: bid(rules, 5), 2: bid(rules, 2)})
    shown = msgspec.to_builtins(events[0])
    # 5 and 5 match each other: the highest unmatched bid, seat 2's 2, takes the prize.
    assert shown == {"type": "bids_shown", "round": 0, "bids": [5, 5, 2], "taker": 2, "prize": prize}
    assert state.view(2).taken == [0, 0, prize] and state.view(0).hand == [1, 2, 3, 4]
    assert [d.seat for d in state.decisions()] == [0, 1, 2]


def test_an_illegal_answer_names_its_seat_and_changes_nothing(rules: GameRules) -> None:
    state = new(rules, 3)
    state.apply_together({0: bid(rules, 5), 1: bid(rules, 4), 2: bid(rules, 3)})
    before = [_encode(state.view(seat)) for seat in range(3)]
    with pytest.raises(IllegalAction) as caught:
        state.apply_together({0: bid(rules, 1), 1: bid(rules, 4), 2: bid(rules, 2)})  # seat 1 bid its 4 already
    assert caught.value.seat == 1 and caught.value.rule_id == "bid"
    assert [_encode(state.view(seat)) for seat in range(3)] == before
    with pytest.raises(IllegalAction) as foreign:
        state.apply_together({0: bid(rules, 1), 1: {"type": "bid", "card": 1}, 2: bid(rules, 2)})
    assert foreign.value.seat == 1


def test_apply_together_for_other_seats_than_those_asked_is_a_caller_mistake(rules: GameRules) -> None:
    state = new(rules, 3)
    with pytest.raises(ValueError, match=r"seats asked now are 0, 1, 2"):
        state.apply_together({0: bid(rules, 1), 1: bid(rules, 1)})


def test_one_seat_at_a_time_holds_each_answer_out_of_sight_and_plays_the_same_game(rules: GameRules) -> None:
    answers = {0: bid(rules, 3), 1: bid(rules, 1), 2: bid(rules, 3)}
    together = new(rules, 3)
    together_events = together.apply_together(answers)
    one_by_one = new(rules, 3)
    views = [_encode(one_by_one.view(seat)) for seat in range(3)]
    assert one_by_one.decision() is not None and one_by_one.decision().seat == 0  # type: ignore[union-attr]
    assert one_by_one.apply(0, answers[0]) == []
    assert one_by_one.apply(2, answers[2]) == []  # any seat still asked may answer, in any order
    assert [_encode(one_by_one.view(seat)) for seat in range(3)] == views  # held: in no view
    assert [d.seat for d in one_by_one.decisions()] == [1]
    with pytest.raises(IllegalAction, match="already answered"):
        one_by_one.apply(0, bid(rules, 2))
    assert _encode(one_by_one.apply(1, answers[1])) == _encode(together_events)
    assert [_encode(one_by_one.view(s)) for s in range(3)] == [_encode(together.view(s)) for s in range(3)]


def test_a_forfeit_drops_its_held_answer_and_the_last_awaited_forfeit_plays_the_step(rules: GameRules) -> None:
    state = new(rules, 3)
    state.apply(1, bid(rules, 5))
    state.apply(2, bid(rules, 4))
    state.forfeit(1)  # its held 5 is void: seat 2's 4 is the highest unmatched bid once seat 0 bids 1
    assert [d.seat for d in state.decisions()] == [0]
    events = state.forfeit(0)  # the last seat the round waited for: one seat left, the game ends
    assert state.is_over() and state.outcome().ranks[2] == 1
    state = new(rules, 4)
    state.apply(0, bid(rules, 2))
    state.apply(1, bid(rules, 3))
    state.apply(2, bid(rules, 1))
    events = state.forfeit(3)  # the round waited for seat 3 alone: it is played at once
    shown = msgspec.to_builtins(events[1])
    assert shown["type"] == "bids_shown" and shown["bids"] == [2, 3, 1, None] and shown["taker"] == 1


def test_a_copy_holds_its_own_answers(rules: GameRules) -> None:
    state = new(rules, 3)
    state.apply(0, bid(rules, 5))
    clone = state.copy()
    clone.apply(1, bid(rules, 1))
    assert [d.seat for d in state.decisions()] == [1, 2]
    assert [d.seat for d in clone.decisions()] == [2]


def test_random_and_pass_answers_are_legal_for_any_seat_asked(rules: GameRules) -> None:
    state = new(rules, 3)
    state.apply(0, bid(rules, 5))
    assert state.pass_action(2) == bid(rules, 1)
    answer = state.random_action(random.Random(3))
    assert answer in (state.decision().options or [])  # type: ignore[union-attr]


@pytest.mark.slow
def test_the_contract_suite_passes_the_simultaneous_example(rules: GameRules) -> None:
    check_game(rules, seeds=(1, 2))


def leaky_rules(rules: GameRules) -> GameRules:
    """Sealed with a view that tells every seat the answers already given to the round under way
    (in ``taken``): a leak the suite must find, since a simultaneous answer is secret by default."""
    base_state = rules.state_type

    class LeakyState(base_state):  # type: ignore[misc, valid-type]
        __slots__ = ()

        def _view(self, seat: int) -> Any:
            view = super()._view(seat)
            peeked = [getattr(self.held.get(other), "card", 0) for other in range(self.n)]
            return msgspec.structs.replace(view, taken=[t + 100 * p for t, p in zip(view.taken, peeked, strict=True)])

    class LeakyRules(type(rules)):  # type: ignore[misc]
        state_type = LeakyState

    return LeakyRules()


def test_the_contract_suite_finds_a_view_that_shows_an_answer_held_for_a_simultaneous_step(rules: GameRules) -> None:
    from referee.contract import ContractBroken, check_events_reveal_nothing_hidden

    check_events_reveal_nothing_hidden(rules, 3, None, 1)  # the example keeps every answer out of sight
    with pytest.raises(ContractBroken, match=r"view shows another seat's answer to a simultaneous step"):
        check_events_reveal_nothing_hidden(leaky_rules(rules), 3, None, 1)


def test_the_excerpt_of_sealed_in_writing_a_game_is_the_examples_own_code() -> None:
    from tests.plugins.sealed_site import EXAMPLE

    page = (EXAMPLE.parents[1] / "docs" / "writing-a-game.md").read_text(encoding="utf-8")
    section = page.split("## 10. Moves made at once", 1)[1]
    (excerpt,) = [b for b in re.findall(r"^```python\n(.*?)^```$", section, re.MULTILINE | re.DOTALL) if "_asked" in b]
    source = (EXAMPLE / "famiglia_sealed" / "__init__.py").read_text(encoding="utf-8")
    # Each method the page shows (up to its "..." elision, if any) is in the source as it stands.
    for method in excerpt.split("\n\n"):
        shown = re.split(r"^ *\.\.\..*\n", method, flags=re.MULTILINE)[0]
        assert shown.strip() and shown in source, shown
