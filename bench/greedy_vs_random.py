"""How much better than random is the greedy sample bot? In-process, no subprocesses.

Plays 3-player Vendetta games of the greedy policy (sample_bots/greedy_py) against
two uniformly random players (the engine's ``random_placement``, what
sample_bots/random_py plays). Every seed is played three times, with the greedy
player in seat 0, 1 and 2 on the same deal (duplicate games, rule H4), so no seat
advantage leaks into the figure.

A win is a game the greedy player wins; a win shared with k-1 others counts 1/k
(the random expectation is then exactly 1/3). Shared wins are also counted
separately, as is the average rank (1 = best; the random expectation is 2).

    python bench/greedy_vs_random.py               # 200 seeds x 3 seatings
    python bench/greedy_vs_random.py --seeds 50    # quicker

The last line reads ``greedy: <win_rate> win rate over <games> games (random expectation 0.333)``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

# Run as a script, this folder comes first on sys.path, where bench/referee.py would
# hide the referee package: look for packages elsewhere, and for the greedy policy
# in its bot folder.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent / "sample_bots" / "greedy_py"))

from greedy_policy import DEFAULT_WEIGHTS, Weights, choose

from referee.games.base import SeededChance
from referee.games.vendetta import (
    RULES,
    PlaceConstraints,
    VendettaState,
    random_placement,
)

PLAYERS = 3


class GameResult:
    """What one game says about the greedy seat."""

    __slots__ = ("ended_by", "rank", "rounds", "shared", "win")

    def __init__(self, win: float, shared: bool, rank: int, ended_by: str, rounds: int) -> None:
        self.win = win
        self.shared = shared
        self.rank = rank
        self.ended_by = ended_by
        self.rounds = rounds


def play_game(
    seed: int,
    greedy_seat: int,
    weights: Weights = DEFAULT_WEIGHTS,
    variants: dict[str, str] | None = None,
) -> GameResult:
    """One game on deal ``seed`` with the greedy policy in ``greedy_seat``."""
    config = RULES.config(variants or {})
    state: VendettaState = RULES.new_game(PLAYERS, config, SeededChance(seed))
    # The random players' choices depend on the seed and seating only.
    rng = random.Random(f"bench:{seed}:{greedy_seat}")
    while (decision := state.decision()) is not None:
        constraints = decision.constraints
        assert isinstance(constraints, PlaceConstraints)
        if decision.seat == greedy_seat:
            action = choose(state.view(decision.seat), constraints, weights)
        else:
            action = random_placement(constraints, rng)
        state.apply(decision.seat, action)
    outcome = state.outcome()
    winners = outcome.winners
    win = 1.0 / len(winners) if greedy_seat in winners else 0.0
    shared = greedy_seat in winners and len(winners) > 1
    return GameResult(win, shared, outcome.ranks[greedy_seat], outcome.ended_by, state.view(0).round)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=200, help="deals to play (each in 3 seatings)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="e.g. control=majority",
    )
    args = parser.parse_args(argv)
    variants = dict(item.split("=", 1) for item in args.variant)

    began = time.perf_counter()
    results: list[GameResult] = []
    by_seat = [0.0] * PLAYERS
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for seat in range(PLAYERS):
            result = play_game(seed, seat, variants=variants)
            results.append(result)
            by_seat[seat] += result.win
    seconds = time.perf_counter() - began

    games = len(results)
    wins = sum(r.win for r in results)
    outright = sum(1 for r in results if r.win == 1.0)
    shared = sum(1 for r in results if r.shared)
    ranks = Counter(r.rank for r in results)
    ended = Counter(r.ended_by for r in results)
    print(
        f"{games} games: greedy vs 2 random, 3 players, seeds {args.first_seed}..{args.first_seed + args.seeds - 1}, every seat"
    )
    print(f"variants: {RULES.variants(RULES.config(variants))}")
    print(f"wins: {outright} outright, {shared} shared (counted 1/k each): {wins:.1f}")
    print(f"win rate by greedy seat: {', '.join(f'{s}: {w / args.seeds:.3f}' for s, w in enumerate(by_seat))}")
    print(
        f"average rank: {sum(r.rank for r in results) / games:.3f} (random expectation 2.000); ranks: {dict(sorted(ranks.items()))}"
    )
    print(f"ended by: {dict(ended)}; average rounds {sum(r.rounds for r in results) / games:.1f}; {seconds:.1f} s")
    print(f"greedy: {wins / games:.3f} win rate over {games} games (random expectation 0.333)")


if __name__ == "__main__":
    main()
