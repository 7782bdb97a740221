"""A PettingZoo AEC environment for every installed famiglia game, played on the referee's own engine.

``env("vendetta", n_players=4)`` (or ``FamigliaEnv``) is a game of the engine
the referee runs, one agent per seat (``player_0`` ...). ``reset(seed=S)``
deals what ``famiglia play --seed S`` deals; a later ``reset()`` without a seed
draws the next deal's seed from S. Variants are given as the CLI takes them
(``variants={"control": "majority"}``).

Each agent observes only its own seat's view, in one of two forms:

* ``observation="vector"`` (the default): ``{"observation": floats,
  "action_mask": int8}`` from the game's encoding (``GameRules.encoding``);
* ``observation="view"``: ``{"view": the view Struct a bot receives,
  "action_mask": int8}``, for search bots that read the game's own types.

An action is a number the mask allows. A decision may take several steps (a
Vendetta placement: district, count, ...): the same agent is selected again
until the steps make the game's action (referee.games.encoding). A search bot
may also step with the game's own action (a ``Place``, a Sicilianos ``Roll``)
at the start of a decision. A number the mask refuses raises IllegalStep,
saying which numbers it allows.

Rewards come at the end only, from the final ranks (``rank_reward``: +1 first,
-1 last, shared ranks share), for every agent at once; then every agent is
terminated. Games end by their own rules (Vendetta's round limit, Sicilianos'
turn limit included), so there is no truncation.

Moves made at once: a step that asks several seats (``GameState.decisions()``)
is taken here one seat after the other (``decision()`` names the lowest seat
still to answer), each answer held by the engine out of every view until the
step's last; training.parallel steps them together instead.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Literal

import gymnasium
import msgspec
import numpy as np
from pettingzoo import AECEnv

from referee.games import get_rules
from referee.games.base import GameState, SeededChance
from training.decisions import Asked, IllegalStep, Observation, RewardFn, rank_reward

__all__ = ["FamigliaEnv", "IllegalStep", "ViewSpace", "env"]

ObservationForm = Literal["vector", "view"]


class ViewSpace(gymnasium.spaces.Space[Any]):
    """The views of one game's seats: a view Struct, exactly as a bot receives it (it cannot be drawn at random)."""

    def __init__(self, view_type: Any) -> None:
        super().__init__()
        self.view_type = view_type

    def contains(self, x: Any) -> bool:
        if isinstance(self.view_type, type):
            return isinstance(x, self.view_type)
        try:
            msgspec.convert(msgspec.to_builtins(x), self.view_type)
        except (msgspec.ValidationError, TypeError):
            return False
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        raise NotImplementedError("a seat's view cannot be drawn at random: reset the environment and observe")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ViewSpace) and other.view_type == self.view_type

    def __repr__(self) -> str:
        return f"ViewSpace({getattr(self.view_type, '__name__', self.view_type)})"


# pettingzoo ships no type information: its AECEnv is Any to the type checker.
def observation_space(view_type: Any, encoding: Any, form: ObservationForm) -> tuple[str, gymnasium.spaces.Dict]:
    """What an agent observes, the same in the turn-by-turn and the parallel environment: its key in the
    observation ("observation" for the vector, "view" for the view itself) and the space of both."""
    mask = gymnasium.spaces.Box(0, 1, (encoding.action_size,), np.int8)
    if form == "vector":
        vector = gymnasium.spaces.Box(encoding.low, encoding.high, (encoding.observation_size,), np.float32)
        return "observation", gymnasium.spaces.Dict({"observation": vector, "action_mask": mask})
    return "view", gymnasium.spaces.Dict({"view": ViewSpace(view_type), "action_mask": mask})


