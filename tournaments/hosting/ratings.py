"""Ratings: the final Plackett-Luce fit with seat offsets, and live OpenSkill progress ratings.

The final fit is a maximum a posteriori Plackett-Luce model: one strength per entrant
plus one offset per (table size, seat) summing to zero per table size, under a weak
Gaussian prior, fitted by Newton's method with the analytic gradient and Hessian.
Ties use the Breslow form. docs/ratings.md explains the model and the formulas.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

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


_CHUNK = 16_384
"""Games evaluated together: their k x chunk temporaries stay in the CPU's caches, where
whole-block arrays (tens of MB for a million games) cost a page fault per 4 KB each time."""


@dataclass
class _Block:
    """All games of one table size, each player as a cell, in finishing order.

    A cell is an (entrant, seat) pair, numbered seat * n + entrant. A player's utility
    is its cell's theta_entrant + delta_seat, so the parameters reach the likelihood
    only through the n * k cell utilities: exp() is taken once per cell rather than
    once per player, and the derivatives are index sums over cells (one bincount)
    that sum over seats to give the strengths' and over entrants the seat offsets'.

    The games are kept in chunks of at most _CHUNK games, each a contiguous k x c array
    whose row q is the q-th finishing position: the sums along a game's finishing
    order are then k - 1 vector additions, and a chunk flattens without a copy.
    """

    size: int
    chunks: list[IntArray]  # k x c cells by finishing position
    ties: list[FloatArray] | None  # per chunk, k x c: size of the tie group starting there, else 0
    counts: FloatArray  # n * k: how often each cell occurs, the weight of its utility in log L
    basis: FloatArray  # k x (k-1) seat contrasts
    offset: int  # index of this size's seat parameters in the parameter vector
    games: int

    @staticmethod
    def of(cells: IntArray, ties: FloatArray | None, n: int, offset: int) -> _Block:
        """The block of G x k cells (and tie sizes), game by game, cut into chunks of positions x games."""
        games, k = cells.shape
        starts = range(0, games, _CHUNK)
        return _Block(
            size=k,
            chunks=[np.ascontiguousarray(cells[lo : lo + _CHUNK].T) for lo in starts],
            ties=None if ties is None else [np.ascontiguousarray(ties[lo : lo + _CHUNK].T) for lo in starts],
            counts=np.bincount(cells.ravel(), minlength=n * k).astype(np.float64),
            basis=_sum_zero_basis(k),
            offset=offset,
            games=games,
        )

    def thinned(self, stride: int, n: int) -> _Block:
        """Every stride-th game of the block (for an approximate Hessian)."""
        if stride == 1:
            return self

        def every(parts: list[NDArray[np.generic]]) -> NDArray[np.generic]:
            # Game i * _CHUNK + j of the block is column j of chunk i.
            return np.concatenate([p[:, (-i * _CHUNK) % stride :: stride] for i, p in enumerate(parts)], axis=1).T

        ties = None if self.ties is None else every(list(self.ties)).astype(np.float64)
        return _Block.of(every(list(self.chunks)).astype(np.intp), ties, n, self.offset)

    def parts(self) -> list[tuple[IntArray, FloatArray | None]]:
        """The chunks with their tie sizes (None: no tie in the block)."""
        if self.ties is None:
            return [(cells, None) for cells in self.chunks]
        return list(zip(self.chunks, self.ties, strict=True))


def _all_values(lists: list[list[int]], total: int) -> NDArray[np.uint8] | IntArray:
    """The values of all lists, in order, as one array: uint8 if they fit, else int64.

    Both np.fromiter and bytearray read an iterator in C; bytearray takes about half
    the time but only holds 0..255, which covers ranks and the entrants of any field
    up to 256. Anything else (or not an int) raises, and np.fromiter reads it instead.
    """
    try:
        small = bytearray(chain.from_iterable(lists))
    except (TypeError, ValueError):
        return np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=total)
    return np.frombuffer(small, dtype=np.uint8)


def _lengths(lists: list[list[int]]) -> IntArray:
    """The length of every list (through a bytearray, as _all_values, while all are below 256)."""
    try:
        return np.frombuffer(bytearray(map(len, lists)), dtype=np.uint8).astype(np.int64)
    except ValueError:
        return np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))


def _flatten(
    games: Sequence[RatedGame],
) -> tuple[IntArray, NDArray[np.uint8] | IntArray, NDArray[np.uint8] | IntArray]:
    """Table size of every game, and all seatings and all ranks as two flat arrays.

    The values are read with map/chain in C (see _all_values): for a million games
    this is a few hundred milliseconds where building nested lists and converting
    them took seconds.
    """
    # A comprehension's attribute reads are specialised by the interpreter: half the
    # time of map(attrgetter(...)).
    seatings = [game.seating for game in games]
    rankings = [game.ranks for game in games]
    sizes = _lengths(seatings)
    rank_sizes = _lengths(rankings)
    bad = np.flatnonzero((sizes < 2) | (rank_sizes != sizes))
    if len(bad):
        number = int(bad[0])
        raise ValueError(
            f"game {number} needs at least 2 seats and one rank per seat; "
            f"got {sizes[number]} seats and {rank_sizes[number]} ranks"
        )
    total = int(sizes.sum())
    return sizes, _all_values(seatings, total), _all_values(rankings, total)


def _cells(
    seating: NDArray[np.uint8] | IntArray, ranks: NDArray[np.uint8] | IntArray, n: int
) -> tuple[IntArray, FloatArray | None]:
    """For G x k entrants and ranks (a row per game, by seat): the cell in each finishing
    position, and the ties.

    Games whose ranks are 1..k each once (no tie, the usual case) are placed by a
    scatter (position = rank - 1); the others by a stable sort, which keeps tied
    players in seat order (the Breslow form does not care). The second result is the
    size of the tie group starting at each position (0 inside a group), or None when
    no game has a tie.
    """
    g, k = ranks.shape
    value = np.arange(0, n * k, n) + seating
    cells = np.empty((g, k), dtype=np.intp)
    if k < 62:
        # Bit r for rank r in 1..k, bit 0 for any other rank: the ranks are a
        # permutation exactly when their bits make 1..k.
        valid = (ranks >= 1) & (ranks <= k)
        bits = np.left_shift(np.int64(1), ranks * valid)
        permutation = np.bitwise_or.reduce(bits, axis=1) == (1 << (k + 1)) - 2
    else:
        permutation = np.zeros(g, dtype=bool)
    if permutation.all():
        # Flat index of (game, rank - 1): one scatter for the whole block.
        target = np.arange(-1, g * k - 1, k)[:, None] + ranks
        np.put(cells, target, value)
        return cells, None
    simple = np.flatnonzero(permutation)
    cells[simple[:, None], ranks[simple] - 1] = value[simple]
    other = np.flatnonzero(~permutation)
    other_order = np.argsort(ranks[other], axis=1, kind="stable")
    cells[other] = np.take_along_axis(value[other], other_order, axis=1)
    sorted_ranks = np.take_along_axis(ranks[other], other_order, axis=1)
    starts = np.ones(sorted_ranks.shape, dtype=bool)
    starts[:, 1:] = sorted_ranks[:, 1:] != sorted_ranks[:, :-1]
    if starts.all():
        return cells, None
    # Position where each player's tie group (and so its risk set) starts.
    group_start = np.maximum.accumulate(np.where(starts, np.arange(k), 0), axis=1)
    other_ties = np.zeros(sorted_ranks.shape)
    rows = np.arange(len(other))
    for p in range(k):
        other_ties[rows, group_start[:, p]] += 1.0
    ties = np.ones((g, k))
    ties[other] = other_ties
    return cells, ties


def _blocks(games: Sequence[RatedGame], n: int, seat_offsets: bool) -> tuple[list[_Block], int]:
    sizes, flat_seating, flat_ranks = _flatten(games)
    if len(flat_seating) and (flat_seating.min() < 0 or flat_seating.max() >= n):
        raise ValueError(f"a game seats an entrant outside 0..{n - 1}")
    table_sizes = [int(k) for k in np.flatnonzero(np.bincount(sizes))]
    # The table size of each value's game, in a byte when it fits (the usual case).
    narrow = np.int64 if table_sizes and table_sizes[-1] > 255 else np.uint8
    each_size = np.repeat(sizes.astype(narrow), sizes) if len(table_sizes) > 1 else sizes
    blocks: list[_Block] = []
    offset = n
    for k in table_sizes:
        if len(table_sizes) == 1:
            seating, ranks = flat_seating.reshape(-1, k), flat_ranks.reshape(-1, k)
        else:
            # The values of this size's games, a row per game.
            mine = each_size == k
            seating, ranks = flat_seating[mine].reshape(-1, k), flat_ranks[mine].reshape(-1, k)
        cells, ties = _cells(seating, ranks, n)
        del seating, ranks
        blocks.append(_Block.of(cells, ties, n, offset))
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


@dataclass
class _GameTerms:
    """Per position of a chunk of games: w = exp(u), A, c / S and S (see _evaluate)."""

    w: FloatArray
    a_cum: FloatArray
    inv: FloatArray  # c_q / S_q
    risk: FloatArray


_SMALLEST_RISK = 1e-150
"""A risk set total below this (its square, in the Hessian, nears underflow) sends a
chunk to the per-game shift of _game_terms."""


def _cell_utilities(params: FloatArray, block: _Block, n: int, seat_offsets: bool) -> tuple[FloatArray, FloatArray]:
    """Every cell's utility theta_e + delta_s minus the largest (so at most 0), and its exp."""
    theta = params[:n]
    if seat_offsets:
        delta = block.basis @ params[block.offset : block.offset + block.size - 1]
        utility = np.add.outer(delta, theta).ravel()
    else:
        utility = np.tile(theta, block.size)
    utility -= utility.max()
    return utility, np.exp(utility)


