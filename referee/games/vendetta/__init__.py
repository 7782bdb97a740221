"""Vendetta (Matthäus & Nestel, 1990) for 3 to 5 players: the rules engine.

The engine follows shared/rules/vendetta.md; rule ids (S1, P4, E3, H2, ...) appear
in error messages and in the test names. Decisions this module takes where the
rule book is silent or leaves the choice to the harness:

Chance (H4). The deal is one ``chance.shuffle("deal", 13)``: seat s gets the
districts at positions 2s and 2s+1. Every round draws one
``chance.shuffle("round", 13)`` when it starts: the first 11 entries are the
protection pile, top card first, the last 2 are the raid cards. Nothing else is
ever drawn, and no draw depends on an action, so a seed fixes the deal and every
round's cards whoever sits where.

Seats and turns. Turn t of a round (0..10) belongs to seat (start + t) mod n.
Turn 0 allows one district (P2), every other turn two (P1), the start player's
later turns included. The seat that would play turn 11, (start + 11) mod n,
starts the next round (E4).

Vendetta ties (V4). Among the seats tied for fewest, the first one met going
clockwise from the seat after the active seat loses; the active seat is last.

Control. ``control="sole"`` (default, the original): a seat controls a district
where only its mafiosi stand. ``control="majority"`` (the translations): strictly
the most mafiosi there; a tie for most, or an empty district, controls nothing.
Reinforcement (E4) and pay (V5) take from the box and stop when it is empty.

Victory (E3) is checked after scoring, among the seats that have not forfeited.
A forfeited seat can never win, and the round it would have won simply goes on.

Forfeits (H2). A forfeited seat keeps its mafiosi on the board, is still paid and
reinforced, and the engine plays each of its turns as an empty placement followed
by its vendetta, so ``decision()`` never names it. When only one seat is left in
play the game ends at once (``ended_by="forfeits"``) with that seat as the single
winner: nothing left in the game could change the H1 ranking. Forfeiting a
finished game, or a seat twice, changes nothing.

Round limit (H3). When the round numbered ``round_limit`` ends without a winner
the game ends (``ended_by="round_limit"``) without reinforcement. The default is
30 rounds (330 turns). Random players end half their games within 4 to 9 rounds
and about 1 in 100 after round 20; none of 9,000 sampled games (3-5 players,
every variant) went past round 26. So the limit only stops games that stall,
and does not cut short a game that is still heading for a result.

Ranking (H1). Winners share rank 1. The other seats in play follow by points,
then districts controlled at the last scoring; equal on both share a rank. Seats
that forfeited come last, the most recent forfeit first.

Events. Every turn gives ``placed`` (possibly empty) and ``revealed``, then
``eliminated`` when a vendetta is fought and ``paid`` when at least one seat took
a mafioso (V5). A round ends with ``raided``, ``scored`` and either ``game_over``
or ``reinforced`` and ``round_start``. ``forfeited`` opens the events of a forfeit.

Random play. ``random_placement`` (and ``VendettaState.random_action``) draws the
number of districts, then the districts, then the counts, each uniformly among
the legal choices left; ``pass_action`` is the empty placement, always legal.

Views (H5). Everything is public except the order of the unrevealed protection
cards and the current round's raid cards, so every seat's view is the same
apart from ``seat``, and ``events_for`` returns the events unchanged.

Speed. The state is flat lists; ``apply`` validates, mutates in place and builds
only its events. Two per-district caches make placement checks and vendettas
O(1): ``_owner[d]`` (-1 empty, -2 two or more seats, else the only seat there)
and ``_minbase[d]`` (the P4 minimum for a seat that is not that only seat).
"""

from __future__ import annotations

import copy as _copy
import random
from typing import Any, ClassVar, Final, Literal, TypeAlias, cast, get_args

import msgspec

from referee.games.base import (
    Chance,
    Decision,
    IllegalAction,
    Outcome,
    UnknownVariant,
    choice_variant,
    int_variant,
)

__all__ = [
    "DEFAULT_ROUND_LIMIT",
    "RULES",
    "Eliminated",
    "Forfeited",
    "GameOver",
    "Paid",
    "Place",
    "PlaceConstraints",
    "Placed",
    "Placement",
    "Raided",
    "Reinforced",
    "Revealed",
    "RoundStarted",
    "Scored",
    "VendettaConfig",
    "VendettaEvent",
    "VendettaRules",
    "VendettaState",
    "VendettaView",
    "random_placement",
]

N_DISTRICTS: Final = 13
TURNS_PER_ROUND: Final = 11
MAFIOSI_PER_COLOUR: Final = 50
SETUP_PER_DISTRICT: Final = 2  # S2
START_HAND: Final = 10  # S3
REINFORCEMENT: Final = 3  # E4
# E2: points for controlling c districts, indexed by c (7 or more all score 1000).
POINTS_FOR_CONTROL: Final[tuple[int, ...]] = (0, 1, 5, 20, 75, 250, 800) + (1000,) * 7
# E3: (district target, points target) by table size.
TARGETS: Final[dict[int, tuple[int, int]]] = {3: (6, 800), 4: (5, 250), 5: (4, 75)}
DEFAULT_ROUND_LIMIT: Final = 30
MAX_ROUND_LIMIT: Final = 1000
_ALL_CARDS: Final = list(range(N_DISTRICTS))
_NOBODY: Final = -1  # _owner value: no mafioso in the district
_SHARED: Final = -2  # _owner value: two or more seats in the district

