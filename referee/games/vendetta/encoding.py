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
from itertools import chain
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from referee.games.encoding import Decision, DecisionSteps, Encoding, Mask, Vector, field_offsets
from referee.games.vendetta.components import MAFIOSI_PER_COLOUR, N_DISTRICTS, TURNS_PER_ROUND
from referee.games.vendetta.messages import Place, PlaceConstraints, Placement, VendettaView

__all__ = ["ACTION_SIZE", "COUNT_BASE", "DONE", "HIGH", "VendettaEncoding", "VendettaSteps"]

DONE: Final = 0
COUNT_BASE: Final = N_DISTRICTS  # count c is COUNT_BASE + c
ACTION_SIZE: Final = 1 + N_DISTRICTS + MAFIOSI_PER_COLOUR
HIGH: Final = 10.0
_SCALE: Final = 0.1  # mafiosi counts are divided by 10
# The fields of a seat, in the order the view lists them and the vector lays them out.
_SEAT_FIELDS: Final = ("hands", "box", "points", "controlled", "forfeited")


def constraints_of(decision: Decision) -> PlaceConstraints:
    """The placement's limits, typed (a request read from the wire holds them as a dict)."""
    raw = decision.constraints
    if isinstance(raw, PlaceConstraints):
        return raw
    if raw is None:
        raise ValueError(f"a vendetta {decision.kind!r} decision without constraints")
    return msgspec.convert(raw, PlaceConstraints)


# The vector's bounds as float32 scalars: numpy's clip costs twice a maximum and a minimum with these.
_LOW32: Final = np.float32(0.0)
_HIGH32: Final = np.float32(HIGH)


def _clipped(value: float) -> float:
    return min(HIGH, max(0.0, value))


class _Progress:
    """The steps chosen so far for one placement, read back: placements made, a district awaiting its count."""

    __slots__ = ("_open", "done", "hand_left", "pending", "placements", "steps")

    def __init__(self, limits: PlaceConstraints, chosen: Sequence[int] = ()) -> None:
        self.placements: list[Placement] = []
        self.pending = 0  # a district (1..13) awaiting its count, 0 for none
        self.done = False
        self.hand_left = limits.hand
        self.steps = 0
        self._open: list[int] | None = None  # open_districts, until the next step
        for index in chosen:
            self.add(index)

    def add(self, index: int) -> None:
        """One more step read back."""
        self.steps += 1
        self._open = None
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
        if self._open is not None:
            return self._open
        if self.done or self.pending or len(self.placements) >= limits.max_districts:
            self._open = []
            return self._open
        left = self.hand_left
        districts = [d for d, low in enumerate(limits.minimum, 1) if low <= left]
        for p in self.placements:
            if p.district in districts:
                districts.remove(p.district)
        self._open = districts
        return districts

    def complete(self, limits: PlaceConstraints) -> bool:
        """Whether the steps make a placement: DONE, or a last count after which no district can be named."""
        return self.done or (self.steps > 0 and not self.pending and not self.open_districts(limits))


class _OneHotOffsets:
    """Where view_vector writes its ones: a district's (1-based) and a seat's (relative) are added."""

    __slots__ = ("active", "asked", "control", "last_raid", "revealed", "setup", "start", "turn", "two_districts")

    def __init__(self, at: dict[str, int]) -> None:
        self.revealed = at["revealed"] - 1
        self.last_raid = at["last_raid"] - 1
        self.turn = at["turn"]
        self.active = at["active"]
        self.start = at["start"]
        self.control = at["control"]
        self.setup = at["setup"]
        self.asked = at["asked"]
        self.two_districts = at["two_districts"]


