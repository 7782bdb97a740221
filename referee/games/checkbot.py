"""What ``famiglia check-bot`` asks of a game: the positions a bot must be seen to answer.

A ``Target`` names a decision a bot must answer (a decision kind, or a rare
case of one) and how to recognise it; ``find_position`` plays seeded games with
the engine's own legal actions until one is pending. The search is
deterministic: the same target gives the same position on every machine, so a
check that fails can be repeated. check-bot hands the state to
``run_match(initial_state=...)``, so the bot meets the position as a real
request from the real referee.

A game lists its targets in ``GameRules.checkbot_targets()``. The default,
``targets_by_random_play``, learns them from the game itself: it plays seeded
random games until they stop showing decision kinds not seen yet, and makes
one target per kind. ``variants_from_spec`` is the default of
``GameRules.checkbot_variants()``.

This module sits below the engine base (base.py imports it lazily for those
defaults), so it names what it needs of a game by the small protocols below
rather than by ``GameRules`` and ``GameState``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from referee.games.chance import SeededChance
from referee.games.variants import ChoiceVariant, IntVariant, Variant

__all__ = [
    "QUIET_GAMES",
    "SEARCH_GAMES",
    "Forced",
    "Match",
    "Policy",
    "SearchDecision",
    "SearchRules",
    "SearchState",
    "Target",
    "find_position",
    "kind_is",
    "mild_policy",
    "random_policy",
    "targets_by_random_play",
    "variants_from_spec",
]

SEARCH_GAMES = 400
"""Seeded games tried per target before the search gives up (the rarest built-in kind takes a few dozen)."""

QUIET_GAMES = 40
"""Random games in a row that show no new decision kind before ``targets_by_random_play`` stops looking."""


class SearchDecision(Protocol):
    """What the search reads of a ``Decision``."""

    @property
    def seat(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def options(self) -> list[Any] | None: ...
    @property
    def constraints(self) -> Any: ...


class SearchState(Protocol):
    """What the search does with a ``GameState``."""

    def decision(self) -> SearchDecision | None: ...
    def apply(self, seat: int, action: Any) -> Any: ...
    def random_action(self, rng: random.Random) -> Any: ...
    def pass_action(self) -> Any: ...


class SearchRules(Protocol):
    """What the search needs of a ``GameRules``."""

    @property
    def name(self) -> str: ...
    @property
    def min_players(self) -> int: ...
    @property
    def max_players(self) -> int: ...
    def config(self, variants: Mapping[str, str]) -> Any: ...
    def new_game(self, n_players: int, config: Any, chance: Any) -> SearchState: ...


Policy = Callable[[SearchState, random.Random], Any]
"""How the searched games are played: the action for the seat to move."""
Match = Callable[[SearchState, SearchDecision], bool]
"""Whether the pending decision is the one a target wants."""


def random_policy(state: SearchState, rng: random.Random) -> Any:
    """A uniformly random legal action (the engine's own ``random_action``)."""
    return state.random_action(rng)


def mild_policy(state: SearchState, rng: random.Random) -> Any:
    """The mildest legal action (the engine's ``pass_action``): games that avoid every fight."""
    return state.pass_action()


def kind_is(kind: str) -> Match:
    """A recogniser for any decision of ``kind``."""

    def match(state: SearchState, decision: SearchDecision) -> bool:
        return decision.kind == kind

    return match


@dataclass(frozen=True, kw_only=True)
class Target:
    """A decision a bot must be seen to answer: its check's name and how to find it."""

    name: str
    """The check's name, e.g. ``decision: bomb``."""
    what: str
    """The position in words, for the report."""
    match: Match
    variants: Mapping[str, str] = field(default_factory=dict)
    """The variants of the searched games (a kind that only some variant brings)."""
    players: tuple[int, ...] = ()
    """The table sizes of the searched games, taken in turn; () for every size the game allows."""
    policy: Policy = random_policy
    first_seed: int = 0
    """The first seed tried."""


@dataclass(kw_only=True)
class Forced:
    """A found position: the state (the decision pending is the target's) and how it was found."""

    state: Any
    seat: int
    players: int
    variants: dict[str, str]
    seed: int
    steps: int


def _sizes(rules: SearchRules, wanted: Sequence[int]) -> tuple[int, ...]:
    return tuple(wanted) or tuple(range(rules.min_players, rules.max_players + 1))


def find_position(rules: SearchRules, target: Target, *, games: int = SEARCH_GAMES) -> Forced | None:
    """The first position of ``target``'s seeded games where its ``match`` holds; None if none within ``games``."""
    variants = dict(target.variants)
    config = rules.config(variants)
    sizes = _sizes(rules, target.players)
    for seed in range(target.first_seed, target.first_seed + games):
        players = sizes[seed % len(sizes)]
        state = rules.new_game(players, config, SeededChance(seed))
        rng = random.Random(seed)
        steps = 0
        while (decision := state.decision()) is not None:
            if target.match(state, decision):
                return Forced(
                    state=state, seat=decision.seat, players=players, variants=variants, seed=seed, steps=steps
                )
            state.apply(decision.seat, target.policy(state, rng))
            steps += 1
    return None


def targets_by_random_play(
    rules: SearchRules, variant_sets: Sequence[Mapping[str, str]], *, quiet: int = QUIET_GAMES
) -> list[Target]:
    """One target per decision kind that seeded random games of ``rules`` reach, in the order first met.

    Game ``seed`` is played at the ``seed``-th table size and variant set (each
    taken in turn) with random legal actions, until ``quiet`` games in a row show
    no kind not seen before, or ``SEARCH_GAMES`` games. Each target starts its
    search at the game where its kind first came, so ``find_position`` finds it
    in its first game.
    """
    sizes = _sizes(rules, ())
    sets = [dict(variants) for variants in variant_sets] or [{}]
    configs = [rules.config(variants) for variants in sets]
    found: dict[str, Target] = {}
    since_new = 0
    for seed in range(SEARCH_GAMES):
        if since_new >= quiet:
            break
        players = sizes[seed % len(sizes)]
        chosen = seed % len(sets)
        state = rules.new_game(players, configs[chosen], SeededChance(seed))
        rng = random.Random(seed)
        since_new += 1
        while (decision := state.decision()) is not None:
            kind = decision.kind
            if kind not in found:
                found[kind] = Target(
                    name=f"decision: {kind}",
                    what=f"a {kind} decision, as seeded random games first meet it",
                    match=kind_is(kind),
                    variants=sets[chosen],
                    players=(players,),
                    first_seed=seed,
                )
                since_new = 0
            state.apply(decision.seat, state.random_action(rng))
    return list(found.values())


def variants_from_spec(spec: Sequence[Variant]) -> list[dict[str, str]]:
    """The default variants first, then each declared variant alone at each other value worth a game.

    A choice brings each of its other words; a number its lowest and highest
    value (the edges, where a bot's arithmetic breaks); a free text nothing, as
    only its default is known to be valid.
    """
    sets: list[dict[str, str]] = [{}]
    for variant in spec:
        values: list[str] = []
        if isinstance(variant, ChoiceVariant):
            values = [choice for choice in variant.choices if choice != variant.default]
        elif isinstance(variant, IntVariant):
            values = [str(value) for value in dict.fromkeys((variant.low, variant.high)) if value != variant.default]
        sets.extend({variant.key: value} for value in values)
    return sets
