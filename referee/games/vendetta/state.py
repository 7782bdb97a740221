"""One Vendetta game in progress: the board, the turn, the round and its cards.

``VendettaState`` plays the rules of shared/rules/vendetta.md on flat lists;
``GameState`` (referee/games/base.py) does the checks every game shares before
``_apply_action`` runs. See the package docstring for the decisions taken where
the rule book is silent.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import ClassVar

import msgspec

from referee.games.base import (
    Chance,
    Decision,
    GameRules,
    GameState,
    IllegalAction,
    Outcome,
    checked_shuffle,
    rank_seats,
)
from referee.games.vendetta.components import (
    MAFIOSI_PER_COLOUR,
    N_DISTRICTS,
    NOBODY,
    ORDER_AFTER,
    POINTS_FOR_CONTROL,
    REINFORCEMENT,
    SETUP_PER_DISTRICT,
    SHARED,
    START_HAND,
    TARGETS,
    TURNS_PER_ROUND,
)
from referee.games.vendetta.messages import (
    Eliminated,
    GameEnded,
    Paid,
    Place,
    PlaceConstraints,
    Placed,
    Placement,
    Raided,
    Reinforced,
    Revealed,
    RoundStarted,
    Scored,
    VendettaConfig,
    VendettaView,
)
from referee.games.vendetta.sampler import sample_place

__all__ = ["VendettaState"]


class VendettaState(GameState):
    """One Vendetta game in progress (mutable; only apply and forfeit change it).

    The checks every game shares (turn order, the end, forfeits, copying) are
    ``GameState``'s; this class holds the board and plays the rules."""

    __slots__ = (
        "_board",
        "_box",
        "_controlled",
        "_dealt",
        "_hands",
        "_last_raid",
        "_min_cache",
        "_minbase",
        "_order",
        "_owner",
        "_pile",
        "_points",
        "_raid",
        "_revealed",
        "_round",
        "_seats",
        "_shared_views",
        "_start",
        "_turn",
    )

    game: ClassVar[str] = "vendetta"
    action_classes: ClassVar[frozenset[type]] = frozenset({Place})
    end_rules: ClassVar[Mapping[str, str]] = {"victory": "E3", "round_limit": "H3", "forfeits": "H2"}

    config: VendettaConfig
    _order: tuple[tuple[int, ...], ...]  # ORDER_AFTER[n]
    _seats: range
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
    _pile: list[int]  # 0-based districts, top card first
    _raid: list[int]
    _revealed: int  # how many of _pile are face up
    _last_raid: list[int]
    _dealt: list[list[int]]  # 1-based districts
    _shared_views: list[VendettaView | None]  # per seat, what _transient_view refills; None until first asked

    def __init__(self, n_players: int, config: VendettaConfig, chance: Chance) -> None:
        super().__init__(n_players, config, chance)
        n = n_players
        self._order = ORDER_AFTER[n]
        self._seats = range(n)
        self._shared_views = [None] * n
        # S1: seat s is dealt the cards at positions 2s and 2s + 1 of the deal.
        deal = checked_shuffle(chance, "deal", N_DISTRICTS)
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
        self._box = [MAFIOSI_PER_COLOUR - START_HAND - sum(board[d][s] for d in range(N_DISTRICTS)) for s in range(n)]
        self._points = [0] * n
        self._controlled = [0] * n
        self._owner = [NOBODY] * N_DISTRICTS
        self._minbase = [1] * N_DISTRICTS
        self._min_cache = None
        self._refresh_districts()
        self._round = 1
        self._start = 0
        self._last_raid = []
        self._begin_round()

    # -- construction helpers ------------------------------------------------

    @classmethod
    def from_view(cls, view: VendettaView, chance: Chance, rules: GameRules) -> VendettaState:
        """A state that matches ``view`` exactly, its hidden cards drawn from ``chance``.

        For search bots (a determinization) and for tests (a ScriptedChance sets the
        hidden cards). One ``chance.shuffle("round", 13)`` orders the cards not yet
        revealed this round: the first ``pile_left`` are the rest of the pile, the
        last 2 the raid. Later rounds draw from ``chance`` as usual. ValueError when
        the view is inconsistent (conservation, sizes) or the game is over.

        ``rules`` (Vendetta's, ``referee.games.vendetta.RULES``) judges the table
        size and the variants the view names: the caller passes them because
        they are declared in the package that imports this module.
        """
        n = view.n_players
        config = VendettaConfig(setup=view.setup, control=view.control, round_limit=view.round_limit)
        rules.check_table(n)
        rules.check_config(config)
        if view.over:
            raise ValueError("from_view: the game in this view is over")
        if len(view.board) != N_DISTRICTS or any(len(row) != n for row in view.board):
            raise ValueError(f"from_view: board must be {N_DISTRICTS} lists of {n} counts")
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
                    f"from_view: seat {s} has {total} mafiosi on board, hand and box, not {MAFIOSI_PER_COLOUR}"
                )
        turn = view.turn
        if not 0 <= turn < TURNS_PER_ROUND or len(view.revealed) != turn:
            raise ValueError(f"from_view: turn {turn} needs exactly {turn} revealed cards")
        if len(set(view.revealed)) != turn or not all(1 <= d <= N_DISTRICTS for d in view.revealed):
            raise ValueError("from_view: revealed cards must be distinct districts 1..13")
        if not 0 <= view.start_seat < n or view.round < 1:
            raise ValueError("from_view: bad start seat or round")
        active = (view.start_seat + turn) % n
        if view.forfeited[active]:
            raise ValueError(f"from_view: the seat to move, {active}, has forfeited")
        if sorted(view.forfeit_order) != [s for s in range(n) if view.forfeited[s]]:
            raise ValueError("from_view: forfeit_order must list exactly the forfeited seats")
        if n - len(view.forfeit_order) <= 1:
            raise ValueError("from_view: fewer than two seats are still in play")

        self = cls.__new__(cls)
        GameState.__init__(self, n, config, chance)
        self._order = ORDER_AFTER[n]
        self._seats = range(n)
        self._shared_views = [None] * n
        self._board = [list(row) for row in view.board]
        self._hands = list(view.hands)
        self._box = list(view.box)
        self._points = list(view.points)
        self._controlled = list(view.controlled)
        self._owner = [NOBODY] * N_DISTRICTS
        self._minbase = [1] * N_DISTRICTS
        self._min_cache = None
        self._refresh_districts()
        self._round = view.round
        self._turn = turn
        self._start = view.start_seat
        self.to_move = active
        face_up = [d - 1 for d in view.revealed]
        order = checked_shuffle(chance, "round", N_DISTRICTS)
        hidden = [d for d in order if d not in face_up]
        self._pile = face_up + hidden[: TURNS_PER_ROUND - turn]
        self._raid = hidden[TURNS_PER_ROUND - turn :]
        self._revealed = turn
        self._last_raid = [d - 1 for d in view.last_raid]
        self._dealt = [list(cards) for cards in view.dealt]
        self.forfeited = list(view.forfeited)
        self.forfeit_order = list(view.forfeit_order)
        return self

    def _copy_into(self, other: VendettaState) -> None:
        other._order = self._order
        other._seats = self._seats
        other._shared_views = [None] * self.n  # never shared with the original: each refills its own
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
        other._pile = self._pile[:]
        other._raid = self._raid[:]
        other._revealed = self._revealed
        other._last_raid = self._last_raid[:]
        other._dealt = [cards[:] for cards in self._dealt]

    def hidden_twin(self, seat: int, rng: random.Random) -> VendettaState:
        """A copy with the unrevealed protection cards and the raid dealt again (H5:
        nothing else is hidden, from any seat)."""
        twin = self.copy()
        hidden = twin._pile[twin._revealed :] + twin._raid
        rng.shuffle(hidden)
        split = TURNS_PER_ROUND - twin._revealed
        twin._pile = twin._pile[: twin._revealed] + hidden[:split]
        twin._raid = hidden[split:]
        return twin

    def _refresh_districts(self) -> None:
        """Recompute the owner and P4 caches of every district from the board."""
        for d, row in enumerate(self._board):
            present = [s for s, c in enumerate(row) if c]
            if not present:
                self._owner[d], self._minbase[d] = NOBODY, 1
            elif len(present) == 1:
                self._owner[d], self._minbase[d] = present[0], row[present[0]]
            else:
                self._owner[d], self._minbase[d] = SHARED, 1

    # -- the GameState interface ---------------------------------------------

    def decision(self) -> Decision | None:
        if self._outcome is not None:
            return None
        seat = self.to_move
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
            seat = self.to_move
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

    def _random_action(self, rng: random.Random) -> Place:
        """A random legal placement for the seat to move (see ``random_placement``)."""
        return sample_place(
            1 if self._turn == 0 else 2,
            self._hands[self.to_move],
            self._min_cache or self._minimum(),
            rng,
        )

    def _pass_action(self) -> Place:
        """The empty placement: always legal, and what a forfeited seat plays (H2)."""
        return Place([])

    def _view(self, seat: int) -> VendettaView:
        view = self._new_view(seat)
        # The state's own lists, copied: the caller may keep this view while play goes on.
        view.board = [row[:] for row in self._board]
        view.hands = self._hands[:]
        view.box = self._box[:]
        view.points = self._points[:]
        view.controlled = self._controlled[:]
        view.forfeited = self.forfeited[:]
        view.forfeit_order = self.forfeit_order[:]
        view.dealt = [cards[:] for cards in self._dealt]
        return view

    def _transient_view(self, seat: int) -> VendettaView:
        # One view object per seat, refilled on each call: making a view of 23
        # fields by keyword costs about twice as much as storing the 16 that can
        # change (the referee asks for one per decision). Every field that names
        # a list of the state is stored again, as apply may have replaced the list.
        view = self._shared_views[seat]
        if view is None:
            view = self._shared_views[seat] = self._new_view(seat)
            return view
        view.round = self._round
        view.turn = self._turn
        view.start_seat = self._start
        view.active_seat = self.to_move
        view.over = self._outcome is not None
        view.board = self._board
        view.hands = self._hands
        view.box = self._box
        view.points = self._points
        view.controlled = self._controlled
        view.revealed = [d + 1 for d in self._pile[: self._revealed]]
        view.pile_left = TURNS_PER_ROUND - self._revealed
        view.last_raid = [d + 1 for d in self._last_raid]
        view.forfeited = self.forfeited
        view.forfeit_order = self.forfeit_order
        view.dealt = self._dealt
        return view

    def _new_view(self, seat: int) -> VendettaView:
        """A new view of ``seat`` that shares the state's lists."""
        n = self.n
        targets = TARGETS[n]
        return VendettaView(
            seat=seat,
            n_players=n,
            round=self._round,
            turn=self._turn,
            start_seat=self._start,
            active_seat=self.to_move,  # -1 once the game is over
            over=self._outcome is not None,
            board=self._board,
            hands=self._hands,
            box=self._box,
            points=self._points,
            controlled=self._controlled,
            revealed=[d + 1 for d in self._pile[: self._revealed]],
            pile_left=TURNS_PER_ROUND - self._revealed,
            last_raid=[d + 1 for d in self._last_raid],
            forfeited=self.forfeited,
            forfeit_order=self.forfeit_order,
            dealt=self._dealt,
            round_limit=self.config.round_limit,
            setup=self.config.setup,
            control=self.config.control,
            target_districts=targets[0],
            target_points=targets[1],
        )

    def hidden_cards(self) -> tuple[list[int], list[int]]:
        """What no seat knows (H5): the unrevealed protection cards, top first, and
        this round's raid cards, as 1-based districts. For the replay viewer's
        all-seeing view only; a seat's view never holds them."""
        if self._outcome is not None:
            return [], []
        return [d + 1 for d in self._pile[self._revealed :]], [d + 1 for d in self._raid]

    def _action_rule(self) -> str:
        return "P1"

    def _apply_action(self, seat: int, action: Place) -> list[msgspec.Struct]:
        placements = action.placements
        if placements.__class__ is not list:
            raise IllegalAction("P1", f"placements must be a list, got {type(placements).__name__}")
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
                if o == NOBODY:
                    owner[d] = seat
                    minbase[d] = c
                elif o == seat:
                    minbase[d] += c
                elif o >= 0:
                    owner[d] = SHARED
                    minbase[d] = 1
            self._hands[seat] -= total
        self._min_cache = None
        turn = self._turn
        events: list[msgspec.Struct] = [Placed(seat, turn, list(placements))]
        self._vendetta(seat, events)
        # The common case of _after_turn inline: next turn, same round, seat in play.
        turn += 1
        if turn < TURNS_PER_ROUND:
            nxt = (self._start + turn) % self.n
            if not self.forfeited[nxt]:
                self._turn = turn
                self.to_move = nxt
                return events
        self._after_turn(events)
        return events

    def _after_forfeit(self, seat: int, events: list[msgspec.Struct]) -> None:
        """H2: a seat that forfeits on its own turn plays it as an empty placement."""
        self._min_cache = None
        if seat == self.to_move:
            events.append(Placed(seat, self._turn, []))
            self._vendetta(seat, events)
            self._after_turn(events)

    # -- validation ----------------------------------------------------------

    def _out_of_turn(self, seat: int) -> IllegalAction:
        return IllegalAction(
            "R2",
            f"turn {self._turn} of round {self._round} belongs to seat {self.to_move}, not seat {seat}",
        )

    def _check_placements(self, seat: int, placements: list[Placement]) -> int:
        """The total placed, or IllegalAction naming the first broken rule."""
        k = len(placements)
        if self._turn == 0 and k > 1:
            raise IllegalAction("P2", f"turn 0 of a round allows 1 district; you named {k}")
        if k > 2:
            raise IllegalAction("P1", f"a turn allows at most 2 districts; you named {k}")
        total = 0
        previous = 0
        for p in placements:
            if p.__class__ is not Placement and not isinstance(p, Placement):
                raise IllegalAction("P1", f"a placement must be a Placement, got {type(p).__name__}")
            d = p.district
            c = p.count
            if type(d) is not int or not 1 <= d <= N_DISTRICTS:
                raise IllegalAction("P1", f"district {d!r} does not exist; districts are 1..13")
            if type(c) is not int or c < 1:
                raise IllegalAction(
                    "P3",
                    f"district {d} must receive at least 1 mafioso; you placed {c!r}",
                )
            if d == previous:
                raise IllegalAction("P1", f"district {d} is named twice; the districts must be distinct")
            previous = d
            total += c
        hand = self._hands[seat]
        if total > hand:
            raise IllegalAction("P3", f"you placed {total} mafiosi but hold {hand} in hand")
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
        if o == NOBODY:  # V2
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
        forfeited = self.forfeited
        while True:
            t = self._turn + 1
            if t == TURNS_PER_ROUND:
                self._end_round(events)
                if self._outcome is not None:
                    return
            else:
                self._turn = t
                self.to_move = (self._start + t) % self.n
            seat = self.to_move
            if not forfeited[seat]:
                return
            events.append(Placed(seat, self._turn, []))  # H2: an empty placement
            self._vendetta(seat, events)

    def _begin_round(self) -> None:
        order = checked_shuffle(self._chance, "round", N_DISTRICTS)  # R1
        self._pile = order[:TURNS_PER_ROUND]
        self._raid = order[TURNS_PER_ROUND:]
        self._revealed = 0
        self._turn = 0
        self.to_move = self._start

    def _end_round(self, events: list[msgspec.Struct]) -> None:
        """E1-E4: raid, score, check victory, reinforce and start the next round."""
        n = self.n
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
            self._owner[d] = NOBODY
            self._minbase[d] = 1
        self._last_raid = self._raid
        events.append(Raided([d + 1 for d in self._raid], lost))

        controlled = [0] * n  # E2
        if self.config.control == "sole":
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

        if self._winners():  # E3
            self._finish("victory", events)
            return
        if self._round >= self.config.round_limit:  # H3
            self._finish("round_limit", events)
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
        target_districts, target_points = TARGETS[self.n]
        controlled = self._controlled
        points = self._points
        if max(controlled) < target_districts and max(points) < target_points:
            return []  # the usual case, decided without building anything
        in_play = [s for s in range(self.n) if not self.forfeited[s]]
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

    def _final_outcome(self, ended_by: str) -> Outcome:
        """H1: winners first, then points, then districts controlled; forfeits last."""
        n = self.n
        if ended_by == "victory":
            winners = self._winners()
        elif ended_by == "forfeits":  # the one seat left in play
            winners = [s for s in range(n) if not self.forfeited[s]]
        else:
            winners = []
        points = self._points
        controlled = self._controlled
        keys = [(1, 0, 0) if s in winners else (0, points[s], controlled[s]) for s in range(n)]
        on_board = [sum(row[s] for row in self._board) for s in range(n)]
        return Outcome(
            ranks=rank_seats(keys, self.forfeit_order),
            scores=points[:],
            winners=winners,
            forfeited=self.forfeit_order[:],
            ended_by=ended_by,
            stats={"districts": controlled[:], "mafiosi": on_board},
        )

    def _end_event(self, outcome: Outcome) -> GameEnded:
        return GameEnded(outcome.ended_by, outcome.winners[:], outcome.ranks[:], outcome.scores[:])