Setup: TypeAlias = Literal["except-dealt", "dealt-only"]
Control: TypeAlias = Literal["sole", "majority"]
SETUPS: Final[tuple[str, ...]] = get_args(Setup)
CONTROLS: Final[tuple[str, ...]] = get_args(Control)

# V4 tie order: for active seat a at a table of n, the seats from a+1 clockwise, a last.
_ORDER_AFTER: Final[dict[int, tuple[tuple[int, ...], ...]]] = {
    n: tuple(tuple((a + i) % n for i in range(1, n + 1)) for a in range(n))
    for n in TARGETS
}


# ---------------------------------------------------------------------------
# Wire types


class VendettaConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A game's configuration: the two translation variants and the round limit (H3)."""

    setup: Setup = "except-dealt"
    control: Control = "sole"
    round_limit: int = DEFAULT_ROUND_LIMIT


class Placement(msgspec.Struct, frozen=True, gc=False):
    """Mafiosi put into one district: ``{"district": 7, "count": 3}``."""

    district: int
    count: int


class Place(msgspec.Struct, tag="place", tag_field="type", gc=False):
    """The one Vendetta action: 0, 1 or 2 placements; an empty list places nothing."""

    placements: list[Placement] = []


class PlaceConstraints(msgspec.Struct, gc=False):
    """The limits of a placement decision (P1-P4); ``minimum[d-1]`` is for district d."""

    max_districts: int
    hand: int
    minimum: list[int]


class VendettaView(msgspec.Struct, tag="vendetta", tag_field="type", kw_only=True):
    """Everything one seat may know (H5): all of it is public but the pile and raid."""

    seat: int
    n_players: int
    round: int  # 1-based
    turn: int  # 0..10; at the end of the game, the last turn played
    start_seat: int
    active_seat: int  # -1 once the game is over
    over: bool
    board: list[list[int]]  # board[d-1][s]: seat s's mafiosi in district d
    hands: list[int]
    box: list[int]
    points: list[int]
    controlled: list[int]  # districts each seat controlled at the last scoring
    revealed: list[int]  # protection cards revealed this round, in order
    pile_left: int
    last_raid: list[int]  # the raid cards revealed at the end of the previous round
    forfeited: list[bool]
    forfeit_order: list[int]  # seats in the order they forfeited
    dealt: list[list[int]]  # each seat's two S1 cards
    round_limit: int
    setup: Setup
    control: Control
    target_districts: int  # E3
    target_points: int  # E3


class RoundStarted(msgspec.Struct, tag="round_start", tag_field="type", gc=False):
    """A round begins (R1): its number and start player."""

    round: int
    start_seat: int


class Placed(msgspec.Struct, tag="placed", tag_field="type", gc=False):
    """A seat placed mafiosi (possibly none) on its turn."""

    seat: int
    turn: int
    placements: list[Placement]


class Revealed(msgspec.Struct, tag="revealed", tag_field="type", gc=False):
    """The active seat revealed the top protection card (V1)."""

    seat: int
    turn: int
    district: int


class Eliminated(msgspec.Struct, tag="eliminated", tag_field="type", gc=False):
    """A vendetta (V4): ``seat`` lost all ``count`` of its mafiosi in ``district``."""

    district: int
    seat: int
    count: int


class Paid(msgspec.Struct, tag="paid", tag_field="type", gc=False):
    """Protection money (V5): each listed seat took one mafioso from its box."""

    district: int
    seats: list[int]


class Raided(msgspec.Struct, tag="raided", tag_field="type", gc=False):
    """The raid (E1): both districts emptied; ``lost[s]`` mafiosi of seat s went to the box."""

    districts: list[int]
    lost: list[int]


class Scored(msgspec.Struct, tag="scored", tag_field="type", gc=False):
    """Round scoring (E2): districts controlled, points gained and new totals per seat."""

    round: int
    controlled: list[int]
    gained: list[int]
    points: list[int]


class Reinforced(msgspec.Struct, tag="reinforced", tag_field="type", gc=False):
    """No winner (E4): ``taken[s]`` mafiosi moved from seat s's box to its hand."""

    taken: list[int]


class Forfeited(msgspec.Struct, tag="forfeited", tag_field="type", gc=False):
    """A seat left play (H2); the engine plays its turns as empty placements."""

    seat: int


class GameOver(msgspec.Struct, tag="game_over", tag_field="type", gc=False):
    """The game ended: why, who won, the H1 ranks and final points."""

    ended_by: str
    winners: list[int]
    ranks: list[int]
    points: list[int]


