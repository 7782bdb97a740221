"""Checks on a whole Sicilianos state, for tests and for anyone changing the engine."""

from __future__ import annotations

from typing import Any

import msgspec

from referee.games.sicilianos.components import (
    HAND_LIMIT,
    N_BUSINESSES,
    N_CARDS,
    NOTE_VALUES,
    START_MONEY,
)
from referee.games.sicilianos.state import SicilianosState
from referee.games.sicilianos.war import War

__all__ = ["invariant_problems", "snapshot"]


def _plain(value: Any) -> Any:
    if isinstance(value, set):
        return sorted(value)
    return repr(value)


def snapshot(state: SicilianosState) -> bytes:
    """Every field of the state (the chance source aside) as bytes: equal bytes, equal states."""
    # The base class's slots (forfeits, the outcome) and the game's own.
    slots = [name for cls in type(state).__mro__ for name in getattr(cls, "__slots__", ())]
    fields = {name: getattr(state, name) for name in slots if name != "_chance"}
    war = state.war
    war_fields = None if war is None else {name: getattr(war, name) for name in War.__slots__}
    return msgspec.json.encode([fields, war_fields], enc_hook=_plain)


def invariant_problems(state: SicilianosState) -> list[str]:
    """What is wrong with the state's bookkeeping: an empty list when all is well.

    Every family card is in exactly one place (a pile, a hand, the war table),
    every business card too (a business pile or a seat), and the money adds up:
    dirty notes + clean money + stakes on the table + the bank's balance is what
    the seats started with.
    """
    problems = []
    cards = [card for pile in state.piles for card in pile]
    cards += [card for hand in state.hands for card in hand]
    stakes = 0
    if state.war is not None:
        cards += [card for played in state.war.cards.values() for card in played]
        stakes = sum(state.war.stake.values())
    if sorted(cards) != list(range(N_CARDS)):
        problems.append(f"family cards: {len(cards)} placed, {len(set(cards))} distinct")
    businesses = [c * 3 + kind for c, pile in enumerate(state.business_piles) for kind in pile]
    businesses += [b for owned in state.businesses for b in owned]
    if sorted(businesses) != list(range(N_BUSINESSES)):
        problems.append(f"businesses: {sorted(businesses)}")
    dirty = sum(NOTE_VALUES[i] * count for notes in state.notes for i, count in enumerate(notes))
    total = dirty + sum(state.clean) + stakes + state.bank
    if total != START_MONEY * state.n:
        problems.append(f"money: {total} instead of {START_MONEY * state.n}")
    if any(count < 0 for notes in state.notes for count in notes):
        problems.append(f"negative note counts: {state.notes}")
    if any(len(hand) > HAND_LIMIT for hand in state.hands):
        problems.append(f"a hand over {HAND_LIMIT}: {[len(h) for h in state.hands]}")
    if any(hand != sorted(hand) for hand in state.hands):
        problems.append("a hand is not sorted")
    return problems
