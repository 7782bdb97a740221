"""A Sicilianos heuristic: ``choose(view, decision_kind, options)`` picks one of the options.

``choose`` is a pure function of its arguments (no I/O, no state, no outside
randomness: the little sampling it does is seeded from the view itself), so the
bot process calls it for every request and ``bench/sicilianos_bots.py`` calls it
in process to measure it. It only ever returns one of ``options``, unchanged.

How it thinks.

* **Money.** A note still held at the end costs its value (E3: clean minus dirty),
  a lost stake costs nothing more, a won stake is worth three times its value
  (it leaves the hand and comes back doubled as clean money). So staking is
  never bad in itself: what matters is putting the big notes on the wars that
  are won, and not being caught holding notes when the game ends (E2, after
  the war that leaves some seat without dirty money). The policy estimates how
  many wars are left from the seat with fewest notes; only the notes it can
  still hope to spend are "usable"; it stakes the largest usable note when it
  expects to win and the smallest usable one when it does not. In the last war
  it stakes its largest note on anything.
* **Wars.** A war is won by the strongest family that is not tied. The policy
  knows its own values and the colours of every hand; the values it cannot see
  of a colour are the ones not in its hand, not face up and not in a pile it
  knows. It samples those values for each opposing family (face-down cards
  count, each card still in the owner's hand of that colour is played with
  probability ``follow``), applies the tie-cancelling rule, and gets the chance
  that a given total of its own wins. Its own turn is usually better spent
  rolling for cards, since the others start wars it can join: it starts one
  only when its best colour is nearly sure to win (or would make it the
  Godfather), or when a full hand forces it, leading with its best card (never
  the Renegade, which would be forced at the first reveal). It joins with good
  odds, and in the last war (a seat staked its last note) with its weakest
  card and largest note, since a lost stake costs nothing more. In the rounds it plays its best card while more
  strength still buys a real chance, and passes once it is safe or hopeless.
* **Renegades and Bombs.** Each choice is scored by the same sampler: the
  Renegade becomes one when the ally's family is the better bet (an allied win
  is worth a little less, the spoils being shared); a Bomb explodes the card
  whose removal raises the chance of winning most, else counts 5.
* **Businesses.** Three of one colour win the game at once (E1): a colour in
  which the policy owns two businesses, with the third still in the pile, makes
  every war in that colour worth much more. A kind is chosen for the set bonus
  (three kinds in three colours) and for the majorities (each kind's sole
  majority is worth 100,000), counting the businesses of others as kinds
  spread evenly. Between business and laundering (allies) it compares those
  values with the money.
* **Cards.** A hand is worth more when its values are concentrated in few
  colours (wars are won by one family). Draws, looks through a pile (it takes
  the best card it sees), steals (from the richest hand in the colour it
  wants, preferring the leader) and setup draws follow that measure.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from referee.games.sicilianos import COLOURS, KINDS, SicilianosAction, SicilianosView
from referee.games.sicilianos.components import Colour
from referee.games.sicilianos.messages import (
    AsFamily,
    AsRenegade,
    Draw,
    Explode,
    Give,
    Inspect,
    Join,
    Participant,
    Pass,
    Pick,
    Play,
    Roll,
    Spoils,
    StartWar,
    StayOut,
    Steal,
    TakeBusiness,
)

__all__ = ["DEFAULT_WEIGHTS", "Weights", "choose"]

BODYGUARD = 1
BOMB = 5
RENEGADE = 8
PARTNER = {"blue": "white", "white": "blue", "black": "yellow", "yellow": "black", "red": "green", "green": "red"}


@dataclass(frozen=True)
class Weights:
    """The knobs of the policy."""

    samples: int = 96
    """Sampled deals of the hidden values per war estimate."""
    follow: float = 0.7
    """Chance that an opponent plays each further card of its family it holds."""
    join_chance: float = 0.85
    """Chance that a seat still to decide joins the war."""
    start_war: float = 0.85
    """Least chance of winning for starting a war instead of rolling (the others start wars too)."""
    join: float = 0.3
    """Least chance of winning for joining a war to win it."""
    confident: float = 0.55
    """Above this chance of winning, the largest usable note is staked."""
    safe: float = 0.92
    """Chance of winning at which the policy stops playing cards."""
    hopeless: float = 0.06
    """Below this chance even with every card, the policy passes."""
    dump_join: bool = False
    """Join with a weak card whenever a usable note would otherwise stay in hand (not only in the last war).

    Off: measured worse against random players (the cards it costs matter more)."""
    business: float = 60_000.0
    """The value of a business beyond the bonuses it makes (majorities, sets)."""
    godfather: float = 1_000_000.0
    """The value of winning the game at once (E1)."""
    concentration: float = 1.4
    """Exponent of a colour's total in the hand value: above 1 favours few strong colours."""