class FamigliaEnv(AECEnv[str, Observation, Any]):  # type: ignore[misc]
    """One famiglia game as a PettingZoo AEC environment (module docstring)."""

    metadata = {"name": "famiglia", "render_modes": ["ansi"], "is_parallelizable": False}  # noqa: RUF012 - PettingZoo reads it per class

    def __init__(
        self,
        game: str,
        n_players: int | None = None,
        variants: Mapping[str, str] | None = None,
        *,
        observation: ObservationForm = "vector",
        reward: RewardFn = rank_reward,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.rules = get_rules(game)
        self.config = self.rules.config(dict(variants or {}))
        self.n = n_players if n_players is not None else self.rules.min_players
        self.rules.check_table(self.n)
        if observation not in ("vector", "view"):
            raise ValueError(f"observation must be 'vector' or 'view', not {observation!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.form: ObservationForm = observation
        self.reward_fn = reward
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": f"famiglia_{self.rules.name}"}
        self.encoding = self.rules.encoding(self.n, self.config)
        self.possible_agents = [f"player_{seat}" for seat in range(self.n)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self._key = observation_space(self.rules.view_type, self.encoding, observation)[0]
        self.observation_spaces = {  # a space of its own for each agent: a space keeps its own sampling seed
            agent: observation_space(self.rules.view_type, self.encoding, observation)[1]
            for agent in self.possible_agents
        }
        self.action_spaces = {
            agent: gymnasium.spaces.Discrete(self.encoding.action_size) for agent in self.possible_agents
        }
        self._seeds = random.Random()
        self.state: GameState | None = None
        self.asked: Asked | None = None
        self.seed: int | None = None
        """The seed of the game in play: ``famiglia play --seed`` with it deals the same game."""

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game: the deal of ``seed`` (the referee's), or of a seed drawn from the last one given."""
        if seed is not None:
            self._seeds = random.Random(seed)
            game_seed = seed
        else:
            game_seed = self._seeds.getrandbits(63)
        self.seed = game_seed
        self.state = self.rules.new_game(self.n, self.config, SeededChance(game_seed))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._next_decision()

    def _next_decision(self) -> None:
        state = self._state()
        decision = state.decision()
        if decision is None:
            self.asked = None
            return
        # A vector learner's decision reads its view only while it is open (DecisionSteps: Vendetta's at
        # once, the default at each step), before the state changes or refills it for the next
        # decision, so the view the state refills in place will do; a view handed to an agent is a copy.
        view = state.view(decision.seat) if self.form == "view" else state.transient_view(decision.seat)
        self.asked = Asked(self.encoding, view, decision)
        self.agent_selection = self.possible_agents[decision.seat]

    def _state(self) -> GameState:
        if self.state is None:
            raise RuntimeError("the environment has no game yet: call reset() first")
        return self.state

    def observe(self, agent: str) -> Observation:
        """``agent``'s own view (nothing hidden from its seat), and the mask of its next step (zeros when not asked)."""
        seat = self._seat[agent]
        asked = self.asked
        if asked is not None and asked.decision.seat == seat:
            if self.form == "view":
                return {"view": asked.view, "action_mask": asked.mask()}
            return {"observation": asked.vector(), "action_mask": asked.mask()}
        view = self._state().view(seat)
        mask = np.zeros(self.encoding.action_size, dtype=np.int8)
        if self.form == "view":
            return {"view": view, "action_mask": mask}
        return {"observation": self.encoding.observe(view, None), "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._state()
        asked = self.asked
        assert asked is not None  # a live agent is selected only while a decision is open
        self._cumulative_rewards[agent] = 0.0
        if action.__class__ in state.action_classes and not asked.chosen:
            played: Any | None = action  # the game's own action, as a search bot plays it
        else:
            played = asked.choose(action)
        if played is None:
            return  # the decision needs more steps: the same agent again
        state.apply(asked.decision.seat, played)
        self._next_decision()
        if state.is_over():
            ranks = state.outcome().ranks
            for other in self.agents:
                self.rewards[other] = self.reward_fn(ranks, self._seat[other])
                self.terminations[other] = True
            # Rewards are zero until the end (module docstring): before it, adding them changes nothing.
            self._accumulate_rewards()

    def render(self) -> str | None:
        """The view of the agent to act, as JSON text (render_mode "ansi")."""
        if self.render_mode != "ansi" or self.state is None:
            return None
        seat = self._seat[self.agent_selection]
        return msgspec.json.format(msgspec.json.encode(self.state.view(seat))).decode()

    def close(self) -> None:
        self.state = None
        self.asked = None


def env(
    game: str,
    n_players: int | None = None,
    variants: Mapping[str, str] | None = None,
    *,
    observation: ObservationForm = "vector",
    reward: RewardFn = rank_reward,
    render_mode: str | None = None,
) -> FamigliaEnv:
    """The AEC environment of ``game`` at ``n_players`` seats (default: the game's fewest)."""
    return FamigliaEnv(game, n_players, variants, observation=observation, reward=reward, render_mode=render_mode)