class VendettaEncoding(Encoding):
    """Vendetta at one table size: the view as a vector, a placement as up to five masked steps.

    A learner asks for a vector and a mask at every step, several steps a
    placement, so the work is split by what it depends on: the view and the
    placement's limits are read once per decision (``VendettaSteps``, into one
    array of every count and a few indices of ones, scattered into place by
    indices computed here once per seat), and each step adds only the steps
    taken so far to a copy of that.
    """

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
        # For each observing seat, where each number of ``_numbers`` goes (the table turned so that seat
        # comes first), without and with a decision's limits; and where its dealt cards' ones go.
        self._numbers_at = [[self._number_places(seat, asked) for seat in range(n)] for asked in (False, True)]
        self._dealt_at = [[self.at["dealt"] + (s - seat) % n * N_DISTRICTS - 1 for s in range(n)] for seat in range(n)]
        self._scales: dict[tuple[int, bool], npt.NDArray[np.float32]] = {}
        # The offsets each step writes at, read once here rather than from ``at`` at every step.
        self.pending_at = self.at["pending"] - 1  # + district (1-based)
        self.placed_at = self.at["placed"] - 1
        self.hand_left_at = self.at["hand_left"]
        self._one_at = _OneHotOffsets(self.at)

    def _number_places(self, seat: int, asked: bool) -> npt.NDArray[np.intp]:
        n, at = self.n, self.at
        places = [at["board"] + d * n + (s - seat) % n for d in range(N_DISTRICTS) for s in range(n)]
        for name in _SEAT_FIELDS:
            places += [at[name] + (s - seat) % n for s in range(n)]
        places.append(at["round"])
        if asked:
            places += range(at["minimum"], at["minimum"] + N_DISTRICTS)
            places.append(at["hand"])
        return np.asarray(places, dtype=np.intp)

    def _scale(self, target_points: int, asked: bool) -> npt.NDArray[np.float32]:
        """What each number of ``_numbers`` is multiplied by (in float32, as the vector holds it)."""
        key = (target_points, asked)
        scale = self._scales.get(key)
        if scale is None:
            n = self.n
            per_seat = [_SCALE, 1 / MAFIOSI_PER_COLOUR, 1 / max(1, target_points), 1 / N_DISTRICTS, 1.0]
            factors = [_SCALE] * (N_DISTRICTS * n) + [f for f in per_seat for _ in range(n)] + [1.0]
            if asked:
                factors += [_SCALE] * N_DISTRICTS + [1.0]
            scale = self._scales[key] = np.asarray(factors, dtype=np.float32)
        return scale

    def view_vector(self, view: VendettaView, limits: PlaceConstraints | None) -> Vector:
        """The observation before any step: the view, and the placement's limits when the seat is asked."""
        v = view
        n = self.n
        seat = v.seat
        asked = limits is not None
        numbers: list[Any] = list(chain.from_iterable(v.board))
        for values in (v.hands, v.box, v.points, v.controlled, v.forfeited):
            numbers += values
        numbers.append(v.round / max(1, v.round_limit))
        if limits is not None:
            numbers += limits.minimum
            numbers.append(limits.hand * _SCALE)
        scaled = np.array(numbers, dtype=np.float32)
        scaled *= self._scale(v.target_points, asked)
        np.maximum(scaled, _LOW32, out=scaled)
        np.minimum(scaled, _HIGH32, out=scaled)
        out = np.zeros(self.observation_size, dtype=np.float32)
        out[self._numbers_at[asked][seat]] = scaled
        # The ones, one by one: cheaper than collecting their indices for numpy to read as a list.
        dealt_at = self._dealt_at[seat]
        for s, cards in enumerate(v.dealt):
            for district in cards:
                out[dealt_at[s] + district] = 1.0
        one = self._one_at
        for district in v.revealed:
            out[one.revealed + district] = 1.0
        for district in v.last_raid:
            out[one.last_raid + district] = 1.0
        out[one.turn + min(v.turn, TURNS_PER_ROUND - 1)] = 1.0
        if 0 <= v.active_seat < n:
            out[one.active + (v.active_seat - seat) % n] = 1.0
        out[one.start + (v.start_seat % n - seat) % n] = 1.0
        if v.control == "majority":
            out[one.control] = 1.0
        if v.setup == "dealt-only":
            out[one.setup] = 1.0
        if limits is not None:
            out[one.asked] = 1.0
            if limits.max_districts >= 2:
                out[one.two_districts] = 1.0
        return out

    def observe(self, view: Any, decision: Decision | None, chosen: Sequence[int] = ()) -> Vector:
        v: VendettaView = view if isinstance(view, VendettaView) else msgspec.convert(view, VendettaView)
        if decision is None:
            return self.view_vector(v, None)
        steps = VendettaSteps(self, v, decision)
        for index in chosen:
            steps.chosen.append(index)
            steps.progress.add(index)
        return steps.vector()

    def mask(self, decision: Decision, chosen: Sequence[int] = ()) -> Mask:
        limits = constraints_of(decision)
        return self.progress_mask(limits, _Progress(limits, chosen))

    @staticmethod
    def progress_mask(limits: PlaceConstraints, progress: _Progress) -> Mask:
        """The mask of the next step after ``progress``."""
        allowed = bytearray(ACTION_SIZE)  # set byte by byte, then seen by numpy without a copy
        if progress.done:
            return np.frombuffer(allowed, dtype=np.int8)
        if progress.pending:
            mask = np.frombuffer(allowed, dtype=np.int8)
            low = limits.minimum[progress.pending - 1]
            mask[COUNT_BASE + low : COUNT_BASE + progress.hand_left + 1] = 1
            return mask
        districts = progress.open_districts(limits)
        if progress.steps and not districts:
            return np.frombuffer(allowed, dtype=np.int8)  # the last count completed the placement
        allowed[DONE] = 1
        for district in districts:
            allowed[district] = 1
        return np.frombuffer(allowed, dtype=np.int8)

    def action(self, decision: Decision, chosen: Sequence[int]) -> Place | None:
        limits = constraints_of(decision)
        progress = _Progress(limits, chosen)
        return Place(list(progress.placements)) if progress.complete(limits) else None

    def decision_steps(self, view: Any, decision: Decision) -> VendettaSteps:
        v: VendettaView = view if isinstance(view, VendettaView) else msgspec.convert(view, VendettaView)
        return VendettaSteps(self, v, decision)

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


class VendettaSteps(DecisionSteps):
    """One placement in progress: the view read once, each step's vector a copy of it and the steps so far."""

    __slots__ = ("base", "limits", "progress", "vendetta")

    def __init__(self, encoding: VendettaEncoding, view: VendettaView, decision: Decision) -> None:
        super().__init__(encoding, view, decision)
        self.vendetta = encoding
        self.limits = constraints_of(decision)
        self.progress = _Progress(self.limits)
        self.base = encoding.view_vector(view, self.limits)

    def vector(self) -> Vector:
        out = self.base.copy()
        vendetta = self.vendetta
        progress = self.progress
        if progress.pending:
            out[vendetta.pending_at + progress.pending] = 1.0
        placed = vendetta.placed_at
        for p in progress.placements:
            out[placed + p.district] = _clipped(p.count * _SCALE)
        out[vendetta.hand_left_at] = _clipped(progress.hand_left * _SCALE)
        return out

    def mask(self) -> Mask:
        if self._mask is None:
            self._mask = self.vendetta.progress_mask(self.limits, self.progress)
        return self._mask

    def take(self, step: int) -> Place | None:
        self.chosen.append(step)
        self._mask = None
        progress = self.progress
        progress.add(step)
        return Place(list(progress.placements)) if progress.complete(self.limits) else None