def _sum_of_logs(risk: FloatArray) -> float:
    """The sum of log(risk): as the log of each game's product of its k risk sets, one
    log per game rather than per player (log costs several times a product), unless a
    product leaves the range where it is exact to rounding."""
    product = risk[0].copy()
    with np.errstate(over="ignore", under="ignore"):  # checked just below
        for row in risk[1:]:
            product *= row
    if product.min() > 1e-300 and product.max() < 1e300:
        return float(np.log(product).sum())
    return float(np.log(risk).sum())


def _game_terms(
    utility: FloatArray, w_cell: FloatArray, cells: IntArray, ties: FloatArray | None
) -> tuple[float, _GameTerms]:
    """The chunk's sum of c_q log S_q (with the cell utilities as given), and the terms
    its derivatives are made of.

    A common shift of the utilities changes no derivative, so the players' w are looked
    up from the cells' exp(utility - largest). When strengths are hundreds of units
    apart that can underflow a whole game's risk sets; those chunks shift each game by
    its own largest utility instead (and add the shift back to the sum).
    """
    w = np.take(w_cell, cells)
    risk = _suffix_sums(w)
    shift = 0.0
    if not risk[-1].min() >= _SMALLEST_RISK:
        u = np.take(utility, cells)
        top = u.max(axis=0)
        u -= top
        w = np.exp(u)
        risk = _suffix_sums(w)
        shift = float(top.sum()) * len(cells)  # sum_q c_q = k in every game
    if ties is None:
        total = _sum_of_logs(risk)
        inv = 1.0 / risk
    else:
        total = float((ties * np.log(risk)).sum())
        inv = ties / risk
    return total + shift, _GameTerms(w=w, a_cum=_prefix_sums(inv), inv=inv, risk=risk)


