"""Ratings: the final Plackett-Luce fit with seat offsets, and live OpenSkill progress ratings.

The final fit is a maximum a posteriori Plackett-Luce model: one strength per entrant
plus one offset per (table size, seat) summing to zero per table size, under a weak
Gaussian prior, fitted by Newton's method with the analytic gradient and Hessian.
Ties use the Breslow form. docs/ratings.md explains the model and the formulas.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

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
    """All games of one table size as k x G arrays: row q is the q-th finishing position.

    Positions are rows (each a contiguous array over the games) so that the sums along a
    game's finishing order are k - 1 vector additions rather than a numpy reduction
    over many short rows.
    """

    size: int
    entrants: IntArray  # k x G entrant in each position
    seats: IntArray  # k x G seat of each position
    ties: FloatArray | None  # k x G size of the tie group starting at the position, else 0; None: no tie
    basis: FloatArray  # k x (k-1) seat contrasts
    offset: int  # index of this size's seat parameters in the parameter vector
    games: int

    @property
    def seat_params(self) -> int:
        return self.size - 1

    def thinned(self, stride: int) -> _Block:
        """Every stride-th game of the block (for an approximate Hessian)."""
        if stride == 1:
            return self
        ties = None if self.ties is None else np.ascontiguousarray(self.ties[:, ::stride])
        entrants = np.ascontiguousarray(self.entrants[:, ::stride])
        return _Block(
            size=self.size,
            entrants=entrants,
            seats=np.ascontiguousarray(self.seats[:, ::stride]),
            ties=ties,
            basis=self.basis,
            offset=self.offset,
            games=entrants.shape[1],
        )


def _flatten(games: Sequence[RatedGame]) -> tuple[IntArray, IntArray, IntArray]:
    """Table size of every game, and all seatings and all ranks as two flat arrays.

    The values are read with map/chain into np.fromiter, which stays in C: for a
    million games this is a few hundred milliseconds where building nested lists and
    converting them took seconds.
    """
    count = len(games)
    seatings = list(map(attrgetter("seating"), games))
    rankings = list(map(attrgetter("ranks"), games))
    sizes = np.fromiter(map(len, seatings), dtype=np.int64, count=count)
    rank_sizes = np.fromiter(map(len, rankings), dtype=np.int64, count=count)
    bad = np.flatnonzero((sizes < 2) | (rank_sizes != sizes))
    if len(bad):
        number = int(bad[0])
        raise ValueError(
            f"game {number} needs at least 2 seats and one rank per seat; "
            f"got {sizes[number]} seats and {rank_sizes[number]} ranks"
        )
    total = int(sizes.sum())
    flat_seating = np.fromiter(chain.from_iterable(seatings), dtype=np.int64, count=total)
    flat_ranks = np.fromiter(chain.from_iterable(rankings), dtype=np.int64, count=total)
    return sizes, flat_seating, flat_ranks


def _finishing_order(ranks: IntArray) -> tuple[IntArray, FloatArray | None]:
    """For k x G ranks (rows are seats): the seat in each finishing position, and the ties.

    Games whose ranks are 1..k each once (no tie, the usual case) are placed by a
    scatter (position = rank - 1); the others by a stable sort, which keeps tied
    players in seat order (the Breslow form does not care). The second result is the
    size of the tie group starting at each position (0 inside a group), or None when
    no game has a tie.
    """
    k, g = ranks.shape
    cols = np.arange(g)
    in_range = ((ranks >= 1) & (ranks <= k)).all(axis=0)
    bits = np.left_shift(1, np.clip(ranks - 1, 0, k - 1))
    permutation = in_range & (np.bitwise_or.reduce(bits, axis=0) == (1 << k) - 1)
    order = np.empty((k, g), dtype=np.int64)
    simple = np.flatnonzero(permutation)
    order[ranks[:, simple] - 1, simple[None, :]] = np.arange(k)[:, None]
    other = np.flatnonzero(~permutation)
    ties: FloatArray | None = None
    if len(other):
        other_order = np.argsort(ranks[:, other], axis=0, kind="stable")
        order[:, other] = other_order
        sorted_ranks = np.take_along_axis(ranks[:, other], other_order, axis=0)
        starts = np.ones(sorted_ranks.shape, dtype=bool)
        starts[1:] = sorted_ranks[1:] != sorted_ranks[:-1]
        if not starts.all():
            # Position where each player's tie group (and so its risk set) starts.
            positions = np.arange(k)[:, None]
            group_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=0)
            other_ties = np.zeros(sorted_ranks.shape)
            rows = np.arange(len(other))
            for p in range(k):
                other_ties[group_start[p], rows] += 1.0
            ties = np.ones((k, g))
            ties[:, other] = other_ties
    del cols
    return order, ties


def _blocks(games: Sequence[RatedGame], n: int, seat_offsets: bool) -> tuple[list[_Block], int]:
    sizes, flat_seating, flat_ranks = _flatten(games)
    if len(flat_seating) and (flat_seating.min() < 0 or flat_seating.max() >= n):
        raise ValueError(f"a game seats an entrant outside 0..{n - 1}")
    starts = np.cumsum(sizes) - sizes
    blocks: list[_Block] = []
    offset = n
    for k in (int(k) for k in np.unique(sizes)):
        # k x G index of each game's seats in the flat arrays.
        where = starts[sizes == k][None, :] + np.arange(k)[:, None]
        order, ties = _finishing_order(flat_ranks[where])
        blocks.append(
            _Block(
                size=k,
                entrants=np.take_along_axis(flat_seating[where], order, axis=0),
                seats=order,
                ties=ties,
                basis=_sum_zero_basis(k),
                offset=offset,
                games=where.shape[1],
            )
        )
        if seat_offsets:
            offset += k - 1
    return blocks, offset


# --------------------------------------------------------------------------- likelihood


def _suffix_sums(x: FloatArray) -> FloatArray:
    """out[q] = sum_{j >= q} x[j] along the positions (rows) of a k x G array."""
    out = np.empty_like(x)
    out[-1] = x[-1]
    for q in range(len(x) - 2, -1, -1):
        np.add(out[q + 1], x[q], out=out[q])
    return out


def _prefix_sums(x: FloatArray) -> FloatArray:
    """out[q] = sum_{j <= q} x[j] along the positions (rows) of a k x G array."""
    out = np.empty_like(x)
    out[0] = x[0]
    for q in range(1, len(x)):
        np.add(out[q - 1], x[q], out=out[q])
    return out


_CHUNK = 16_384
"""Games evaluated together: their k x chunk temporaries stay in the CPU's caches, where
whole-block arrays (tens of MB for a million games) cost a page fault per 4 KB each time."""


def _chunks(block: _Block) -> list[tuple[IntArray, IntArray, FloatArray | None]]:
    """The block's entrants, seats and ties, _CHUNK games at a time (views, no copies)."""
    return [
        (
            block.entrants[:, lo : lo + _CHUNK],
            block.seats[:, lo : lo + _CHUNK],
            None if block.ties is None else block.ties[:, lo : lo + _CHUNK],
        )
        for lo in range(0, block.games, _CHUNK)
    ]