DEFAULT_WEIGHTS = Weights()


# ---------------------------------------------------------------------------
# What the view says


def _my_cards(view: SicilianosView) -> dict[str, list[int]]:
    cards: dict[str, list[int]] = {c: [] for c in COLOURS}
    for card in view.hand:
        cards[card.colour].append(card.value)
    return cards


def _unseen(view: SicilianosView) -> dict[str, list[int]]:
    """Per colour, the values this seat cannot place: in other hands, face down, or in unknown piles."""
    seen: dict[str, set[int]] = {c: set() for c in COLOURS}
    for card in view.hand:
        seen[card.colour].add(card.value)
    if view.war is not None:
        for p in view.war.participants:
            for wc in p.cards:
                if wc.value is not None:
                    seen[wc.colour].add(wc.value)
    for pile in view.known_piles:
        seen[pile.colour].update(pile.order)
    return {c: [v for v in range(1, 12) if v not in seen[c]] for c in COLOURS}


def _mean(values: Sequence[int], default: float = 6.0) -> float:
    return sum(values) / len(values) if values else default


def _hand_counts(view: SicilianosView, seat: int) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(COLOURS, 0)
    for colour in view.players[seat].hand:
        counts[colour] += 1
    return counts


def _scores(view: SicilianosView) -> list[float]:
    """Each seat's money score as things stand (clean minus dirty), businesses at a flat value."""
    return [p.clean - p.dirty + 40_000 * len(p.businesses) for p in view.players]


def _remaining_wars(view: SicilianosView) -> int:
    """How many more wars this seat can still hope to stake in, this one included.

    The game ends after the war that leaves a seat without dirty money (E2); a
    seat stakes at most once per war, so the seat with fewest notes bounds it.
    """
    fewest = min(
        (len(p.notes) for p in view.players if p.seat != view.seat and not p.forfeited),
        default=10,
    )
    war = view.war
    if war is not None and any(len(view.players[p.seat].notes) == 0 for p in war.participants):
        return 1  # a seat staked its last note: this war ends the game
    return max(1, fewest + 1)


def _usable_notes(view: SicilianosView, available: Sequence[int]) -> list[int]:
    """The notes worth staking, largest first: the largest ones this seat can still spend."""
    mine = sorted(view.players[view.seat].notes, reverse=True)
    usable = mine[: _remaining_wars(view)]
    chosen = sorted({n for n in usable if n in available}, reverse=True)
    return chosen or sorted(set(available), reverse=True)


def _stake(view: SicilianosView, available: Sequence[int], chance: float, w: Weights) -> int:
    usable = _usable_notes(view, available)
    if chance >= w.confident or _remaining_wars(view) <= 1:
        return usable[0]
    return usable[-1]


def _godfather_colours(view: SicilianosView, seat: int) -> set[str]:
    """Colours in which ``seat`` owns two businesses and the third is still in its pile."""
    owned: dict[str, int] = {}
    for b in view.players[seat].businesses:
        owned[b.colour] = owned.get(b.colour, 0) + 1
    return {c for c, k in owned.items() if k == 2 and view.business_piles.get(c, 0) > 0}


def _win_value(view: SicilianosView, colour: str, stake: int, w: Weights) -> float:
    """What winning a war in ``colour`` with ``stake`` is worth, beyond losing it."""
    if view.business_piles.get(colour, 0) == 0:
        business = 0.0
    elif colour in _godfather_colours(view, view.seat):
        business = w.godfather
    else:
        business = w.business
    return 2 * stake + business


# ---------------------------------------------------------------------------
# The war sampler


@dataclass
class _Family:
    """An opposing family in a (possibly prospective) war."""

    seat: int
    colour: str
    base: int  # public strength
    hidden: int  # its face-down cards this seat cannot see
    future: int  # cards of its colour still in hand that it may play
    present: float  # chance it is in the war at all
    ally: bool  # allied to this seat