def _gradient(
    params: FloatArray, blocks: list[_Block], n: int, seat_offsets: bool, prior_precision: FloatArray
) -> tuple[float, float, FloatArray]:
    """Log-likelihood, log-posterior and its gradient."""
    loglik = 0.0
    grad = np.zeros(len(params))
    for block in blocks:
        k = block.size
        utility, w_cell = _cell_utilities(params, block, n, seat_offsets)
        loglik += float(block.counts @ utility)
        expected = np.zeros(n * k)
        for cells, ties in block.parts():
            log_risk, t = _game_terms(utility, w_cell, cells, ties)
            loglik -= log_risk
            expected += np.bincount(cells.ravel(), weights=(t.w * t.a_cum).ravel(), minlength=n * k)
        # d log L / d u = 1 - w A per player: summed per cell, then over seats or entrants.
        cell_grad = (block.counts - expected).reshape(k, n)
        grad[:n] += cell_grad.sum(axis=0)
        if seat_offsets:
            grad[block.offset : block.offset + k - 1] += block.basis.T @ cell_grad.sum(axis=1)
    logpost = loglik - 0.5 * float(prior_precision @ (params * params))
    grad -= prior_precision * params
    return loglik, logpost, grad


_PAIR_BUFFER = 1 << 21
"""Pairs of players one bincount in _information sums: enough to amortise its output
(the whole pair matrix), few enough to keep the buffers (16 bytes a pair) at 32 MB."""

