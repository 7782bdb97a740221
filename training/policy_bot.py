"""A trained policy entered as a famiglia bot: a Python function from the observation to a step number.

The bot sees what the environments showed the policy in training: the
game's encoding (``GameRules.encoding``) of its seat's view and decision, one
masked step at a time (training.decisions), so a policy trained in
``training.aec`` or ``training.opponents`` plays a match unchanged::

    # bot.py, beside a bot.toml with command = "python bot.py"
    import numpy as np
    from training.policy_bot import serve_policy

    weights = np.load("weights.npy")

    def policy(observation):
        scores = weights @ observation["observation"]
        scores[observation["action_mask"] == 0] = -np.inf
        return int(np.argmax(scores))

    serve_policy(policy, name="linear")

``policy`` gets ``{"observation": floats, "action_mask": int8}`` (with
``observation="view"``: ``{"view": the view Struct, "action_mask": int8}``) and
returns a number the mask allows. One that it does not allow is replaced by the
lowest number that is, and said once per game on stderr: the bot plays on
rather than forfeit, and its author reads why in the match's stderr file.

Only numpy and famiglia's engines are imported: the bot needs no learning framework.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, BinaryIO, Literal

import msgspec
import numpy as np

from protocol.bot import serve
from protocol.messages import Request, Start
from referee.games import get_rules
from referee.games.base import GameRules
from referee.games.encoding import Encoding
from training.decisions import Asked, IllegalStep, Observation, decision_from_request

__all__ = ["Policy", "PolicyBot", "serve_policy"]

Policy = Callable[[Observation], Any]
"""A step number (an int, a numpy integer) the observation's mask allows."""


class PolicyBot:
    """A protocol bot (``protocol.bot.Bot``) that takes every decision through ``policy``."""

    def __init__(
        self, policy: Policy, *, name: str = "policy", observation: Literal["vector", "view"] = "vector"
    ) -> None:
        self.policy = policy
        self.name = name
        self.form = observation
        self.rules: GameRules | None = None
        self.encoding: Encoding | None = None
        self.seat = 0
        self._encodings: dict[tuple[str, int, bytes], Encoding] = {}
        self._warned = False

    def start(self, message: Start[Any]) -> None:
        rules = get_rules(message.game)
        key = (message.game, message.players, msgspec.json.encode(sorted(message.variants.items())))
        encoding = self._encodings.get(key)
        if encoding is None:
            encoding = self._encodings[key] = rules.encoding(message.players, rules.config(message.variants))
        self.rules, self.encoding, self.seat = rules, encoding, message.seat
        self._warned = False

    def decide(self, request: Request[Any, Any, Any]) -> Any:
        if self.rules is None or self.encoding is None:
            raise RuntimeError("a request before start")
        view, decision = decision_from_request(self.rules, self.seat, request)
        asked = Asked(self.encoding, view, decision)
        while True:
            mask = asked.mask()
            seen: Observation = (
                {"view": view, "action_mask": mask}
                if self.form == "view"
                else {"observation": asked.vector(), "action_mask": mask}
            )
            step = self.policy(seen)
            try:
                action = asked.choose(step)
            except (IllegalStep, TypeError, ValueError) as exc:
                if not self._warned:
                    print(f"{self.name}: the policy chose a step the mask refuses ({exc}); playing the lowest it allows",
                          file=sys.stderr, flush=True)  # fmt: skip
                    self._warned = True
                action = asked.choose(int(np.flatnonzero(mask)[0]))
            if action is not None:
                return action


def serve_policy(
    policy: Policy,
    *,
    name: str = "policy",
    observation: Literal["vector", "view"] = "vector",
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> None:
    """Play games over stdin/stdout with ``policy`` until the referee closes stdin (``protocol.bot.serve``)."""
    serve(PolicyBot(policy, name=name, observation=observation), stdin, stdout)