def _opponents(view: SicilianosView, my_colour: str, prospective: bool, w: Weights) -> list[_Family]:
    """The opposing families of the war on the table, plus the seats that may still join."""
    families: list[_Family] = []
    war = view.war
    taken = {my_colour}
    decided: set[int] = {view.seat}
    my_ally: int | None = None
    if war is not None:
        for p in war.participants:
            taken.add(p.colour)
            decided.add(p.seat)
            if p.seat == view.seat:
                my_ally = p.ally
        for p in war.participants:
            if p.seat == view.seat:
                continue
            hidden = sum(1 for wc in p.cards if wc.face_down)
            future = 0 if (p.passed or p.stopped) else _hand_counts(view, p.seat)[p.colour]
            families.append(_Family(p.seat, p.colour, p.strength, hidden, future, 1.0, p.seat == my_ally))
        if war.stage != "join":
            return families
        # Seats after this one in the join order may still join; seats before it have decided.
        n = view.n_players
        order = [(war.initiator + k) % n for k in range(1, n)]
        if view.seat in order:
            decided.update(order[: order.index(view.seat)])
    if not prospective and war is None:
        return families
    for player in view.players:
        if player.seat in decided or player.forfeited or not player.notes:
            continue
        counts = _hand_counts(view, player.seat)
        free = {c: k for c, k in counts.items() if k and c not in taken}
        if not free:
            continue
        # The colour it holds most of (the strongest threat), kept for the others.
        colour = max(free, key=lambda c: (free[c], -COLOURS.index(c)))
        taken.add(colour)
        families.append(_Family(player.seat, colour, 0, 1, free[colour] - 1, w.join_chance, False))
    return families


def _sample_opponents(
    view: SicilianosView, families: list[_Family], rng: random.Random, w: Weights
) -> list[list[tuple[int, bool]]]:
    """``samples`` draws of the final strengths of the opposing families: (strength, ally) each."""
    unseen = _unseen(view)
    draws: list[list[tuple[int, bool]]] = []
    for _ in range(w.samples):
        row: list[tuple[int, bool]] = []
        for f in families:
            if f.present < 1.0 and rng.random() >= f.present:
                continue
            pool = unseen[f.colour]
            k = min(len(pool), f.hidden + f.future)
            values = rng.sample(pool, k) if k else []
            total = f.base
            for i, v in enumerate(values):
                if i < f.hidden or rng.random() < w.follow:
                    total += v
            row.append((total, f.ally))
        draws.append(row)
    return draws


def _i_win(mine: int, others: list[tuple[int, bool]]) -> bool:
    """Whether a family of strength ``mine`` (or its ally) wins against ``others`` (G7: ties cancel)."""
    counts: dict[int, int] = {mine: 1}
    for s, _ in others:
        counts[s] = counts.get(s, 0) + 1
    best = 0
    best_ally = False
    if counts[mine] == 1 and mine > 0:
        best = mine
        best_ally = True
    for s, ally in others:
        if s > best and counts[s] == 1:
            best, best_ally = s, ally
    return best > 0 and best_ally


def _chances(draws: list[list[tuple[int, bool]]], totals: Sequence[int]) -> list[float]:
    """The chance of winning with each of ``totals``."""
    n = max(1, len(draws))
    return [sum(1 for row in draws if _i_win(t, row)) / n for t in totals]


def _rng(view: SicilianosView, kind: str) -> random.Random:
    hand = ",".join(f"{c.colour[:2]}{c.value}" for c in view.hand)
    return random.Random(f"sicilianos_py:{view.seat}:{view.turns}:{kind}:{hand}")


def _lead(values: Sequence[int]) -> int:
    """The card to open a war with: the best card that is not a Renegade (forced at the first reveal)."""
    candidates = [v for v in values if v != RENEGADE] or list(values)
    return max(candidates)


def _plan_total(values: Sequence[int]) -> int:
    """What a colour's cards add up to when this seat plays them all, led by ``_lead``."""
    if not values:
        return 0
    lead = _lead(values)
    total = sum(values)
    if lead == RENEGADE:
        total -= RENEGADE  # a lone Renegade leading counts for the other colour only
    return total


# ---------------------------------------------------------------------------
# The value of a hand


def _hand_value(cards: dict[str, list[int]], w: Weights) -> float:
    return sum(math.pow(sum(vs), w.concentration) for vs in cards.values())


def _gain(cards: dict[str, list[int]], colour: str, value: float, w: Weights) -> float:
    before = float(sum(cards[colour]))
    return math.pow(max(0.0, before + value), w.concentration) - math.pow(before, w.concentration)


