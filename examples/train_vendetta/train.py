"""Train a Vendetta policy with numpy alone, then save it where bot/bot.py plays it.

Usage (from the repository root, with the project's virtualenv):

    python examples/train_vendetta/train.py [--iterations N] [--population N] [--games N] [--workers N]

The policy (bot/policy.py) scores each masked step of a placement by 25
weights. The cross-entropy method learns them: every iteration draws
``--population`` weight vectors around the current mean, each plays the same
``--games`` four-player games (common seeds, the seat turning with the game)
against three engine random players, the very sampler sample_bots/random_py
plays with; the best quarter by rank reward (+1 first, -1 last) become the new
mean and spread. Games run in ``training.aec``'s environment, the observation
the vector and mask a bot receives through ``training.policy_bot``.

Before and after, the policy plays ``--check-games`` games on seeds training
never saw; a random player wins a quarter of them. The weights go to
bot/weights.json with those figures.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "bot"))  # policy.py, shared with the bot
sys.path.insert(0, str(HERE.parent.parent))  # famiglia's packages, from a checkout

from policy import N_WEIGHTS, Floats, Policy

from training.aec import FamigliaEnv

PLAYERS = 4
CHECK_SEEDS = 1_000_000  # the games that judge the policy start here; training's seeds stay below

_game: FamigliaEnv | None = None  # one environment per process


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a mistake in the command is one line (what is wrong), not the usage first."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"train.py: {message} (--help lists the options)\n")


def play(weights: Floats, seed: int) -> tuple[float, bool]:
    """One game of the policy against three engine random players: its rank reward, and whether it won."""
    global _game
    if _game is None:
        _game = FamigliaEnv("vendetta", PLAYERS)
    game, policy = _game, Policy(weights)
    game.reset(seed=seed)
    me = f"player_{seed % PLAYERS}"  # the seat turns with the seed: every seat as often
    opponents = random.Random(seed)
    state = game.state
    assert state is not None
    while not state.is_over():
        agent = game.agent_selection
        if agent == me:
            game.step(policy(game.observe(agent)))
        else:  # a random player's whole placement, as random_py draws it
            game.step(state.random_action(opponents))
    ranks = state.outcome().ranks
    return game.rewards[me], ranks[int(me.split("_")[1])] == 1


def score(job: tuple[Floats, list[int]]) -> tuple[float, float]:
    """Mean rank reward and win rate of one weight vector over the given seeds."""
    weights, seeds = job
    results = [play(weights, seed) for seed in seeds]
    return float(np.mean([r for r, _ in results])), float(np.mean([w for _, w in results]))


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``low`` (argparse says so in one line otherwise)."""

    def number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is too few: give {low} or more")
        return value

    return number


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--iterations", type=at_least(0), default=14, help="cross-entropy iterations (default 14)")
    parser.add_argument(
        "--population", type=at_least(2), default=24, help="weight vectors tried per iteration (default 24)"
    )
    parser.add_argument(
        "--games", type=at_least(1), default=24, help="games per weight vector and iteration (default 24)"
    )
    parser.add_argument(
        "--check-games", type=at_least(1), default=400, help="games judging before and after (default 400)"
    )
    parser.add_argument("--workers", type=at_least(1), default=2, help="processes playing games (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="the training's own random seed (default 1)")
    parser.add_argument("--out", type=Path, default=HERE / "bot" / "weights.json", help="where the weights go")
    args = parser.parse_args(argv)

    started = time.monotonic()
    rng = np.random.default_rng(args.seed)
    mean, spread = np.zeros(N_WEIGHTS), np.ones(N_WEIGHTS)
    elite = max(2, args.population // 4)
    check = list(range(CHECK_SEEDS, CHECK_SEEDS + args.check_games))
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:

        def judge(weights: Floats) -> tuple[float, float]:
            chunks = [chunk for i in range(args.workers) if (chunk := check[i :: args.workers])]
            parts = pool.map(score, [(weights, chunk) for chunk in chunks])
            sizes = [len(chunk) for chunk in chunks]
            return (
                float(np.average([p[0] for p in parts], weights=sizes)),
                float(np.average([p[1] for p in parts], weights=sizes)),
            )

        before = judge(mean)
        print(f"before training: won {before[1]:.1%} of {len(check)} games (rank reward {before[0]:+.3f}); "
              "a random player wins 25%", flush=True)  # fmt: skip
        for iteration in range(args.iterations):
            seeds = [args.seed * 100_000 + iteration * args.games + g for g in range(args.games)]
            candidates = mean + spread * rng.standard_normal((args.population, N_WEIGHTS))
            candidates[0] = mean  # the mean is judged on the same games as its neighbours
            results = pool.map(score, [(c, seeds) for c in candidates])
            rewards = np.array([r for r, _ in results])
            best = candidates[np.argsort(rewards)[-elite:]]
            # The spread follows the elite, with a floor that shrinks: early on it keeps looking around.
            mean, spread = best.mean(axis=0), best.std(axis=0) + 0.5 / (iteration + 1)
            print(f"iteration {iteration + 1}/{args.iterations}: the mean's rank reward {rewards[0]:+.3f}, "
                  f"the best {rewards.max():+.3f} ({time.monotonic() - started:.0f} s)", flush=True)  # fmt: skip
        after = judge(mean)
    minutes = (time.monotonic() - started) / 60
    print(f"after training: won {after[1]:.1%} of {len(check)} games (rank reward {after[0]:+.3f}); "
          f"{minutes:.1f} minutes on {args.workers} processes")  # fmt: skip
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        Policy(mean).save(
            args.out,
            won_before=round(before[1], 4),
            won_after=round(after[1], 4),
            check_games=len(check),
            minutes=round(minutes, 1),
            command=" ".join(["python", "examples/train_vendetta/train.py", *(argv or sys.argv[1:])]),
        )
    except OSError as exc:
        sys.exit(f"cannot save the policy to {args.out} ({exc.strerror or exc}): give --out a file you can write")
    print(f"saved the policy to {args.out}")


if __name__ == "__main__":
    main()
