"""The greedy Vendetta policy: one placement chosen by a one-turn look at each district.

``choose(view, constraints)`` is a pure function (no I/O, no randomness): the bot
process calls it for every request and ``bench/greedy_vs_random.py`` calls it in
process to measure it.

How it thinks. Points come from districts a seat holds alone at the end of the
round (rule E2), so every district is valued by the chance that it ends the round
held by this seat alone, minus the chance an opponent holds it alone, plus the
mafiosi that die or are paid on the way. For each district the policy works out
what happens to it during the rest of the round if nobody placed anything more:

* a district already revealed this round sees no more vendetta and no raid;
* an unrevealed one is one of the ``pile_left + 2`` face-down cards: it is
  revealed on each remaining turn with probability ``1 / (pile_left + 2)`` (by a
  known active seat, which settles ties, rule V4), or raided at the end of the
  round with probability ``2 / (pile_left + 2)`` (rule E1);
* a vendetta removes the seat with the fewest mafiosi (V4), the survivors are
  paid (V5), and a lone survivor holds the district.

A district held alone is worth less while an opponent could still spoil it by
matching it (P4 makes that cost at least as many mafiosi as it holds): the
policy likes stacks larger than any opponent's hand. Each mafioso taken from the
hand has a price, higher once the hand falls below a reserve, so the policy only
meets a high P4 minimum when the district is worth it.

The candidate counts for a district are the thresholds where its value changes
(the minimum, a tie or a lead over each opponent there, a lead no opponent can
answer, a stack no opponent can match), and the best one or two districts under
``max_districts`` and the hand are chosen, or nothing when nothing pays.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from referee.games.vendetta import Place, PlaceConstraints, Placement, VendettaView

__all__ = ["DEFAULT_WEIGHTS", "Weights", "choose"]

TURNS_PER_ROUND = 11


@dataclass(frozen=True)
class Weights:
    """The knobs of the evaluation, in "one district held alone" units."""

    control: float = 10.0
    """A district this seat holds alone at the end of the round."""
    opponent_control: float = 4.0
    """A district one opponent holds alone (counted against us)."""
    spoil_risk: float = 0.35
    """Share of a held district's value lost while an opponent could still match it."""
    lead: float = 1.5
    """Leading (strictly most) in a shared district at the end of the round."""
    kill: float = 0.25
    """Per opponent mafioso sent to the box."""
    loss: float = 0.6
    """Per own mafioso sent to the box (vendetta or raid)."""
    pay: float = 0.8
    """Per mafioso paid back into the hand (V5)."""
    hand_cost: float = 0.7
    """Per mafioso taken from the hand."""
    reserve: int = 4
    """Mafiosi to keep in hand for later turns..."""
    reserve_cost: float = 0.8
    """...and the extra price of each one spent below that reserve."""


DEFAULT_WEIGHTS = Weights()


@dataclass(frozen=True)
class _Context:
    """What every district's evaluation shares."""

    me: int
    n: int
    majority: bool
    revealed: frozenset[int]  # 0-based districts revealed this round
    # (active seat, probability) per seat that reveals a card later this round:
    # each remaining turn's reveal, summed per seat, in turn order (ours first)
    reveal_turns: tuple[tuple[int, float], ...]
    raid_chance: float
    opponent_hands: tuple[int, ...]  # indexed by seat; our own entry is 0
    weights: Weights


def choose(
    view: VendettaView,
    constraints: PlaceConstraints,
    weights: Weights = DEFAULT_WEIGHTS,
) -> Place:
    """The placement to make now: the best of nothing, one district, or two."""
    hand = constraints.hand
    if hand <= 0 or constraints.max_districts <= 0:
        return Place([])
    ctx = _context(view, weights)
    # Per district, the counts worth placing there: (district, count, gain).
    options: list[list[tuple[int, int, float]]] = []
    for d, row in enumerate(view.board):
        low = max(1, constraints.minimum[d])
        if low > hand:
            continue
        base = _district_value(row, d, ctx)
        gains: list[tuple[int, int, float]] = []
        best = float("-inf")
        for count in _candidate_counts(row, low, hand, ctx):
            after = list(row)
            after[ctx.me] += count
            gain = _district_value(after, d, ctx) - base
            # Keep only counts that buy something a smaller count does not.
            if gain > best + 1e-9:
                gains.append((d, count, gain))
                best = gain
        if gains:
            options.append(gains)

    def cost(total: int) -> float:
        # How many of the placed mafiosi come out of the reserve.
        below = max(0, weights.reserve - hand + total) - max(0, weights.reserve - hand)
        return weights.hand_cost * total + weights.reserve_cost * below

    best_score = 0.0
    best_action: list[tuple[int, int]] = []
    for gains in options:
        for d, count, gain in gains:
            score = gain - cost(count)
            if score > best_score + 1e-9:
                best_score, best_action = score, [(d, count)]
    if constraints.max_districts >= 2:
        # Pairs only among the districts whose best single placement is worth a look.
        ranked = sorted(options, key=lambda g: max(x[2] - cost(x[1]) for x in g), reverse=True)[:7]
        for first, second in combinations(ranked, 2):
            for d1, c1, g1 in first:
                for d2, c2, g2 in second:
                    if c1 + c2 > hand:
                        continue
                    score = g1 + g2 - cost(c1 + c2)
                    if score > best_score + 1e-9:
                        best_score, best_action = score, [(d1, c1), (d2, c2)]
    return Place([Placement(d + 1, count) for d, count in sorted(best_action)])


