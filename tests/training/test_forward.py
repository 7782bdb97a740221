"""The forward model (GameRules.sample_state, training/forward.py): every state sampled from a seat's view
shows that seat the same view, deals the hidden part again, and plays on to a valid end."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from referee.games import get_rules
from referee.games.base import GameState, SeededChance
from tests.tournaments.hosting.viewer.plugin_game import GAME as PLUGIN
from tests.tournaments.hosting.viewer.plugin_game import register
from training.forward import NoForwardModel, check_sample_agrees, sample_states

_encode = msgspec.json.encode

CASES = [
    ("vendetta", {}),
    ("vendetta", {"control": "majority", "setup": "dealt-only"}),
    ("sicilianos", {}),
    ("sicilianos", {"steal_pick": "victim", "business_colour": "winning", "action_die": "0-3-3"}),
]


def _positions(game: str, n: int, variants: dict[str, str], seeds: range, every: int) -> Iterator[GameState]:
    rules = get_rules(game)
    config = rules.config(variants)
    for seed in seeds:
        state = rules.new_game(n, config, SeededChance(seed))
        rng = random.Random(seed)
        step = 0
        while (decision := state.decision()) is not None:
            if step % every == 0:
                yield state
            if step == 9 and n > 3:
                state.forfeit(n - 1)  # a forfeited seat is part of what a view shows
            else:
                state.apply(decision.seat, state.random_action(rng))
            step += 1


@pytest.mark.parametrize(("game", "variants"), CASES)
def test_every_sample_shows_its_seat_the_view_it_came_from(game: str, variants: dict[str, str]) -> None:
    rules = get_rules(game)
    rng = random.Random(7)
    samples = 0
    for n in range(rules.min_players, rules.max_players + 1):
        for state in _positions(game, n, variants, range(1, 4), 5):
            for seat in range(n):
                check_sample_agrees(rules, state, seat, rng)
                samples += 1
    assert samples > 200


@pytest.mark.parametrize(("game", "variants"), CASES)
def test_samples_play_on_to_a_valid_end_and_ask_the_seat_its_own_decision(game: str, variants: dict[str, str]) -> None:
    rules = get_rules(game)
    rng = random.Random(3)
    for state in _positions(game, 4, variants, range(1, 3), 7):
        decision = state.decision()
        assert decision is not None
        for sample in sample_states(rules, state.view(decision.seat), state.config, 2, rng, decision=decision):
            assert _encode(sample.decision()) == _encode(decision)
            play = random.Random(1)
            while (next_decision := sample.decision()) is not None:
                sample.apply(next_decision.seat, sample.random_action(play))
            assert len(sample.outcome().ranks) == 4


def test_sicilianos_samples_deal_the_hidden_cards_again() -> None:
    rules = get_rules("sicilianos")
    state = next(s for s in _positions("sicilianos", 4, {}, range(5, 6), 1) if s.decision() and s.turns >= 3)
    samples = sample_states(rules, state.view(0), state.config, 30, random.Random(1))
    others = {_encode([sample.hands[1:], sample.piles]) for sample in samples}  # type: ignore[attr-defined]
    assert len(others) > 20  # the other hands and unseen piles vary from sample to sample
    mine = {_encode(sample.hands[0]) for sample in samples}  # type: ignore[attr-defined]
    assert mine == {_encode(state.hands[0])}  # type: ignore[attr-defined]


def test_vendetta_samples_deal_the_pile_and_raid_again() -> None:
    rules = get_rules("vendetta")
    state = rules.new_game(3, rules.config({}), SeededChance(2))
    samples = sample_states(rules, state.view(1), state.config, 20, random.Random(1))
    assert len({_encode(sample.hidden_cards()) for sample in samples}) > 10  # type: ignore[attr-defined]


def test_a_finished_games_view_and_a_view_of_other_variants_are_refused() -> None:
    rules = get_rules("vendetta")
    state = rules.new_game(3, rules.config({}), SeededChance(2))
    with pytest.raises(ValueError, match="variants are not the configuration's"):
        rules.sample_state(state.view(0), rules.config({"control": "majority"}), random.Random())
    while (decision := state.decision()) is not None:
        state.apply(decision.seat, state.pass_action())
    with pytest.raises(ValueError, match="over"):
        rules.sample_state(state.view(0), state.config, random.Random())
    sicilianos = get_rules("sicilianos")
    other = sicilianos.new_game(3, sicilianos.config({}), SeededChance(2))
    with pytest.raises(ValueError, match="turn limit"):
        sicilianos.sample_state(other.view(0), sicilianos.config({"turn_limit": "50"}), random.Random())


def test_a_plugin_without_a_sampler_is_told_what_to_provide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(register(tmp_path / "site")))
    rules = get_rules(PLUGIN)
    state = rules.new_game(rules.min_players, rules.config({}), SeededChance(1))
    with pytest.raises(NoForwardModel, match=r"offers no forward model: its GameRules.sample_state gives None"):
        sample_states(rules, state.view(0), state.config, 1, random.Random())
