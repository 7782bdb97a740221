"""The contract suite sees a secret made by a choice (issue 44): a sealed bid told too early fails it.

tests/referee/games/sealed_bids.py keeps its bids secret until a round's bids
are shown, and declares them (``GameRules.secret_choices``). Each leaky copy
below tells the other seats a pending bid one way; ``check_game`` must fail it
with the game's default ``hidden_twin`` (None), while the sound game passes.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from pathlib import Path

import msgspec
import pytest

from referee.contract import (
    ContractBroken,
    check_events_reveal_nothing_hidden,
    check_game,
    check_views_leak_nothing,
)
from referee.games.base import GameRules, GameState, SeededChance
from referee.games.rechoose import choice_twins, other_choice
from referee.games.redeal import play_trace
from tests.referee.games.sealed_bids import RULES, Bid, SealedRules, SealedState, SealedView, register


@pytest.fixture
def registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Sealed bids registered as a plug-in (check_replays_verify finds a game by its name)."""
    monkeypatch.syspath_prepend(str(register(tmp_path)))
    yield


def _rules_with(state_type: type[GameState], secret_choices: Mapping[str, tuple[str, ...]] | None = None) -> GameRules:
    """Sealed bids played by ``state_type``; its declared secrets, or ``secret_choices``."""

    class Planted(SealedRules):
        pass

    Planted.state_type = state_type
    if secret_choices is not None:
        Planted.secret_choices = secret_choices
    return Planted()


class _BidsToldState(SealedState):
    """Tells every seat every bid as it is made: ``events_for`` left as the base's "everything"."""

    __slots__ = ()

    def events_for(self, seat: int, events: list[msgspec.Struct]) -> list[msgspec.Struct]:
        return events


class _BidsShownState(SealedState):
    """Blanks the bids in the events, but its view lists the round's pending bids with the finished rounds'."""

    __slots__ = ()

    def _view(self, seat: int) -> SealedView:
        view = super()._view(seat)
        if view.over:
            return view
        return msgspec.structs.replace(view, shown=[*view.shown, self.bids[:]])


def test_the_sound_sealed_bids_keeps_the_contract(registered: None) -> None:
    check_game(RULES, seeds=(1, 2, 3))


def test_events_that_tell_a_pending_bid_fail_check_game() -> None:
    with pytest.raises(ContractBroken) as broken:
        check_game(_rules_with(_BidsToldState), seeds=(1, 2))
    message = str(broken.value)
    assert "which tells it another seat's secret choice" in message, message
    assert "BidMade(" in message and "GameState.events_for(" in message


def test_a_view_that_shows_a_pending_bid_fails_check_game_with_the_default_hidden_twin() -> None:
    rules = _rules_with(_BidsShownState)
    assert rules.new_game(3, rules.config({}), SeededChance(1)).hidden_twin(0, random.Random()) is None
    with pytest.raises(
        ContractBroken, match=r"view shows another seat's secret choice: seat \d choosing \{'type': 'bid'"
    ):
        check_game(rules, seeds=(1, 2))


@pytest.mark.parametrize("check", [check_events_reveal_nothing_hidden, check_views_leak_nothing])
def test_each_leak_is_caught_by_its_own_check_at_every_table_size(check: object) -> None:
    planted = {check_events_reveal_nothing_hidden: _BidsToldState, check_views_leak_nothing: _BidsShownState}
    rules = _rules_with(planted[check])  # type: ignore[index]
    for n_players in range(rules.min_players, rules.max_players + 1):
        with pytest.raises(ContractBroken, match="secret choice"):
            check(rules, n_players, rules.config({}), 1)  # type: ignore[operator]


def test_a_game_that_declares_no_secret_choice_is_played_again_at_no_choice() -> None:
    # What a view must hide is the game's to say: without the declaration the leaky copy is a game
    # whose bids are public, and no choice is made again (so shipped games pay nothing for it).
    rules = _rules_with(_BidsToldState, secret_choices={})
    trace = play_trace(rules, 3, rules.config({}), SeededChance(1), random.Random(1))
    assert list(choice_twins(rules, 3, rules.config({}), 1, trace, 100)) == []
    check_events_reveal_nothing_hidden(rules, 3, rules.config({}), 1)


def test_another_secret_differs_in_the_secret_fields_only() -> None:
    state = RULES.new_game(3, RULES.config({}), SeededChance(4))
    rng = random.Random(0)
    others = {other_choice(state, Bid(2), ("card",), rng) for _ in range(30)}
    assert others == {Bid(1), Bid(3), Bid(4)}
    assert other_choice(state, Bid(2), ("type",), rng) is None  # no other action shares its card


def test_choice_twins_change_one_declared_choice_and_replay_the_rest() -> None:
    config = RULES.config({})
    trace = play_trace(RULES, 3, config, SeededChance(2), random.Random(2))
    twins = list(choice_twins(RULES, 3, config, 2, trace, len(trace.steps)))
    # Every bid but those of the last round, where each seat holds one card and has no other to bid.
    assert [twin.step for twin in twins] == list(range(len(trace.steps) - 3))
    for twin in twins:
        seat, chosen = trace.steps[twin.step]
        assert (twin.seat, twin.chosen) == (seat, chosen) and twin.instead != chosen
        first = next(twin.positions)
        # The chooser sees its own other card; the seats after it see the same view.
        assert first.views[seat] != trace.positions[twin.step + 1].views[seat]


def test_a_misspelt_secret_field_is_named_not_passed_in_silence() -> None:
    rules = _rules_with(_BidsToldState, secret_choices={"bid": ("cards",)})
    with pytest.raises(
        ContractBroken, match=r"secret_choices names 'cards' for a 'bid' decision, .* \(its fields: type, card\)"
    ):
        check_events_reveal_nothing_hidden(rules, 3)


class _DealGrowsState(SealedState):
    """Adds each round's prize to the deal's events as it is shown: they change during play."""

    __slots__ = ()

    def _apply_action(self, seat: int, action: Bid) -> list[msgspec.Struct]:
        events = super()._apply_action(seat, action)
        self.deal_events.extend(event for event in events if event.__class__.__name__ == "PrizeShown")
        return events


def test_deal_events_changed_during_play_are_refused() -> None:
    with pytest.raises(ContractBroken, match="deal_events changed during play: fill it in __init__ only"):
        check_game(_rules_with(_DealGrowsState), seeds=(1,), table_sizes=(2,))
