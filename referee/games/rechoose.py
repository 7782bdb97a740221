"""Choosing again: twins of a game in which one seat chose otherwise, for the checks of secrets made by choices.

A secret need not come from chance. A sealed bid, a card laid face down, a
target written on a slip: one seat chooses, and the others may not learn what
until the game reveals it. redeal.py's twins change one chance draw and cannot
see such a secret; these change one choice. Which choices are secret is the
game's to say (``GameRules.secret_choices``: a decision kind and the fields of
its action that are secret), except that an answer to a simultaneous step (a
step that asks several seats at once) is its seat's secret, all of it, by
default until the step is played; what a view must hide is the game's to say too: a view that leaves
out a public fact (Sicilianos does not say which pile a seat is looking
through; its events do) looks from outside just like one that hides a secret.

A ``ChoiceTwin`` is the game played again from its start on the same seed,
every step as played except one secret choice, where the seat to move takes
another legal action that differs only in the secret fields; the steps after
it are played as recorded while they stay legal and the same seat is to move.
Until the game reveals the choice, nothing another seat sees may differ:

- while a seat's view (and its decision) is as in the game, so must be what it
  is sent (``check_events_reveal_nothing_hidden``);
- where the game sends a seat the same events at the step of the choice, and
  some seat other events, that seat's view right after the step must be as in
  the game too (``check_views_leak_nothing``): a view may not show what the
  events keep.

A game whose view and events both show a secret choice the moment it is made
looks exactly like a game that reveals it at once (the last sealed bid of a
round): the suite cannot tell the two apart.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from referee.games.base import GameRules, GameState, IllegalAction, SeededChance
from referee.games.redeal import Position, Trace, position_of

__all__ = ["ChoiceTwin", "choice_twins", "other_choice", "secret_steps"]

_encode = msgspec.json.Encoder().encode

# How many random legal actions are tried for another secret, where a decision
# lists no options (its actions are stated by constraints).
_ATTEMPTS = 16


@dataclass
class ChoiceTwin:
    """The game with one secret choice changed: at ``step`` seat ``seat`` played ``instead``, not ``chosen``.

    ``positions`` are the twin's positions from the one after ``step`` on (the
    game's ``step + 1``, ``step + 2``, ...), made only as they are read: a check
    stops reading once it has learnt what it can.
    """

    step: int
    seat: int
    chosen: Any
    instead: Any
    positions: Iterator[Position]
    whole: bool = False
    """An answer to a simultaneous step: all of it is secret until the step is played."""

    def changed(self) -> str:
        """The change in words, as a message names it."""
        return (
            f"seat {self.seat} choosing {msgspec.to_builtins(self.instead)!r} instead of "
            f"{msgspec.to_builtins(self.chosen)!r} at step {self.step}"
        )


def secret_steps(rules: GameRules, trace: Trace) -> list[tuple[int, tuple[str, ...] | None]]:
    """The steps of ``trace`` whose decision is a secret choice, each with its secret fields: None
    where all of the action is secret (an answer to a simultaneous step the game declares nothing of)."""
    found: list[tuple[int, tuple[str, ...] | None]] = []
    for step, (seat, _) in enumerate(trace.steps):
        position = trace.positions[step]
        kind = msgspec.json.decode(position.asked[seat])["kind"]
        if kind in rules.secret_choices:
            found.append((step, tuple(rules.secret_choices[kind])))
        elif position.together:
            found.append((step, None))
    return found


def other_choice(state: GameState, played: Any, secret: Sequence[str] | None, rng: random.Random) -> Any | None:
    """A legal action of the seat to move that differs from ``played`` in the ``secret`` fields
    only (in any way, where ``secret`` is None); None when it has no such action."""
    decision = state.decision()
    if decision is None:
        return None
    public = _public_part(played, secret)
    encoded = _encode(played)

    def fits(action: Any) -> bool:
        return _encode(action) != encoded and _public_part(action, secret) == public

    if decision.options is not None:
        others = [option for option in decision.options if fits(option)]
        return rng.choice(others) if others else None
    for _ in range(_ATTEMPTS):
        candidate = state.random_action(rng)
        if fits(candidate):
            return candidate
    return None


def _public_part(action: Any, secret: Sequence[str] | None) -> Any:
    as_json = msgspec.to_builtins(action)
    if secret is None or not isinstance(as_json, dict):
        return None  # an action that is not an object: all of it is the secret
    return {key: value for key, value in as_json.items() if key not in secret}


def choice_twins(
    rules: GameRules, n_players: int, config: Any, seed: int, trace: Trace, count: int
) -> Iterator[ChoiceTwin]:
    """Twins of ``trace`` (played on ``SeededChance(seed)``) with one secret choice changed, at up to
    ``count`` of its secret steps chosen at random; a step whose seat had no other secret to choose
    gives none. None at all for a game that declares no secret choice."""
    steps = secret_steps(rules, trace)
    rng = random.Random(f"famiglia-contract:choices:{seed}")
    for step, secret in sorted(rng.sample(steps, min(count, len(steps)))):
        state = rules.new_game(n_players, config, SeededChance(seed))
        try:
            for seat, action in trace.steps[:step]:
                state.apply(seat, action)
        except IllegalAction:
            continue  # the game does not play the same again: check_same_seed_same_game says so
        seat, chosen = trace.steps[step]
        instead = other_choice(state, chosen, secret, rng)
        if instead is not None:
            positions = _played_on(state, seat, instead, trace.steps[step + 1 :])
            yield ChoiceTwin(step, seat, chosen, instead, positions, whole=secret is None)


def _played_on(state: GameState, seat: int, instead: Any, rest: list[tuple[int, Any]]) -> Iterator[Position]:
    """The positions after ``seat`` plays ``instead`` on ``state``, then the steps of ``rest`` while they can be."""
    yield position_of(state, state.apply(seat, instead))
    for mover, action in rest:
        decision = state.decision()
        if decision is None or decision.seat != mover:
            return
        try:
            events = state.apply(mover, action)
        except IllegalAction:
            return
        yield position_of(state, events)