@dataclass
class _GameTerms:
    """Per position of a chunk of games: w = exp(u), A, c / S and S (see _evaluate)."""

    w: FloatArray
    a_cum: FloatArray
    inv: FloatArray  # c_q / S_q
    risk: FloatArray


def _game_terms(
    theta: FloatArray, delta: FloatArray | None, entrants: IntArray, seats: IntArray, ties: FloatArray | None
) -> tuple[float, _GameTerms]:
    """A chunk's log-likelihood and the per-position terms its derivatives are made of."""
    u = np.take(theta, entrants)
    if delta is not None:
        u += np.take(delta, seats)
    # Shifting a game's utilities changes nothing, and keeps exp() in range.
    u -= u.max(axis=0)
    w = np.exp(u)
    risk = _suffix_sums(w)
    log_risk = np.log(risk)
    if ties is None:
        loglik = float(u.sum() - log_risk.sum())
        inv = 1.0 / risk
    else:
        loglik = float(u.sum() - (ties * log_risk).sum())
        inv = ties / risk
    return loglik, _GameTerms(w=w, a_cum=_prefix_sums(inv), inv=inv, risk=risk)


def _seat_deltas(params: FloatArray, block: _Block, seat_offsets: bool) -> FloatArray | None:
    """The block's offset per seat (k values), or None without seat offsets."""
    if not seat_offsets:
        return None
    return block.basis @ params[block.offset : block.offset + block.size - 1]


