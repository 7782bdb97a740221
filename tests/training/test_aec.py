"""The AEC environment (training/aec.py): PettingZoo's own conformance tests over every registered game,
the referee's deals, observations of one seat only, and its user mistakes."""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
import trio
from pettingzoo.test import api_test, seed_test

from referee.channel import InProcessSeat
from referee.games import game_names, get_rules
from referee.match import MatchSpec, run_match
from referee.settings import RefereeSettings
from tests.tournaments.hosting.viewer.plugin_game import GAME as PLUGIN
from tests.tournaments.hosting.viewer.plugin_game import register
from training.aec import FamigliaEnv, IllegalStep, env

_encode = msgspec.json.encode


def _registry_cases() -> list[tuple[str, int, str]]:
    cases = []
    for name in game_names():
        rules = get_rules(name)
        for n in range(rules.min_players, rules.max_players + 1):
            for form in ("vector", "view"):
                cases.append((name, n, form))
    return cases


def _conformance(game: str, n: int, form: str) -> None:
    with warnings.catch_warnings():
        # PettingZoo warns of what it merely recommends (a Box observation, not a Dict of one), and
        # of the zero mask a seat that is not asked has: the API test's assertions are what counts.
        warnings.simplefilter("ignore")
        api_test(env(game, n, observation=form), num_cycles=200)
        seed_test(lambda: env(game, n, observation=form), num_cycles=200)


@pytest.mark.parametrize(("game", "n_players", "form"), _registry_cases())
def test_every_registered_game_passes_pettingzoos_api_and_seed_tests(game: str, n_players: int, form: str) -> None:
    _conformance(game, n_players, form)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.syspath_prepend(str(register(tmp_path / "site")))
    yield PLUGIN


def test_a_plugin_game_with_no_training_hooks_passes_them_on_the_defaults(plugin: str) -> None:
    rules = get_rules(plugin)
    for n in (rules.min_players, rules.max_players):
        for form in ("vector", "view"):
            _conformance(plugin, n, form)


def _play_random(game: FamigliaEnv, rng: np.random.Generator) -> int:
    steps = 0
    for agent in game.agent_iter():
        seen, _, done, cut, _ = game.last()
        if done or cut:
            game.step(None)
            continue
        game.step(int(rng.choice(np.flatnonzero(seen["action_mask"]))))
        steps += 1
        assert agent in game.possible_agents
    return steps


@pytest.mark.parametrize("game", ["vendetta", "sicilianos"])
def test_whole_games_end_with_rank_rewards_that_sum_to_zero_without_ties(game: str) -> None:
    aec = env(game, 4)
    rng = np.random.default_rng(1)
    for seed in range(3):
        aec.reset(seed=seed)
        rewards = dict.fromkeys(aec.possible_agents, 0.0)
        for agent in aec.agent_iter():
            seen, reward, done, cut, _ = aec.last()
            rewards[agent] += reward
            if done or cut:
                aec.step(None)
                continue
            aec.step(int(rng.choice(np.flatnonzero(seen["action_mask"]))))
        assert aec.agents == []
        ranks = aec.state.outcome().ranks if aec.state is not None else []
        for seat, agent in enumerate(aec.possible_agents):
            assert rewards[agent] == pytest.approx(1 - 2 * (ranks[seat] - 1) / 3)


class _Recorder(InProcessSeat):
    """A seat of a real match that answers at random and keeps every view it is sent."""

    def __init__(self, name: str, game: str) -> None:
        super().__init__(name)
        self.rules = get_rules(game)
        self.rng = random.Random(name)
        self.views: list[bytes] = []

    async def respond(self, message: dict[str, Any]) -> dict[str, Any] | None:
        if message["type"] == "start":
            return {"type": "ready", "name": self.name}
        if message["type"] == "request":
            self.views.append(_encode(message["view"]))
            return {"type": "action", "id": message["id"], "action": self.rules.random_answer(message, self.rng)}
        return None


@pytest.mark.parametrize(
    ("game", "n_players", "variants"),
    [("vendetta", 3, {"control": "majority"}), ("sicilianos", 4, {"action_die": "0-3-3"})],
)
def test_a_seed_deals_what_the_referee_deals_with_the_same_seed(
    game: str, n_players: int, variants: dict[str, str]
) -> None:
    seed = 7100280
    seats = [_Recorder(f"seat{i}", game) for i in range(n_players)]
    spec = MatchSpec(game=game, seed=seed, variants=variants)
    trio.run(run_match, spec, seats, RefereeSettings())
    first = next(seat for seat in seats if seat.views)
    aec = env(game, n_players, variants, observation="view")
    aec.reset(seed=seed)
    agent = aec.agent_selection
    assert aec.possible_agents.index(agent) == seats.index(first)
    assert _encode(aec.observe(agent)["view"]) == first.views[0]
    assert aec.seed == seed


def test_a_reset_without_a_seed_follows_the_last_seed_given() -> None:
    a, b = env("sicilianos", 3), env("sicilianos", 3)
    a.reset(seed=5)
    b.reset(seed=5)
    a.reset()
    b.reset()
    assert a.seed == b.seed != 5
    assert _encode(a.observe(a.agent_selection)["observation"].tolist()) == _encode(
        b.observe(b.agent_selection)["observation"].tolist()
    )