# ---------------------------------------------------------------------------
# Businesses


def _business_value(view: SicilianosView, colour: str, kind: str, w: Weights) -> float:
    """What owning one more business of ``colour`` and ``kind`` adds to this seat's score."""
    me = view.players[view.seat]
    mine = [(b.colour, b.kind) for b in me.businesses]
    after = [*mine, (colour, kind)]
    value = w.business
    if colour in _godfather_colours(view, view.seat):
        return w.godfather
    if _owns_set(after) and not _owns_set(mine):
        value += 50_000
    # Majorities: others' kinds are hidden; count their businesses as spread evenly.
    rivals = [len(p.businesses) / 3 for p in view.players if p.seat != view.seat and not p.forfeited]
    top = max(rivals, default=0.0)
    for k in KINDS:
        before = sum(1 for _, kk in mine if kk == k)
        now = before + (1 if k == kind else 0)
        value += 100_000 * (_majority(now, top) - _majority(before, top))
    return value


def _majority(count: int, rival: float) -> float:
    if count == 0:
        return 0.0
    lead = count - rival
    return 1.0 / (1.0 + math.pow(2.0, -2.0 * lead))


def _owns_set(businesses: Sequence[tuple[str, str | None]]) -> bool:
    by_kind: dict[str, set[str]] = {k: set() for k in KINDS}
    for colour, kind in businesses:
        if kind is not None:
            by_kind[kind].add(colour)
    return any(
        a != r and a != la and r != la
        for a in by_kind["antique"]
        for r in by_kind["restaurant"]
        for la in by_kind["laundry"]
    )


# ---------------------------------------------------------------------------
# The decisions


def choose(
    view: SicilianosView,
    decision_kind: str,
    options: Sequence[SicilianosAction],
    weights: Weights = DEFAULT_WEIGHTS,
) -> SicilianosAction:
    """One of ``options`` for the pending ``decision_kind`` of ``view``'s seat."""
    if not options:
        raise ValueError(f"the {decision_kind} decision lists no options")
    handler = _HANDLERS.get(decision_kind)
    choice = handler(view, options, weights) if handler is not None else None
    if choice is None or choice not in options:
        return options[0]
    return choice


