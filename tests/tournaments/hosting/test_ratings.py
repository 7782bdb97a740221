"""Tests for tournaments.hosting.ratings: the Plackett-Luce fit, intervals, LOS, standings, live ratings."""

from __future__ import annotations

import choix
import numpy as np
import pytest
from numpy.typing import NDArray
from openskill.models import PlackettLuce
from scipy.stats import spearmanr

from tournaments.hosting import ratings
from tournaments.hosting.ratings import (
    ELO_PER_THETA,
    LiveRatings,
    RatedGame,
    _blocks,
    _evaluate,
    _information,
    fit_plackett_luce,
    likelihood_of_superiority,
    summarise,
)


def simulate(
    rng: np.random.Generator,
    theta: NDArray[np.float64],
    games: int,
    seats: dict[int, list[float]],
) -> list[RatedGame]:
    """Plackett-Luce games: utility + Gumbel noise, best utility finishes first."""
    n = len(theta)
    sizes = sorted(seats)
    chosen = rng.choice(sizes, size=games)
    out: list[RatedGame] = []
    for k in sizes:
        count = int((chosen == k).sum())
        # k distinct entrants per game: the k smallest of a row of random keys.
        entrants = np.argpartition(rng.random((count, n)), k - 1, axis=1)[:, :k]
        utility = theta[entrants] + np.asarray(seats[k]) + rng.gumbel(size=(count, k))
        ranks = np.argsort(np.argsort(-utility, axis=1), axis=1) + 1
        out += [RatedGame(e, r) for e, r in zip(entrants.tolist(), ranks.tolist(), strict=True)]
    order = rng.permutation(len(out))
    return [out[i] for i in order]


