"""One decision taken in masked steps, and a request read back into the engine's types.

``Asked`` is a seat's decision in progress: the encoding's observation and
mask for the next step, the steps chosen so far, and the game's action once
they make one. The AEC environment, the environment with real opponents and
a policy entered as a bot all take decisions through it, so a policy meets
the same steps in training and in a match. numpy only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from referee.games.base import Decision, GameRules
from referee.games.encoding import Encoding

__all__ = ["Asked", "IllegalStep", "Observation", "RewardFn", "decision_from_request", "rank_reward"]

Observation = dict[str, Any]
"""What a learner observes: ``{"observation": vector, "action_mask": mask}`` (or ``"view"`` for the view itself)."""

RewardFn = Callable[[Sequence[int], int], float]
"""A seat's reward at the end of a game, from the final ranks (1-based, ties shared) and the seat."""


class IllegalStep(ValueError):
    """A step the mask does not allow (the line says which numbers it does)."""


def rank_reward(ranks: Sequence[int], seat: int) -> float:
    """+1 for first, -1 for last, evenly between by rank; a shared rank shares the reward."""
    n = len(ranks)
    return 1.0 - 2.0 * (ranks[seat] - 1) / (n - 1) if n > 1 else 0.0


class Asked:
    """One seat's decision, taken a step at a time through ``encoding`` (its ``decision_steps``)."""

    __slots__ = ("decision", "encoding", "steps", "view")

    def __init__(self, encoding: Encoding, view: Any, decision: Decision) -> None:
        self.encoding = encoding
        self.view = view
        self.decision = decision
        self.steps = encoding.decision_steps(view, decision)

    @property
    def chosen(self) -> list[int]:
        """The steps taken so far (read only: ``choose`` adds one)."""
        return self.steps.chosen

    def vector(self) -> npt.NDArray[np.float32]:
        return self.steps.vector()

    def mask(self) -> npt.NDArray[np.int8]:
        """The next step's mask, the caller's own copy."""
        return self.steps.mask().copy()

    def choose(self, index: Any) -> Any | None:
        """Take one step; the game action once the steps make one, else None. IllegalStep for a masked number."""
        mask = self.steps.mask()
        try:
            step = int(index)
        except (TypeError, ValueError):
            raise IllegalStep(
                f"a step is a number from 0 to {len(mask) - 1} that the action mask allows, not {index!r}"
            ) from None
        if not 0 <= step < len(mask) or not mask[step]:
            allowed = np.flatnonzero(mask)
            shown = ", ".join(
                f"{i} ({self.encoding.describe(self.decision, self.chosen, int(i))})" for i in allowed[:6]
            )
            more = f" and {len(allowed) - 6} more" if len(allowed) > 6 else ""
            raise IllegalStep(
                f"step {step} is not allowed now (a {self.decision.kind!r} decision after steps {self.chosen}): "
                f"pick a number the action mask allows: {shown}{more}"
            )
        return self.steps.take(step)


def decision_from_request(rules: GameRules, seat: int, request: Mapping[str, Any] | Any) -> tuple[Any, Decision]:
    """The view and the decision of a request as a bot receives it, in the engine's own types.

    ``request``: the message's JSON object, or ``protocol.messages.Request``.
    """
    if isinstance(request, msgspec.Struct):
        request = msgspec.to_builtins(request)
    view = msgspec.convert(request["view"], rules.view_type)
    options = request.get("options")
    typed = None if options is None else msgspec.convert(options, list.__class_getitem__(rules.action_type))
    decision = Decision(seat=seat, kind=request["decision"], options=typed, constraints=request.get("constraints"))
    return view, decision