def _gradient(
    params: FloatArray, blocks: list[_Block], n: int, seat_offsets: bool, prior_precision: FloatArray
) -> tuple[float, float, FloatArray]:
    """Log-likelihood, log-posterior and its gradient."""
    loglik = 0.0
    grad = np.zeros(len(params))
    theta = params[:n]
    for block in blocks:
        k = block.size
        delta = _seat_deltas(params, block, seat_offsets)
        seat_grad = np.zeros(k)
        for entrants, seats, ties in _chunks(block):
            chunk_loglik, t = _game_terms(theta, delta, entrants, seats, ties)
            loglik += chunk_loglik
            grad_u = (1.0 - t.w * t.a_cum).ravel()
            grad[:n] += np.bincount(entrants.ravel(), weights=grad_u, minlength=n)
            if seat_offsets:
                seat_grad += np.bincount(seats.ravel(), weights=grad_u, minlength=k)
        if seat_offsets:
            grad[block.offset : block.offset + k - 1] += block.basis.T @ seat_grad
    logpost = loglik - 0.5 * float(prior_precision @ (params * params))
    grad -= prior_precision * params
    return loglik, logpost, grad


def _information(
    params: FloatArray,
    blocks: list[_Block],
    n: int,
    seat_offsets: bool,
    prior_precision: FloatArray,
    scale: float = 1.0,
) -> FloatArray:
    """The negative Hessian of the log-posterior (the likelihood's part times scale).

    Per game the information in utility space is symmetric, so each pair of positions
    j <= l is summed once, by one bincount over the games per pair and per kind of
    index (entrant x entrant, seat x seat, entrant x seat both ways).
    """
    size = len(params)
    info = np.zeros((size, size))
    theta = params[:n]
    for block in blocks:
        k = block.size
        delta = _seat_deltas(params, block, seat_offsets)
        diag_ee = np.zeros(n * n)
        off_ee = np.zeros(n * n)
        diag_ss = np.zeros(k * k)
        off_ss = np.zeros(k * k)
        ent_seat = np.zeros(n * k)
        for ent, seats, ties in _chunks(block):
            t = _game_terms(theta, delta, ent, seats, ties)[1]
            b_cum = _prefix_sums(t.inv / t.risk)
            wa = t.w * t.a_cum
            ent_n = ent * n
            ent_k = ent * k
            seats_k = seats * k
            for j in range(k):
                w_b = t.w[j] * b_cum[j]
                for m in range(j, k):
                    # Information between positions j and m (min(j, m) = j).
                    weight = -(w_b * t.w[m])
                    if m == j:
                        weight += wa[j]
                        diag_ee += np.bincount(ent_n[j] + ent[j], weights=weight, minlength=n * n)
                    else:
                        off_ee += np.bincount(ent_n[j] + ent[m], weights=weight, minlength=n * n)
                    if not seat_offsets:
                        continue
                    if m == j:
                        diag_ss += np.bincount(seats_k[j] + seats[j], weights=weight, minlength=k * k)
                        ent_seat += np.bincount(ent_k[j] + seats[j], weights=weight, minlength=n * k)
                    else:
                        off_ss += np.bincount(seats_k[j] + seats[m], weights=weight, minlength=k * k)
                        ent_seat += np.bincount(ent_k[j] + seats[m], weights=weight, minlength=n * k)
                        ent_seat += np.bincount(ent_k[m] + seats[j], weights=weight, minlength=n * k)
        off = off_ee.reshape(n, n)
        info[:n, :n] += scale * (diag_ee.reshape(n, n) + off + off.T)
        if seat_offsets:
            lo, hi = block.offset, block.offset + k - 1
            off_seat = off_ss.reshape(k, k)
            seat_seat = diag_ss.reshape(k, k) + off_seat + off_seat.T
            info[lo:hi, lo:hi] += scale * (block.basis.T @ seat_seat @ block.basis)
            cross = scale * (ent_seat.reshape(n, k) @ block.basis)
            info[:n, lo:hi] += cross
            info[lo:hi, :n] += cross.T
    info[np.diag_indices(size)] += prior_precision
    return info


