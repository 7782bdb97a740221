"""Re-dealing a game's chance, for the contract checks of hidden information.

A check of what a seat may know needs a second game that differs from the first
only in what that seat cannot see: its "twin". famiglia builds twins without the
game's help, from the one thing every game shares: all its chance comes through
``Chance``. A twin is the same game replayed from its start, the same actions
in the same order (the public history), on a chance source that gives one draw
another outcome (``RedealtChance``): a swap of two places of a shuffle, another
number below n. Everything after that draw follows from the rules.

Which twins tell something depends on the seat: a twin is *consistent with
seat s* up to the step where seat s's view first differs from the game's (from
there on, the seat could tell them apart, so nothing more is learnt). While it
is consistent, any other seat whose view differs proves that the re-dealt draw
is something seat s does not know and that seat does; what seat s is sent
(``events_for``) and asked (its ``decision``) must then be the same in both.

``hidden_twins`` finds such twins for the checks of views and events;
``reach`` tells, for the check of chance meaning, whose view one draw changes
right after the step that drew it.

Why one draw at a time and not a fresh seed: a fresh seed changes a seat's own
cards as well, so almost no twin would be consistent with its view; one draw
changed keeps most twins consistent for most seats, and names the draw that
made the difference, which is what an author needs to find the fault. Why
replay rather than ``copy()``: the twin must not rest on the game's own code
for copying, which the contract checks too.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from referee.games.base import (
    TOGETHER,
    Chance,
    ChanceDraw,
    GameRules,
    GameState,
    IllegalAction,
    RecordingChance,
    SeededChance,
)

__all__ = [
    "Position",
    "RedealtChance",
    "Trace",
    "draw_name",
    "hidden_twins",
    "play_trace",
    "position_of",
    "reach",
    "redeal_candidates",
    "redealt_outcome",
    "replay",
    "seats_text",
]

_encode = msgspec.json.Encoder().encode


@dataclass
class Position:
    """What every seat can see at one point of a game: its view and its decision
    (each encoded; the decision only for the seat it names), and what each seat
    was sent by the step that led here (at the start: the deal's events); and
    whether the game is over there."""

    over: bool
    views: list[bytes]
    asked: list[bytes]
    sent: list[bytes]
    sent_events: list[list[Any]]
    together: bool = False
    """Whether the step here asks several seats at once (``TOGETHER``): its answers are secret by default."""
    held: tuple[int, ...] = ()
    """The seats whose answers to that step are held, not yet played (``GameState.held``)."""


@dataclass
class Trace:
    """A random game as played, for re-dealing: the steps (seat, action), the
    chance draws with the step during which each was made (-1: while dealing,
    before the first decision), and every position (0: after the deal; k + 1:
    after step k)."""

    steps: list[tuple[int, Any]] = field(default_factory=list)
    draws: list[ChanceDraw] = field(default_factory=list)
    draw_steps: list[int] = field(default_factory=list)
    positions: list[Position] = field(default_factory=list)


def position_of(state: GameState, events: list[Any] | None) -> Position:
    """What every seat can see of ``state`` right after the step that caused ``events`` (at the
    start: the deal's events); None: what seats are sent is not looked at."""
    n = state.n_players
    decision = state.decision()
    asked = [_encode(decision) if decision is not None and decision.seat == seat else b"" for seat in range(n)]
    sent_events = [state.events_for(seat, events) if events is not None else [] for seat in range(n)]
    return Position(
        over=state.is_over(),
        views=[_encode(state.view(seat)) for seat in range(n)],
        asked=asked,
        sent=[_encode(chunk) for chunk in sent_events],
        sent_events=sent_events,
        together=state.to_move == TOGETHER,
        held=tuple(sorted(state.held)),
    )


def play_trace(
    rules: GameRules, n_players: int, config: Any, chance: Chance, rng: random.Random, *, max_steps: int = 100_000
) -> Trace:
    """A random game of legal actions from ``rng``, recorded as a ``Trace``."""
    recording = RecordingChance(chance)
    trace = Trace()
    state = rules.new_game(n_players, config, recording)
    trace.draw_steps += [-1] * len(recording.draws)
    trace.positions.append(position_of(state, state.deal_events))
    while (decision := state.decision()) is not None and len(trace.steps) < max_steps:
        action = state.random_action(rng)
        made = len(recording.draws)
        events = state.apply(decision.seat, action)
        trace.draw_steps += [len(trace.steps)] * (len(recording.draws) - made)
        trace.steps.append((decision.seat, action))
        trace.positions.append(position_of(state, events))
    trace.draws = list(recording.draws)
    return trace


class RedealtChance:
    """The draws of a game given back in order, one of them with another outcome.

    Once the game asks for a draw the recording does not hold (the change led the
    play elsewhere), every later draw comes from a seed instead: a twin may go on
    where the game did not."""

    __slots__ = ("_draws", "_fallback", "_next", "_off_script")

    def __init__(self, draws: list[ChanceDraw], index: int, outcome: list[int], fallback_seed: int) -> None:
        changed = draws[index]
        self._draws = [
            *draws[:index],
            ChanceDraw(changed.stream, changed.kind, changed.n, outcome),
            *draws[index + 1 :],
        ]
        self._next = 0
        self._off_script = False
        self._fallback = SeededChance(fallback_seed)

    def _take(self, stream: str, kind: str, n: int) -> list[int] | None:
        if not self._off_script and self._next < len(self._draws):
            draw = self._draws[self._next]
            if (draw.stream, draw.kind, draw.n) == (stream, kind, n):
                self._next += 1
                return list(draw.outcome)
        self._off_script = True
        return None

    def shuffle(self, stream: str, n: int) -> list[int]:
        taken = self._take(stream, "shuffle", n)
        return taken if taken is not None else self._fallback.shuffle(stream, n)

    def below(self, stream: str, n: int) -> int:
        taken = self._take(stream, "below", n)
        return taken[0] if taken is not None else self._fallback.below(stream, n)


def redealt_outcome(draw: ChanceDraw, rng: random.Random) -> list[int] | None:
    """Another outcome for ``draw``, close to it: two places of a shuffle swapped,
    or another number below n. None when the draw has no other outcome."""
    if draw.n < 2:
        return None
    if draw.kind == "shuffle":
        first, second = rng.sample(range(draw.n), 2)
        order = list(draw.outcome)
        order[first], order[second] = order[second], order[first]
        return order
    return [(draw.outcome[0] + rng.randrange(1, draw.n)) % draw.n]


def replay(rules: GameRules, n_players: int, config: Any, trace: Trace, chance: Chance) -> Iterator[Position]:
    """The positions of ``trace``'s game played again on ``chance``: position 0, then
    one after each step, until a step cannot be played there (another seat must
    decide, or the action is refused) or the trace ends."""
    state = rules.new_game(n_players, config, chance)
    yield position_of(state, state.deal_events)
    for seat, action in trace.steps:
        decision = state.decision()
        if decision is None or decision.seat != seat:
            return
        try:
            events = state.apply(seat, action)
        except IllegalAction:
            return
        yield position_of(state, events)


def redeal_candidates(trace: Trace, rng: random.Random, count: int) -> list[int]:
    """Up to ``count`` draws of ``trace`` that have another outcome, chosen at random."""
    indices = [i for i, draw in enumerate(trace.draws) if draw.n >= 2]
    return sorted(rng.sample(indices, min(count, len(indices))))


def hidden_twins(
    rules: GameRules, n_players: int, config: Any, seed: int, trace: Trace, seat: int, count: int
) -> Iterator[tuple[int, int, Position, list[int]]]:
    """Every point where a twin of ``trace`` (one draw dealt again) is
    consistent with ``seat`` (its view as in the game, at every position so far) and
    some other seats see a difference, over ``count`` draws chosen at random: (the
    draw, the position, the twin's position there, those seats). Each proves that
    the draw is hidden from ``seat`` and known to the others."""
    rng = random.Random(f"famiglia-contract:{seed}:{seat}")
    for index in redeal_candidates(trace, rng, count):
        outcome = redealt_outcome(trace.draws[index], rng)
        if outcome is None:
            continue
        first = trace.draw_steps[index] + 1  # the first position the re-dealt draw can change
        chance = RedealtChance(trace.draws, index, outcome, seed + 1)
        for where, twin in enumerate(replay(rules, n_players, config, trace, chance)):
            game = trace.positions[where]
            if where < first:
                continue
            if twin.views[seat] != game.views[seat]:
                break  # from here on the seat could tell the two games apart
            others = [other for other in range(n_players) if other != seat and twin.views[other] != game.views[other]]
            if others:
                yield index, where, twin, others


def draw_name(trace: Trace, index: int) -> str:
    """A draw as a message names it: its number, kind, size and stream."""
    draw = trace.draws[index]
    return f"draw {index} (a {draw.kind} of {draw.n} from stream {draw.stream!r})"


def seats_text(reach: frozenset[int]) -> str:
    """A reach in words: "no seat", "seat 2", "seats 0, 1"."""
    return "no seat" if not reach else ("seat " if len(reach) == 1 else "seats ") + ", ".join(map(str, sorted(reach)))


def reach(
    rules: GameRules, n_players: int, config: Any, seed: int, trace: Trace, index: int, stream: str, number: int
) -> frozenset[int] | None:
    """The seats whose view changes right after the step that made draw ``index`` when
    it alone is dealt again (the same change in every play: chosen by stream and
    number); None when that step's own seat is among them, or the twin cannot be
    played that far."""
    step = trace.draw_steps[index]
    outcome = redealt_outcome(trace.draws[index], random.Random(f"famiglia-contract:{stream}:{number}"))
    if outcome is None:
        return None
    chance = RedealtChance(trace.draws, index, outcome, seed + 1)
    for where, twin in enumerate(replay(rules, n_players, config, trace, chance)):
        if where == step + 1:
            game = trace.positions[where]
            seats = frozenset(s for s in range(n_players) if twin.views[s] != game.views[s])
            actor = trace.steps[step][0] if step >= 0 else None
            return None if actor in seats else seats
    return None
