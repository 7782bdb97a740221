"""Vendetta's encoding written the straightforward way, as the tests' reference for the fast one.

This is the observation, mask and action of referee/games/vendetta/encoding.py
as they were first written: every call reads the whole view and replays every
step chosen, one numpy operation per field. The encoding the environments use
reads the view once per decision and keeps what its steps share; the tests
check that it gives these very arrays (tests/training/test_fast_encoding.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from referee.games.encoding import Decision, field_offsets
from referee.games.vendetta.components import MAFIOSI_PER_COLOUR, N_DISTRICTS, TURNS_PER_ROUND
from referee.games.vendetta.encoding import ACTION_SIZE, COUNT_BASE, DONE, HIGH, constraints_of
from referee.games.vendetta.messages import Place, PlaceConstraints, Placement, VendettaView

SCALE = 0.1


class Progress:
    """The steps chosen so far, read back from the start."""

    def __init__(self, limits: PlaceConstraints, chosen: Sequence[int]) -> None:
        self.placements: list[Placement] = []
        self.pending = 0
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
        if self.done or self.pending or len(self.placements) >= limits.max_districts:
            return []
        named = {p.district for p in self.placements}
        return [d + 1 for d, low in enumerate(limits.minimum) if low <= self.hand_left and d + 1 not in named]


class ReferenceEncoding:
    """Vendetta at one table size, every array built from scratch."""

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

    def observe(self, view: Any, decision: Decision | None, chosen: Sequence[int] = ()) -> npt.NDArray[np.float32]:
        v: VendettaView = view if isinstance(view, VendettaView) else msgspec.convert(view, VendettaView)
        n, at = self.n, self.at
        out = np.zeros(self.observation_size, dtype=np.float32)
        order = [(v.seat + k) % n for k in range(n)]
        rel = {seat: k for k, seat in enumerate(order)}
        board = np.asarray(v.board, dtype=np.float32)[:, order]
        out[at["board"] : at["board"] + N_DISTRICTS * n] = board.reshape(-1) * SCALE
        for name, values, scale in (
            ("hands", v.hands, SCALE),
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
            progress = Progress(limits, chosen)
            out[at["asked"]] = 1.0
            out[at["two_districts"]] = float(limits.max_districts >= 2)
            out[at["hand"]] = limits.hand * SCALE
            out[at["minimum"] : at["minimum"] + N_DISTRICTS] = np.asarray(limits.minimum, dtype=np.float32) * SCALE
            if progress.pending:
                out[at["pending"] + progress.pending - 1] = 1.0
            for p in progress.placements:
                out[at["placed"] + p.district - 1] = p.count * SCALE
            out[at["hand_left"]] = progress.hand_left * SCALE
        np.clip(out, 0.0, HIGH, out=out)
        return out

    def mask(self, decision: Decision, chosen: Sequence[int] = ()) -> npt.NDArray[np.int8]:
        limits = constraints_of(decision)
        progress = Progress(limits, chosen)
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
        progress = Progress(limits, chosen)
        if progress.done or self._complete(limits, progress, chosen):
            return Place(progress.placements)
        return None

    @staticmethod
    def _complete(limits: PlaceConstraints, progress: Progress, chosen: Sequence[int]) -> bool:
        return bool(chosen) and not progress.pending and not progress.open_districts(limits)