_CELL_PAIRS_LIMIT = 1 << 22
"""Largest cell x cell matrix (32 MB) _information sums pairs into; larger fields
(more than about 330 entrants at tables of 6) sum them by entrant and seat instead."""

_CELL_PAIRS_FILL = 1.0
"""Pairs of players per entry of the cell x cell matrix below which _information sums
by entrant and seat instead: the matrix costs a few passes over itself whatever the
games, the other way about twice as much per pair (at a million games of 200 entrants
the cells win, 0.18 s against 0.27 s; a 100,000-game sample goes the other way)."""


@dataclass
class _BlockInformation:
    """A block's information in utility space summed to what the parameters need."""

    by_entrant: FloatArray  # n x n: between the strengths
    by_seat: FloatArray  # k x k: between the seat deltas
    entrant_seat: FloatArray  # n x k: between a strength and a seat delta


def _pair_terms(
    block: _Block, utility: FloatArray, w_cell: FloatArray
) -> Iterator[tuple[IntArray, FloatArray, FloatArray, FloatArray]]:
    """Per chunk: its cells, w, each player's own information (j = l: w_j A_j - w_j^2 B_j)
    and -w_j B_j, which times w_l is the information between positions j < l."""
    for cells, ties in block.parts():
        t = _game_terms(utility, w_cell, cells, ties)[1]
        w_b = t.w * _prefix_sums(t.inv / t.risk)
        own = t.w * (t.a_cum - w_b)
        np.negative(w_b, out=w_b)
        yield cells, t.w, own, w_b


def _add_pairs(pairs: FloatArray | None, index: IntArray, weight: FloatArray, cell_count: int) -> FloatArray:
    """pairs (None: none yet) plus the pairs' weights summed per index into cell x cell."""
    summed = np.bincount(index, weights=weight, minlength=cell_count * cell_count).astype(np.float64, copy=False)
    return summed if pairs is None else pairs + summed


