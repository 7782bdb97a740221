"""Vendetta as numbers for a learner (referee.games.encoding): the view as a vector, a placement as steps.

A placement is a large decision: up to two distinct districts, each with a
count from its P4 minimum up, all within the hand (P1-P4). Listed whole it
would be thousands of actions; as steps it is at most five small choices from
one set of 64 numbers:

* ``0`` DONE: the placement is complete as it stands (the empty placement when
  chosen first);
* ``1..13``: put mafiosi into this district next;
* ``13 + c`` for ``c`` in 1..50: put ``c`` mafiosi into the district just chosen.

A district step is followed by its count step. The masks: DONE always; a
district while the turn allows another (P1, P2), that is not named yet and
whose minimum fits what is left of the hand (P3, P4); a count from the
district's minimum to what is left of the hand. When no further district can be
named (the turn's districts are used up, or none fits what is left), the
placement ends at its last count without a DONE step. So every legal placement,
in either order of its two districts, is some sequence of masked steps
(``steps_for`` gives it), and every sequence of masked steps is a legal
placement.

The observation: the board, hands, boxes, points, districts controlled and
dealt cards of every seat, turned so that the observing seat comes first (a
policy learns one game, whichever seat it sits in); the cards revealed this
round and the last raid; the turn, the round, who moves and who started; the
decision's limits; and the steps chosen so far. Counts are divided by 10 and
every value is kept within [0, ``HIGH``].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec
import numpy as np

from referee.games.encoding import Decision, Encoding, Mask, Vector, field_offsets
from referee.games.vendetta.components import MAFIOSI_PER_COLOUR, N_DISTRICTS, TURNS_PER_ROUND
from referee.games.vendetta.messages import Place, PlaceConstraints, Placement, VendettaView

__all__ = ["ACTION_SIZE", "COUNT_BASE", "DONE", "HIGH", "VendettaEncoding"]

DONE: Final = 0
COUNT_BASE: Final = N_DISTRICTS  # count c is COUNT_BASE + c
ACTION_SIZE: Final = 1 + N_DISTRICTS + MAFIOSI_PER_COLOUR
HIGH: Final = 10.0
_SCALE: Final = 0.1  # mafiosi counts are divided by 10


def constraints_of(decision: Decision) -> PlaceConstraints:
    """The placement's limits, typed (a request read from the wire holds them as a dict)."""
    raw = decision.constraints
    if isinstance(raw, PlaceConstraints):
        return raw
    if raw is None:
        raise ValueError(f"a vendetta {decision.kind!r} decision without constraints")
    return msgspec.convert(raw, PlaceConstraints)


class _Progress:
    """The steps chosen so far for one placement, read back: placements made, a district awaiting its count."""

    __slots__ = ("done", "hand_left", "pending", "placements")

    def __init__(self, limits: PlaceConstraints, chosen: Sequence[int]) -> None:
        self.placements: list[Placement] = []
        self.pending = 0  # a district (1..13) awaiting its count, 0 for none
        self.done = False
        self.hand_left = limits.hand
        for index in chosen:
            if self.pending:
                count = int(index) - COUNT_BASE
                self.placements.append(Placement(self.pending, count))
                self.hand_left -= count
                self.pending = 0
            elif index == DONE:
                self.done = True
            else:
                self.pending = int(index)

    def open_districts(self, limits: PlaceConstraints) -> list[int]:
        """The districts (1-based) that may be named next, none once the turn's districts are used up."""
        if self.done or self.pending or len(self.placements) >= limits.max_districts:
            return []
        named = {p.district for p in self.placements}
        left = self.hand_left
        return [d + 1 for d, low in enumerate(limits.minimum) if low <= left and d + 1 not in named]


