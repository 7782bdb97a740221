"""A forward model for search: full game states sampled from what one seat may know.

A search bot (Monte Carlo tree search over determinizations, counterfactual
regret over sampled worlds) plays ahead on full states, but a seat sees only
its view. ``sample_states`` draws states that agree with the view, each a
``GameState`` to copy, ``apply`` and ``view`` as the referee does:

    rules = get_rules("sicilianos")
    for state in sample_states(rules, view, config, 16, random.Random(1)):
        ...  # state.view(view.seat) == view; the rest is dealt at random

The game provides the sampler (``GameRules.sample_state``): both shipped
games do; a plug-in offers one by overriding that hook with a function that
builds a state whose ``view(seat)`` is the view given, its hidden part dealt
from the ``rng`` given, and by running ``check_sample_agrees`` in its tests.

A decision can show a seat more than its view (a Sicilianos business pile the
seat looks through shows its kinds as the options). Given ``decision``, only
states that ask the same decision are kept.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec

from referee.games.base import Decision, GameRules, GameState

__all__ = ["NoForwardModel", "check_sample_agrees", "sample_states"]

# How many tries a state that asks the given decision may take, per state wanted.
TRIES_PER_STATE = 200

_encode = msgspec.json.Encoder().encode


class NoForwardModel(ValueError):
    """The game offers no sampler of states from a view."""


def sample_states(
    rules: GameRules,
    view: Any,
    config: Any,
    count: int,
    rng: random.Random,
    *,
    decision: Decision | None = None,
) -> list[GameState]:
    """``count`` states that agree with ``view`` (and ask ``decision``, when given), drawn from ``rng``.

    NoForwardModel when the game has no sampler; ValueError for a view the game
    cannot have shown, or when no state in ``TRIES_PER_STATE * count`` draws asks
    ``decision``.
    """
    typed = view if isinstance(view, msgspec.Struct) else msgspec.convert(view, rules.view_type)
    states: list[GameState] = []
    wanted = None if decision is None else _encode(_typed_decision(rules, decision))
    for _ in range(TRIES_PER_STATE * max(1, count)):
        if len(states) == count:
            break
        state = rules.sample_state(typed, config, rng)
        if state is None:
            raise NoForwardModel(
                f"{rules.name} offers no forward model: its GameRules.sample_state gives None "
                "(docs/training.md says what a game provides)"
            )
        if wanted is None or _encode(state.decision()) == wanted:
            states.append(state)
    if len(states) < count:
        raise ValueError(
            f"{rules.name}: no sampled state asks the decision given ({len(states)} of {count} found); "
            "is the decision the one this view's seat is asked?"
        )
    return states


def _typed_decision(rules: GameRules, decision: Decision) -> Decision:
    """``decision`` with its options in the game's types, as the engine builds them (a request's are dicts)."""
    if decision.options is None or all(isinstance(o, msgspec.Struct) for o in decision.options):
        return decision
    options = msgspec.convert(decision.options, list.__class_getitem__(rules.action_type))
    return msgspec.structs.replace(decision, options=options)


def check_sample_agrees(rules: GameRules, state: GameState, seat: int, rng: random.Random) -> GameState:
    """Sample a state from ``seat``'s view of ``state``; AssertionError unless its view of that seat is the same.

    For a game's own tests of its ``sample_state`` (the one property every
    forward model must keep). The sample, for further checks.
    """
    view = state.view(seat)
    sample = rules.sample_state(view, state.config, rng)
    if sample is None:
        raise NoForwardModel(f"{rules.name} offers no forward model")
    mine, theirs = _encode(view), _encode(sample.view(seat))
    assert mine == theirs, f"{rules.name}: a state sampled from seat {seat}'s view shows it {theirs!r}, not {mine!r}"
    return sample
