"""The contract suite (referee/contract.py) over every registered game, and proof
that each of its checks fails on a game that breaks what it checks.

Takes about 15 s: every check at every table size of each game, two seeds.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from referee.contract import (
    CHECKS,
    ContractBroken,
    check_illegal_actions_change_nothing,
    check_transient_view_is_the_view,
    check_views_leak_nothing,
)
from referee.games import game_names, get_rules
from referee.games.base import GameRules, GameState, IllegalAction
from referee.games.vendetta import VendettaRules, VendettaState, VendettaView


def _cases() -> list[tuple[str, int, Any]]:
    cases = []
    for name in game_names():
        rules = get_rules(name)
        for n in range(rules.min_players, rules.max_players + 1):
            for check in CHECKS:
                cases.append((name, n, check))
    return cases


@pytest.mark.slow
@pytest.mark.parametrize(("game", "n_players", "check"), _cases(), ids=lambda v: getattr(v, "__name__", str(v)))
def test_every_registered_game_keeps_the_contract(game: str, n_players: int, check: Any) -> None:
    rules = get_rules(game)
    for seed in (1, 2):
        check(rules, n_players, rules.config({}), seed)


def test_the_contract_covers_both_built_in_games() -> None:
    assert {"vendetta", "sicilianos"} <= set(game_names())


# ---------------------------------------------------------------------------
# Each check catches the fault it is named after: a Vendetta with one planted.


class _LeakyState(VendettaState):
    """Shows the next protection card in the view: hidden by H5."""

    __slots__ = ()

    def _view(self, seat: int) -> VendettaView:
        view = super()._view(seat)
        if self._outcome is not None:
            return view
        return msgspec.structs.replace(view, last_raid=[self._pile[self._revealed] + 1])


class _StaleState(VendettaState):
    """Sends the referee the points as they were at the start of the round."""

    __slots__ = ()

    def _transient_view(self, seat: int) -> VendettaView:
        view = super()._transient_view(seat)
        view.points = [0] * self.n if self._turn == 0 else view.points
        return view


class _SharedViewsState(VendettaState):
    """Refills one view object per seat, but lets a copy refill the original's."""

    __slots__ = ()

    def _copy_into(self, other: VendettaState) -> None:
        super()._copy_into(other)
        other._shared_views = self._shared_views


class _ForgetfulViewsState(VendettaState):
    """Refills one view object per seat, but not the districts each seat controlled
    (a list the state replaces at each scoring, rather than changes)."""

    __slots__ = ()

    def _transient_view(self, seat: int) -> VendettaView:
        kept = self._shared_views[seat]
        controlled = kept.controlled if kept is not None else None
        view = super()._transient_view(seat)
        if controlled is not None:
            view.controlled = controlled
        return view


class _CarelessState(VendettaState):
    """Takes a mafioso from the hand before finding the placement illegal."""

    __slots__ = ()

    def _check_placements(self, seat: int, placements: list[Any]) -> int:
        try:
            return super()._check_placements(seat, placements)
        except IllegalAction:
            self._hands[seat] -= 1
            raise


def _rules_with(state_type: type[GameState]) -> GameRules:
    class Broken(VendettaRules):
        pass

    Broken.state_type = state_type
    return Broken()


def test_views_leak_check_catches_a_view_showing_the_next_card() -> None:
    with pytest.raises(ContractBroken, match="view changes with what is hidden"):
        check_views_leak_nothing(_rules_with(_LeakyState), 3, VendettaRules().config({}), 1)


def test_illegal_action_check_catches_a_refusal_that_changed_the_state() -> None:
    with pytest.raises(ContractBroken, match="changed"):
        check_illegal_actions_change_nothing(_rules_with(_CarelessState), 3, VendettaRules().config({}), 1)


def test_transient_view_check_catches_a_request_view_that_differs_from_the_view() -> None:
    with pytest.raises(ContractBroken, match="transient view differs from its view"):
        check_transient_view_is_the_view(_rules_with(_StaleState), 3, VendettaRules().config({}), 1)


def test_transient_view_check_catches_a_view_object_shared_with_a_copy() -> None:
    with pytest.raises(ContractBroken, match="building a copy's transient views changed the game's"):
        check_transient_view_is_the_view(_rules_with(_SharedViewsState), 3, VendettaRules().config({}), 1)


def test_transient_view_check_catches_a_refilled_view_that_misses_a_replaced_list() -> None:
    with pytest.raises(ContractBroken, match="transient view differs from its view"):
        check_transient_view_is_the_view(_rules_with(_ForgetfulViewsState), 3, VendettaRules().config({}), 1)


def test_a_check_takes_the_defaults_variant_texts_or_a_configuration_and_refuses_anything_else() -> None:
    from referee.contract import game_config
    from referee.games.base import UnknownVariant

    vendetta, sicilianos = get_rules("vendetta"), get_rules("sicilianos")
    assert game_config(vendetta) == vendetta.config({})
    assert game_config(vendetta, {"round_limit": "7"}) == vendetta.config({"round_limit": "7"})
    configured = vendetta.config({"round_limit": "9"})
    assert game_config(vendetta, configured) is configured
    with pytest.raises(UnknownVariant, match="vendetta has no variant 'hand'"):
        game_config(vendetta, {"hand": "5"})
    with pytest.raises(TypeError):
        game_config(vendetta, sicilianos.config({}))
    check_views_leak_nothing(vendetta, 3)  # as docs/writing-a-game.md calls a check: seed 1, the defaults