VendettaEvent: TypeAlias = (
    RoundStarted
    | Placed
    | Revealed
    | Eliminated
    | Paid
    | Raided
    | Scored
    | Reinforced
    | Forfeited
    | GameOver
)


# ---------------------------------------------------------------------------
# Random placements


def random_placement(constraints: PlaceConstraints, rng: random.Random) -> Place:
    """A random legal placement under ``constraints``, drawn in three uniform steps.

    1. The number of districts k is uniform among the feasible values of
       0..max_districts (k is feasible when some k distinct districts have minimums
       that sum to at most the hand).
    2. The districts are a uniformly random feasible set of k districts.
    3. The counts are uniform among all count vectors with each count at least its
       district's minimum and the total at most the hand.

    Every step draws ``rng.random()`` only (floor of ``random() * m``), and the
    list is in a random order. ``VendettaState.random_action`` uses this same
    sampler, so a bot gets the same distribution as the engine's random player.
    """
    return _sample_place(
        constraints.max_districts, constraints.hand, constraints.minimum, rng
    )


def _sample_place(
    max_districts: int, hand: int, minimum: list[int], rng: random.Random
) -> Place:
    if hand <= 0 or max_districts <= 0:
        return Place([])
    rand = rng.random
    k_choices = 3 if max_districts >= 2 else 2
    pair_ok = k_choices == 3 and hand >= 2  # every minimum is at least 1
    while True:
        # Rejection over k: redrawing an infeasible k leaves k uniform over the feasible ones.
        k = int(rand() * k_choices)
        if k == 0:
            return Place([])
        if k == 1:
            # One rejection try inline (it nearly always fits), the rest in the helper.
            d = int(rand() * N_DISTRICTS)
            if minimum[d] > hand:
                d = _pick_single(hand, minimum, rand)
            if d < 0:  # no single district fits, so no pair does: only k = 0 is left
                return Place([])
            low = minimum[d]
            return Place([Placement(d + 1, low + int(rand() * (hand - low + 1)))])
        if not pair_ok:
            continue
        pair = _pick_pair(hand, minimum, rand)
        if pair is None:
            pair_ok = False
            continue
        a, b = pair
        low_a = minimum[a]
        low_b = minimum[b]
        spare = hand - low_a - low_b
        # Extras (x, y) with x + y <= spare, uniformly: two distinct cut points
        # lo < hi in 0..spare+1 give x = lo, y = hi - lo - 1 (stars and bars).
        lo = int(rand() * (spare + 2))
        hi = int(rand() * (spare + 1))
        if hi >= lo:
            hi += 1
        else:
            lo, hi = hi, lo
        return Place(
            [Placement(a + 1, low_a + lo), Placement(b + 1, low_b + hi - lo - 1)]
        )


def _pick_single(hand: int, minimum: list[int], rand: Any) -> int:
    """A uniformly random district (0-based) whose minimum fits the hand, or -1."""
    # Rejection first (almost always succeeds at once), then an exact fallback; both
    # phases are uniform over the same set, so their mixture is too.
    for _ in range(16):
        d = int(rand() * N_DISTRICTS)
        if minimum[d] <= hand:
            return d
    fits = [d for d in range(N_DISTRICTS) if minimum[d] <= hand]
    if not fits:
        return -1
    return fits[int(rand() * len(fits))]


def _pick_pair(hand: int, minimum: list[int], rand: Any) -> tuple[int, int] | None:
    """A uniformly random ordered pair of distinct districts that fits the hand, or None."""
    for _ in range(16):
        a = int(rand() * N_DISTRICTS)
        b = int(rand() * (N_DISTRICTS - 1))
        if b >= a:
            b += 1
        if minimum[a] + minimum[b] <= hand:
            return a, b
    # Exact fallback over the districts that could be half of a pair at all.
    low = [d for d in range(N_DISTRICTS) if minimum[d] < hand]
    fits = [
        (a, b) for a in low for b in low if a != b and minimum[a] + minimum[b] <= hand
    ]
    if not fits:
        return None
    return fits[int(rand() * len(fits))]


# ---------------------------------------------------------------------------
# The state


