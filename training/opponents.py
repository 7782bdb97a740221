"""A single-agent Gymnasium environment whose other seats are real famiglia bots, in any language.

``OpponentsEnv("vendetta", ["sample_bots/random_py", "sample_bots/c_bot"])``
seats the learner and the bots (folders with bot.toml, or command lines) and
plays real matches: the referee's own ``play_match``, each bot built once and
run in its sandbox, its processes kept warm from one game to the next (a
``WarmPool``), its clock and its failures as in a tournament. A bot that
crashes, times out or plays illegally forfeits its seat, and the learner's game
goes on. The learner's seat is a seat of the match played in this process
(``LearnerSeat``) with no clock: the referee waits for the learner, and the
environment's ``step`` is its answer.

Observations and actions are the AEC environment's (training.aec): the
encoding's vector and mask of the learner's view, one masked step at a time.
``reset(seed=S)`` plays the deal of ``famiglia play --seed S``; a reset without
a seed draws the next one from S. The reward comes at the end, from the final
ranks (``rank_reward``); ``info`` then holds the match's result.

The referee runs in a thread of its own (a Trio loop), started with the
environment; ``close()`` stops the match in play and every bot process.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium
import msgspec
import numpy as np
import trio

from referee.bots import BotSpec, load_bot
from referee.channel import InProcessSeat
from referee.games import get_rules
from referee.match import MatchRecord, MatchSpec
from referee.play import play_match, prepare_bots
from referee.seats import WarmPool, open_pool
from referee.settings import DEFAULT_SETTINGS, RefereeSettings
from training.decisions import Asked, Observation, RewardFn, decision_from_request, rank_reward

__all__ = ["LearnerSeat", "OpponentsEnv"]

# How long close() waits for the referee's thread to stop its bots.
CLOSE_SECONDS = 30.0


class LearnerSeat(InProcessSeat):
    """The learner's seat in a real match: each request goes to the environment, each answer comes back from it."""

    untimed = True  # the referee waits while the learner learns

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.to_env_send, self.to_env = trio.open_memory_channel[dict[str, Any]](math.inf)
        self.answers_send, self.answers = trio.open_memory_channel[Any](math.inf)

    async def respond(self, message: dict[str, Any]) -> dict[str, Any] | None:
        kind = message.get("type")
        if kind == "start":
            await self.to_env_send.send(message)
            return {"type": "ready", "name": self.name}
        if kind == "request":
            await self.to_env_send.send(message)
            action = await self.answers.receive()
            return {"type": "action", "id": message["id"], "action": msgspec.to_builtins(action)}
        if kind in ("end", "rejected"):
            await self.to_env_send.send(message)
        return None