def _setup(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    draws = [o for o in options if isinstance(o, Draw)]
    # Every colour's pile is as good as any: take from the fullest, for the best odds later.
    return max(draws, key=lambda o: (view.piles.get(o.colour, 0), -COLOURS.index(o.colour)), default=None)


def _best_colour(
    view: SicilianosView, colours: set[Colour], cards: dict[str, list[int]], rng: random.Random, w: Weights
) -> tuple[Colour, float]:
    """The colour worth fighting for among ``colours``, and the chance of winning with it.

    Each colour's chance comes from sampling the values this seat cannot see;
    its worth is that chance times what winning would bring.
    """
    best: tuple[float, Colour, float] | None = None
    for colour in [c for c in COLOURS if c in colours]:
        families = _opponents(view, colour, prospective=True, w=w)
        draws = _sample_opponents(view, families, rng, w)
        (chance,) = _chances(draws, [_plan_total(cards[colour])])
        value = chance * _win_value(view, colour, 50_000, w)
        if best is None or (value, chance) > (best[0], best[2]):
            best = (value, colour, chance)
    assert best is not None
    return best[1], best[2]


def _turn(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    wars = [o for o in options if isinstance(o, StartWar)]
    can_roll = any(isinstance(o, Roll) for o in options)
    if not wars:
        return None
    cards = _my_cards(view)
    colour, chance = _best_colour(view, {o.colour for o in wars}, cards, _rng(view, "turn"), w)
    godfather = colour in _godfather_colours(view, view.seat)
    if can_roll and chance < w.start_war and not (godfather and chance >= 0.3):
        return Roll()
    lead = _lead(cards[colour])
    notes = [o.note for o in wars if o.colour == colour and o.value == lead]
    note = _stake(view, notes, chance, w)
    return StartWar(colour, lead, note)


def _join(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    joins = [o for o in options if isinstance(o, Join)]
    if not joins:
        return None
    cards = _my_cards(view)
    colour, chance = _best_colour(view, {o.colour for o in joins}, cards, _rng(view, "join"), w)
    godfather = colour in _godfather_colours(view, view.seat)
    last = _remaining_wars(view) <= 1
    if chance >= w.join or (godfather and chance >= 0.25):
        lead = _lead(cards[colour])
        notes = [o.note for o in joins if o.colour == colour and o.value == lead]
        return Join(colour, lead, _stake(view, notes, chance, w))
    mine = len(view.players[view.seat].notes)
    surplus = mine > _remaining_wars(view) - 1
    if last or (w.dump_join and surplus):
        # Join to spend a note that would otherwise stay dirty: with the card this hand misses least.
        colour, value = min(
            ((o.colour, o.value) for o in joins),
            key=lambda cv: (_gain(cards, cv[0], -cv[1], w) * -1, cv[1]),
        )
        notes = [o.note for o in joins if o.colour == colour and o.value == value]
        usable = _usable_notes(view, notes)
        return Join(colour, value, usable[0] if last else usable[-1])
    return StayOut()


def _me(view: SicilianosView) -> Participant | None:
    if view.war is None:
        return None
    for p in view.war.participants:
        if p.seat == view.seat:
            return p
    return None


def _my_total(me: Participant) -> int:
    """My family's strength counting my face-down cards (I know their values)."""
    hidden = sum(wc.value or 0 for wc in me.cards if wc.face_down)
    return me.strength + hidden


def _play(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    plays = sorted((o for o in options if isinstance(o, Play)), key=lambda o: -o.value)
    me = _me(view)
    if not plays or me is None:
        return None
    families = _opponents(view, me.colour, prospective=False, w=w)
    draws = _sample_opponents(view, families, _rng(view, "play"), w)
    now = _my_total(me)
    totals = [now]
    for o in plays:
        totals.append(totals[-1] + o.value)
    chances = _chances(draws, totals)
    if chances[0] >= w.safe or chances[-1] < w.hopeless:
        return Pass()
    # Play while the best reachable chance is clearly above the current one.
    if max(chances[1:]) <= chances[0] + 0.02:
        return Pass()
    return plays[0]


def _renegade(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    me = _me(view)
    war = view.war
    if me is None or war is None:
        return None
    partner = PARTNER[me.colour]
    ally = next((p for p in war.participants if p.colour == partner), None)
    if ally is None:
        return AsFamily()
    families = _opponents(view, me.colour, prospective=False, w=w)
    rng = _rng(view, "renegade")
    draws = _sample_opponents(view, families, rng, w)
    now = _my_total(me)  # the undecided Renegade counts +8 in the public strength
    left = sum(1 for c in view.hand if c.colour == me.colour)
    as_family = _chances(draws, [now + int(left * 6 * w.follow)])[0]
    # As a Renegade: my family loses the 8 and stops; the ally's family gains 4 and we win together.
    allied = 0
    mine = now - RENEGADE
    for row in draws:
        adjusted = [(s + 4, True) if f.seat == ally.seat else (s, a) for (s, a), f in zip(row, families)]
        if _i_win(mine, adjusted):
            allied += 1
    as_renegade = allied / max(1, len(draws)) * 0.7
    return AsRenegade() if as_renegade > as_family else AsFamily()


def _bomb(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    me = _me(view)
    war = view.war
    if me is None or war is None:
        return None
    families = _opponents(view, me.colour, prospective=False, w=w)
    draws = _sample_opponents(view, families, _rng(view, "bomb"), w)
    left = sum(1 for c in view.hand if c.colour == me.colour)
    future = 0 if me.passed or me.stopped else int(left * 6 * w.follow)
    now = _my_total(me)
    best: SicilianosAction = AsFamily()
    best_chance = _chances(draws, [now + future])[0]
    by_colour = {p.colour: p for p in war.participants}
    for o in options:
        if not isinstance(o, Explode):
            continue
        target = by_colour.get(o.colour)
        if target is None:
            continue
        guarded = any(wc.value == BODYGUARD and not wc.face_down for wc in target.cards)
        aimed = next((wc for wc in target.cards if wc.value == o.value), None)
        loss = BODYGUARD if guarded else o.value
        hit_seat = target.seat
        if aimed is not None and aimed.use == "renegade" and not guarded:
            loss, hit_seat = 4, target.ally if target.ally is not None else target.seat
        mine = now - BOMB + future
        wins = 0
        for row in draws:
            adjusted = [(s - loss, a) if f.seat == hit_seat else (s, a) for (s, a), f in zip(row, families)]
            if _i_win(mine, adjusted):
                wins += 1
        chance = wins / max(1, len(draws))
        if chance > best_chance + 0.01:
            best, best_chance = o, chance
    return best


def _spoils(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    war = view.war
    me = _me(view)
    if war is None or me is None:
        return None
    ally = next((p for p in war.participants if p.seat in war.winners and p.seat != view.seat), None)
    ally_stake = ally.stake if ally is not None else 0
    launder = 2 * me.stake + ally_stake
    business = me.stake + max(_business_value(view, me.colour, k, w) for k in KINDS)
    if view.business_piles.get(me.colour, 0) == 0:
        business = me.stake
    return Spoils("business") if business > launder else Spoils("launder")


def _business(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    me = _me(view)
    kinds = [o for o in options if isinstance(o, TakeBusiness)]
    if not kinds:
        return None
    colour = me.colour if me is not None else COLOURS[0]
    return max(kinds, key=lambda o: (_business_value(view, colour, o.kind, w), -KINDS.index(o.kind)))


def _top_known(view: SicilianosView, colour: str) -> int | None:
    for pile in view.known_piles:
        if pile.colour == colour and pile.order:
            return pile.order[0]
    return None


def _pile_mean(view: SicilianosView, colour: str) -> float:
    known = next((p.order for p in view.known_piles if p.colour == colour), None)
    if known:
        return _mean(known)
    return _mean(_unseen(view)[colour])


def _expected_best(view: SicilianosView, colour: str) -> float:
    """The value of the best card in ``colour``'s pile, roughly: its pile is part of the unseen values."""
    known = next((p.order for p in view.known_piles if p.colour == colour), None)
    if known:
        return float(max(known))
    pool = sorted(_unseen(view)[colour], reverse=True)
    size = view.piles.get(colour, 0)
    if not pool or size == 0:
        return 0.0
    # The pile holds ``size`` of the ``len(pool)`` unseen values: its best is near the top.
    rank = max(0, min(len(pool) - 1, int(len(pool) / (size + 1))))
    return float(pool[rank])


def _take1(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    cards = _my_cards(view)
    best: tuple[float, SicilianosAction] | None = None
    for o in options:
        if isinstance(o, Draw):
            top = _top_known(view, o.colour)
            value = float(top) if top is not None else _pile_mean(view, o.colour)
        elif isinstance(o, Inspect):
            value = _expected_best(view, o.colour)
        else:
            continue
        score = _gain(cards, o.colour, value, w)
        if best is None or score > best[0]:
            best = (score, o)
    return None if best is None else best[1]


def _card_worth(value: int) -> float:
    """A card's worth in a hand: Bodyguards and Bombs do more than their face value."""
    if value == BODYGUARD:
        return 2.5
    if value == BOMB:
        return 6.5
    return float(value)


def _pick(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    picks = [o for o in options if isinstance(o, Pick)]
    return max(picks, key=lambda o: _card_worth(o.value), default=None)


def _take2(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    cards = _my_cards(view)
    draws = [o for o in options if isinstance(o, Draw)]

    def worth(o: Draw) -> float:
        top = _top_known(view, o.colour)
        return _gain(cards, o.colour, float(top) if top is not None else _pile_mean(view, o.colour), w)

    return max(draws, key=worth, default=None)


def _steal(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    cards = _my_cards(view)
    unseen = _unseen(view)
    scores = _scores(view)
    leader = max(s for i, s in enumerate(scores) if i != view.seat)
    steals = [o for o in options if isinstance(o, Steal)]

    def worth(o: Steal) -> float:
        gain = _gain(cards, o.colour, _mean(unseen[o.colour]), w)
        held = _hand_counts(view, o.target)
        # Hurting the leader is worth a little; a big hand loses less by one card.
        hurt = 2.0 if scores[o.target] >= leader else 0.0
        return gain + hurt + 0.1 * view.players[o.target].hand_size - 0.05 * held[o.colour]

    return max(steals, key=worth, default=None)


def _give(view: SicilianosView, options: Sequence[SicilianosAction], w: Weights) -> SicilianosAction | None:
    gives = [o for o in options if isinstance(o, Give)]
    return min(gives, key=lambda o: _card_worth(o.value), default=None)


_HANDLERS = {
    "setup": _setup,
    "turn": _turn,
    "take2_colour": _take2,
    "take1": _take1,
    "pick": _pick,
    "steal": _steal,
    "give": _give,
    "join": _join,
    "play": _play,
    "renegade": _renegade,
    "bomb": _bomb,
    "spoils": _spoils,
    "business": _business,
}