class VendettaState:
    """One Vendetta game in progress (mutable; only apply and forfeit change it)."""

    __slots__ = (
        "_active",
        "_board",
        "_box",
        "_chance",
        "_config",
        "_controlled",
        "_dealt",
        "_forfeit_order",
        "_forfeited",
        "_hands",
        "_last_raid",
        "_min_cache",
        "_minbase",
        "_n",
        "_order",
        "_outcome",
        "_over",
        "_owner",
        "_pile",
        "_points",
        "_raid",
        "_revealed",
        "_round",
        "_seats",
        "_start",
        "_turn",
    )

    _n: int
    _order: tuple[tuple[int, ...], ...]  # _ORDER_AFTER[n]
    _seats: range
    _config: VendettaConfig
    _chance: Chance
    _board: list[list[int]]
    _owner: list[int]
    _minbase: list[int]
    _min_cache: list[int] | None  # _minimum() for the seat to move; None when stale
    _hands: list[int]
    _box: list[int]
    _points: list[int]
    _controlled: list[int]
    _round: int
    _turn: int
    _start: int
    _active: int
    _pile: list[int]  # 0-based districts, top card first
    _raid: list[int]
    _revealed: int  # how many of _pile are face up
    _last_raid: list[int]
    _dealt: list[list[int]]  # 1-based districts
    _forfeited: list[bool]
    _forfeit_order: list[int]
    _over: bool
    _outcome: Outcome | None

    def __init__(self, n_players: int, config: VendettaConfig, chance: Chance) -> None:
        _check_table(n_players, config)
        n = n_players
        self._n = n
        self._order = _ORDER_AFTER[n]
        self._seats = range(n)
        self._config = config
        self._chance = chance
        # S1: seat s is dealt the cards at positions 2s and 2s + 1 of the deal.
        deal = _checked_shuffle(chance, "deal")
        self._dealt = [sorted((deal[2 * s] + 1, deal[2 * s + 1] + 1)) for s in range(n)]
        # S2 (or the dealt-only variant): 2 mafiosi per district the setup names.
        board = [[0] * n for _ in range(N_DISTRICTS)]
        for s, cards in enumerate(self._dealt):
            if config.setup == "dealt-only":
                targets = [d - 1 for d in cards]
            else:
                targets = [d for d in range(N_DISTRICTS) if d + 1 not in cards]
            for d in targets:
                board[d][s] = SETUP_PER_DISTRICT
        self._board = board
        self._hands = [START_HAND] * n  # S3
        self._box = [
            MAFIOSI_PER_COLOUR
            - START_HAND
            - sum(board[d][s] for d in range(N_DISTRICTS))
            for s in range(n)
        ]
        self._points = [0] * n
        self._controlled = [0] * n
        self._owner = [_NOBODY] * N_DISTRICTS
        self._minbase = [1] * N_DISTRICTS
        self._min_cache = None
        self._refresh_districts()
        self._round = 1
        self._start = 0
        self._last_raid = []
        self._forfeited = [False] * n
        self._forfeit_order = []
        self._over = False
        self._outcome = None
        self._begin_round()

    # -- construction helpers ------------------------------------------------

    @classmethod
    def from_view(cls, view: VendettaView, chance: Chance) -> VendettaState:
        """A state that matches ``view`` exactly, its hidden cards drawn from ``chance``.

        For search bots (a determinization) and for tests (a ScriptedChance sets the
        hidden cards). One ``chance.shuffle("round", 13)`` orders the cards not yet
        revealed this round: the first ``pile_left`` are the rest of the pile, the
        last 2 the raid. Later rounds draw from ``chance`` as usual. ValueError when
        the view is inconsistent (conservation, sizes) or the game is over.
        """
        n = view.n_players
        config = VendettaConfig(
            setup=view.setup, control=view.control, round_limit=view.round_limit
        )
        _check_table(n, config)
        if view.over:
            raise ValueError("from_view: the game in this view is over")
        if len(view.board) != N_DISTRICTS or any(len(row) != n for row in view.board):
            raise ValueError(
                f"from_view: board must be {N_DISTRICTS} lists of {n} counts"
            )
        for name in ("hands", "box", "points", "controlled", "forfeited", "dealt"):
            if len(getattr(view, name)) != n:
                raise ValueError(f"from_view: {name} must have {n} entries")
        counts = [
            *(c for row in view.board for c in row),
            *view.hands,
            *view.box,
            *view.points,
        ]
        if any(c < 0 for c in counts):
            raise ValueError("from_view: counts and points cannot be negative")
        for s in range(n):
            total = sum(row[s] for row in view.board) + view.hands[s] + view.box[s]
            if total != MAFIOSI_PER_COLOUR:
                raise ValueError(
                    f"from_view: seat {s} has {total} mafiosi on board, hand and box, "
                    f"not {MAFIOSI_PER_COLOUR}"
                )
        turn = view.turn
        if not 0 <= turn < TURNS_PER_ROUND or len(view.revealed) != turn:
            raise ValueError(
                f"from_view: turn {turn} needs exactly {turn} revealed cards"
            )
        if len(set(view.revealed)) != turn or not all(
            1 <= d <= N_DISTRICTS for d in view.revealed
        ):
            raise ValueError(
                "from_view: revealed cards must be distinct districts 1..13"
            )
        if not 0 <= view.start_seat < n or view.round < 1:
            raise ValueError("from_view: bad start seat or round")
        active = (view.start_seat + turn) % n
        if view.forfeited[active]:
            raise ValueError(f"from_view: the seat to move, {active}, has forfeited")
        if sorted(view.forfeit_order) != [s for s in range(n) if view.forfeited[s]]:
            raise ValueError(
                "from_view: forfeit_order must list exactly the forfeited seats"
            )
        if n - len(view.forfeit_order) <= 1:
            raise ValueError("from_view: fewer than two seats are still in play")

        self = cls.__new__(cls)
        self._n = n
        self._order = _ORDER_AFTER[n]
        self._seats = range(n)
        self._config = config
        self._chance = chance
        self._board = [list(row) for row in view.board]
        self._hands = list(view.hands)
        self._box = list(view.box)
        self._points = list(view.points)
        self._controlled = list(view.controlled)
        self._owner = [_NOBODY] * N_DISTRICTS
        self._minbase = [1] * N_DISTRICTS
        self._min_cache = None
        self._refresh_districts()
        self._round = view.round
        self._turn = turn
        self._start = view.start_seat
        self._active = active
        face_up = [d - 1 for d in view.revealed]
        order = _checked_shuffle(chance, "round")
        hidden = [d for d in order if d not in face_up]
        self._pile = face_up + hidden[: TURNS_PER_ROUND - turn]
        self._raid = hidden[TURNS_PER_ROUND - turn :]
        self._revealed = turn
        self._last_raid = [d - 1 for d in view.last_raid]
        self._dealt = [list(cards) for cards in view.dealt]
        self._forfeited = list(view.forfeited)
        self._forfeit_order = list(view.forfeit_order)
        self._over = False
        self._outcome = None
        return self

    def copy(self, chance: Chance | None = None) -> VendettaState:
        """A fast independent clone; it draws later rounds from ``chance``.

        Without ``chance`` the clone gets a deep copy of this state's chance source,
        so clone and original see the same future cards and neither disturbs the
        other. Search bots that should not know the future pass their own source.
        """
        other = VendettaState.__new__(VendettaState)
        other._n = self._n
        other._order = self._order
        other._seats = self._seats
        other._config = self._config
        other._chance = _copy.deepcopy(self._chance) if chance is None else chance
        other._board = [row[:] for row in self._board]
        other._owner = self._owner[:]
        other._minbase = self._minbase[:]
        other._min_cache = None
        other._hands = self._hands[:]
        other._box = self._box[:]
        other._points = self._points[:]
        other._controlled = self._controlled[:]
        other._round = self._round
        other._turn = self._turn
        other._start = self._start
        other._active = self._active
        other._pile = self._pile[:]
        other._raid = self._raid[:]
        other._revealed = self._revealed
        other._last_raid = self._last_raid[:]
        other._dealt = [cards[:] for cards in self._dealt]
        other._forfeited = self._forfeited[:]
        other._forfeit_order = self._forfeit_order[:]
        other._over = self._over
        other._outcome = self._outcome  # frozen, safe to share
        return other

    def _refresh_districts(self) -> None:
        """Recompute the owner and P4 caches of every district from the board."""
        for d, row in enumerate(self._board):
            present = [s for s, c in enumerate(row) if c]
            if not present:
                self._owner[d], self._minbase[d] = _NOBODY, 1
            elif len(present) == 1:
                self._owner[d], self._minbase[d] = present[0], row[present[0]]
            else:
                self._owner[d], self._minbase[d] = _SHARED, 1

    # -- the GameState interface ---------------------------------------------

    @property
    def n_players(self) -> int:
        return self._n

    @property
    def config(self) -> VendettaConfig:
        """The configuration this game was started with."""
        return self._config

    def is_over(self) -> bool:
        return self._over

    def decision(self) -> Decision | None:
        if self._over:
            return None
        seat = self._active
        constraints = PlaceConstraints(
            1 if self._turn == 0 else 2,  # P2 / P1
            self._hands[seat],
            (self._min_cache or self._minimum())[:],  # a copy: the caller may change it
        )
        return Decision(seat=seat, kind="place", constraints=constraints)

    def _minimum(self) -> list[int]:
        """The P4 minimum per district for the seat to move, cached until the next change."""
        minimum = self._min_cache
        if minimum is None:
            seat = self._active
            owner = self._owner
            minimum = self._minbase[:]
            # Districts the mover holds alone have no minimum; they are few, and
            # list.count/index run in C, faster than a Python loop over all 13.
            i = -1
            for _ in range(owner.count(seat)):
                i = owner.index(seat, i + 1)
                minimum[i] = 1
            self._min_cache = minimum
        return minimum

    def random_action(self, rng: random.Random) -> Place:
        """A random legal placement for the seat to move (see ``random_placement``)."""
        if self._over:
            raise ValueError("random_action: the game is over")
        return _sample_place(
            1 if self._turn == 0 else 2,
            self._hands[self._active],
            self._min_cache or self._minimum(),
            rng,
        )

    def pass_action(self) -> Place:
        """The empty placement: always legal, and what a forfeited seat plays (H2)."""
        if self._over:
            raise ValueError("pass_action: the game is over")
        return Place([])

    def view(self, seat: int) -> VendettaView:
        n = self._n
        if not 0 <= seat < n:
            raise ValueError(f"view: seat {seat} is not a seat of this {n}-player game")
        targets = TARGETS[n]
        return VendettaView(
            seat=seat,
            n_players=n,
            round=self._round,
            turn=self._turn,
            start_seat=self._start,
            active_seat=-1 if self._over else self._active,
            over=self._over,
            board=[row[:] for row in self._board],
            hands=self._hands[:],
            box=self._box[:],
            points=self._points[:],
            controlled=self._controlled[:],
            revealed=[d + 1 for d in self._pile[: self._revealed]],
            pile_left=TURNS_PER_ROUND - self._revealed,
            last_raid=[d + 1 for d in self._last_raid],
            forfeited=self._forfeited[:],
            forfeit_order=self._forfeit_order[:],
            dealt=[cards[:] for cards in self._dealt],
            round_limit=self._config.round_limit,
            setup=self._config.setup,
            control=self._config.control,
            target_districts=targets[0],
            target_points=targets[1],
        )

    def hidden_cards(self) -> tuple[list[int], list[int]]:
        """What no seat knows (H5): the unrevealed protection cards, top first, and
        this round's raid cards, as 1-based districts. For the replay viewer's
        all-seeing view only; a seat's view never holds them."""
        if self._over:
            return [], []
        return [d + 1 for d in self._pile[self._revealed :]], [d + 1 for d in self._raid]

    def events_for(
        self, seat: int, events: list[msgspec.Struct]
    ) -> list[msgspec.Struct]:
        # Every Vendetta event is public (H5): the raid cards appear only once revealed.
        return events

    def outcome(self) -> Outcome:
        if self._outcome is None:
            raise ValueError("outcome: the game is not over")
        return self._outcome

    def apply(self, seat: int, action: Any) -> list[msgspec.Struct]:
        if seat != self._active or self._over:
            raise self._out_of_turn(seat)
        if action.__class__ is not Place and not isinstance(action, Place):
            raise IllegalAction(
                "P1", f"expected a place action, got {type(action).__name__}"
            )
        placements = action.placements
        if placements.__class__ is not list:
            raise IllegalAction(
                "P1", f"placements must be a list, got {type(placements).__name__}"
            )
        if placements:
            # Validate everything first (P6): nothing below may raise once we mutate.
            total = self._check_placements(seat, placements)
            board = self._board
            owner = self._owner
            minbase = self._minbase
            for p in placements:
                d = p.district - 1
                c = p.count
                board[d][seat] += c
                o = owner[d]
                if o == _NOBODY:
                    owner[d] = seat
                    minbase[d] = c
                elif o == seat:
                    minbase[d] += c
                elif o >= 0:
                    owner[d] = _SHARED
                    minbase[d] = 1
            self._hands[seat] -= total
        self._min_cache = None
        turn = self._turn
        events: list[msgspec.Struct] = [Placed(seat, turn, list(placements))]
        self._vendetta(seat, events)
        # The common case of _after_turn inline: next turn, same round, seat in play.
        turn += 1
        if turn < TURNS_PER_ROUND:
            nxt = (self._start + turn) % self._n
            if not self._forfeited[nxt]:
                self._turn = turn
                self._active = nxt
                return events
        self._after_turn(events)
        return events

    def forfeit(self, seat: int) -> list[msgspec.Struct]:
        n = self._n
        if not 0 <= seat < n:
            raise ValueError(
                f"forfeit: seat {seat} is not a seat of this {n}-player game"
            )
        if self._over or self._forfeited[seat]:
            return []
        self._forfeited[seat] = True
        self._forfeit_order.append(seat)
        self._min_cache = None
        events: list[msgspec.Struct] = [Forfeited(seat)]
        in_play = [s for s in range(n) if not self._forfeited[s]]
        if len(in_play) <= 1:
            self._finish("forfeits", in_play, events)
        elif seat == self._active:
            events.append(Placed(seat, self._turn, []))
            self._vendetta(seat, events)
            self._after_turn(events)
        return events

    # -- validation ----------------------------------------------------------

    def _out_of_turn(self, seat: int) -> IllegalAction:
        if self._over:
            assert self._outcome is not None
            rule = {"victory": "E3", "round_limit": "H3"}.get(
                self._outcome.ended_by, "H2"
            )
            return IllegalAction(
                rule,
                f"the game is over ({self._outcome.ended_by}); seat {seat} cannot act",
            )
        if 0 <= seat < self._n and self._forfeited[seat]:
            return IllegalAction("H2", f"seat {seat} has forfeited and cannot act")
        return IllegalAction(
            "R2",
            f"turn {self._turn} of round {self._round} belongs to seat {self._active}, not seat {seat}",
        )

    def _check_placements(self, seat: int, placements: list[Placement]) -> int:
        """The total placed, or IllegalAction naming the first broken rule."""
        k = len(placements)
        if self._turn == 0 and k > 1:
            raise IllegalAction(
                "P2", f"turn 0 of a round allows 1 district; you named {k}"
            )
        if k > 2:
            raise IllegalAction(
                "P1", f"a turn allows at most 2 districts; you named {k}"
            )
        total = 0
        previous = 0
        for p in placements:
            if p.__class__ is not Placement and not isinstance(p, Placement):
                raise IllegalAction(
                    "P1", f"a placement must be a Placement, got {type(p).__name__}"
                )
            d = p.district
            c = p.count
            if type(d) is not int or not 1 <= d <= N_DISTRICTS:
                raise IllegalAction(
                    "P1", f"district {d!r} does not exist; districts are 1..13"
                )
            if type(c) is not int or c < 1:
                raise IllegalAction(
                    "P3",
                    f"district {d} must receive at least 1 mafioso; you placed {c!r}",
                )
            if d == previous:
                raise IllegalAction(
                    "P1", f"district {d} is named twice; the districts must be distinct"
                )
            previous = d
            total += c
        hand = self._hands[seat]
        if total > hand:
            raise IllegalAction(
                "P3", f"you placed {total} mafiosi but hold {hand} in hand"
            )
        owner = self._owner
        for p in placements:
            d = p.district - 1
            o = owner[d]
            if o >= 0 and o != seat:
                need = self._board[d][o]
                if p.count < need:
                    raise IllegalAction(
                        "P4",
                        f"district {d + 1} holds {need} of seat {o} alone; you placed {p.count}",
                    )
        return total

    # -- turn mechanics --------------------------------------------------------

    def _vendetta(self, seat: int, events: list[msgspec.Struct]) -> None:
        """V1-V5 for the active ``seat``: reveal the top card, fight, pay."""
        d = self._pile[self._turn]
        self._revealed = self._turn + 1
        district = d + 1
        events.append(Revealed(seat, self._turn, district))
        o = self._owner[d]
        if o == _NOBODY:  # V2
            return
        box = self._box
        hands = self._hands
        if o >= 0:  # V3, then V5 for the one seat there
            if box[o]:
                box[o] -= 1
                hands[o] += 1
                events.append(Paid(district, [o]))
            return
        row = self._board[d]  # V4: the first seat with the fewest, clockwise after seat
        loser = -1
        fewest = MAFIOSI_PER_COLOUR + 1
        for s in self._order[seat]:
            c = row[s]
            if c and c < fewest:
                fewest = c
                loser = s
        row[loser] = 0
        box[loser] += fewest
        events.append(Eliminated(district, loser, fewest))
        paid = []
        present = 0
        last = -1
        for s in self._seats:  # V5
            if row[s]:
                present += 1
                last = s
                if box[s]:
                    box[s] -= 1
                    hands[s] += 1
                    paid.append(s)
        if present == 1:
            self._owner[d] = last
            self._minbase[d] = row[last]
        if paid:
            events.append(Paid(district, paid))

    def _after_turn(self, events: list[msgspec.Struct]) -> None:
        """Move to the next turn, end rounds, and play the turns of forfeited seats."""
        forfeited = self._forfeited
        while True:
            t = self._turn + 1
            if t == TURNS_PER_ROUND:
                self._end_round(events)
                if self._over:
                    return
            else:
                self._turn = t
                self._active = (self._start + t) % self._n
            seat = self._active
            if not forfeited[seat]:
                return
            events.append(Placed(seat, self._turn, []))  # H2: an empty placement
            self._vendetta(seat, events)

    def _begin_round(self) -> None:
        order = _checked_shuffle(self._chance, "round")  # R1
        self._pile = order[:TURNS_PER_ROUND]
        self._raid = order[TURNS_PER_ROUND:]
        self._revealed = 0
        self._turn = 0
        self._active = self._start

    def _end_round(self, events: list[msgspec.Struct]) -> None:
        """E1-E4: raid, score, check victory, reinforce and start the next round."""
        n = self._n
        board = self._board
        box = self._box
        lost = [0] * n
        for d in self._raid:  # E1
            row = board[d]
            for s in range(n):
                c = row[s]
                if c:
                    box[s] += c
                    lost[s] += c
                    row[s] = 0
            self._owner[d] = _NOBODY
            self._minbase[d] = 1
        self._last_raid = self._raid
        events.append(Raided([d + 1 for d in self._raid], lost))

        controlled = [0] * n  # E2
        if self._config.control == "sole":
            for o in self._owner:
                if o >= 0:
                    controlled[o] += 1
        else:
            for row in board:
                most = max(row)
                if most and row.count(most) == 1:
                    controlled[row.index(most)] += 1
        gained = [POINTS_FOR_CONTROL[c] for c in controlled]
        points = self._points
        for s in range(n):
            points[s] += gained[s]
        self._controlled = controlled
        events.append(Scored(self._round, controlled[:], gained, points[:]))

        winners = self._winners()  # E3
        if winners:
            self._finish("victory", winners, events)
            return
        if self._round >= self._config.round_limit:  # H3
            self._finish("round_limit", [], events)
            return
        hands = self._hands  # E4
        taken = [0] * n
        for s in range(n):
            take = min(REINFORCEMENT, box[s])
            box[s] -= take
            hands[s] += take
            taken[s] = take
        events.append(Reinforced(taken))
        self._start = (self._start + TURNS_PER_ROUND) % n
        self._round += 1
        self._begin_round()
        events.append(RoundStarted(self._round, self._start))

    def _winners(self) -> list[int]:
        """E3 among the seats still in play: district target first, then points."""
        target_districts, target_points = TARGETS[self._n]
        controlled = self._controlled
        points = self._points
        if max(controlled) < target_districts and max(points) < target_points:
            return []  # the usual case, decided without building anything
        in_play = [s for s in range(self._n) if not self._forfeited[s]]
        candidates = [s for s in in_play if controlled[s] >= target_districts]
        if candidates:
            keys = {s: (controlled[s], points[s]) for s in candidates}
        else:
            candidates = [s for s in in_play if points[s] >= target_points]
            keys = {s: (points[s], controlled[s]) for s in candidates}
        if not candidates:
            return []
        best = max(keys.values())
        return [s for s in candidates if keys[s] == best]

    def _finish(
        self, ended_by: str, winners: list[int], events: list[msgspec.Struct]
    ) -> None:
        """End the game and rank the seats by H1."""
        n = self._n
        points = self._points
        controlled = self._controlled
        ranks = [0] * n
        for s in winners:
            ranks[s] = 1
        others = [s for s in range(n) if not self._forfeited[s] and s not in winners]
        others.sort(key=lambda s: (-points[s], -controlled[s]))
        previous: tuple[int, int] | None = None
        rank = 0
        for i, s in enumerate(others):
            key = (points[s], controlled[s])
            if key != previous:
                rank = len(winners) + 1 + i
                previous = key
            ranks[s] = rank
        in_play = len(winners) + len(others)
        for i, s in enumerate(reversed(self._forfeit_order)):
            ranks[s] = in_play + 1 + i
        on_board = [sum(row[s] for row in self._board) for s in range(n)]
        self._over = True
        self._outcome = Outcome(
            ranks=ranks,
            scores=points[:],
            winners=sorted(winners),
            forfeited=self._forfeit_order[:],
            ended_by=ended_by,
            stats={"districts": controlled[:], "mafiosi": on_board},
        )
        events.append(GameOver(ended_by, sorted(winners), ranks[:], points[:]))