class OpponentsEnv(gymnasium.Env[Observation, Any]):
    """One seat of a real match against famiglia bots (module docstring)."""

    metadata = {"render_modes": []}  # noqa: RUF012 - Gymnasium reads it per class

    def __init__(
        self,
        game: str,
        opponents: Sequence[str | BotSpec],
        *,
        seat: int = 0,
        variants: Mapping[str, str] | None = None,
        settings: RefereeSettings = DEFAULT_SETTINGS,
        reward: RewardFn = rank_reward,
        base: Path | None = None,
        name: str = "learner",
    ) -> None:
        self.rules = get_rules(game)
        self.variants = dict(variants or {})
        self.config = self.rules.config(self.variants)
        self.n = len(opponents) + 1
        self.rules.check_table(self.n)
        if not 0 <= seat < self.n:
            raise ValueError(f"seat {seat} is not a seat of a {self.n}-player table (0 to {self.n - 1})")
        self.seat = seat
        self.settings = settings
        self.reward_fn = reward
        self.name = name
        specs = [spec if isinstance(spec, BotSpec) else load_bot(spec, base=base) for spec in opponents]
        self.opponents = prepare_bots(specs, settings)  # each built once, in its sandbox; one line if it fails
        self.encoding = self.rules.encoding(self.n, self.config)
        self.observation_space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(
                    self.encoding.low, self.encoding.high, (self.encoding.observation_size,), np.float32
                ),
                "action_mask": gymnasium.spaces.Box(0, 1, (self.encoding.action_size,), np.int8),
            }
        )
        self.action_space = gymnasium.spaces.Discrete(self.encoding.action_size)
        self._seeds = random.Random()
        self.asked: Asked | None = None
        self._last: Observation | None = None
        self._learner: LearnerSeat | None = None
        self._match_scope: trio.CancelScope | None = None
        self._match_done: trio.Event | None = None
        self._match_error: BaseException | None = None
        self._record: MatchRecord | None = None
        self.game_seed: int | None = None
        # The referee's thread: a Trio loop holding the pool of warm bot processes.
        self._token: trio.lowlevel.TrioToken | None = None
        self._pool: WarmPool | None = None
        self._nursery: trio.Nursery | None = None
        self._stop: trio.Event | None = None
        started = threading.Event()
        self._thread = threading.Thread(target=self._run_referee, args=(started,), name="famiglia-referee", daemon=True)
        self._thread.start()
        started.wait()
        if self._token is None:
            raise RuntimeError("the referee's thread did not start")

    # -- the referee's thread -------------------------------------------------------

    def _run_referee(self, started: threading.Event) -> None:
        try:
            trio.run(self._serve, started)
        finally:
            started.set()

    async def _serve(self, started: threading.Event) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        async with open_pool(self.settings) as pool, trio.open_nursery() as nursery:
            self._pool, self._nursery = pool, nursery
            started.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    async def _begin(self, seed: int) -> dict[str, Any]:
        """Stop the game in play, if any; start the game of ``seed``; the learner's first message."""
        await self._abort()
        assert self._nursery is not None
        learner = self._learner = LearnerSeat(self.name)
        scope = self._match_scope = trio.CancelScope()
        done = self._match_done = trio.Event()
        self._match_error = None
        self._record = None
        bots: list[BotSpec | LearnerSeat] = list(self.opponents)
        bots.insert(self.seat, learner)
        spec = MatchSpec(game=self.rules.name, seed=seed, variants=self.variants, match=f"training-{seed}")

        async def play() -> None:
            try:
                with scope:
                    self._record = await play_match(spec, bots, self.settings, pool=self._pool)
            except Exception as exc:  # noqa: BLE001 - handed to the environment's thread, which raises it
                self._match_error = exc
            finally:
                done.set()
                learner.to_env_send.send_nowait({"type": "stopped"})

        self._nursery.start_soon(play)
        return await self._next_message()

    async def _answer(self, action: Any) -> dict[str, Any]:
        assert self._learner is not None
        await self._learner.answers_send.send(action)
        return await self._next_message()

    async def _next_message(self) -> dict[str, Any]:
        """The learner seat's next message that asks or ends: a request, the end, or the match stopping."""
        assert self._learner is not None
        while True:
            message = await self._learner.to_env.receive()
            if message["type"] in ("request", "end", "stopped"):
                return message

    async def _abort(self) -> None:
        if self._match_scope is not None and self._match_done is not None:
            self._match_scope.cancel()
            await self._match_done.wait()
        self._match_scope = self._match_done = None

    async def _shutdown(self) -> None:
        await self._abort()
        assert self._stop is not None
        self._stop.set()

    def _call(self, function: Any, *args: Any) -> Any:
        if self._token is None or not self._thread.is_alive():
            raise RuntimeError("the environment is closed")
        return trio.from_thread.run(function, *args, trio_token=self._token)

    # -- the Gymnasium interface ------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._seeds = random.Random(seed)
            game_seed = seed
        else:
            game_seed = self._seeds.getrandbits(63)
        self.game_seed = game_seed
        message = self._call(self._begin, game_seed)
        observation, _, terminated, info = self._take(message)
        if terminated:
            info["ended_before_the_learner_was_asked"] = True
        return observation, info

    def step(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self.asked is None:
            raise RuntimeError("the game is over or not started: call reset()")
        played = self.asked.choose(action)
        if played is None:
            return self._observation(), 0.0, False, False, {}
        observation, reward, terminated, info = self._take(self._call(self._answer, played))
        return observation, reward, terminated, False, info

    def _take(self, message: dict[str, Any]) -> tuple[Observation, float, bool, dict[str, Any]]:
        """The observation, reward, end and info after the learner seat's ``message``."""
        kind = message["type"]
        if kind == "request":
            view, decision = decision_from_request(self.rules, self.seat, message)
            self.asked = Asked(self.encoding, view, decision)
            return self._observation(), 0.0, False, {}
        self.asked = None
        if kind == "stopped":
            if self._record is None:
                error = self._match_error
                raise RuntimeError(f"the match stopped before its end: {error}") from error
            # The learner's seat left the game (a refused action forfeits it) and was told no end.
            result = msgspec.to_builtins(self._record.result)
        else:
            result = message["result"]
        reward = self.reward_fn(result["ranks"], self.seat)
        final = self._last if self._last is not None else self._empty()
        return final, reward, True, {"result": result}

    def _observation(self) -> Observation:
        assert self.asked is not None
        seen = {"observation": self.asked.vector(), "action_mask": self.asked.mask()}
        self._last = {"observation": seen["observation"], "action_mask": np.zeros_like(seen["action_mask"])}
        return seen

    def _empty(self) -> Observation:
        return {
            "observation": np.zeros(self.encoding.observation_size, dtype=np.float32),
            "action_mask": np.zeros(self.encoding.action_size, dtype=np.int8),
        }

    def close(self) -> None:
        """Stop the match in play and every bot process; the environment cannot be used again."""
        if self._token is not None and self._thread.is_alive():
            try:
                trio.from_thread.run(self._shutdown, trio_token=self._token)
            except trio.RunFinishedError:
                pass
        self._thread.join(CLOSE_SECONDS)
        self.asked = None
