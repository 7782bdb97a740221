"""The contract suite names the faults an outsider's Liar's dice once slipped past it.

tests/referee/games/liars_dice.py is a Liar's dice written from
docs/writing-a-game.md that keeps the contract. Each test below plants one
fault of issue 28 in a subclass and shows the check that must catch it, and
the cause its message names:

* every seat sent every seat's dice (``events_for`` left as "everything");
* a view that shows the next seat's dice, behind a ``hidden_twin`` that deals
  nothing again;
* dice drawn from one stream in seat order, so which seat's die the n-th draw
  is depends on how many dice each seat has lost;
* ``copy()`` sharing a list with its original (once blamed on a refused action).
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from referee.contract import (
    CHECKS,
    check_chance_means_the_same,
    check_copy_is_independent,
    check_events_reveal_nothing_hidden,
    check_illegal_actions_change_nothing,
    check_views_leak_nothing,
)
from referee.games.base import GameRules, GameState
from tests.referee.games.liars_dice import FACES, RULES, LiarsRules, LiarsState, LiarsView


def _rules_with(state_type: type[GameState]) -> GameRules:
    class Planted(LiarsRules):
        pass

    Planted.state_type = state_type
    return Planted()


@pytest.mark.parametrize("check", [c for c in CHECKS if c.__name__ != "check_replays_verify"], ids=lambda c: c.__name__)
def test_the_sound_liars_dice_keeps_the_contract(check: Any) -> None:
    # (check_replays_verify needs the game registered: the docs test runs it on a plug-in.)
    for n_players in range(RULES.min_players, RULES.max_players + 1):
        for seed in (1, 2, 3):
            check(RULES, n_players, RULES.config({}), seed)


class _BroadcastState(LiarsState):
    """Sends every roll to every seat: events_for is the base's "everything"."""

    __slots__ = ()

    def events_for(self, seat: int, events: list[msgspec.Struct]) -> list[msgspec.Struct]:
        return events


def test_events_check_catches_every_seats_dice_sent_to_every_seat() -> None:
    with pytest.raises(AssertionError) as caught:
        check_events_reveal_nothing_hidden(_rules_with(_BroadcastState), 3, RULES.config({}), 1)
    message = str(caught.value)
    assert "is sent Rolled(seat=" in message
    assert "which tells it what its view hides" in message
    assert "GameState.events_for(" in message


class _PeekingState(LiarsState):
    """Shows each seat the next seat's dice as well (a loop off by one), and offers a
    twin that deals nothing again, so the leak never shows in the twin."""

    __slots__ = ()

    def _view(self, seat: int) -> LiarsView:
        view = super()._view(seat)
        shown = view.dice_shown
        peek = (seat + 1) % self.n
        shown[peek] = self.dice[peek][:]
        return view

    def hidden_twin(self, seat: int, rng: random.Random) -> LiarsState:
        return self.copy()


class _PeekingWithTwinState(_PeekingState):
    """The same leak, with the sound twin that rolls the other seats' dice again."""

    __slots__ = ()

    def hidden_twin(self, seat: int, rng: random.Random) -> LiarsState:
        return LiarsState.hidden_twin(self, seat, rng)


def test_views_check_refuses_a_twin_that_deals_nothing_again_where_something_is_hidden() -> None:
    with pytest.raises(AssertionError) as caught:
        check_views_leak_nothing(_rules_with(_PeekingState), 3, RULES.config({}), 1)
    message = str(caught.value)
    assert "GameState.hidden_twin(" in message and "deals nothing again" in message
    assert "yet something is hidden from seat" in message and "from stream 'dice:" in message


def test_views_check_then_finds_the_leak_itself() -> None:
    with pytest.raises(AssertionError, match="view changes with what is hidden from it"):
        check_views_leak_nothing(_rules_with(_PeekingWithTwinState), 3, RULES.config({}), 1)


class _OneStreamState(LiarsState):
    """Rolls the dice in play from one stream, seat after seat: after a seat loses a
    die, the n-th draw of the stream is another seat's die."""

    __slots__ = ()

    def _roll(self) -> list[list[int]]:
        return [sorted(self._chance.below("dice", FACES) + 1 for _ in range(self.counts[s])) for s in range(self.n)]


def test_chance_check_catches_a_stream_whose_draws_change_seat_with_the_play() -> None:
    with pytest.raises(AssertionError) as caught:
        check_chance_means_the_same(_rules_with(_OneStreamState), 3, RULES.config({}), 1)
    message = str(caught.value)
    assert "of stream 'dice' means different things under different play" in message
    assert "in one game," in message and "a stream per seat" in message


class _SharedCountsState(LiarsState):
    """Copies every field but the dice counts, which the copy shares."""

    __slots__ = ()

    def _copy_into(self, other: LiarsState) -> None:
        super()._copy_into(other)
        other.counts = self.counts


@pytest.mark.parametrize("check", [check_copy_is_independent, check_illegal_actions_change_nothing])
def test_a_copy_sharing_a_list_is_blamed_on_copy_not_on_a_refused_action(check: Any) -> None:
    with pytest.raises(AssertionError) as caught:
        for seed in (1, 2, 3):
            check(_rules_with(_SharedCountsState), 3, RULES.config({}), seed)
    message = str(caught.value)
    assert "copy() shares counts with its original" in message and "_copy_into" in message
    assert "refused" not in message


class _NoTwinState(LiarsState):
    """Hides each seat's dice but offers no twin, so no view of it would ever be checked."""

    __slots__ = ()

    def hidden_twin(self, seat: int, rng: random.Random) -> LiarsState | None:
        return None


def test_views_check_asks_for_a_twin_where_something_is_hidden() -> None:
    with pytest.raises(AssertionError, match=r"hidden_twin\(0, rng\) gives None, yet something is hidden from seat 0"):
        check_views_leak_nothing(_rules_with(_NoTwinState), 3, RULES.config({}), 1)


class _DealToldToAllState(LiarsState):
    """Sends the first round's events (every seat's roll, told at the deal) to every seat."""

    __slots__ = ()

    def events_for(self, seat: int, events: list[msgspec.Struct]) -> list[msgspec.Struct]:
        return events if events and events[0] is self.deal_events[0] else super().events_for(seat, events)


def test_events_check_catches_dice_told_to_every_seat_at_the_deal() -> None:
    # Over check_game's default seeds and every table size: the deal's draws are among those dealt again.
    with pytest.raises(AssertionError, match=r"seed \d, the deal: seat \d is sent Rolled\(seat=\d"):
        for n_players in range(RULES.min_players, RULES.max_players + 1):
            for seed in (1, 2):
                check_events_reveal_nothing_hidden(_rules_with(_DealToldToAllState), n_players, RULES.config({}), seed)