@pytest.mark.parametrize("game", ["vendetta", "sicilianos", PLUGIN])
def test_twins_that_differ_only_in_what_a_seat_cannot_see_give_it_the_same_observation(
    game: str, request: pytest.FixtureRequest
) -> None:
    if game == PLUGIN:
        request.getfixturevalue("plugin")
    rules = get_rules(game)
    n = rules.min_players + 1 if rules.max_players > rules.min_players else rules.min_players
    aec = env(game, n)
    rng = np.random.default_rng(3)
    twins = random.Random(3)
    seen_a_difference = False
    for seed in range(4):
        aec.reset(seed=seed)
        for step, agent in enumerate(aec.agent_iter()):
            seen, _, done, cut, _ = aec.last()
            if done or cut:
                aec.step(None)
                continue
            if step % 3 == 0:
                seen_a_difference |= _check_twins(aec, twins)
            aec.step(int(rng.choice(np.flatnonzero(seen["action_mask"]))))
    # The check saw twins that were not their original: the hidden information was really dealt again.
    assert seen_a_difference


def _check_twins(aec: FamigliaEnv, rng: random.Random) -> bool:
    """For each seat: a twin dealt again where that seat cannot see gives it the same observation and mask."""
    state, asked = aec.state, aec.asked
    assert state is not None and asked is not None
    differs = False
    for seat, agent in enumerate(aec.possible_agents):
        before = aec.observe(agent)
        twin = state.hidden_twin(seat, rng)
        assert twin is not None
        aec.state = twin
        if asked.decision.seat == seat:
            decision = twin.decision()
            assert decision is not None
            aec.asked = type(asked)(aec.encoding, twin.view(seat), decision)
            for step in asked.chosen:  # the twin's decision, taken to the same step
                aec.asked.choose(step)
        try:
            after = aec.observe(agent)
        finally:
            aec.state, aec.asked = state, asked
        assert np.array_equal(before["observation"], after["observation"]), f"seat {seat} observes hidden cards"
        assert np.array_equal(before["action_mask"], after["action_mask"]), f"seat {seat}'s mask shows hidden cards"
        differs |= _hidden_part(twin) != _hidden_part(state)
    return differs


def _hidden_part(state: Any) -> list[Any]:
    """The state's own plain fields (lists, numbers): where a twin dealt again differs from its original."""
    names = sorted({name for cls in type(state).__mro__ for name in getattr(cls, "__slots__", ())})
    return [value for name in names if isinstance(value := getattr(state, name, None), list | int | tuple)]


def test_a_search_bot_may_step_with_the_games_own_action() -> None:
    aec = env("vendetta", 3, observation="view")
    aec.reset(seed=2)
    state = aec.state
    assert state is not None
    agent = aec.agent_selection
    action = state.random_action(random.Random(1))
    expected = state.copy()
    expected.apply(aec.possible_agents.index(agent), action)
    aec.step(action)
    assert aec.state is not None
    assert _encode(aec.state.view(0)) == _encode(expected.view(0))


def test_a_step_the_mask_refuses_is_one_line_naming_the_steps_it_allows() -> None:
    aec = env("vendetta", 3)
    aec.reset(seed=1)
    mask = aec.observe(aec.agent_selection)["action_mask"]
    refused = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(
        IllegalStep, match=r"step \d+ is not allowed now .* pick a number the action mask allows: 0 \(done\)"
    ):
        aec.step(refused)
    assert aec.observe(aec.agent_selection)["action_mask"].tolist() == mask.tolist()  # nothing changed


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"game": "vendetta", "n_players": 2}, "vendetta is for 3 to 5 players, not 2"),
        ({"game": "vendetta", "variants": {"colour": "red"}}, "vendetta has no variant 'colour'"),
        ({"game": "vendetta", "observation": "pixels"}, "observation must be 'vector' or 'view'"),
    ],
)
def test_user_mistakes_are_one_clear_line(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        env(**kwargs)
    assert "\n" not in str(caught.value)


def test_observing_before_reset_says_to_reset() -> None:
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        env("sicilianos", 3).observe("player_0")


@pytest.mark.parametrize("wrong", [None, "three", 2.5j, object()])
def test_a_step_that_is_not_a_number_is_one_line_saying_what_a_step_is(wrong: object) -> None:
    aec = env("sicilianos", 3)
    aec.reset(seed=1)
    with pytest.raises(IllegalStep, match=r"a step is a number from 0 to 865 that the action mask allows, not"):
        aec.step(wrong)


def test_an_illegal_game_action_from_a_search_bot_is_refused_and_changes_nothing() -> None:
    from referee.games.base import IllegalAction
    from referee.games.vendetta import Place, Placement

    aec = env("vendetta", 3, observation="view")
    aec.reset(seed=1)
    agent = aec.agent_selection
    before = _encode(aec.observe(agent)["view"])
    with pytest.raises(IllegalAction, match="P1"):
        aec.step(Place([Placement(99, 1)]))
    assert _encode(aec.observe(agent)["view"]) == before and aec.agent_selection == agent
    aec.step(Place([]))  # the game goes on from where it was
    assert aec.agent_selection != agent
