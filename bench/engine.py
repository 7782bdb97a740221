"""Engine speed: random legal games played in-process through the GameRules interface.

Usage: python bench/engine.py [--seconds N] [--players N] [--profile]

Vendetta: 4-player games for N seconds (default 10); a turn is one decision, one
random legal action (``random_action``) and its ``apply``, which resolves the
vendetta and any round end. Then, if ``referee.games.sicilianos`` exposes
``RULES``, the same loop for Sicilianos, counting decisions. The last line is
always ``engine: <turns_per_s> turns/s <games_per_s> games/s``.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import pstats
import random
import sys
import time
from pathlib import Path
from typing import Any

# Run from a checkout without installing: the repository root holds the packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.games.base import GameRules, SeededChance


def play(rules: GameRules, n_players: int, seconds: float) -> tuple[int, int, float]:
    """Play random games until ``seconds`` pass: (decisions, finished games, elapsed)."""
    config = rules.config({})
    rng = random.Random(20240601)
    decisions = 0
    games = 0
    seed = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state = rules.new_game(n_players, config, SeededChance(seed))
        seed += 1
        while not state.is_over():
            decision = state.decision()
            assert decision is not None
            state.apply(decision.seat, state.random_action(rng))
            decisions += 1
        games += 1
        now = time.perf_counter()
        if now >= deadline:
            return decisions, games, now - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="time per game (default 10)")
    parser.add_argument("--players", type=int, default=4, help="table size (default 4)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the Vendetta run")
    args = parser.parse_args(argv)

    vendetta: GameRules = importlib.import_module("referee.games.vendetta").RULES
    profiler = cProfile.Profile() if args.profile else None
    if profiler is not None:
        profiler.enable()
    turns, games, elapsed = play(vendetta, args.players, args.seconds)
    if profiler is not None:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)

    sicilianos: Any = None
    try:
        sicilianos = importlib.import_module("referee.games.sicilianos").RULES
    except (ImportError, AttributeError):
        print("sicilianos: not available (referee.games.sicilianos has no RULES yet); skipped")
    if sicilianos is not None:
        try:
            s_decisions, s_games, s_elapsed = play(sicilianos, args.players, args.seconds)
        except Exception as exc:  # noqa: BLE001
            # Someone else's engine: report its failure, never hide the Vendetta figure.
            print(f"sicilianos: failed ({type(exc).__name__}: {exc}); skipped")
        else:
            print(f"sicilianos: {s_decisions / s_elapsed:.0f} decisions/s {s_games / s_elapsed:.1f} games/s")

    print(f"engine: {turns / elapsed:.0f} turns/s {games / elapsed:.1f} games/s")


if __name__ == "__main__":
    main()
