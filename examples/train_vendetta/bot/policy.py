"""A small linear policy for Vendetta that reads the vector observation and its action mask (numpy only).

Each step of a placement (referee/games/vendetta/encoding.py: DONE, a district,
a count) gets a score, the weights times a few features of that choice read
from the observation; the policy takes the allowed step of highest score. The
features are the same for every district (how many mafiosi the seat and the
others have there, whether its protection card is already turned this round,
...), so 25 weights describe the whole policy, few enough for the
cross-entropy method of train.py to learn in minutes.

train.py and bot.py both use ``Policy``: what the bot plays is what was trained.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.games.vendetta.components import N_DISTRICTS
from referee.games.vendetta.encoding import COUNT_BASE, DONE, VendettaEncoding

Floats = npt.NDArray[np.float64]

DISTRICT_FEATURES = 13
COUNT_FEATURES = 7
DONE_FEATURES = 5
N_WEIGHTS = DISTRICT_FEATURES + COUNT_FEATURES + DONE_FEATURES


def layouts() -> dict[int, tuple[int, dict[str, int]]]:
    """Table size and field offsets by observation length (the vector's length tells the table size)."""
    found = {}
    for n in range(3, 6):
        encoding = VendettaEncoding(n)
        found[encoding.observation_size] = (n, encoding.at)
    return found


class Policy:
    """The weights, and the step they choose for an observation (``policy(observation) -> step``)."""

    def __init__(self, weights: Floats) -> None:
        if weights.shape != (N_WEIGHTS,):
            raise ValueError(f"a Vendetta policy has {N_WEIGHTS} weights, not {weights.shape}")
        self.district = weights[:DISTRICT_FEATURES]
        self.count = weights[DISTRICT_FEATURES : DISTRICT_FEATURES + COUNT_FEATURES]
        self.done = weights[DISTRICT_FEATURES + COUNT_FEATURES :]
        self.layouts = layouts()
        self.counts = np.arange(1, 51, dtype=np.float64)  # the count each count step puts

    @classmethod
    def load(cls, path: Path) -> Policy:
        return cls(np.asarray(json.loads(path.read_text(encoding="utf-8"))["weights"], dtype=np.float64))

    def save(self, path: Path, **about: Any) -> None:
        """Write the weights (and ``about``, figures for people) as JSON; a file half written is never left."""
        weights = np.concatenate([self.district, self.count, self.done])
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps({"weights": weights.tolist(), **about}, indent=1) + "\n", encoding="utf-8")
        partial.replace(path)  # a training killed while writing leaves the last policy whole

    def scores(self, x: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> Floats:
        """Every step's score; -inf for the steps the mask refuses."""
        n, at = self.layouts[x.size]
        scores = np.full(mask.size, -np.inf)
        board = x[at["board"] : at["board"] + N_DISTRICTS * n].reshape(N_DISTRICTS, n).astype(np.float64)
        mine, others = board[:, 0], board[:, 1:]
        strongest = others.max(axis=1)
        rivals = (others > 0).sum(axis=1)
        revealed = x[at["revealed"] : at["revealed"] + N_DISTRICTS]
        minimum = x[at["minimum"] : at["minimum"] + N_DISTRICTS]
        hand = float(x[at["hand"]])
        left = float(x[at["hand_left"]])
        turn = float(np.argmax(x[at["turn"] : at["turn"] + 11])) / 10
        pending = x[at["pending"] : at["pending"] + N_DISTRICTS]
        if pending.any():  # a count for the district just named
            d = int(np.argmax(pending))
            put = self.counts * 0.1
            after = mine[d] + put
            features = np.stack(
                [
                    put,
                    put / max(left, 0.1),
                    after > strongest[d],
                    put == minimum[d],
                    np.isclose(put, left),
                    put * revealed[d],
                    put * (rivals[d] > 0),
                ]
            )
            counts = self.count @ features
            allowed = mask[COUNT_BASE + 1 :] > 0
            scores[COUNT_BASE + 1 :][allowed] = counts[allowed]
            return scores
        features = np.stack(
            [
                np.ones(N_DISTRICTS),
                mine,
                strongest,
                others.sum(axis=1),
                rivals / n,
                (mine > 0) & (rivals == 0),
                (mine == 0) & (rivals == 0),
                (mine == 0) & (rivals == 1),
                revealed,
                minimum,
                minimum / max(left, 0.1),
                x[at["dealt"] : at["dealt"] + N_DISTRICTS],
                revealed * ((mine > 0) & (rivals == 0)),
            ]
        )
        districts = self.district @ features
        allowed = mask[1 : 1 + N_DISTRICTS] > 0
        scores[1 : 1 + N_DISTRICTS][allowed] = districts[allowed]
        if mask[DONE]:
            placed = float(x[at["placed"] : at["placed"] + N_DISTRICTS].sum())
            scores[DONE] = self.done @ np.array([1.0, hand, left, placed > 0, turn])
        return scores

    def __call__(self, observation: dict[str, Any]) -> int:
        scores = self.scores(observation["observation"], observation["action_mask"])
        return int(np.argmax(scores))
