"""A PettingZoo parallel environment for a famiglia game whose moves are made at once.

``parallel_env("sealed", n_players=3)`` (or ``FamigliaParallelEnv``) plays a
game with simultaneous steps (``GameState.decisions()`` naming several seats)
on the referee's engine: at each ``step`` every agent whose seat is asked gives
its action, and the engine plays the step's answers together, as the referee
does (``apply_together``); an agent not asked gives anything (its mask is all
zeros) and it is ignored. Seeds, variants, observations (``"vector"`` or
``"view"``), rewards and the steps of a large decision are the AEC
environment's (training.aec): a decision taken in several steps holds the
step back until every seat asked has made its action. A game whose steps all
ask one seat has no parallel form: ValueError, pointing to ``training.aec.env``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv

from referee.games import get_rules
from referee.games.base import GameState, SeededChance
from training.aec import ObservationForm, observation_space
from training.decisions import Asked, Observation, RewardFn, rank_reward

__all__ = ["FamigliaParallelEnv", "parallel_env"]


# pettingzoo ships no type information: its ParallelEnv is Any to the type checker.
class FamigliaParallelEnv(ParallelEnv[str, Observation, Any]):  # type: ignore[misc]
    """One famiglia game with simultaneous steps as a PettingZoo parallel environment (module docstring)."""

    metadata = {"name": "famiglia_parallel", "render_modes": []}  # noqa: RUF012 - PettingZoo reads it per class

    def __init__(
        self,
        game: str,
        n_players: int | None = None,
        variants: Mapping[str, str] | None = None,
        *,
        observation: ObservationForm = "vector",
        reward: RewardFn = rank_reward,
    ) -> None:
        self.rules = get_rules(game)
        if not self.rules.state_type.simultaneous():
            raise ValueError(
                f"{game} asks one seat at a time and has no parallel form: use training.aec.env({game!r}) instead"
            )
        if observation not in ("vector", "view"):
            raise ValueError(f"observation must be 'vector' or 'view', not {observation!r}")
        self.config = self.rules.config(dict(variants or {}))
        self.n = n_players if n_players is not None else self.rules.min_players
        self.rules.check_table(self.n)
        self.form: ObservationForm = observation
        self.reward_fn = reward
        self.metadata = {**self.metadata, "name": f"famiglia_{self.rules.name}_parallel"}
        self.encoding = self.rules.encoding(self.n, self.config)
        self.possible_agents = [f"player_{seat}" for seat in range(self.n)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self.observation_spaces = {  # a space of its own for each agent: a space keeps its own sampling seed
            agent: observation_space(self.rules.view_type, self.encoding, observation)[1]
            for agent in self.possible_agents
        }
        self.action_spaces = {
            agent: gymnasium.spaces.Discrete(self.encoding.action_size) for agent in self.possible_agents
        }
        self._seeds = random.Random()
        self.state: GameState | None = None
        self.asked: dict[int, Asked] = {}  # the seats asked now, each its decision in progress
        self.made: dict[int, Any] = {}  # the actions of the seats whose steps are done
        self.seed: int | None = None
        """The seed of the game in play: ``famiglia play --seed`` with it deals the same game."""

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Observation], dict[str, dict[str, Any]]]:
        """A new game: the deal of ``seed`` (the referee's), or of a seed drawn from the last one given."""
        if seed is not None:
            self._seeds = random.Random(seed)
            game_seed = seed
        else:
            game_seed = self._seeds.getrandbits(63)
        self.seed = game_seed
        self.state = self.rules.new_game(self.n, self.config, SeededChance(game_seed))
        self.agents = self.possible_agents[:]
        self._next_step()
        return self._observations(), {agent: {} for agent in self.agents}

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[dict[str, Observation], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        """Each asked agent's step (a number its mask allows, or the game's own action at the start of a
        decision); the step is played together once every asked seat has its action."""
        state = self._state()
        for seat, asked in self.asked.items():
            if seat in self.made:
                continue
            action = actions[self.possible_agents[seat]]
            if action.__class__ in state.action_classes and not asked.chosen:
                self.made[seat] = action
            elif (played := asked.choose(action)) is not None:
                self.made[seat] = played
        if len(self.made) == len(self.asked):
            state.apply_together(self.made)
            self._next_step()
        rewards = dict.fromkeys(self.agents, 0.0)
        over = state.is_over()
        if over:
            ranks = state.outcome().ranks
            rewards = {agent: self.reward_fn(ranks, self._seat[agent]) for agent in self.agents}
        observations = self._observations()
        done = dict.fromkeys(self.agents, over)
        infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        if over:
            self.agents = []
        return observations, rewards, done, dict.fromkeys(done, False), infos

    def _next_step(self) -> None:
        state = self._state()
        self.made = {}
        self.asked = {d.seat: Asked(self.encoding, state.view(d.seat), d) for d in state.decisions()}

    def _observations(self) -> dict[str, Observation]:
        return {agent: self._observe(self._seat[agent]) for agent in self.agents}

    def _observe(self, seat: int) -> Observation:
        """``seat``'s own view, and the mask of its next step (zeros when it is not asked, or has its action)."""
        asked = self.asked.get(seat)
        if asked is not None and seat not in self.made:
            view, decision, chosen, mask = asked.view, asked.decision, asked.chosen, asked.mask()
        else:
            view, decision, chosen = self._state().view(seat), None, []
            mask = np.zeros(self.encoding.action_size, dtype=np.int8)
        if self.form == "view":
            return {"view": view, "action_mask": mask}
        return {"observation": self.encoding.observe(view, decision, chosen), "action_mask": mask}

    def _state(self) -> GameState:
        if self.state is None:
            raise RuntimeError("the environment has no game yet: call reset() first")
        return self.state

    def close(self) -> None:
        self.state = None
        self.asked, self.made = {}, {}


def parallel_env(
    game: str,
    n_players: int | None = None,
    variants: Mapping[str, str] | None = None,
    *,
    observation: ObservationForm = "vector",
    reward: RewardFn = rank_reward,
) -> FamigliaParallelEnv:
    """The parallel environment of ``game`` (a game with simultaneous steps) at ``n_players`` seats."""
    return FamigliaParallelEnv(game, n_players, variants, observation=observation, reward=reward)
