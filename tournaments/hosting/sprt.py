"""Sequential test for a head-to-head: is A stronger than B on duplicate deals?

Each duplicate pair (A and B on the same deal, seat and opponents) gives one score
for A: 1 if A finished ahead of B, 0.5 if level, 0 if behind. The test is Wald's
SPRT on the mean of these scores, with the log-likelihood ratio taken from a normal
model whose variance is estimated from the scores themselves (the "generalised" SPRT
used by engine-testing frameworks); docs/ratings.md gives the formulas.
"""

from __future__ import annotations

import math
from typing import Literal

import msgspec

__all__ = ["Decision", "Sprt", "SprtStatus", "elo_estimate_words", "elo_to_score", "pair_score", "score_to_elo"]

Decision = Literal["A stronger", "not stronger", "continue"]

# Pseudo-observations (one win, one draw, one loss) that enter only the variance
# estimate: without them a short streak of identical scores has zero variance and an
# infinite likelihood ratio, which would stop the test after two or three pairs.
_PRIOR_SCORES = (1.0, 0.5, 0.0)


def elo_to_score(elo: float) -> float:
    """Expected pair score of an Elo difference on the logistic Elo curve."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def score_to_elo(score: float) -> float:
    """Elo difference whose expected pair score is `score` (clamped away from 0 and 1)."""
    s = min(max(score, 1e-6), 1.0 - 1e-6)
    return 400.0 * math.log10(s / (1.0 - s))


def _elo_bound(score: float) -> float:
    """The Elo difference of a score, infinite at or past 0 and 1: a bound the pairs cannot set is not clamped."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return score_to_elo(score)


def pair_score(rank_a: int, rank_b: int) -> float:
    """Score of one duplicate pair for A from the two ranks (lower rank is better)."""
    if rank_a < rank_b:
        return 1.0
    if rank_a == rank_b:
        return 0.5
    return 0.0


class SprtStatus(msgspec.Struct, frozen=True):
    """Snapshot of a head-to-head test for reports and progress lines.

    ``elo``, ``elo_lower`` and ``elo_upper`` are infinite where the pairs set
    no bound (A won or lost every pair, or the interval reaches a score of 0
    or 1); JSON shows those as null. ``elo_estimate_words`` says them in words.
    """

    pairs: int
    wins: int
    draws: int
    losses: int
    score: float
    elo: float
    elo_lower: float
    elo_upper: float
    llr: float
    lower_bound: float
    upper_bound: float
    decision: Decision
    exhausted: bool

    @property
    def finished(self) -> bool:
        """True once the test stopped: it decided, or its game budget ran out. No game is left to play."""
        return self.decision != "continue" or self.exhausted


