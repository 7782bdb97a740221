"""Training speed: the AEC environment's steps against the raw engine's turns, in the same run.

Usage: python bench/training.py [--seconds N] [--players N] [--slice S] [--profile]

Three loops share the run, taking turns in slices of ``--slice`` seconds
(default 0.25), so that other work on the machine falls on all of them alike,
until each has run ``--seconds`` (default 10):

* the engine: Vendetta games of random legal turns, exactly as bench/engine.py
  plays them (``decision``, ``random_action``, ``apply``);
* the environment: ``training.aec.env("vendetta", n_players)`` with vector
  observations, driven the way PettingZoo documents (``agent_iter``, ``last``,
  ``step``), each step a random number its action mask allows (``nonzero`` and
  a random pick: what the simplest agent does, as docs/training.md shows). A step is one masked
  choice: a placement takes one to five of them;
* the encoding alone: every ``KEEP_EVERY``-th decision the environment met,
  taken again through the game's encoding step by step as the environment
  takes it (``decision_steps`` reads the view once, then each step's
  ``vector``, ``mask`` and ``take``). Its time per step over the
  environment's is the vector encoding's share of a step.

The last line is always
``training: <steps_per_s> steps/s, <ratio> x the engine's turns/s``.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import sys
import time
from pathlib import Path
from typing import Any

# Run from a checkout without installing: the repository root holds the packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from machine import load_average, positive_seconds  # bench/machine.py, beside this script

from referee.games import get_rules
from referee.games.base import GameRules, GameState, SeededChance
from training.aec import FamigliaEnv

# Every how many decisions the environment keeps one for timing the encoding alone, and how many at most.
KEEP_EVERY = 37
KEEP_AT_MOST = 3_000

Kept = list[tuple[Any, Any, list[int]]]
"""Decisions the environment met: a copy of the view, the decision, and the steps taken (filled as taken)."""


class EngineLoop:
    """Random legal Vendetta turns, as bench/engine.py plays them."""

    def __init__(self, n_players: int) -> None:
        self.rules: GameRules = get_rules("vendetta")
        self.config = self.rules.config({})
        self.n = n_players
        self.rng = random.Random(20240601)
        self.seed = 0
        self.state: GameState = self._new_game()
        self.count = 0
        self.seconds = 0.0

    def _new_game(self) -> GameState:
        self.seed += 1
        return self.rules.new_game(self.n, self.config, SeededChance(self.seed))

    def run(self, seconds: float) -> None:
        """Play on for ``seconds``, from where the last slice stopped."""
        state, rng, turns = self.state, self.rng, 0
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            for _ in range(256):  # the clock read once per 256 turns
                decision = state.decision()
                if decision is None:
                    state = self._new_game()
                    continue
                state.apply(decision.seat, state.random_action(rng))
                turns += 1
            if time.perf_counter() >= deadline:
                break
        self.seconds += time.perf_counter() - start
        self.state, self.count = state, self.count + turns


class EnvironmentLoop:
    """Random masked steps of the vector environment through ``agent_iter``/``last``/``step``."""

    def __init__(self, n_players: int, kept: Kept) -> None:
        self.game = FamigliaEnv("vendetta", n_players)
        self.rng = random.Random(20240601)
        self.seed = 0
        self.game.reset(seed=self.seed)
        self.agents = iter(self.game.agent_iter())
        self.kept = kept
        self.decisions = 0
        self.count = 0
        self.seconds = 0.0

    def run(self, seconds: float) -> None:
        game, rng, steps, kept = self.game, self.rng, 0, self.kept
        asked = game.asked
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            for _ in range(256):
                if next(self.agents, None) is None:  # the game is over and every agent has left
                    self.seed += 1
                    game.reset(seed=self.seed)
                    self.agents = iter(game.agent_iter())
                    continue
                seen, _reward, done, cut, _info = game.last()
                if done or cut:
                    game.step(None)
                    continue
                if game.asked is not asked:  # a new decision: keep one in KEEP_EVERY
                    asked = game.asked
                    assert asked is not None and game.state is not None
                    if self.decisions % KEEP_EVERY == 0 and len(kept) < KEEP_AT_MOST:
                        kept.append((game.state.view(asked.decision.seat), asked.decision, asked.chosen))
                    self.decisions += 1
                allowed = seen["action_mask"].nonzero()[0]
                game.step(int(allowed[rng.randrange(len(allowed))]))
                steps += 1
            if time.perf_counter() >= deadline:
                break
        self.seconds += time.perf_counter() - start
        self.count += steps


class EncodingLoop:
    """The kept decisions taken again through the encoding alone, step by step as the environment takes them."""

    def __init__(self, n_players: int, kept: Kept) -> None:
        rules = get_rules("vendetta")
        self.encoding = rules.encoding(n_players, rules.config({}))
        self.kept = kept
        self.next = 0
        self.count = 0
        self.seconds = 0.0

    def run(self, seconds: float) -> None:
        done = self.kept[:-1]  # the last one kept may still be open in the environment
        if not done:
            return
        encoding, steps = self.encoding, 0
        start = time.perf_counter()
        deadline = start + seconds
        while time.perf_counter() < deadline:
            for _ in range(16):
                view, decision, chosen = done[self.next % len(done)]
                self.next += 1
                taking = encoding.decision_steps(view, decision)
                for step in chosen:
                    taking.vector()
                    taking.mask()
                    taking.take(step)
                steps += len(chosen)
        self.seconds += time.perf_counter() - start
        self.count += steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=positive_seconds, default=10.0, help="time of each loop in all (default 10)")
    parser.add_argument("--players", type=int, choices=(3, 4, 5), default=4, help="table size (default 4)")
    parser.add_argument(
        "--slice", type=positive_seconds, default=0.25, help="seconds each loop runs in its turn (default 0.25)"
    )
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the environment loop first")
    args = parser.parse_args(argv)

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        EnvironmentLoop(args.players, []).run(args.seconds)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)

    print(f"vendetta, {args.players} players; {os.cpu_count()} cores, load average {load_average()}")
    kept: Kept = []
    engine, environment = EngineLoop(args.players), EnvironmentLoop(args.players, kept)
    encoding = EncodingLoop(args.players, kept)
    environment.run(args.slice)  # fills ``kept`` before the encoding's first turn
    environment.count, environment.seconds = 0, 0.0
    while min(engine.seconds, environment.seconds) < args.seconds:
        engine.run(args.slice)
        environment.run(args.slice)
        encoding.run(args.slice / 2)

    turns = engine.count / engine.seconds
    steps = environment.count / environment.seconds
    step_us = 1e6 / steps
    encoding_us = 1e6 * encoding.seconds / max(1, encoding.count)
    print(f"engine: {turns:,.0f} turns/s ({engine.count:,} turns in {engine.seconds:.1f} s)")
    print(f"environment: {steps:,.0f} steps/s ({environment.count:,} steps, {environment.decisions:,} decisions)")
    print(
        f"encoding: {encoding_us / step_us:.0%} of a step ({encoding_us:.1f} us of {step_us:.1f} us: "
        "the view read once a decision, then each step's vector, mask and take)"
    )
    print(f"load average after: {load_average()}")
    print(f"training: {steps:.0f} steps/s, {steps / turns:.2f} x the engine's turns/s")


if __name__ == "__main__":
    main()