def _cell_information(block: _Block, utility: FloatArray, w_cell: FloatArray, n: int) -> _BlockInformation:
    """The block's information through P, each pair of players j < l of a game summed
    once into a cell x cell matrix, and the players' own terms on the cells' diagonal.

    The pairs of many chunks are written into two buffers and summed by one bincount,
    whose output (the whole of P) would otherwise be allocated and added per chunk.
    The cells' information is P + P' plus that diagonal; each part is summed to what
    the parameters need straight from P (axes: seat, entrant, seat, entrant; the sums
    run over whole rows or slices), which spares forming the symmetric matrix.
    """
    k = block.size
    cell_count = n * k
    diagonal = np.zeros(cell_count)
    pairs: FloatArray | None = None
    per_game = k * (k - 1) // 2
    index = np.empty(max(_PAIR_BUFFER, per_game * min(block.games, _CHUNK)), dtype=np.intp)
    weight = np.empty(len(index))
    used = 0
    for cells, w, own, minus_w_b in _pair_terms(block, utility, w_cell):
        diagonal += np.bincount(cells.ravel(), weights=own.ravel(), minlength=cell_count)
        games = cells.shape[1]
        if used + per_game * games > len(index):
            pairs = _add_pairs(pairs, index[:used], weight[:used], cell_count)
            used = 0
        for j in range(k - 1):
            first = cells[j] * cell_count
            for m in range(j + 1, k):
                end = used + games
                np.add(first, cells[m], out=index[used:end])
                np.multiply(minus_w_b[j], w[m], out=weight[used:end])
                used = end
    pairs = _add_pairs(pairs, index[:used], weight[:used], cell_count)
    quad = pairs.reshape(k, n, k, n)
    own_cells = diagonal.reshape(k, n)
    by_entrant = quad.sum(axis=(0, 2))
    by_entrant += by_entrant.T.copy()
    by_entrant[np.diag_indices(n)] += own_cells.sum(axis=0)
    # Summed over the second player's entrant: seat, entrant, seat.
    to_seat = pairs.reshape(-1, n).sum(axis=1).reshape(k, n, k)
    by_seat = to_seat.sum(axis=1)
    by_seat += by_seat.T.copy()
    by_seat[np.diag_indices(k)] += own_cells.sum(axis=1)
    # Entrant of one player of a pair and seat of the other, both ways round.
    entrant_seat = to_seat.sum(axis=0) + quad.sum(axis=(1, 2)).T + own_cells.T
    return _BlockInformation(by_entrant=by_entrant, by_seat=by_seat, entrant_seat=entrant_seat)


def _label_information(block: _Block, utility: FloatArray, w_cell: FloatArray, n: int) -> _BlockInformation:
    """The block's information as _cell_information gives it, for fields too large for
    a cell x cell matrix or games too few to fill it: each pair of players j < l is
    summed into entrant x entrant, seat x seat and entrant x seat (both ways round)
    matrices, one bincount per chunk over the four index ranges laid end to end."""
    k = block.size
    ranges = np.cumsum([0, n * n, k * k, n * k, n * k])
    diagonal = np.zeros(n * k)
    summed = np.zeros(ranges[-1])
    per_game = k * (k - 1) // 2
    for cells, w, own, minus_w_b in _pair_terms(block, utility, w_cell):
        diagonal += np.bincount(cells.ravel(), weights=own.ravel(), minlength=n * k)
        seat, entrant = np.divmod(cells, n)
        games = cells.shape[1]
        index = np.empty((4, per_game * games), dtype=np.intp)
        weight = np.empty(per_game * games)
        used = 0
        for j in range(k - 1):
            for m in range(j + 1, k):
                end = used + games
                np.add(entrant[j] * n, entrant[m], out=index[0, used:end])
                np.add(seat[j] * k, seat[m] + ranges[1], out=index[1, used:end])
                np.add(entrant[j] * k, seat[m] + ranges[2], out=index[2, used:end])
                np.add(entrant[m] * k, seat[j] + ranges[3], out=index[3, used:end])
                np.multiply(minus_w_b[j], w[m], out=weight[used:end])
                used = end
        summed += np.bincount(index.ravel(), weights=np.tile(weight, 4), minlength=len(summed))
    own_cells = diagonal.reshape(k, n)
    by_entrant = summed[: ranges[1]].reshape(n, n)
    by_entrant += by_entrant.T.copy()
    by_entrant[np.diag_indices(n)] += own_cells.sum(axis=0)
    by_seat = summed[ranges[1] : ranges[2]].reshape(k, k)
    by_seat += by_seat.T.copy()
    by_seat[np.diag_indices(k)] += own_cells.sum(axis=1)
    entrant_seat = (summed[ranges[2] : ranges[3]] + summed[ranges[3] :]).reshape(n, k) + own_cells.T
    return _BlockInformation(by_entrant=by_entrant, by_seat=by_seat, entrant_seat=entrant_seat)


