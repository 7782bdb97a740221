"""How much better than random is the Sicilianos heuristic? In-process, no subprocesses.

Plays 4-player Sicilianos games of the heuristic (sample_bots/sicilianos_py,
``sicilianos_policy.choose``) against three uniformly random players (the
engine's ``pick_option``: a uniformly random option of every decision, what
sample_bots/random_py plays). Seeds are played in rotation sets: every seed is
played four times, with the heuristic in seat 0, 1, 2 and 3 on the same deal
(same piles, same dice sequence, rule H3), so no seat advantage leaks in.

A win is a game the heuristic ranks first in; a first place shared with k-1
others counts 1/k (the random expectation is then exactly 1/4). Shared wins are
also counted separately, as is the average rank (1 = best; the random
expectation is 2.5).

    python bench/sicilianos_bots.py               # 200 games: 50 seeds x 4 seats
    python bench/sicilianos_bots.py --games 400   # more

The last line reads
``sicilianos-heuristic: <win_rate> win rate over <games> games (random expectation 0.25)``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sample_bots" / "sicilianos_py"))

from sicilianos_policy import DEFAULT_WEIGHTS, Weights, choose

from referee.games.base import SeededChance
from referee.games.sicilianos import RULES, SicilianosState, pick_option

PLAYERS = 4


class GameResult:
    """What one game says about the heuristic's seat."""

    __slots__ = ("ended_by", "rank", "score", "shared", "turns", "win")

    def __init__(self, win: float, shared: bool, rank: int, score: int, ended_by: str, turns: int) -> None:
        self.win = win
        self.shared = shared
        self.rank = rank
        self.score = score
        self.ended_by = ended_by
        self.turns = turns


def play_game(
    seed: int,
    seat: int,
    weights: Weights = DEFAULT_WEIGHTS,
    variants: dict[str, str] | None = None,
) -> GameResult:
    """One game on deal ``seed`` with the heuristic in ``seat`` and random players elsewhere."""
    config = RULES.config(variants or {})
    state = RULES.new_game(PLAYERS, config, SeededChance(seed))
    assert isinstance(state, SicilianosState)
    # The random players' choices depend on the seed and seating only.
    rng = random.Random(f"bench:{seed}:{seat}")
    while (decision := state.decision()) is not None:
        options = decision.options
        assert options is not None
        if decision.seat == seat:
            action = choose(state.view(seat), decision.kind, options, weights)
            assert action in options, (decision.kind, action)
        else:
            action = pick_option(decision, rng)
        state.apply(decision.seat, action)
    outcome = state.outcome()
    winners = outcome.winners
    win = 1.0 / len(winners) if seat in winners else 0.0
    shared = seat in winners and len(winners) > 1
    return GameResult(win, shared, outcome.ranks[seat], outcome.scores[seat], outcome.ended_by, state.turns)


def run(
    games: int, first_seed: int, weights: Weights = DEFAULT_WEIGHTS, variants: dict[str, str] | None = None
) -> list[GameResult]:
    """``games`` games (rounded up to whole rotation sets), seed by seed, every seat in turn."""
    results: list[GameResult] = []
    seeds = -(-games // PLAYERS)
    for seed in range(first_seed, first_seed + seeds):
        for seat in range(PLAYERS):
            results.append(play_game(seed, seat, weights, variants))
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=200, help="games to play, in sets of 4 seatings per seed")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--variant", action="append", default=[], metavar="KEY=VALUE", help="e.g. steal_pick=victim")
    args = parser.parse_args(argv)
    variants = dict(item.split("=", 1) for item in args.variant)

    began = time.perf_counter()
    results = run(args.games, args.first_seed, variants=variants)
    seconds = time.perf_counter() - began

    games = len(results)
    seeds = games // PLAYERS
    wins = sum(r.win for r in results)
    outright = sum(1 for r in results if r.win == 1.0)
    shared = sum(1 for r in results if r.shared)
    ranks = Counter(r.rank for r in results)
    ended = Counter(r.ended_by for r in results)
    by_seat = [sum(r.win for r in results[s::PLAYERS]) / seeds for s in range(PLAYERS)]
    print(
        f"{games} games: heuristic vs 3 random, {PLAYERS} players, "
        f"seeds {args.first_seed}..{args.first_seed + seeds - 1}, each in all {PLAYERS} seats"
    )
    print(f"variants: {RULES.variants(RULES.config(variants))}")
    print(f"wins: {outright} outright, {shared} shared (a win shared by k seats counts 1/k): {wins:.2f}")
    print(f"win rate by heuristic seat: {', '.join(f'{s}: {w:.3f}' for s, w in enumerate(by_seat))}")
    print(
        f"average rank: {sum(r.rank for r in results) / games:.3f} (random expectation 2.500); "
        f"ranks: {dict(sorted(ranks.items()))}"
    )
    print(
        f"average score: {sum(r.score for r in results) / games:,.0f}; ended by: {dict(ended)}; "
        f"average turns {sum(r.turns for r in results) / games:.1f}; {seconds:.1f} s"
    )
    print(f"sicilianos-heuristic: {wins / games:.3f} win rate over {games} games (random expectation 0.25)")


if __name__ == "__main__":
    main()