def _check_table(n_players: int, config: VendettaConfig) -> None:
    """ValueError unless the table size and configuration can be played (TypeError
    for a configuration of another game)."""
    if not isinstance(config, VendettaConfig):
        raise TypeError(f"vendetta needs a VendettaConfig, got {type(config).__name__}")
    if n_players not in TARGETS:
        raise ValueError(f"vendetta is for 3 to 5 players, not {n_players}")
    if config.setup not in SETUPS:
        raise ValueError(f"setup {config.setup!r} is not one of {', '.join(SETUPS)}")
    if config.control not in CONTROLS:
        raise ValueError(
            f"control {config.control!r} is not one of {', '.join(CONTROLS)}"
        )
    limit = config.round_limit
    if type(limit) is not int or not 1 <= limit <= MAX_ROUND_LIMIT:
        raise ValueError(
            f"round_limit {limit!r} must be an integer from 1 to {MAX_ROUND_LIMIT}"
        )


def _checked_shuffle(chance: Chance, stream: str) -> list[int]:
    """One shuffle of the 13 district cards, refused if it is not a permutation."""
    order = list(chance.shuffle(stream, N_DISTRICTS))
    if sorted(order) != _ALL_CARDS:
        raise ValueError(
            f"the chance source gave {order} for {stream!r}, not a permutation of 0..12"
        )
    return order