class Sprt:
    """Wald SPRT of H0: Elo = elo0 against H1: Elo = elo1 on duplicate-pair scores."""

    def __init__(
        self,
        elo0: float = 0.0,
        elo1: float = 20.0,
        alpha: float = 0.05,
        beta: float = 0.05,
        max_pairs: int | None = None,
    ) -> None:
        if not elo1 > elo0:
            raise ValueError(f"elo1 ({elo1}) must be greater than elo0 ({elo0})")
        for name, value in (("alpha", alpha), ("beta", beta)):
            if not 0.0 < value < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5, got {value}")
        if max_pairs is not None and max_pairs < 1:
            raise ValueError(f"max_pairs must be at least 1, got {max_pairs}")
        self.elo0 = elo0
        self.elo1 = elo1
        self.alpha = alpha
        self.beta = beta
        self.max_pairs = max_pairs
        self.s0 = elo_to_score(elo0)
        self.s1 = elo_to_score(elo1)
        # Wald's bounds: crossing the upper accepts H1 with false-positive rate <= alpha
        # (approximately), crossing the lower accepts H0 with miss rate <= beta.
        self.lower_bound = math.log(beta / (1.0 - alpha))
        self.upper_bound = math.log((1.0 - beta) / alpha)
        self.pairs = 0
        self.wins = 0
        self.draws = 0
        self.losses = 0
        self._total = 0.0
        self._total_sq = 0.0
        self._decided: Decision = "continue"

    def update(self, score_a: float) -> Decision:
        """Add one duplicate pair's score for A (1, 0.5 or 0; any value in [0, 1] works)."""
        if not 0.0 <= score_a <= 1.0:
            raise ValueError(f"a pair score must lie in [0, 1], got {score_a}")
        self.pairs += 1
        self._total += score_a
        self._total_sq += score_a * score_a
        if score_a == 1.0:
            self.wins += 1
        elif score_a == 0.0:
            self.losses += 1
        else:
            self.draws += 1
        # Wald's test stops at the first crossing; pairs still in flight when it stops
        # are counted in the statistics but cannot reverse the verdict.
        if self._decided == "continue":
            llr = self.llr
            if llr >= self.upper_bound:
                self._decided = "A stronger"
            elif llr <= self.lower_bound:
                self._decided = "not stronger"
        return self._decided

    def update_ranks(self, rank_a: int, rank_b: int) -> Decision:
        """Add one duplicate pair from A's rank in its game and B's rank in the twin game."""
        return self.update(pair_score(rank_a, rank_b))

    @property
    def variance(self) -> float:
        """Per-pair score variance, with the pseudo-observations mixed in."""
        count = self.pairs + len(_PRIOR_SCORES)
        total = self._total + sum(_PRIOR_SCORES)
        total_sq = self._total_sq + sum(s * s for s in _PRIOR_SCORES)
        mean = total / count
        return max(total_sq / count - mean * mean, 1e-12)

    @property
    def llr(self) -> float:
        """Log-likelihood ratio of H1 to H0 under the normal model of the pair scores."""
        if self.pairs == 0:
            return 0.0
        # Sum over pairs of log N(x; s1, var) - log N(x; s0, var)
        #   = (s1 - s0) * (2 * sum(x) - N * (s0 + s1)) / (2 * var)
        spread = self.s1 - self.s0
        return spread * (2.0 * self._total - self.pairs * (self.s0 + self.s1)) / (2.0 * self.variance)

    @property
    def exhausted(self) -> bool:
        """True once the pair budget is used up."""
        return self.max_pairs is not None and self.pairs >= self.max_pairs

    @property
    def done(self) -> bool:
        """True when the test has decided or run out of budget: stop scheduling pairs."""
        return self._decided != "continue" or self.exhausted

    def decision(self) -> Decision:
        """The verdict so far: "A stronger", "not stronger" or "continue" (also once out of budget)."""
        return self._decided

    def status(self) -> SprtStatus:
        """Current counts, Elo estimate with a 95% interval, and the test state."""
        mean = self._total / self.pairs if self.pairs else 0.5
        half = 1.959963984540054 * math.sqrt(self.variance / max(self.pairs, 1))
        return SprtStatus(
            pairs=self.pairs,
            wins=self.wins,
            draws=self.draws,
            losses=self.losses,
            score=mean,
            elo=_elo_bound(mean) if self.pairs else 0.0,
            elo_lower=_elo_bound(mean - half),
            elo_upper=_elo_bound(mean + half),
            llr=self.llr,
            lower_bound=self.lower_bound,
            upper_bound=self.upper_bound,
            decision=self._decided,
            exhausted=self.exhausted,
        )


def elo_estimate_words(status: SprtStatus, a: str = "A") -> str:
    """The Elo difference and its 95% interval in words.

    "+35 (-12 .. +84)", or "A lost every pair (at most -311, no lower bound)": the interval is 95%.

    An infinite end (see ``SprtStatus``) is said as the side the pairs leave
    open, never as a number that is only where a computation stopped.
    """
    lower, upper = status.elo_lower, status.elo_upper
    if math.isfinite(status.elo):
        estimate = f"{status.elo:+.0f}"
    else:
        estimate = f"{a} won every pair" if status.elo > 0 else f"{a} lost every pair"
    if math.isfinite(lower) and math.isfinite(upper):
        interval = f"{lower:+.0f} .. {upper:+.0f}"
    elif math.isfinite(upper):
        interval = f"at most {upper:+.0f}, no lower bound"
    elif math.isfinite(lower):
        interval = f"at least {lower:+.0f}, no upper bound"
    else:
        interval = "no bound yet"
    return f"{estimate} ({interval})"