def _information(
    params: FloatArray,
    blocks: list[_Block],
    n: int,
    seat_offsets: bool,
    prior_precision: FloatArray,
    scale: float = 1.0,
) -> FloatArray:
    """The negative Hessian of the log-posterior (the likelihood's part times scale).

    Per game the information in utility space is symmetric, so the players' own terms
    (j = l) and each pair of players j < l are summed once, by bincounts over many
    games at once (see _cell_information); a strength's information is then its
    cells' summed over seats, a seat offset's its cells' summed over entrants (through
    the contrasts), and between the two one of each.
    """
    size = len(params)
    info = np.zeros((size, size))
    for block in blocks:
        k = block.size
        utility, w_cell = _cell_utilities(params, block, n, seat_offsets)
        cell_pairs = (n * k) ** 2
        if cell_pairs <= _CELL_PAIRS_LIMIT and k * (k - 1) // 2 * block.games >= _CELL_PAIRS_FILL * cell_pairs:
            summed = _cell_information(block, utility, w_cell, n)
        else:
            summed = _label_information(block, utility, w_cell, n)
        info[:n, :n] += scale * summed.by_entrant
        if seat_offsets:
            lo, hi = block.offset, block.offset + k - 1
            info[lo:hi, lo:hi] += scale * (block.basis.T @ summed.by_seat @ block.basis)
            cross = scale * (summed.entrant_seat @ block.basis)
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

_HESSIAN_KEPT = 1.0
"""Gain in log-posterior (half the Newton decrement) below which the Hessian is kept rather
than summed again: from there on it moves less than a sampled one's error (a few percent),
which is what sets how fast the steps converge."""


_MIN_SAMPLED_GAMES = 30
"""Games of each entrant the sampled Hessian must hold for its steps to be used. An entrant's
row of it is its sampled games times the stride: off by tens of percent with a few, and the
prior alone with none, when the step moves the entrant by its gradient times the prior's
variance (a ladder's two million games, whose newest versions had a few games each, once
stepped 666 units from the start, and the Hessian there was not finite)."""


