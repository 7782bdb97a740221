"""Ratings speed: the final Plackett-Luce fit and the live OpenSkill updates.

Usage: python bench/ratings.py [--games N] [--entrants N] [--live-games N] [--seed N]

Simulates N (default 100,000) 4-player Plackett-Luce games among 50 entrants with
known strengths and seat offsets, times fit_plackett_luce over all of them (from the
list of RatedGame values, packing included), and reports how well it recovered the
truth. Then times OpenSkill Plackett-Luce: the library's own rate() call and the
LiveRatings wrapper the tournament runner uses. The last line is always
``ratings: <seconds> s fit <games_per_s> games/s openskill`` (the LiveRatings rate).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from openskill.models import PlackettLuce
from scipy.stats import spearmanr

# Run from a checkout without installing: the repository root holds the packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tournaments.ratings import ELO_PER_THETA, LiveRatings, RatedGame, fit_plackett_luce

SEAT_OFFSETS = np.array([0.15, 0.05, -0.05, -0.15])


def synthetic(games: int, entrants: int, seed: int) -> tuple[list[RatedGame], np.ndarray]:
    """Plackett-Luce games via the Gumbel trick: sorting utility + Gumbel noise."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 0.5, entrants)
    k = len(SEAT_OFFSETS)
    # k distinct entrants per game: the k smallest of a row of random keys.
    seating = np.argpartition(rng.random((games, entrants)), k, axis=1)[:, :k]
    utility = theta[seating] + SEAT_OFFSETS + rng.gumbel(size=(games, k))
    ranks = np.argsort(np.argsort(-utility, axis=1), axis=1) + 1
    rated = [RatedGame(seating=s, ranks=r) for s, r in zip(seating.tolist(), ranks.tolist(), strict=True)]
    return rated, theta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--entrants", type=int, default=50)
    parser.add_argument("--live-games", type=int, default=20_000, help="games for the OpenSkill timings")
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()

    games, theta = synthetic(args.games, args.entrants, args.seed)
    print(f"data: {len(games)} games of 4 among {args.entrants} entrants")

    start = time.perf_counter()
    fit = fit_plackett_luce(games, args.entrants)
    fit_s = time.perf_counter() - start
    truth = (theta - theta.mean()) * ELO_PER_THETA
    rho = spearmanr(fit.ratings, theta).statistic
    error = np.abs(np.asarray(fit.ratings) - truth)
    inside = np.mean((np.asarray(fit.lower) <= truth) & (truth <= np.asarray(fit.upper)))
    seat_err = np.abs(np.asarray(fit.seat_offsets[0].offsets) - SEAT_OFFSETS * ELO_PER_THETA).max()
    print(
        f"fit: {fit_s:.3f} s, {fit.iterations} Newton steps, converged={fit.converged}, "
        f"{len(games) / fit_s:,.0f} games/s"
    )
    print(
        f"fit quality: Spearman {rho:.4f}, max error {error.max():.1f} Elo, "
        f"median stderr {np.median(fit.stderr):.1f} Elo, 95% coverage {inside:.2f}, "
        f"seat offsets max error {seat_err:.1f} Elo"
    )

    live_games = games[: args.live_games]
    model = PlackettLuce()
    raw = [model.rating() for _ in range(args.entrants)]
    start = time.perf_counter()
    for game in live_games:
        new = model.rate([[raw[e]] for e in game.seating], ranks=[float(r) for r in game.ranks])
        for e, team in zip(game.seating, new, strict=True):
            raw[e] = team[0]
    library_rate = len(live_games) / (time.perf_counter() - start)
    print(f"openskill PlackettLuce.rate(): {library_rate:,.0f} games/s over {len(live_games)} games")

    live = LiveRatings(args.entrants)
    start = time.perf_counter()
    for game in live_games:
        live.update(game)
    live_rate = len(live_games) / (time.perf_counter() - start)
    live_rho = spearmanr([live.ordinal(e) for e in range(args.entrants)], theta).statistic
    print(f"LiveRatings.update(): {live_rate:,.0f} games/s, Spearman vs truth {live_rho:.4f}")

    print(f"ratings: {fit_s:.3f} s fit {live_rate:.0f} games/s openskill")


if __name__ == "__main__":
    main()
