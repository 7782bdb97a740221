"""Positions that make each decision kind happen, found with the engines' own API.

A position is found by playing seeded games with random legal actions (or, for
an empty Vendetta hand, a policy that spends every mafioso) until the pending
decision matches what a check needs. The search is deterministic: the same
table of seeds gives the same positions on every machine, so a check that
fails can be repeated. The state is handed to ``run_match(initial_state=...)``,
so the bot meets the position as a real request from the real referee.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from referee.games import get_rules
from referee.games.base import Decision, GameState, SeededChance
from referee.games.vendetta import Place, PlaceConstraints, Placement, VendettaState

__all__ = ["Forced", "Target", "find_position", "targets_for"]

SEARCH_GAMES = 400
"""Seeded games tried per target before the search gives up (the rarest kind takes a few dozen)."""

Policy = Callable[[GameState, random.Random], Any]
Match = Callable[[GameState, Decision], bool]


class Target(msgspec.Struct, frozen=True, kw_only=True):
    """A decision a bot must be seen to answer: its check's name and how to recognise it."""

    name: str
    """The check's name, e.g. ``decision: bomb``."""
    what: str
    """The position in words, for the report."""
    variants: dict[str, str] = {}
    players: tuple[int, ...] = (3, 4, 5)
    policy: Literal["random", "spend_all", "mild"] = "random"
    """How the searched games are played: random legal actions; the whole hand placed
    at once (to empty a Vendetta hand); or the mildest action (no war, so Sicilianos
    hands fill up to the 9 cards of D2)."""


class Forced(msgspec.Struct, kw_only=True):
    """A found position: the state (the decision pending is the target's) and how it was found."""

    state: Any
    seat: int
    players: int
    variants: dict[str, str]
    seed: int
    steps: int


def _random_policy(state: GameState, rng: random.Random) -> Any:
    return state.random_action(rng)


def _spend_all(state: GameState, rng: random.Random) -> Any:
    """Place the whole hand in one district where that is legal, else a random action."""
    decision = state.decision()
    assert decision is not None
    constraints = decision.constraints
    if isinstance(constraints, PlaceConstraints) and constraints.hand:
        fits = [d for d, need in enumerate(constraints.minimum, 1) if need <= constraints.hand]
        if fits:
            return Place([Placement(rng.choice(fits), constraints.hand)])
    return state.random_action(rng)


def _mild(state: GameState, rng: random.Random) -> Any:
    return state.pass_action()


def _vendetta_turn(state: GameState) -> tuple[int, int]:
    assert isinstance(state, VendettaState)
    view = state.view(0)
    return view.round, view.turn


def _sicilianos_types(decision: Decision) -> set[str]:
    return {type(option).__name__ for option in decision.options or ()}


def _offers(kind: str, names: set[str]) -> Match:
    """A recogniser: a ``kind`` decision whose options include every action type in ``names``."""

    def match(state: GameState, decision: Decision) -> bool:
        return decision.kind == kind and names <= _sicilianos_types(decision)

    return match


def targets_for(game: str) -> list[tuple[Target, Match]]:
    """Every decision kind (and option type) of ``game`` a bot must answer, with its recogniser."""
    if game == "vendetta":
        return [
            (
                Target(name="decision: place, turn 0", what="the first turn of a later round (one district, P2)"),
                lambda s, d: _vendetta_turn(s) >= (2, 0) and _vendetta_turn(s)[1] == 0,
            ),
            (
                Target(name="decision: place, later turn", what="a later turn of a later round (two districts, P1)"),
                lambda s, d: _vendetta_turn(s)[0] >= 2 and _vendetta_turn(s)[1] > 0,
            ),
            (
                Target(
                    name="decision: place, P4 minimum", what="a district held alone by another seat (minimum > 1, P4)"
                ),
                lambda s, d: max(d.constraints.minimum) > 2,
            ),
            (
                Target(
                    name="decision: place, empty hand",
                    what="a turn with no mafioso in hand (only [] is legal)",
                    policy="spend_all",
                ),
                lambda s, d: d.constraints.hand == 0,
            ),
        ]
    if game == "sicilianos":
        from referee.games.sicilianos.state import _KIND_ACTIONS

        found: list[tuple[Target, Match]] = []
        for kind, actions in _KIND_ACTIONS.items():
            names = {action.__name__ for action in actions}
            variants = {"steal_pick": "victim"} if kind == "give" else {}
            target = Target(
                name=f"decision: {kind}",
                what=f"a {kind} decision offering {', '.join(sorted(names))}",
                variants=variants,
                players=(3, 4, 5, 6),
                policy="mild" if kind == "take2_colour" else "random",
            )
            found.append((target, _offers(kind, names)))
        return found
    raise ValueError(f"unknown game {game!r}")


def find_position(game: str, target: Target, match: Match, *, first_seed: int = 0) -> Forced | None:
    """The first position of seeded random games where ``match`` holds; None if none within the budget."""
    rules = get_rules(game)
    config = rules.config(target.variants)
    policy: Policy = {"random": _random_policy, "spend_all": _spend_all, "mild": _mild}[target.policy]
    for seed in range(first_seed, first_seed + SEARCH_GAMES):
        players = target.players[seed % len(target.players)]
        state = rules.new_game(players, config, SeededChance(seed))
        rng = random.Random(seed)
        steps = 0
        while (decision := state.decision()) is not None:
            if match(state, decision):
                return Forced(
                    state=state, seat=decision.seat, players=players, variants=target.variants, seed=seed, steps=steps
                )
            state.apply(decision.seat, policy(state, rng))
            steps += 1
    return None