def _context(view: VendettaView, weights: Weights) -> _Context:
    n = view.n_players
    me = view.seat
    pile_left = view.pile_left
    face_down = pile_left + 2  # the pile and the two raid cards
    # Remaining reveals: ours now (turn t), then turns t+1..10 by their active seats.
    # A vendetta's outcome depends only on who reveals (V4), so the turns of one
    # seat are weighed together: one evaluation per seat instead of one per turn.
    turns_of: dict[int, int] = {}
    for t in range(view.turn, view.turn + pile_left):
        seat = (view.start_seat + t) % n
        turns_of[seat] = turns_of.get(seat, 0) + 1
    reveal_turns = tuple((seat, count / face_down) for seat, count in turns_of.items())
    hands = tuple(0 if s == me or view.forfeited[s] else view.hands[s] for s in range(n))
    return _Context(
        me=me,
        n=n,
        majority=view.control == "majority",
        revealed=frozenset(d - 1 for d in view.revealed),
        reveal_turns=reveal_turns,
        raid_chance=2.0 / face_down,
        opponent_hands=hands,
        weights=weights,
    )


def _candidate_counts(row: list[int], low: int, hand: int, ctx: _Context) -> list[int]:
    """The counts worth comparing in one district, each within [low, hand]."""
    mine = row[ctx.me]
    most_hand = max(ctx.opponent_hands)
    wanted = {low, low + 1, most_hand + 1 - mine}
    for s, theirs in enumerate(row):
        if s == ctx.me or theirs == 0:
            continue
        gap = theirs - mine
        wanted.update((gap, gap + 1, gap + 2, theirs + ctx.opponent_hands[s] + 1 - mine))
    return sorted(c for c in wanted if low <= c <= hand)


def _district_value(row: list[int], d: int, ctx: _Context) -> float:
    """What district d is worth to us at the end of the round, if nobody placed more."""
    if d in ctx.revealed:
        return _final_value(row, ctx)
    w = ctx.weights
    me = ctx.me
    value = 0.0
    # Raided: everyone there loses everything to the box.
    raid_loss = row[me] * w.loss - sum(c for s, c in enumerate(row) if s != me) * w.kill
    value -= ctx.raid_chance * raid_loss
    for active, chance in ctx.reveal_turns:
        after, loser, lost = _vendetta(row, active, ctx.n)
        outcome = _final_value(after, ctx)
        if loser == me:
            outcome -= lost * w.loss
        elif loser >= 0:
            outcome += lost * w.kill
        if after[me]:
            outcome += w.pay
        value += chance * outcome
    return value


def _vendetta(row: list[int], active: int, n: int) -> tuple[list[int], int, int]:
    """Rule V4 for a reveal by ``active``: the counts after it, the loser (-1: none) and its loss."""
    if sum(1 for c in row if c) < 2:
        return row, -1, 0
    loser = -1
    fewest = 1 << 30
    for i in range(1, n + 1):
        s = (active + i) % n
        if 0 < row[s] < fewest:
            fewest, loser = row[s], s
    after = list(row)
    after[loser] = 0
    return after, loser, fewest


def _final_value(row: list[int], ctx: _Context) -> float:
    """The value of a district's counts once no more vendetta will touch it this round."""
    w = ctx.weights
    me = ctx.me
    holder = _holder(row, ctx)
    if holder == me:
        # An opponent who can match the stack may still spoil it (P4).
        threatened = sum(1 for h in ctx.opponent_hands if h >= row[me] > 0)
        return w.control * (1.0 - w.spoil_risk * min(1, threatened))
    if holder >= 0:
        return -w.opponent_control
    if row[me] and row[me] > max(c for s, c in enumerate(row) if s != me):
        return w.lead
    return 0.0


def _holder(row: list[int], ctx: _Context) -> int:
    """The seat that controls the district under the game's control rule, or -1."""
    if ctx.majority:
        most = max(row)
        return row.index(most) if most and row.count(most) == 1 else -1
    present = [s for s, c in enumerate(row) if c]
    return present[0] if len(present) == 1 else -1