def centred(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(x - x.mean(), dtype=np.float64)


# --------------------------------------------------------------------------- the fit


def test_gradient_and_hessian_match_finite_differences() -> None:
    games = [
        RatedGame([0, 1, 2, 3], [1, 2, 2, 4]),
        RatedGame([3, 2, 1, 0], [2, 1, 3, 4]),
        RatedGame([1, 3, 0], [1, 1, 1]),
        RatedGame([2, 0, 4], [3, 1, 2]),
        RatedGame([4, 1, 2, 0], [1, 3, 2, 3]),
    ]
    n = 5
    blocks, size = _blocks(games, n, True)
    precision = np.full(size, 0.1)
    x = np.random.default_rng(1).normal(size=size)
    _, _, grad, info = _evaluate(x, blocks, n, True, precision, True)
    assert info is not None
    h = 1e-6
    num_grad = np.zeros(size)
    num_info = np.zeros((size, size))
    for i in range(size):
        e = np.zeros(size)
        e[i] = h
        _, fp, gp, _ = _evaluate(x + e, blocks, n, True, precision, False)
        _, fm, gm, _ = _evaluate(x - e, blocks, n, True, precision, False)
        num_grad[i] = (fp - fm) / (2 * h)
        num_info[:, i] = -(gp - gm) / (2 * h)
    np.testing.assert_allclose(grad, num_grad, atol=1e-6)
    np.testing.assert_allclose(info, num_info, atol=1e-5)


def test_recovers_strengths_and_seat_offsets() -> None:
    rng = np.random.default_rng(7)
    n = 40
    theta = rng.normal(0.0, 0.6, n)
    seats = {4: [0.30, 0.10, -0.10, -0.30], 3: [0.25, 0.0, -0.25]}
    games = simulate(rng, theta, 8000, seats)
    fit = fit_plackett_luce(games, n)
    assert fit.converged and fit.iterations < 15
    rho = spearmanr(fit.ratings, theta).statistic
    print(f"recovery: Spearman {rho:.4f}, {fit.iterations} Newton steps")
    assert rho > 0.97
    assert abs(np.mean(fit.ratings)) < 1e-9
    for offsets in fit.seat_offsets:
        truth = np.asarray(seats[offsets.table_size]) * ELO_PER_THETA
        est = np.asarray(offsets.offsets)
        assert abs(est.sum()) < 1e-9
        assert (np.abs(est - truth) < 3.5 * np.asarray(offsets.stderr)).all()
        print(f"seat offsets k={offsets.table_size}: {np.round(est, 1)} vs {np.round(truth, 1)}")


def test_interval_coverage_near_95_percent() -> None:
    rng = np.random.default_rng(11)
    n, reps = 40, 20
    inside = 0
    z_scores: list[float] = []
    for _ in range(reps):
        theta = rng.normal(0.0, 0.5, n)
        games = simulate(rng, theta, 1500, {4: [0.2, 0.05, -0.05, -0.2]})
        fit = fit_plackett_luce(games, n)
        truth = centred(theta) * ELO_PER_THETA
        inside += int(((np.asarray(fit.lower) <= truth) & (truth <= np.asarray(fit.upper))).sum())
        z_scores += ((np.asarray(fit.ratings) - truth) / np.asarray(fit.stderr)).tolist()
    coverage = inside / (n * reps)
    z_sd = float(np.std(z_scores))
    print(f"95% interval coverage over {n * reps} intervals: {coverage:.3f}, z-score sd {z_sd:.3f}")
    # Estimates within a replication are correlated, so the spread is wider than binomial.
    assert 0.91 <= coverage <= 0.98
    assert 0.9 <= z_sd <= 1.1


def test_matches_choix_without_seat_effects() -> None:
    rng = np.random.default_rng(3)
    n = 10
    theta = rng.normal(0.0, 0.7, n)
    # choix's Newton-CG loops in Python per comparison, so keep the data small.
    games = simulate(rng, theta, 150, {4: [0.0] * 4})
    prior_sd = 2.0
    fit = fit_plackett_luce(games, n, prior_sd=prior_sd, seat_offsets=False)
    orders = [tuple(g.seating[int(s)] for s in np.argsort(g.ranks)) for g in games]
    # choix's penalty is alpha * sum(theta^2), i.e. a Gaussian prior of variance 1/(2 alpha).
    reference = choix.opt_rankings(n, orders, alpha=1.0 / (2 * prior_sd**2), tol=1e-8)
    ours = np.asarray(fit.ratings) / ELO_PER_THETA
    np.testing.assert_allclose(ours, centred(reference), atol=1e-6)
    # Maximum likelihood (no prior): I-LSR against a vanishing prior.
    ml_ref = choix.ilsr_rankings(n, orders, tol=1e-12)
    ml = fit_plackett_luce(games, n, prior_sd=1e4, seat_offsets=False)
    np.testing.assert_allclose(np.asarray(ml.ratings) / ELO_PER_THETA, centred(ml_ref), atol=1e-6)


def test_fit_exists_for_an_unbeaten_entrant_and_an_unplayed_one() -> None:
    games = [RatedGame([0, 1, 2], [1, 2, 3]), RatedGame([2, 0, 1], [2, 1, 3])] * 5
    fit = fit_plackett_luce(games, 4)
    assert fit.converged
    assert np.isfinite(fit.ratings).all() and np.isfinite(fit.stderr).all()
    assert fit.ratings[0] == max(fit.ratings)
    # Entrant 3 never played: only the prior speaks for it.
    assert fit.stderr[3] > max(fit.stderr[:3])


def test_ties_breslow_order_free_and_pull_together() -> None:
    base = [RatedGame([0, 1, 2], [1, 2, 3])] * 20
    ties = [RatedGame([0, 1, 2], [1, 1, 3])] * 10
    swapped = [RatedGame([1, 0, 2], [1, 1, 3])] * 10
    a = fit_plackett_luce(base + ties, 3, seat_offsets=False)
    b = fit_plackett_luce(base + swapped, 3, seat_offsets=False)
    np.testing.assert_allclose(a.ratings, b.ratings, atol=1e-9)
    plain = fit_plackett_luce(base, 3, seat_offsets=False)
    assert a.ratings[0] - a.ratings[1] < plain.ratings[0] - plain.ratings[1]
    everyone_tied = fit_plackett_luce([RatedGame([0, 1, 2], [1, 1, 1])] * 5, 3)
    np.testing.assert_allclose(everyone_tied.ratings, 0.0, atol=1e-9)


def test_sampled_hessian_steps_reach_the_exact_newton_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large fits step with a Hessian summed over every s-th game; the optimum and the
    covariance must be those of plain Newton on all games."""
    rng = np.random.default_rng(11)
    n = 30
    theta = rng.normal(0.0, 0.6, n)
    games = simulate(rng, theta, 6000, {3: [0.2, 0.0, -0.2], 5: [0.2, 0.1, 0.0, -0.1, -0.2]})
    games += [RatedGame([0, 1, 2, 3, 4], [1, 1, 3, 3, 5])] * 7  # ties in a sampled block
    exact = fit_plackett_luce(games, n)
    monkeypatch.setattr(ratings, "_HESSIAN_SAMPLE", 500)  # every 12th game
    sampled = fit_plackett_luce(games, n)
    assert sampled.converged and exact.converged
    np.testing.assert_allclose(sampled.ratings, exact.ratings, atol=1e-8)
    # Both covariances are taken at points within the stopping tolerance of the optimum.
    np.testing.assert_allclose(sampled.stderr, exact.stderr, rtol=1e-6)
    for a, b in zip(sampled.seat_offsets, exact.seat_offsets, strict=True):
        np.testing.assert_allclose(a.offsets, b.offsets, atol=1e-8)
    assert sampled.log_posterior == pytest.approx(exact.log_posterior, abs=1e-9)


def test_a_step_whose_log_posterior_is_not_finite_is_never_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fit of 2 million ladder games once took a Newton step to NaN (the line search accepted its
    shortest try whatever it gave) and failed in the covariance. A point whose figures are not
    finite is refused: the sampled Hessian's step is retried with the exact one, and the fit ends
    with finite ratings where no step is better."""
    rng = np.random.default_rng(5)
    n = 12
    games = simulate(rng, rng.normal(0.0, 0.6, n), 3000, {3: [0.2, 0.0, -0.2]})
    honest = ratings._gradient
    poisoned: list[float] = []

    def gradient(params: NDArray[np.float64], *rest: object) -> tuple[float, float, NDArray[np.float64]]:
        loglik, logpost, grad = honest(params, *rest)  # type: ignore[arg-type]
        if np.abs(params).max() > 0.0:  # every point but the start overflows
            poisoned.append(logpost)
            return loglik, float("nan"), grad
        return loglik, logpost, grad

    monkeypatch.setattr(ratings, "_gradient", gradient)
    monkeypatch.setattr(ratings, "_HESSIAN_SAMPLE", 500)  # the sampled Hessian first, then the exact one
    fit = fit_plackett_luce(games, n)
    assert poisoned, "the line search never tried a step"
    assert not fit.converged and np.all(np.isfinite(fit.ratings)) and np.all(np.isfinite(fit.stderr))
    assert fit.ratings == [0.0] * n  # nothing better than the start was found, and nothing worse was taken


def test_the_line_search_takes_the_longest_finite_improving_fraction_of_the_step() -> None:
    start = np.zeros(2)
    step = np.array([4.0, 0.0])

    def evaluate(at: NDArray[np.float64]) -> tuple[float, float, NDArray[np.float64]]:
        # A log-posterior that overflows past 1.5 and improves up to 3 (its peak).
        value = float("inf") if at[0] > 1.5 else -((at[0] - 3.0) ** 2)
        return value, value, np.zeros(2)

    taken = ratings._line_search(start, step, -9.0, evaluate)
    assert taken is not None and taken[0].tolist() == [1.0, 0.0]  # 4 and 2 overflow, 1 improves on -9
    assert ratings._line_search(start, step, 0.0, evaluate) is None  # nothing reaches the peak's 0


def test_information_by_entrant_and_seat_matches_the_cell_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pairs of players are summed into a cell x cell matrix when there are games enough
    to fill it, else (and for large fields) by entrant and seat: the same Hessian."""
    rng = np.random.default_rng(2)
    n = 30
    games = simulate(rng, rng.normal(0.0, 0.6, n), 3000, {3: [0.2, 0.0, -0.2], 5: [0.2, 0.1, 0.0, -0.1, -0.2]})
    games += [RatedGame([0, 1, 2, 3, 4], [1, 1, 3, 3, 5])] * 7  # ties
    blocks, size = _blocks(games, n, True)
    x = rng.normal(0.0, 0.5, size)
    precision = np.full(size, 0.1)
    monkeypatch.setattr(ratings, "_CELL_PAIRS_FILL", 0.0)
    by_cell = _information(x, blocks, n, True, precision)
    monkeypatch.setattr(ratings, "_CELL_PAIRS_LIMIT", 0)
    by_label = _information(x, blocks, n, True, precision)
    np.testing.assert_allclose(by_label, by_cell, rtol=1e-12, atol=1e-9)


def test_derivatives_hold_when_strengths_are_hundreds_of_units_apart() -> None:
    """exp() of a cell utility underflows 700 units below the strongest cell: such games are
    shifted by their own best utility, and gradient and Hessian stay exact."""
    games = [
        RatedGame([0, 1, 2], [1, 2, 3]),
        RatedGame([2, 0, 1], [2, 3, 1]),
        RatedGame([3, 4, 5], [1, 2, 3]),
        RatedGame([5, 4, 3], [1, 3, 2]),
        RatedGame([3, 5, 4], [2, 1, 3]),
    ]
    n = 6
    blocks, size = _blocks(games, n, True)
    precision = np.full(size, 1e-6)
    x = np.random.default_rng(4).normal(size=size)
    x[:3] += 500.0  # entrants 0-2 meet only each other, as do 3-5
    x[3:n] -= 500.0
    loglik, _, grad, info = _evaluate(x, blocks, n, True, precision, True)
    assert info is not None and np.isfinite(loglik) and np.isfinite(grad).all() and np.isfinite(info).all()
    h = 1e-5
    for i in range(size):
        e = np.zeros(size)
        e[i] = h
        _, fp, gp, _ = _evaluate(x + e, blocks, n, True, precision, False)
        _, fm, gm, _ = _evaluate(x - e, blocks, n, True, precision, False)
        assert grad[i] == pytest.approx((fp - fm) / (2 * h), abs=1e-5)
        np.testing.assert_allclose(info[:, i], -(gp - gm) / (2 * h), atol=1e-5)


def test_entrants_past_255_read_as_well_as_small_ones() -> None:
    """Seatings of entrants 0..255 are read as bytes, others as int64: the same games
    with entrants renumbered past 255 give the same fit."""
    rng = np.random.default_rng(8)
    games = simulate(rng, rng.normal(0.0, 0.6, 12), 600, {3: [0.1, 0.0, -0.1], 4: [0.0] * 4})
    moved = [RatedGame([e + 300 for e in g.seating], g.ranks) for g in games]
    small = fit_plackett_luce(games, 312)
    large = fit_plackett_luce(moved, 312)
    np.testing.assert_allclose(large.ratings[300:], small.ratings[:12], atol=1e-9)
    np.testing.assert_allclose(large.stderr[300:], small.stderr[:12], atol=1e-9)
    # Table sizes are read as bytes too, while they fit.
    assert ratings._lengths([[0] * 300, [1, 2], []]).tolist() == [300, 2, 0]
    assert ratings._lengths([[0] * 255, [1, 2]]).tolist() == [255, 2]


def test_sum_of_log_risk_sets_as_log_of_products_in_and_out_of_range() -> None:
    """One log per game of the product of its risk sets; products past 1e300 or below
    1e-300 (very long tables, very weak players) fall back to a log per player."""
    rng = np.random.default_rng(6)
    for risk in (rng.random((6, 50)) + 0.5, np.full((150, 4), 200.0), np.full((70, 4), 1e-5)):
        assert ratings._sum_of_logs(risk) == pytest.approx(float(np.log(risk).sum()), rel=1e-13)


def test_ranks_need_not_be_one_to_k() -> None:
    """Ranks are compared, not used as positions: 2, 5, 9 is the same order as 1, 2, 3,
    and a block mixing both forms (and a tie) gives the fit of the plain form."""
    plain = [RatedGame([0, 1, 2], [1, 2, 3]), RatedGame([2, 1, 0], [1, 2, 3]), RatedGame([1, 2, 0], [2, 2, 1])]
    spread = [RatedGame([0, 1, 2], [2, 5, 9]), RatedGame([2, 1, 0], [1, 2, 3]), RatedGame([1, 2, 0], [4, 4, 0])]
    a = fit_plackett_luce(plain * 4, 3)
    b = fit_plackett_luce(spread * 4, 3)
    np.testing.assert_allclose(a.ratings, b.ratings, atol=1e-9)
    np.testing.assert_allclose(a.stderr, b.stderr, atol=1e-9)


def test_rejects_malformed_games() -> None:
    with pytest.raises(ValueError, match="one rank per seat"):
        fit_plackett_luce([RatedGame([0, 1], [1])], 2)
    with pytest.raises(ValueError, match="outside 0..1"):
        fit_plackett_luce([RatedGame([0, 5], [1, 2])], 2)


# --------------------------------------------------------------------------- reports


def test_los_matrix_and_standings() -> None:
    rng = np.random.default_rng(5)
    theta = np.array([1.0, 0.5, 0.0, -0.5, -1.0, 0.0])
    games = simulate(rng, theta, 400, {3: [0.0, 0.0, 0.0]})
    fit = fit_plackett_luce(games, 6)
    los = likelihood_of_superiority(fit, top=4)
    values = np.asarray(los.values)
    assert los.entrants == [int(i) for i in np.argsort(-np.asarray(fit.ratings))[:4]]
    np.testing.assert_allclose(values + values.T, 1.0, atol=1e-12)
    assert (np.diag(values) == 0.5).all()
    assert values[0, 3] > 0.99
    standings = summarise(games, fit, names=[f"bot{i}" for i in range(6)])
    assert [s.place for s in standings] == list(range(1, 7))
    assert [s.rating for s in standings] == sorted(fit.ratings, reverse=True)
    assert sum(s.games for s in standings) == 3 * len(games)
    assert sum(s.wins for s in standings) == len(games)
    assert standings[0].name == "bot0"
    for s in standings:
        assert sum(s.seat_games) == s.games
        assert 1.0 <= s.average_rank <= 3.0


def test_summarise_hand_example() -> None:
    games = [RatedGame([0, 1, 2], [1, 1, 3]), RatedGame([2, 1, 0], [1, 2, 3])]
    fit = fit_plackett_luce(games, 3)
    by_entrant = {s.entrant: s for s in summarise(games, fit)}
    assert (by_entrant[0].games, by_entrant[0].wins, by_entrant[0].average_rank) == (2, 1, 2.0)
    assert (by_entrant[1].wins, by_entrant[1].average_rank) == (1, 1.5)
    assert by_entrant[2].seat_games == [1, 0, 1]


# --------------------------------------------------------------------------- live


def test_live_ratings_follow_openskill_exactly() -> None:
    rng = np.random.default_rng(9)
    games = simulate(rng, rng.normal(0, 1, 8), 200, {3: [0.0] * 3, 4: [0.0] * 4})
    games.append(RatedGame([0, 1, 2, 3], [2, 1, 2, 4]))
    live = LiveRatings(8)
    model = PlackettLuce()
    reference = [model.rating() for _ in range(8)]
    for game in games:
        live.update(game)
        new = model.rate([[reference[e]] for e in game.seating], ranks=[float(r) for r in game.ranks])
        for e, team in zip(game.seating, new, strict=True):
            reference[e] = team[0]
    for e in range(8):
        mu, sigma = live.mu_sigma(e)
        assert mu == pytest.approx(reference[e].mu, abs=1e-12)
        assert sigma == pytest.approx(reference[e].sigma, abs=1e-12)
    assert live.games == len(games)


def test_live_and_final_ratings_agree_on_order() -> None:
    rng = np.random.default_rng(13)
    theta = np.linspace(-1.5, 1.5, 12)
    games = simulate(rng, theta, 3000, {4: [0.0] * 4})
    live = LiveRatings(12)
    for game in games:
        live.update(game)
    board = live.top()
    assert board[0][0] == 11 and len(live.top(3)) == 3
    live_order = [0.0] * 12
    for entrant, ordinal in board:
        live_order[entrant] = ordinal
    fit = fit_plackett_luce(games, 12)
    assert spearmanr(live_order, fit.ratings).statistic > 0.95
    with pytest.raises(ValueError, match="distinct"):
        live.update(RatedGame([1, 1, 2], [1, 2, 3]))


def test_the_hessian_is_sampled_only_when_every_entrant_has_games_enough_in_the_sample(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A ladder's newest versions have a few games each: a sampled Hessian with none of theirs holds only the
    # prior for them, and its first step moved them hundreds of units (2 million games, a fit that failed).
    rng = np.random.default_rng(3)
    n = 30
    games = simulate(rng, rng.normal(0.0, 0.6, n), 6000, {3: [0.2, 0.0, -0.2]})
    monkeypatch.setattr(ratings, "_HESSIAN_SAMPLE", 500)
    blocks, _ = _blocks(games, n, True)
    stride, sample = ratings._hessian_sample(blocks, n, len(games))
    assert stride == 12 and sum(block.games for block in sample) == 500
    newcomer = games + [RatedGame([n, 0, 1], [1, 2, 3])] * 5  # a 31st entrant, five games, all won
    blocks, _ = _blocks(newcomer, n + 1, True)
    assert ratings._hessian_sample(blocks, n + 1, len(newcomer)) == (1, blocks)
    exact = fit_plackett_luce(newcomer, n + 1)
    assert exact.converged and abs(exact.ratings[n]) < 4.0 * ratings.ELO_PER_THETA  # within the prior's reach