# ---------------------------------------------------------------------------
# The game


class VendettaRules:
    """Vendetta: table sizes, wire types, variants, and new games."""

    name: ClassVar[str] = "vendetta"
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 5
    config_type: ClassVar[type[msgspec.Struct]] = VendettaConfig
    view_type: ClassVar[Any] = VendettaView
    action_type: ClassVar[Any] = Place
    event_type: ClassVar[Any] = VendettaEvent

    def config(self, variants: dict[str, str]) -> VendettaConfig:
        setup: Setup = "except-dealt"
        control: Control = "sole"
        round_limit = DEFAULT_ROUND_LIMIT
        for key, value in variants.items():
            if key == "setup":
                setup = cast(Setup, choice_variant("vendetta", key, value, SETUPS))
            elif key == "control":
                control = cast(Control, choice_variant("vendetta", key, value, CONTROLS))
            elif key == "round_limit":
                round_limit = int_variant("vendetta", key, value, 1, MAX_ROUND_LIMIT)
            else:
                raise UnknownVariant(
                    f"vendetta has no variant {key!r} (given {value!r}): use setup, control or round_limit"
                )
        return VendettaConfig(setup=setup, control=control, round_limit=round_limit)

    def variants(self, config: msgspec.Struct) -> dict[str, str]:
        if not isinstance(config, VendettaConfig):
            raise TypeError(
                f"vendetta needs a VendettaConfig, got {type(config).__name__}"
            )
        return {
            "setup": config.setup,
            "control": config.control,
            "round_limit": str(config.round_limit),
        }

    def new_game(
        self, n_players: int, config: msgspec.Struct, chance: Chance
    ) -> VendettaState:
        if not isinstance(config, VendettaConfig):
            raise TypeError(
                f"vendetta needs a VendettaConfig, got {type(config).__name__}"
            )
        return VendettaState(n_players, config, chance)


RULES: Final = VendettaRules()
