"""The Plackett-Luce fit as it was before the speed work (commit 9e57e13), kept as the benchmark's reference.

bench/ratings.py runs it on the same games as the current fit and prints the largest
difference in rating. Nothing else imports it. Its original docstring follows.

Ratings: the final Plackett-Luce fit with seat offsets, and live OpenSkill progress ratings.

The final fit is a maximum a posteriori Plackett-Luce model: one strength per entrant
plus one offset per (table size, seat) summing to zero per table size, under a weak
Gaussian prior, fitted by Newton's method with the analytic gradient and Hessian.
Ties use the Breslow form. docs/ratings.md explains the model and the formulas.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec
import numpy as np
from numpy.typing import NDArray
from openskill.models import PlackettLuce

# scipy (cho_factor, cho_solve, ndtr) is imported in the functions that fit and
# compare: it takes about 0.3 s to import, which every `famiglia` command would
# otherwise pay, `--help` and `play` included.

__all__ = [
    "ELO_PER_THETA",
    "Fit",
    "LiveRatings",
    "LosMatrix",
    "RatedGame",
    "SeatOffsets",
    "Standing",
    "fit_plackett_luce",
    "likelihood_of_superiority",
    "summarise",
]

ELO_PER_THETA = 400.0 / math.log(10.0)
"""Elo points per unit of log-strength: a gap of 400 means odds of 10 to 1."""

_Z95 = 1.959963984540054

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


class RatedGame(msgspec.Struct, frozen=True):
    """One finished game: entrant index by seat and 1-based shared rank by seat."""

    seating: list[int]
    ranks: list[int]


class SeatOffsets(msgspec.Struct, frozen=True):
    """Fitted seat advantage for one table size on the Elo-like scale; sums to zero."""

    table_size: int
    games: int
    offsets: list[float]
    stderr: list[float]


class Fit(msgspec.Struct, frozen=True):
    """Plackett-Luce fit: Elo-like ratings (mean 0) with 95% intervals, seat offsets, diagnostics."""

    ratings: list[float]  # per entrant, Elo-like, mean 0
    stderr: list[float]
    lower: list[float]  # 95% interval: rating -/+ 1.96 stderr
    upper: list[float]
    covariance: list[list[float]]  # of the centred ratings, in Elo^2
    seat_offsets: list[SeatOffsets]  # one per table size seen
    log_likelihood: float  # of the data at the fitted parameters (prior excluded)
    log_posterior: float
    iterations: int  # Newton steps
    converged: bool
    games: int
    prior_sd: float


class LosMatrix(msgspec.Struct, frozen=True):
    """Likelihood of superiority: values[i][j] = P(entrants[i] stronger than entrants[j])."""

    entrants: list[int]
    values: list[list[float]]


class Standing(msgspec.Struct, frozen=True):
    """One line of the final standings."""

    place: int
    entrant: int
    name: str
    rating: float
    stderr: float
    lower: float
    upper: float
    games: int
    wins: int
    average_rank: float
    seat_games: list[int]


# --------------------------------------------------------------------------- data


def _sum_zero_basis(k: int) -> FloatArray:
    """k x (k-1) orthonormal basis of the vectors summing to zero (Helmert contrasts)."""
    basis = np.zeros((k, k - 1))
    for j in range(1, k):
        basis[:j, j - 1] = 1.0
        basis[j, j - 1] = -float(j)
        basis[:, j - 1] /= math.sqrt(j * (j + 1))
    return basis


@dataclass
class _Block:
    """All games of one table size as dense arrays, columns in finishing order."""

    size: int
    entrants: IntArray  # G x k entrant of each column
    seats: IntArray  # G x k seat of each column
    ties: FloatArray  # G x k: size of the tie group starting at the column, else 0
    basis: FloatArray  # k x (k-1) seat contrasts
    offset: int  # index of this size's seat parameters in the parameter vector
    games: int

    @property
    def seat_params(self) -> int:
        return self.size - 1


def _blocks(games: Sequence[RatedGame], n: int, seat_offsets: bool) -> tuple[list[_Block], int]:
    by_size: dict[int, tuple[list[list[int]], list[list[int]]]] = {}
    for number, game in enumerate(games):
        k = len(game.seating)
        if k < 2 or len(game.ranks) != k:
            raise ValueError(
                f"game {number} needs at least 2 seats and one rank per seat; got {k} seats and {len(game.ranks)} ranks"
            )
        seatings, ranks = by_size.setdefault(k, ([], []))
        seatings.append(game.seating)
        ranks.append(game.ranks)
    blocks: list[_Block] = []
    offset = n
    for k in sorted(by_size):
        seatings, ranks = by_size[k]
        entrants = np.asarray(seatings, dtype=np.int64)
        if entrants.min() < 0 or entrants.max() >= n:
            raise ValueError(f"a game seats an entrant outside 0..{n - 1}")
        rank_arr = np.asarray(ranks, dtype=np.int64)
        # Reorder each game's columns from first place to last; a stable sort keeps
        # tied players in seat order, which the Breslow form does not care about.
        order = np.argsort(rank_arr, axis=1, kind="stable")
        sorted_ranks = np.take_along_axis(rank_arr, order, axis=1)
        g = len(seatings)
        cols = np.arange(k)
        starts = np.ones((g, k), dtype=bool)
        starts[:, 1:] = sorted_ranks[:, 1:] != sorted_ranks[:, :-1]
        # Column where each player's tie group (and so its risk set) starts.
        group_start = np.maximum.accumulate(np.where(starts, cols, 0), axis=1)
        ties = np.zeros((g, k))
        rows = np.arange(g)
        for p in range(k):
            ties[rows, group_start[:, p]] += 1.0
        blocks.append(
            _Block(
                size=k,
                entrants=np.take_along_axis(entrants, order, axis=1),
                seats=order.astype(np.int64),
                ties=ties,
                basis=_sum_zero_basis(k),
                offset=offset,
                games=g,
            )
        )
        if seat_offsets:
            offset += k - 1
    return blocks, offset


# --------------------------------------------------------------------------- likelihood


def _evaluate(
    params: FloatArray,
    blocks: list[_Block],
    n: int,
    seat_offsets: bool,
    prior_precision: FloatArray,
    hessian: bool,
) -> tuple[float, float, FloatArray, FloatArray | None]:
    """Log-likelihood, log-posterior, its gradient and (optionally) the information matrix.

    Per game, with columns in finishing order and w = exp(u):
      log L = sum_p u_p - sum_q c_q log S_q,   S_q = sum_{j >= q} w_j,
    where c_q is the size of the tie group starting at column q (0 elsewhere). Then
      dlogL/du_j = 1 - w_j A_j,                 A_j = sum_{q <= j} c_q / S_q,
      -d2logL/du_j du_l = [j = l] w_j A_j - w_j w_l B_min(j,l),  B_m = sum_{q <= m} c_q / S_q^2.
    Strengths and seat offsets enter u linearly, so both map through index sums.
    """
    size = len(params)
    theta = params[:n]
    loglik = 0.0
    grad = np.zeros(size)
    info = np.zeros((size, size)) if hessian else None
    for block in blocks:
        k = block.size
        u = theta[block.entrants]
        if seat_offsets:
            delta = block.basis @ params[block.offset : block.offset + k - 1]
            u = u + delta[block.seats]
        # Shifting a game's utilities changes nothing, and keeps exp() in range.
        u = u - u.max(axis=1, keepdims=True)
        w = np.exp(u)
        risk = np.cumsum(w[:, ::-1], axis=1)[:, ::-1]
        loglik += float(u.sum() - (block.ties * np.log(risk)).sum())
        inv = block.ties / risk
        a_cum = np.cumsum(inv, axis=1)
        grad_u = 1.0 - w * a_cum
        grad[:n] += np.bincount(block.entrants.ravel(), weights=grad_u.ravel(), minlength=n)
        if seat_offsets:
            seat_grad = np.bincount(block.seats.ravel(), weights=grad_u.ravel(), minlength=k)
            grad[block.offset : block.offset + k - 1] += block.basis.T @ seat_grad
        if info is None:
            continue
        b_cum = np.cumsum(inv / risk, axis=1)
        earlier = np.minimum.outer(np.arange(k), np.arange(k))
        # Information per game in utility space (G x k x k); positive semi-definite.
        info_u = -(w[:, :, None] * w[:, None, :]) * b_cum[:, earlier]
        diag = np.arange(k)
        info_u[:, diag, diag] += w * a_cum
        ent = block.entrants
        flat = info_u.ravel()
        info[:n, :n] += np.bincount(
            (ent[:, :, None] * n + ent[:, None, :]).ravel(), weights=flat, minlength=n * n
        ).reshape(n, n)
        if seat_offsets:
            seats = block.seats
            seat_seat = np.bincount(
                (seats[:, :, None] * k + seats[:, None, :]).ravel(), weights=flat, minlength=k * k
            ).reshape(k, k)
            ent_seat = np.bincount(
                (ent[:, :, None] * k + seats[:, None, :]).ravel(), weights=flat, minlength=n * k
            ).reshape(n, k)
            lo, hi = block.offset, block.offset + k - 1
            info[lo:hi, lo:hi] += block.basis.T @ seat_seat @ block.basis
            cross = ent_seat @ block.basis
            info[:n, lo:hi] += cross
            info[lo:hi, :n] += cross.T
    logpost = loglik - 0.5 * float(prior_precision @ (params * params))
    grad -= prior_precision * params
    if info is not None:
        info[np.diag_indices(size)] += prior_precision
    return loglik, logpost, grad, info


def fit_plackett_luce(
    games: Sequence[RatedGame],
    n_entrants: int,
    prior_sd: float = 4.0,
    seat_offsets: bool = True,
    seat_prior_sd: float | None = None,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> Fit:
    """Fit strengths (and seat offsets) by maximum a posteriori Plackett-Luce.

    prior_sd is the prior standard deviation of each strength in natural units
    (4.0 is about 700 Elo): weak enough not to matter once an entrant has played a
    few dozen games, strong enough that an entrant who always wins or always loses
    still gets a finite rating. seat_prior_sd (default prior_sd) plays the same role
    for seat offsets. Newton's method with a backtracking line search; tol bounds half
    the Newton decrement, i.e. the remaining gain in log-posterior.
    """
    if n_entrants < 1:
        raise ValueError(f"need at least one entrant, got {n_entrants}")
    if prior_sd <= 0:
        raise ValueError(f"prior_sd must be positive, got {prior_sd}")
    seat_sd = prior_sd if seat_prior_sd is None else seat_prior_sd
    if seat_sd <= 0:
        raise ValueError(f"seat_prior_sd must be positive, got {seat_sd}")
    n = n_entrants
    blocks, size = _blocks(games, n, seat_offsets)
    precision = np.full(size, 1.0 / seat_sd**2)
    precision[:n] = 1.0 / prior_sd**2
    params = np.zeros(size)
    loglik, logpost, grad, info = _evaluate(params, blocks, n, seat_offsets, precision, True)
    converged = False
    iterations = 0
    assert info is not None
    from scipy.linalg import cho_factor, cho_solve

    factor = cho_factor(info)
    for iterations in range(1, max_iter + 1):
        step = cho_solve(factor, grad)
        decrement = float(grad @ step)
        if decrement / 2.0 <= tol:
            # Take this last, tiny step without re-evaluating: Newton's error shrinks
            # quadratically, so it lands on the optimum to machine precision, and the
            # Hessian and likelihoods at hand differ by less than tol.
            params = params + step
            converged = True
            break
        # The log-posterior is concave, so a full Newton step almost always improves
        # it; halving guards the first steps from far away.
        scale = 1.0
        while True:
            candidate = params + scale * step
            c_loglik, c_logpost, c_grad, c_info = _evaluate(candidate, blocks, n, seat_offsets, precision, True)
            if c_logpost >= logpost - 1e-12 * abs(logpost) or scale < 1e-6:
                break
            scale /= 2.0
        params, loglik, logpost, grad, info = candidate, c_loglik, c_logpost, c_grad, c_info
        assert info is not None
        factor = cho_factor(info)
    covariance = cho_solve(factor, np.eye(size))

    theta = params[:n]
    centre = np.eye(n) - 1.0 / n
    cov_theta = centre @ covariance[:n, :n] @ centre * ELO_PER_THETA**2
    ratings = (theta - theta.mean()) * ELO_PER_THETA
    stderr = np.sqrt(np.clip(np.diag(cov_theta), 0.0, None))
    seats: list[SeatOffsets] = []
    for block in blocks:
        k = block.size
        if seat_offsets:
            lo, hi = block.offset, block.offset + k - 1
            offsets = block.basis @ params[lo:hi] * ELO_PER_THETA
            cov_seat = block.basis @ covariance[lo:hi, lo:hi] @ block.basis.T * ELO_PER_THETA**2
            seat_se = np.sqrt(np.clip(np.diag(cov_seat), 0.0, None))
        else:
            offsets = np.zeros(k)
            seat_se = np.zeros(k)
        seats.append(SeatOffsets(table_size=k, games=block.games, offsets=offsets.tolist(), stderr=seat_se.tolist()))
    return Fit(
        ratings=ratings.tolist(),
        stderr=stderr.tolist(),
        lower=(ratings - _Z95 * stderr).tolist(),
        upper=(ratings + _Z95 * stderr).tolist(),
        covariance=cov_theta.tolist(),
        seat_offsets=seats,
        log_likelihood=loglik,
        log_posterior=logpost,
        iterations=iterations,
        converged=converged,
        games=len(games),
        prior_sd=prior_sd,
    )


# --------------------------------------------------------------------------- reports


def likelihood_of_superiority(fit: Fit, top: int = 10) -> LosMatrix:
    """P(row entrant stronger than column entrant) for the `top` best-rated entrants.

    Normal approximation of the posterior: Phi((r_i - r_j) / sd(r_i - r_j)), using the
    covariance, so entrants who met often (correlated estimates) separate sooner.
    The diagonal is 0.5.
    """
    ratings = np.asarray(fit.ratings)
    cov = np.asarray(fit.covariance)
    chosen = [int(i) for i in np.argsort(-ratings, kind="stable")[: max(top, 0)]]
    idx = np.asarray(chosen, dtype=np.int64)
    diff = ratings[idx][:, None] - ratings[idx][None, :]
    var = cov[idx, idx][:, None] + cov[idx, idx][None, :] - 2.0 * cov[np.ix_(idx, idx)]
    sd = np.sqrt(np.clip(var, 1e-12, None))
    from scipy.special import ndtr

    values = ndtr(diff / sd)
    np.fill_diagonal(values, 0.5)
    return LosMatrix(entrants=chosen, values=values.tolist())


def summarise(games: Sequence[RatedGame], fit: Fit, names: Sequence[str] | None = None) -> list[Standing]:
    """Standings, best first: rating with interval plus games, wins, average rank, seat counts.

    A win is finishing first, alone or shared. seat_games[s] counts games in seat s
    over all table sizes. An entrant without games has average rank 0 (not NaN, which
    JSON cannot carry).
    """
    n = len(fit.ratings)
    if names is not None and len(names) != n:
        raise ValueError(f"{len(names)} names for {n} entrants")
    played = [0] * n
    wins = [0] * n
    rank_sum = [0] * n
    seats_max = max((len(g.seating) for g in games), default=0)
    seat_games = [[0] * seats_max for _ in range(n)]
    for game in games:
        best = min(game.ranks)
        for seat, (entrant, rank) in enumerate(zip(game.seating, game.ranks, strict=True)):
            played[entrant] += 1
            rank_sum[entrant] += rank
            seat_games[entrant][seat] += 1
            if rank == best:
                wins[entrant] += 1
    order = sorted(range(n), key=lambda e: -fit.ratings[e])
    return [
        Standing(
            place=place,
            entrant=e,
            name=names[e] if names is not None else str(e),
            rating=fit.ratings[e],
            stderr=fit.stderr[e],
            lower=fit.lower[e],
            upper=fit.upper[e],
            games=played[e],
            wins=wins[e],
            average_rank=rank_sum[e] / played[e] if played[e] else 0.0,
            seat_games=seat_games[e],
        )
        for place, e in enumerate(order, start=1)
    ]


# --------------------------------------------------------------------------- live


class LiveRatings:
    """Progress ratings: OpenSkill Plackett-Luce, updated one game at a time."""

    def __init__(self, n_entrants: int, model: PlackettLuce | None = None) -> None:
        self.model = model if model is not None else PlackettLuce()
        self.ratings = [self.model.rating() for _ in range(n_entrants)]
        self.games = 0

    def update(self, game: RatedGame) -> None:
        """Fold one finished game into the ratings (each seat is a one-player team)."""
        if len(set(game.seating)) != len(game.seating):
            raise ValueError("live ratings need distinct entrants at a table")
        teams = [[self.ratings[e]] for e in game.seating]
        new = self.model.rate(teams, ranks=[float(r) for r in game.ranks])
        for entrant, team in zip(game.seating, new, strict=True):
            self.ratings[entrant] = team[0]
        self.games += 1

    def mu_sigma(self, entrant: int) -> tuple[float, float]:
        """Mean and standard deviation of one entrant's skill belief."""
        rating = self.ratings[entrant]
        return float(rating.mu), float(rating.sigma)

    def ordinal(self, entrant: int) -> float:
        """Conservative skill mu - 3 sigma, the usual leaderboard number."""
        return float(self.ratings[entrant].ordinal())

    def top(self, k: int | None = None) -> list[tuple[int, float]]:
        """(entrant, ordinal) best first; all entrants when k is None."""
        board = sorted(((e, self.ordinal(e)) for e in range(len(self.ratings))), key=lambda t: -t[1])
        return board if k is None else board[:k]