class VendettaEncoding(Encoding):
    """Vendetta at one table size: the view as a vector, a placement as up to five masked steps."""

    low = 0.0
    high = HIGH
    action_size = ACTION_SIZE

    def __init__(self, n_players: int) -> None:
        self.n = n = n_players
        sizes = {
            "board": N_DISTRICTS * n,
            "hands": n,
            "box": n,
            "points": n,
            "controlled": n,
            "forfeited": n,
            "dealt": N_DISTRICTS * n,
            "revealed": N_DISTRICTS,
            "last_raid": N_DISTRICTS,
            "turn": TURNS_PER_ROUND,
            "round": 1,
            "active": n,
            "start": n,
            "control": 1,
            "setup": 1,
            "asked": 1,
            "two_districts": 1,
            "hand": 1,
            "minimum": N_DISTRICTS,
            "pending": N_DISTRICTS,
            "placed": N_DISTRICTS,
            "hand_left": 1,
        }
        self.at, self.observation_size = field_offsets(sizes)

    def observe(self, view: Any, decision: Decision | None, chosen: Sequence[int] = ()) -> Vector:
        v: VendettaView = view if isinstance(view, VendettaView) else msgspec.convert(view, VendettaView)
        n = self.n
        at = self.at
        out = np.zeros(self.observation_size, dtype=np.float32)
        order = [(v.seat + k) % n for k in range(n)]  # the observing seat first
        rel = {seat: k for k, seat in enumerate(order)}
        board = np.asarray(v.board, dtype=np.float32)[:, order]
        out[at["board"] : at["board"] + N_DISTRICTS * n] = board.reshape(-1) * _SCALE
        for name, values, scale in (
            ("hands", v.hands, _SCALE),
            ("box", v.box, 1 / MAFIOSI_PER_COLOUR),
            ("points", v.points, 1 / max(1, v.target_points)),
            ("controlled", v.controlled, 1 / N_DISTRICTS),
            ("forfeited", [float(f) for f in v.forfeited], 1.0),
        ):
            out[at[name] : at[name] + n] = np.asarray(values, dtype=np.float32)[order] * scale
        for seat, cards in enumerate(v.dealt):
            for district in cards:
                out[at["dealt"] + rel[seat] * N_DISTRICTS + district - 1] = 1.0
        for district in v.revealed:
            out[at["revealed"] + district - 1] = 1.0
        for district in v.last_raid:
            out[at["last_raid"] + district - 1] = 1.0
        out[at["turn"] + min(v.turn, TURNS_PER_ROUND - 1)] = 1.0
        out[at["round"]] = v.round / max(1, v.round_limit)
        if 0 <= v.active_seat < n:
            out[at["active"] + rel[v.active_seat]] = 1.0
        out[at["start"] + rel[v.start_seat % n]] = 1.0
        out[at["control"]] = float(v.control == "majority")
        out[at["setup"]] = float(v.setup == "dealt-only")
        if decision is not None:
            limits = constraints_of(decision)
            progress = _Progress(limits, chosen)
            out[at["asked"]] = 1.0
            out[at["two_districts"]] = float(limits.max_districts >= 2)
            out[at["hand"]] = limits.hand * _SCALE
            out[at["minimum"] : at["minimum"] + N_DISTRICTS] = np.asarray(limits.minimum, dtype=np.float32) * _SCALE
            if progress.pending:
                out[at["pending"] + progress.pending - 1] = 1.0
            for p in progress.placements:
                out[at["placed"] + p.district - 1] = p.count * _SCALE
            out[at["hand_left"]] = progress.hand_left * _SCALE
        np.clip(out, 0.0, HIGH, out=out)
        return out

    def mask(self, decision: Decision, chosen: Sequence[int] = ()) -> Mask:
        limits = constraints_of(decision)
        progress = _Progress(limits, chosen)
        mask = np.zeros(ACTION_SIZE, dtype=np.int8)
        if progress.done or self._complete(limits, progress, chosen):
            return mask
        if progress.pending:
            low = limits.minimum[progress.pending - 1]
            mask[COUNT_BASE + low : COUNT_BASE + progress.hand_left + 1] = 1
            return mask
        mask[DONE] = 1
        for district in progress.open_districts(limits):
            mask[district] = 1
        return mask

    def action(self, decision: Decision, chosen: Sequence[int]) -> Place | None:
        limits = constraints_of(decision)
        progress = _Progress(limits, chosen)
        if progress.done or self._complete(limits, progress, chosen):
            return Place(progress.placements)
        return None

    @staticmethod
    def _complete(limits: PlaceConstraints, progress: _Progress, chosen: Sequence[int]) -> bool:
        """A placement whose last step was a count and that can name no further district ends there."""
        return bool(chosen) and not progress.pending and not progress.open_districts(limits)

    def steps_for(self, decision: Decision, action: Any) -> list[int]:
        place = action if isinstance(action, Place) else msgspec.convert(action, Place)
        steps: list[int] = []
        for p in place.placements:
            steps += [p.district, COUNT_BASE + p.count]
        if not steps or self.action(decision, steps) is None:
            steps.append(DONE)  # the placement ends here though another district could still be named
        return steps

    def describe(self, decision: Decision, chosen: Sequence[int], index: int) -> str:
        if index == DONE:
            return "done"
        if index <= N_DISTRICTS:
            return f"district {index}"
        return f"{index - COUNT_BASE} mafiosi"
