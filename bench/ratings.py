"""Ratings speed: the final Plackett-Luce fit and the live OpenSkill updates.

Usage: python bench/ratings.py [--games N] [--entrants N] [--sizes 3,4,5,6]
       [--reference-games N] [--live-games N] [--seed N] [--repeat N]

Simulates N (default 100,000) Plackett-Luce games among 200 entrants with known
strengths and seat offsets, at mixed table sizes (3 to 6 seats, drawn at random per
game), and times fit_plackett_luce over all of them (from the list of RatedGame
values, packing included), wall and CPU, --repeat times (default 1; the figures
reported are the fastest run's, every run is listed). The process's peak resident
memory during the fits is read from /proc/self/status (VmHWM, reset just before the
first fit; it includes the list of games, which the caller holds anyway).

Reference in the same run: the fit as it was before the speed work
(bench/ratings_before.py) on the first --reference-games games (default 100,000),
timed, and the current fit on the same games: the largest difference in rating, in
standard error and in seat offset between the two is printed (they maximise the same
posterior, so it should be far below 0.01 Elo).

Then OpenSkill Plackett-Luce: the library's own rate() call and the LiveRatings
wrapper the tournament runner uses. The last line is always
``ratings: <seconds> s fit <games_per_s> games/s openskill`` (the LiveRatings rate).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from openskill.models import PlackettLuce
from scipy.stats import spearmanr

# Run from a checkout without installing: the repository root holds the packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ratings_before
from machine import load_average

from tournaments.hosting.ratings import ELO_PER_THETA, Fit, LiveRatings, RatedGame, fit_plackett_luce


def seat_truth(k: int) -> NDArray[np.float64]:
    """True seat offsets for a table of k: from +0.15 (first seat) to -0.15 (last)."""
    return np.linspace(0.15, -0.15, k)


def distinct_rows(rng: np.random.Generator, rows: int, k: int, n: int) -> NDArray[np.int64]:
    """rows x k entrants, distinct within a row: draw, then redraw the rows that repeat one."""
    out = rng.integers(0, n, size=(rows, k))
    while True:
        ordered = np.sort(out, axis=1)
        bad = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if len(bad) == 0:
            return out
        out[bad] = rng.integers(0, n, size=(len(bad), k))


def synthetic(games: int, entrants: int, sizes: list[int], seed: int) -> tuple[list[RatedGame], NDArray[np.float64]]:
    """Plackett-Luce games via the Gumbel trick: sorting utility + Gumbel noise."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 0.5, entrants)
    size_of_game = rng.choice(sizes, size=games)
    rated: list[RatedGame | None] = [None] * games
    for k in sizes:
        where = np.flatnonzero(size_of_game == k)
        seating = distinct_rows(rng, len(where), k, entrants)
        utility = theta[seating] + seat_truth(k) + rng.gumbel(size=(len(where), k))
        ranks = np.argsort(np.argsort(-utility, axis=1), axis=1) + 1
        for i, s, r in zip(where.tolist(), seating.tolist(), ranks.tolist(), strict=True):
            rated[i] = RatedGame(seating=s, ranks=r)
    return [g for g in rated if g is not None], theta


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def reset_peak() -> bool:
    """Reset VmHWM to the current size (Linux: write 5 to clear_refs)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def largest_differences(a: Fit, b: Fit) -> tuple[float, float, float]:
    """Largest absolute difference in rating, standard error and seat offset (Elo)."""
    rating = float(np.abs(np.subtract(a.ratings, b.ratings)).max())
    stderr = float(np.abs(np.subtract(a.stderr, b.stderr)).max())
    seat = max(
        float(np.abs(np.subtract(x.offsets, y.offsets)).max())
        for x, y in zip(a.seat_offsets, b.seat_offsets, strict=True)
    )
    return rating, stderr, seat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--entrants", type=int, default=200)
    parser.add_argument("--sizes", default="3,4,5,6", help="table sizes, one drawn at random per game")
    parser.add_argument(
        "--reference-games", type=int, default=100_000, help="games for the comparison with the old fit"
    )
    parser.add_argument("--live-games", type=int, default=20_000, help="games for the OpenSkill timings")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--repeat", type=int, default=1, help="fits of all games; the fastest is reported")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    print(f"load average at start: {load_average()}")
    games, theta = synthetic(args.games, args.entrants, sizes, args.seed)
    print(f"data: {len(games)} games at tables of {args.sizes} among {args.entrants} entrants")

    reference = games[: args.reference_games]
    start = time.perf_counter()
    old = ratings_before.fit_plackett_luce(reference, args.entrants)
    old_s = time.perf_counter() - start
    start = time.perf_counter()
    new = fit_plackett_luce(reference, args.entrants)
    new_s = time.perf_counter() - start
    d_rating, d_stderr, d_seat = largest_differences(old, new)
    print(
        f"reference: {len(reference)} games, fit before the speed work {old_s:.3f} s "
        f"({old.iterations} Newton steps), this fit {new_s:.3f} s ({new.iterations} steps): "
        f"{old_s / new_s:.1f}x"
    )
    print(
        f"largest difference from the fit before the speed work: rating {d_rating:.2e} Elo, "
        f"stderr {d_stderr:.2e} Elo, seat offset {d_seat:.2e} Elo; "
        f"log-posterior {old.log_posterior:.6f} before, {new.log_posterior:.6f} now"
    )
    del old, new

    before_kib = status_kib("VmRSS")
    hwm_ok = reset_peak()
    runs: list[tuple[float, float]] = []
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        cpu_start = time.process_time()
        fit = fit_plackett_luce(games, args.entrants)
        runs.append((time.perf_counter() - start, time.process_time() - cpu_start))
    if len(runs) > 1:
        listed = ", ".join(f"{wall:.3f} s ({cpu:.3f} s CPU)" for wall, cpu in runs)
        print(f"fit runs: {listed}")
    fit_s, fit_cpu = min(runs)
    peak_kib = status_kib("VmHWM") if hwm_ok else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    truth = (theta - theta.mean()) * ELO_PER_THETA
    rho = spearmanr(fit.ratings, theta).statistic
    error = np.abs(np.asarray(fit.ratings) - truth)
    inside = np.mean((np.asarray(fit.lower) <= truth) & (truth <= np.asarray(fit.upper)))
    seat_err = max(
        float(np.abs(np.asarray(s.offsets) - seat_truth(s.table_size) * ELO_PER_THETA).max()) for s in fit.seat_offsets
    )
    print(
        f"fit: {fit_s:.3f} s ({fit_cpu:.3f} s CPU), {fit.iterations} Newton steps, "
        f"converged={fit.converged}, {len(games) / fit_s:,.0f} games/s; load average {load_average()}"
    )
    print(
        f"fit memory: peak resident {peak_kib / 1024:.0f} MB "
        f"({'VmHWM' if hwm_ok else 'ru_maxrss'}), of which {before_kib / 1024:.0f} MB before the fit "
        f"(the interpreter, numpy, scipy and the list of games): "
        f"the fit's own peak {(peak_kib - before_kib) / 1024:.0f} MB"
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
        new_ratings = model.rate([[raw[e]] for e in game.seating], ranks=[float(r) for r in game.ranks])
        for e, team in zip(game.seating, new_ratings, strict=True):
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
