"""The PettingZoo parallel environment (training/parallel.py) on the example simultaneous game, Sealed.

PettingZoo's own parallel conformance test passes at table sizes from 2 to 5
in both observation forms, and one seed with one sequence of actions gives one game; a step plays every asked seat's answer together and
gives the game that the referee's seed and the AEC environment give with the
same bids; a game without simultaneous steps is refused in one line.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from training.aec import env
from training.parallel import parallel_env

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("form", ["vector", "view"])
@pytest.mark.parametrize("n", [2, 3, 5])
def test_pettingzoos_parallel_api_test_passes_for_sealed(sealed: Path, n: int, form: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's advice on observation dtypes, not failures
        parallel_api_test(parallel_env("sealed", n, observation=form), num_cycles=60)


@pytest.mark.parametrize("n", [2, 4])
def test_one_seed_and_one_sequence_of_masked_actions_give_one_game(sealed: Path, n: int) -> None:
    """PettingZoo's parallel_seed_test samples actions without their masks, which an environment with
    masks refuses (as the AEC one does); this is the same check with the masks."""

    def play() -> list[Any]:
        parallel = parallel_env("sealed", n)
        observations, _ = parallel.reset(seed=42)
        rng = np.random.default_rng(7)
        seen: list[Any] = []
        while parallel.agents:
            actions = {}
            for agent, obs in observations.items():
                allowed = np.flatnonzero(obs["action_mask"])
                actions[agent] = int(rng.choice(allowed))
                seen.append((agent, obs["observation"].tolist(), actions[agent]))
            observations, rewards, _, _, _ = parallel.step(actions)
        seen.append(rewards)
        return seen

    assert play() == play()


def test_a_parallel_step_plays_every_asked_seats_bid_together_as_the_aec_game_does(sealed: Path) -> None:
    parallel = parallel_env("sealed", 3, {"prizes": "4"}, observation="view")
    observations, _ = parallel.reset(seed=11)
    sequential = env("sealed", 3, {"prizes": "4"}, observation="view")
    sequential.reset(seed=11)
    rounds = 0
    while parallel.agents:
        # Every seat is asked at once: each bids the highest card its mask allows.
        actions = {agent: int(np.flatnonzero(obs["action_mask"])[-1]) for agent, obs in observations.items()}
        assert all(obs["action_mask"].any() for obs in observations.values())
        for _ in actions:  # the AEC environment asks the same seats one after the other
            sequential.step(actions[sequential.agent_selection])
        observations, rewards, done, _, _ = parallel.step(actions)
        rounds += 1
    assert rounds == 4 and all(done.values())
    assert parallel.state is not None and sequential.state is not None
    assert parallel.state.outcome() == sequential.state.outcome()
    assert rewards == {agent: sequential.rewards[agent] for agent in rewards}


def test_a_game_that_asks_one_seat_at_a_time_has_no_parallel_environment() -> None:
    with pytest.raises(ValueError, match=r"^vendetta asks one seat at a time .* use training\.aec\.env\('vendetta'\)"):
        parallel_env("vendetta", 3)