def _hessian_sample(blocks: list[_Block], n: int, games: int) -> tuple[int, list[_Block]]:
    """Every how many games the Hessian is summed while far from the optimum, and those games: every
    one up to twice _HESSIAN_SAMPLE games, or when some entrant who played would have fewer than
    _MIN_SAMPLED_GAMES games in the sample (counted in the sample itself, not guessed)."""
    stride = max(1, games // _HESSIAN_SAMPLE)
    if stride == 1:
        return 1, blocks
    sample = [block.thinned(stride, n) for block in blocks]
    played, sampled = np.zeros(n), np.zeros(n)
    for block, thinned in zip(blocks, sample, strict=True):
        played += block.counts.reshape(block.size, n).sum(axis=0)
        sampled += thinned.counts.reshape(block.size, n).sum(axis=0)
    if bool(np.all(sampled[played > 0] >= _MIN_SAMPLED_GAMES)):
        return stride, sample
    return 1, blocks


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

    With more than twice _HESSIAN_SAMPLE games, and at least _MIN_SAMPLED_GAMES of every
    entrant's among them, the steps use a Hessian summed over every s-th game (times s) and
    the exact gradient: the steps still go to the exact optimum (a Newton step with a Hessian off by a few percent cuts the error by about
    that factor each time) while a step costs little more than a gradient; once the
    gain left is below _HESSIAN_KEPT it is kept for the remaining steps. At the
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
    stride, sample = _hessian_sample(blocks, n, len(games))

    from threadpoolctl import threadpool_limits

    # The matrices here are small (entrants + seats square): BLAS threads only cost,
    # and on a busy machine a threaded Cholesky of 200 x 200 took 0.4 s instead of 1 ms.
    with threadpool_limits(limits=1, user_api="blas"):
        return _newton(blocks, sample, stride, n, len(games), seat_offsets, precision, prior_sd, max_iter, tol)


_SMALLEST_STEP = 1e-6
"""The shortest fraction of a Newton step the line search tries before it gives the step up."""


def _line_search(
    params: FloatArray,
    step: FloatArray,
    logpost: float,
    evaluate: Callable[[FloatArray], tuple[float, float, FloatArray]],
) -> tuple[FloatArray, tuple[float, float, FloatArray]] | None:
    """The first of ``params + step``, ``params + step / 2``, ... whose log-posterior is finite and no
    worse than ``logpost`` (with its likelihood, log-posterior and gradient); None when even
    ``_SMALLEST_STEP`` of the step is not."""
    scale = 1.0
    while scale >= _SMALLEST_STEP:
        candidate = params + scale * step
        figures = evaluate(candidate)
        if (
            math.isfinite(figures[1])
            and bool(np.all(np.isfinite(figures[2])))
            and (figures[1] >= logpost - 1e-12 * abs(logpost))
        ):
            return candidate, figures
        scale /= 2.0
    return None


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
    fresh = True  # the factor is of the Hessian at params (else kept from an earlier step)
    factor = cho_factor(information(params, exact))
    converged = False
    iterations = 0
    while True:
        step = cho_solve(factor, grad)
        decrement = float(grad @ step)
        if decrement / 2.0 <= tol:
            if exact and fresh:
                # Take this last, tiny step without re-evaluating: Newton's error shrinks
                # quadratically, so it lands on the optimum to machine precision, and the
                # Hessian and likelihoods at hand differ by less than tol.
                params = params + step
                converged = True
                break
            # Confirm with the exact Hessian here, which is also the covariance. Near the
            # optimum it changes by less than the steps do, so if more steps are
            # needed they reuse it rather than summing it over all games again.
            exact = fresh = True
            factor = cho_factor(information(params, exact))
            continue
        if iterations == max_iter:
            break
        iterations += 1
        # The log-posterior is concave, so a full Newton step almost always improves
        # it; halving guards the first steps from far away.
        taken = _line_search(params, step, logpost, lambda at: _gradient(at, blocks, n, seat_offsets, precision))
        if taken is None:
            # No point along the step is as good (or its figures are not finite): a step of a
            # sampled or kept Hessian that went astray, or the optimum within the floats' precision.
            # Never take it (a NaN here once ended a fit of 2 million games): try again with
            # the exact Hessian here, and stop where even that finds nothing better.
            if exact and fresh:
                break
            exact = fresh = True
            factor = cho_factor(information(params, exact))
            continue
        params, (loglik, logpost, grad) = taken
        # Once the gain left is small, the Hessian (sampled or exact) is kept for the last steps:
        # it moves less than its own error matters then, and with thousands of entrants summing
        # and factoring it is most of a step.
        fresh = decrement / 2.0 > _HESSIAN_KEPT
        if fresh:
            factor = cho_factor(information(params, exact))
    if not (exact and fresh):
        factor = cho_factor(information(params, True))
    covariance = cho_solve(factor, np.eye(size))

    theta = params[:n]
    # The covariance of the centred strengths, (I - J/n) C (I - J/n), by its row and column means:
    # two dense products of n x n took seconds at thousands of entrants.
    strengths = covariance[:n, :n]
    rows = strengths.mean(axis=1)
    cov_theta = (strengths - rows[:, None] - strengths.mean(axis=0)[None, :] + rows.mean()) * ELO_PER_THETA**2
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