def _evaluate(
    params: FloatArray,
    blocks: list[_Block],
    n: int,
    seat_offsets: bool,
    prior_precision: FloatArray,
    hessian: bool,
) -> tuple[float, float, FloatArray, FloatArray | None]:
    """Log-likelihood, log-posterior, its gradient and (optionally) the information matrix.

    Per game, with positions in finishing order and w = exp(u):
      log L = sum_p u_p - sum_q c_q log S_q,   S_q = sum_{j >= q} w_j,
    where c_q is the size of the tie group starting at position q (0 elsewhere). Then
      dlogL/du_j = 1 - w_j A_j,                 A_j = sum_{q <= j} c_q / S_q,
      -d2logL/du_j du_l = [j = l] w_j A_j - w_j w_l B_min(j,l),  B_m = sum_{q <= m} c_q / S_q^2.
    Strengths and seat offsets enter u linearly, so both map through index sums.
    """
    loglik, logpost, grad = _gradient(params, blocks, n, seat_offsets, prior_precision)
    info = _information(params, blocks, n, seat_offsets, prior_precision) if hessian else None
    return loglik, logpost, grad, info


_HESSIAN_SAMPLE = 100_000
"""Games the Hessian is summed over while far from the optimum (see fit_plackett_luce)."""


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

    With more than twice _HESSIAN_SAMPLE games, the steps use a Hessian summed over
    every s-th game (times s) and the exact gradient: the steps still go to the exact
    optimum (a Newton step with a Hessian off by a few percent cuts the error by about
    that factor each time) while a step costs little more than a gradient. At the
    optimum the exact Hessian is summed over all games: it gives the covariance and
    confirms the stopping test, and Newton steps with it continue if that test fails.
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
    stride = max(1, len(games) // _HESSIAN_SAMPLE)
    sample = [block.thinned(stride) for block in blocks]

    from threadpoolctl import threadpool_limits

    # The matrices here are small (entrants + seats square): BLAS threads only cost,
    # and on a busy machine a threaded Cholesky of 200 x 200 took 0.4 s instead of 1 ms.
    with threadpool_limits(limits=1, user_api="blas"):
        return _newton(blocks, sample, stride, n, len(games), seat_offsets, precision, prior_sd, max_iter, tol)


def _newton(
    blocks: list[_Block],
    sample: list[_Block],
    stride: int,
    n: int,
    games: int,
    seat_offsets: bool,
    precision: FloatArray,
    prior_sd: float,
    max_iter: int,
    tol: float,
) -> Fit:
    """Newton's method from zero (see fit_plackett_luce), then the Fit at the optimum."""
    from scipy.linalg import cho_factor, cho_solve

    size = len(precision)

    def information(at: FloatArray, exact: bool) -> FloatArray:
        if exact or stride == 1:
            return _information(at, blocks, n, seat_offsets, precision)
        return _information(at, sample, n, seat_offsets, precision, float(stride))

    params = np.zeros(size)
    loglik, logpost, grad = _gradient(params, blocks, n, seat_offsets, precision)
    exact = stride == 1
    factor = cho_factor(information(params, exact))
    converged = False
    iterations = 0
    while True:
        step = cho_solve(factor, grad)
        decrement = float(grad @ step)
        if decrement / 2.0 <= tol:
            if exact:
                # Take this last, tiny step without re-evaluating: Newton's error shrinks
                # quadratically, so it lands on the optimum to machine precision, and the
                # Hessian and likelihoods at hand differ by less than tol.
                params = params + step
                converged = True
                break
            # Confirm with the exact Hessian, which is also the covariance. Near the
            # optimum it changes by less than the steps do, so if more steps are
            # needed they reuse it rather than summing it over all games again.
            exact = True
            factor = cho_factor(information(params, exact))
            continue
        if iterations == max_iter:
            break
        iterations += 1
        # The log-posterior is concave, so a full Newton step almost always improves
        # it; halving guards the first steps from far away.
        scale = 1.0
        while True:
            candidate = params + scale * step
            c_loglik, c_logpost, c_grad = _gradient(candidate, blocks, n, seat_offsets, precision)
            if c_logpost >= logpost - 1e-12 * abs(logpost) or scale < 1e-6:
                break
            scale /= 2.0
        params, loglik, logpost, grad = candidate, c_loglik, c_logpost, c_grad
        if not exact or stride == 1:
            factor = cho_factor(information(params, exact))
    if not exact:
        factor = cho_factor(information(params, True))
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
        games=games,
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
