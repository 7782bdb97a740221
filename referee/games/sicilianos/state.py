"""One Sicilianos game in progress: the state machine behind decision/apply/view.

The game is a sequence of steps. ``stage`` says which step is pending and the
``_prep_*`` method of that stage either finds the decision to ask (seat, kind,
options) or, when nobody has a choice, plays the step itself and moves on. A
decision with a single option is played by the engine too, so a bot is only
asked when it has a real choice; a forfeited seat's steps are reduced to their
passive option (H2) the same way. ``_do_*`` carries out a chosen option.

Because every legal option is listed, ``apply`` validates by membership: an
action that is not one of the options raises IllegalAction before anything
changes, with a message explaining which rule it breaks (``_explain``).
"""

from __future__ import annotations

import random
from bisect import insort
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final, Literal, get_args

import msgspec

from referee.games.base import Chance, Decision, GameState, IllegalAction, Outcome, checked_shuffle, rank_seats
from referee.games.sicilianos.components import (
    BODYGUARD,
    BOMB,
    BOMB_TARGETS,
    COLOUR_INDEX,
    COLOURS,
    DIE_ACTIONS,
    HAND_LIMIT,
    KIND_INDEX,
    KINDS,
    N_CARDS,
    N_COLOURS,
    NOTE_INDEX,
    NOTE_VALUES,
    NOTES_PER_VALUE,
    PARTNER,
    RENEGADE,
    SETUP_CARDS,
    VALUES_PER_COLOUR,
    card_id,
    colour_of,
    pair_of,
    parse_action_die,
    value_of,
)
from referee.games.sicilianos.messages import (
    AsFamily,
    AsRenegade,
    BusinessTaken,
    BusinessView,
    Card,
    CardUsed,
    Dice,
    Draw,
    Drew,
    Explode,
    Exploded,
    FamilyStrength,
    GameEnded,
    Give,
    Inspect,
    Inspected,
    Join,
    Joined,
    KnownPile,
    Laundered,
    NoBusiness,
    Participant,
    Pass,
    Passed,
    Pick,
    Play,
    Played,
    PlayerView,
    Returned,
    Revealed,
    Roll,
    Rolled,
    SicilianosAction,
    SicilianosConfig,
    SicilianosView,
    Skipped,
    Spoils,
    SpoilsChosen,
    StakesLost,
    StartWar,
    StayedOut,
    StayOut,
    Steal,
    StealView,
    Stole,
    TakeBusiness,
    TookNothing,
    WarCard,
    WarCardShown,
    WarResolved,
    WarStarted,
    WarView,
)
from referee.games.sicilianos.scoring import final_scores, godfather_of
from referee.games.sicilianos.war import War, winning_seat

__all__ = ["DECISION_RULES", "KIND_ACTIONS", "SicilianosState", "events_for", "pick_option"]

# Stages: which step of the game is pending.
(
    SETUP,
    TURN,
    TAKE2,
    TAKE1,
    PICK,
    STEAL,
    GIVE,
    JOIN,
    PLAY,
    SPECIAL,
    SPOILS,
    BUSINESS,
    OVER,
) = range(13)
_TAKE2_FACE, _TAKE1_FACE, _STEAL_FACE = range(3)

# The rule each decision kind is about, for IllegalAction.
DECISION_RULES: Final[dict[str, str]] = {
    "setup": "S3",
    "turn": "T0",
    "take2_colour": "D2",
    "take1": "D1",
    "pick": "D1",
    "steal": "DS",
    "give": "DS",
    "join": "G2",
    "play": "G4",
    "renegade": "G5",
    "bomb": "G6",
    "spoils": "G8",
    "business": "G8",
}

# The rule behind each way a game ends, for an action sent after the end.
_END_RULES: Final[dict[str, str]] = {
    "godfather": "E1",
    "no_dirty_money": "E2",
    "turn_limit": "H1",
    "forfeits": "H2",
}

# The action types each decision kind takes (check-bot forces a position offering each set).
KIND_ACTIONS: Final[dict[str, tuple[type, ...]]] = {
    "setup": (Draw,),
    "turn": (Roll, StartWar),
    "take2_colour": (Draw,),
    "take1": (Draw, Inspect),
    "pick": (Pick,),
    "steal": (Steal,),
    "give": (Give,),
    "join": (Join, StayOut),
    "play": (Play, Pass),
    "renegade": (AsFamily, AsRenegade),
    "bomb": (AsFamily, Explode),
    "spoils": (Spoils,),
    "business": (TakeBusiness,),
}

# Every option is a frozen Struct made once here: building a decision is then only
# list work, and random_action hands back an option that apply finds by identity.
_CARDS: Final = tuple(Card(COLOURS[colour_of(c)], value_of(c)) for c in range(N_CARDS))
_DRAW: Final = tuple(Draw(name) for name in COLOURS)
_INSPECT: Final = tuple(Inspect(name) for name in COLOURS)
_PICK: Final = tuple(Pick(v) for v in range(VALUES_PER_COLOUR + 1))
_GIVE: Final = tuple(Give(v) for v in range(VALUES_PER_COLOUR + 1))
_ROLL: Final = Roll()
_STAY_OUT: Final = StayOut()
_PASS: Final = Pass()
_AS_FAMILY: Final = AsFamily()
_AS_RENEGADE: Final = AsRenegade()
_SPOILS: Final = (Spoils("business"), Spoils("launder"))
_TAKE_BUSINESS: Final = tuple(TakeBusiness(kind) for kind in KINDS)
_START_WAR: Final = tuple(
    tuple(StartWar(COLOURS[colour_of(c)], value_of(c), note) for note in NOTE_VALUES) for c in range(N_CARDS)
)
_JOIN: Final = tuple(
    tuple(Join(COLOURS[colour_of(c)], value_of(c), note) for note in NOTE_VALUES) for c in range(N_CARDS)
)
_PLAY: Final = tuple(Play(COLOURS[colour_of(c)], value_of(c)) for c in range(N_CARDS))
_EXPLODE: Final = tuple(Explode(COLOURS[colour_of(c)], value_of(c)) for c in range(N_CARDS))
_MAX_SEATS: Final = 6
_STEAL: Final = tuple(tuple(Steal(t, name) for name in COLOURS) for t in range(_MAX_SEATS))
_NOTE_RANGE: Final = range(len(NOTE_VALUES))
# The views' parts made once, like the options above: a card's colour (all that
# the others see of a hand, I1), each business face up and face down (frozen, so
# every view may hold the same one), the note values largest first.
_CARD_COLOUR: Final = tuple(COLOURS[colour_of(c)] for c in range(N_CARDS))
_BUSINESS_UP: Final = tuple(BusinessView(COLOURS[b // 3], KINDS[b % 3]) for b in range(N_COLOURS * len(KINDS)))
_BUSINESS_DOWN: Final = tuple(BusinessView(COLOURS[b // 3], None) for b in range(N_COLOURS * len(KINDS)))
_NOTES_DOWN: Final = tuple((i, NOTE_VALUES[i]) for i in reversed(_NOTE_RANGE))
# pass_action's choices, in order; a decision holds at most one of them.
_MILD: Final = (_STAY_OUT, _PASS, _ROLL, _AS_FAMILY, _SPOILS[1])

_Prep = tuple[int, str, list[Any]] | None


def pick_option(decision: Decision, rng: random.Random) -> Any:
    """A uniformly random legal answer to ``decision``: a bot needs no game state for it."""
    options = decision.options
    if not options:
        raise ValueError(f"the {decision.kind} decision lists no options")
    return options[int(rng.random() * len(options))]


def _names(colours: list[int] | set[int] | tuple[int, ...]) -> str:
    return ", ".join(COLOURS[c] for c in sorted(colours))


class SicilianosState(GameState):
    """One Sicilianos game (mutable; only apply and forfeit change it).

    The checks every game shares (turn order, the end, forfeits, copying) are
    ``GameState``'s; this class runs the step machine.

    The true state is readable for referees and tests: ``hands`` (card numbers,
    sorted), ``piles`` (top card last), ``notes`` (dirty notes counted per value
    in NOTE_VALUES order), ``clean``, ``bank`` (what the bank took minus what it
    paid), ``businesses`` and ``business_piles``, ``war``.
    """

    __slots__ = (
        "_decision",
        "_faces",
        "bank",
        "business_piles",
        "businesses",
        "clean",
        "dice",
        "godfather",
        "hands",
        "inspecting",
        "known",
        "last_steal",
        "notes",
        "pile_version",
        "piles",
        "setup_step",
        "stage",
        "steal_target",
        "turn_seat",
        "turns",
        "war",
    )

    game: ClassVar[str] = "sicilianos"
    action_classes: ClassVar[frozenset[type]] = frozenset(get_args(SicilianosAction))
    end_rules: ClassVar[dict[str, str]] = _END_RULES

    config: SicilianosConfig
    _faces: tuple[int, ...]
    _decision: Decision | None
    hands: list[list[int]]
    piles: list[list[int]]
    pile_version: list[int]
    known: list[dict[int, int]]
    notes: list[list[int]]
    clean: list[int]
    bank: int
    businesses: list[list[int]]
    business_piles: list[list[int]]
    turns: int
    turn_seat: int
    stage: int
    setup_step: int
    dice: tuple[int, int, int, int] | None
    inspecting: int
    steal_target: tuple[int, int] | None
    last_steal: tuple[int, int, int] | None
    war: War | None
    godfather: int | None

    def __init__(self, n_players: int, config: SicilianosConfig, chance: Chance) -> None:
        super().__init__(n_players, config, chance)
        n = n_players
        self._faces = parse_action_die(config.action_die)
        # S2: one shuffle per colour, drawn in colour order before anything else.
        self.piles = []
        for colour, name in enumerate(COLOURS):
            order = checked_shuffle(chance, f"pile:{name}", VALUES_PER_COLOUR)
            # order[0] is the top card; the list keeps the top at its end.
            self.piles.append([card_id(colour, v + 1) for v in reversed(order)])
        self.pile_version = [0] * N_COLOURS
        self.known = [{} for _ in range(n)]
        self.hands = [[] for _ in range(n)]
        self.notes = [[NOTES_PER_VALUE] * len(NOTE_VALUES) for _ in range(n)]  # S1
        self.clean = [0] * n
        self.bank = 0
        self.businesses = [[] for _ in range(n)]
        # Business piles are looked through whole before a pick (G8), so their
        # order never matters and they are not shuffled.
        self.business_piles = [[0, 1, 2] for _ in range(N_COLOURS)]
        self.turns = 0
        self.turn_seat = 0
        self.stage = SETUP
        self.setup_step = 0
        self.dice = None
        self.inspecting = -1
        self.steal_target = None
        self.last_steal = None
        self.war = None
        self.godfather = None
        self._decision = None
        self._advance([])

    def _copy_into(self, other: SicilianosState) -> None:
        other._faces = self._faces
        other._decision = self._decision  # frozen; its options are shared frozen Structs
        other.hands = [hand[:] for hand in self.hands]
        other.piles = [pile[:] for pile in self.piles]
        other.pile_version = self.pile_version[:]
        other.known = [dict(k) for k in self.known]
        other.notes = [notes[:] for notes in self.notes]
        other.clean = self.clean[:]
        other.bank = self.bank
        other.businesses = [owned[:] for owned in self.businesses]
        other.business_piles = [pile[:] for pile in self.business_piles]
        other.turns = self.turns
        other.turn_seat = self.turn_seat
        other.stage = self.stage
        other.setup_step = self.setup_step
        other.dice = self.dice
        other.inspecting = self.inspecting
        other.steal_target = self.steal_target
        other.last_steal = self.last_steal
        other.war = None if self.war is None else self.war.copy()
        other.godfather = self.godfather

    # -- the GameState interface -----------------------------------------------

    def decision(self) -> Decision | None:
        return self._decision

    def _random_action(self, rng: random.Random) -> Any:
        """A uniformly random choice among the options of the pending decision."""
        decision = self._decision
        assert decision is not None  # the base refuses once the game is over
        return pick_option(decision, rng)

    def _pass_action(self) -> Any:
        """The mildest legal option: stay out, pass, roll, count as a family card, launder.

        Where the decision has none of these (setup, a forced war, a take-1 or
        steal choice, a business pick, ...) it is the first option, or for a
        forced war the smallest stake on the lowest card.
        """
        decision = self._decision
        assert decision is not None and decision.options  # the base refuses once the game is over
        options = decision.options
        for mild in _MILD:
            if mild in options:
                return mild
        if decision.kind == "turn":
            return min(options, key=lambda war: (war.note, war.value))
        return options[0]

    def _out_of_turn(self, seat: int) -> IllegalAction:
        decision = self._decision
        assert decision is not None
        return IllegalAction(
            DECISION_RULES[decision.kind], f"seat {decision.seat} must decide now ({decision.kind}), not seat {seat}"
        )

    def _action_rule(self) -> str:
        decision = self._decision
        assert decision is not None
        return DECISION_RULES[decision.kind]

    def _apply_action(self, seat: int, action: Any) -> list[msgspec.Struct]:
        decision = self._decision
        assert decision is not None and decision.options is not None
        if action not in decision.options:
            raise IllegalAction(*self._explain(decision, action))
        events: list[msgspec.Struct] = []
        self._decision = None
        _HANDLE[self.stage](self, seat, action, events)
        self._advance(events)
        return events

    def _after_forfeit(self, seat: int, events: list[msgspec.Struct]) -> None:
        if self._decision is not None and self._decision.seat == seat:
            # Ask the pending step again: its prep now plays the passive option.
            self._decision = None
            self._advance(events)

    def events_for(self, seat: int, events: list[msgspec.Struct]) -> list[msgspec.Struct]:
        return events_for(seat, events)

    def _final_outcome(self, ended_by: str) -> Outcome:
        """The Godfather first (E1), then by score (E3); forfeited seats last (H2)."""
        scores = self.scores()
        keys = [(1, 0) if seat == self.godfather else (0, scores[seat]) for seat in range(self.n)]
        ranks = rank_seats(keys, self.forfeit_order)
        per_kind = [[sum(1 for b in owned if b % 3 == k) for owned in self.businesses] for k in range(3)]
        return Outcome(
            ranks=ranks,
            scores=scores,
            winners=[seat for seat in range(self.n) if ranks[seat] == 1],
            forfeited=self.forfeit_order[:],
            ended_by=ended_by,
            stats={
                "clean": self.clean[:],
                "dirty": self.dirty(),
                "businesses": [len(owned) for owned in self.businesses],
                "antiques": per_kind[0],
                "restaurants": per_kind[1],
                "laundries": per_kind[2],
            },
        )

    def _end_event(self, outcome: Outcome) -> GameEnded:
        return GameEnded(
            ended_by=outcome.ended_by,
            godfather=self.godfather,
            scores=outcome.scores,
            ranks=outcome.ranks,
            businesses=[[BusinessView(COLOURS[b // 3], KINDS[b % 3]) for b in owned] for owned in self.businesses],
        )

    # -- derived figures -------------------------------------------------------

    def dirty(self) -> list[int]:
        """Each seat's dirty money in hand (stakes on the table not counted)."""
        return [sum(NOTE_VALUES[i] * count for i, count in enumerate(notes)) for notes in self.notes]

    def scores(self) -> list[int]:
        """The E3 score of every seat as things stand."""
        return final_scores(self.clean, self.dirty(), self.businesses)

    def hidden_twin(self, seat: int, rng: random.Random) -> SicilianosState:
        """A copy with everything hidden from ``seat`` dealt again (I1-I3): the cards in
        other hands, in piles it has not looked through, face down on the war table
        (each swapped within its colour, which is public), and the kinds of the
        businesses it does not own (within their colour)."""
        twin = self.copy()
        hidden: set[int] = set()
        for p, hand in enumerate(self.hands):
            if p != seat:
                hidden.update(hand)
        war = self.war
        if war is not None:
            for p, cards in war.cards.items():
                if p != seat:
                    hidden.update(c for c in cards if c in war.face_down)
        for colour in range(N_COLOURS):
            if not self.known_pile(seat, colour):
                hidden.update(self.piles[colour])
        if self.last_steal is not None and seat in self.last_steal[:2]:
            hidden.discard(self.last_steal[2])  # thief and victim both know the stolen card
        swap: dict[int, int] = {}
        for colour in range(N_COLOURS):
            group = sorted(c for c in hidden if colour_of(c) == colour)
            dealt = group[:]
            rng.shuffle(dealt)
            swap.update(zip(group, dealt, strict=True))
        for p in range(self.n):
            if p != seat:
                twin.hands[p] = sorted(swap.get(c, c) for c in twin.hands[p])
        twin.piles = [[swap.get(c, c) for c in pile] for pile in twin.piles]
        if twin.war is not None:
            twin.war.cards = {p: [swap.get(c, c) for c in cards] for p, cards in twin.war.cards.items()}
            twin.war.face_down = [swap.get(c, c) for c in twin.war.face_down]
        if self.stage != OVER:  # at the end every business is shown
            mine = set(self.businesses[seat])
            for colour in range(N_COLOURS):
                kinds = [b % 3 for b in range(colour * 3, colour * 3 + 3) if b not in mine]
                rng.shuffle(kinds)
                for p in range(self.n):
                    if p != seat:
                        twin.businesses[p] = [
                            colour * 3 + kinds.pop() if b // 3 == colour else b for b in twin.businesses[p]
                        ]
                twin.business_piles[colour] = sorted(kinds.pop() for _ in twin.business_piles[colour])
        return twin

    def known_pile(self, seat: int, colour: int) -> bool:
        """True if ``seat`` knows the order of ``colour``'s pile (I2): it looked and nothing changed."""
        return self.known[seat].get(colour) == self.pile_version[colour]

    # -- the view --------------------------------------------------------------

    def _view(self, seat: int) -> SicilianosView:
        return self._views((seat,))[0]

    def every_view(self) -> list[SicilianosView]:
        """``view(seat)`` of every seat, in seat order, for a caller that wants them all at once.

        Each is what ``view(seat)`` gives, built in one pass: a player's public
        part (its notes, hand colours, businesses face down) is made once for
        all the seats that see it, not once per seat. The views share those
        parts, the piles' counts among them: none of them may be changed.
        """
        return self._views(range(self.n))

    def _views(self, seats: Sequence[int]) -> list[SicilianosView]:
        n = self.n
        over = self.stage == OVER
        # Player p's businesses are face up for p itself, and for everyone once the game
        # is over; each player's part is made in the forms the asked-for seats need, no more.
        face_up: list[PlayerView | None] = [None] * n
        face_down: list[PlayerView | None] = [None] * n
        only = seats[0] if len(seats) == 1 else None  # the referee's case: one seat's view
        for p in range(n):
            up = over or only is None or p == only
            down = not over and p != only
            counts = self.notes[p]
            notes = [value for i, value in _NOTES_DOWN for _ in range(counts[i])]
            hand = [_CARD_COLOUR[c] for c in self.hands[p]]
            owned = self.businesses[p]
            for wanted, table, faces in ((up, face_up, _BUSINESS_UP), (down, face_down, _BUSINESS_DOWN)):
                if wanted:
                    table[p] = PlayerView(
                        seat=p,
                        hand=hand,
                        hand_size=len(hand),
                        notes=notes,
                        dirty=sum(notes),
                        clean=self.clean[p],
                        businesses=[faces[b] for b in owned],
                        forfeited=self.forfeited[p],
                    )
        dice = None
        if self.dice is not None:
            roller, c1, c2, face = self.dice
            dice = Dice(roller, [COLOURS[c1], COLOURS[c2]], DIE_ACTIONS[face])
        decision = self._decision
        piles: dict[str, int] = {COLOURS[c]: len(self.piles[c]) for c in range(N_COLOURS)}
        business_piles: dict[str, int] = {COLOURS[c]: len(self.business_piles[c]) for c in range(N_COLOURS)}
        views = []
        for seat in seats:
            known = [
                KnownPile(COLOURS[c], [value_of(card) for card in reversed(self.piles[c])])
                for c in range(N_COLOURS)
                if self.known_pile(seat, c)
            ]
            steal = None
            if self.last_steal is not None:
                thief, victim, card = self.last_steal
                steal = StealView(
                    thief,
                    victim,
                    COLOURS[colour_of(card)],
                    value_of(card) if seat in (thief, victim) else None,
                )
            players = [face_up[p] if over or p == seat else face_down[p] for p in range(n)]
            views.append(
                SicilianosView(
                    seat=seat,
                    n_players=n,
                    phase=_PHASES[self.stage],
                    to_move=None if decision is None else decision.seat,
                    decision=None if decision is None else decision.kind,
                    turn_seat=self.turn_seat,
                    turns=self.turns,
                    turn_limit=self.config.turn_limit,
                    dice=dice,
                    piles=piles,
                    business_piles=business_piles,
                    players=players,  # type: ignore[arg-type]  # none is None: the loop above made each this seat shows
                    hand=[_CARDS[c] for c in self.hands[seat]],
                    known_piles=known,
                    last_steal=steal,
                    # A game ended by forfeits can stop mid-war; the view shows no table then.
                    war=None if self.war is None or over else self._war_view(self.war, seat),
                    ended_by=self.ended_by,
                )
            )
        return views

    def _war_view(self, war: War, seat: int) -> WarView:
        hidden = war.face_down
        undecided = war.queue[war.cursor :] if self.stage == SPECIAL else []
        strength = war.strengths(revealed_only=True)
        participants = []
        for p in war.order:
            cards = []
            renegade = war.renegade.get(p)
            for card in war.cards[p]:
                face_down = card in hidden
                cards.append(
                    WarCard(
                        colour=_CARD_COLOUR[card],
                        value=None if face_down and p != seat else value_of(card),
                        face_down=face_down,
                        use="renegade" if card == renegade else "undecided" if card in undecided else "family",
                    )
                )
            participants.append(
                Participant(
                    seat=p,
                    colour=COLOURS[war.family[p]],
                    stake=war.stake[p],
                    cards=cards,
                    strength=strength[p],
                    passed=p in war.passed,
                    stopped=p in war.stopped,
                    ally=war.ally.get(p),
                )
            )
        return WarView(
            initiator=war.initiator,
            stage=_WAR_STAGES.get(self.stage, "spoils"),
            round=war.reveals,
            participants=participants,
            winners=war.winners[:],
        )

    # -- the step loop -----------------------------------------------------------

    def _advance(self, events: list[msgspec.Struct]) -> None:
        """Play every step nobody has a choice in, up to the next real decision or the end."""
        while self.stage != OVER:
            found = _PREP[self.stage](self, events)
            if found is None:
                continue
            seat, kind, options = found
            if len(options) == 1:
                _HANDLE[self.stage](self, seat, options[0], events)
                continue
            self._decision = Decision(seat=seat, kind=kind, options=options)
            self.to_move = seat
            return
        self._decision = None

    def _close(self) -> None:
        self.stage = OVER
        self._decision = None

    def _end_turn(self) -> None:
        self.turn_seat = (self.turn_seat + 1) % self.n
        self.stage = TURN

    def _take_top(self, seat: int, colour: int, source: Literal["setup", "top"], events: list[msgspec.Struct]) -> None:
        card = self.piles[colour].pop()
        self.pile_version[colour] += 1
        insort(self.hands[seat], card)
        events.append(Drew(seat, COLOURS[colour], value_of(card), source))

    def _put_under(self, card: int) -> None:
        colour = colour_of(card)
        self.piles[colour].insert(0, card)
        self.pile_version[colour] += 1

    # -- S3 setup ----------------------------------------------------------------

    def _prep_setup(self, events: list[msgspec.Struct]) -> _Prep:
        step = self.setup_step
        n = self.n
        if step >= SETUP_CARDS * n:
            self.stage = TURN  # S4: seat 0 starts
            self.turn_seat = 0
            return None
        seat = step % n
        if self.forfeited[seat]:
            events.append(Skipped(seat))
            self.setup_step += 1
            return None
        held = {colour_of(c) for c in self.hands[seat]}
        piles = self.piles
        return (
            seat,
            "setup",
            [_DRAW[c] for c in range(N_COLOURS) if c not in held and piles[c]],
        )

    def _do_setup(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        self._take_top(seat, COLOUR_INDEX[action.colour], "setup", events)
        self.setup_step += 1

    # -- T0 the turn -------------------------------------------------------------

    def _prep_turn(self, events: list[msgspec.Struct]) -> _Prep:
        if self.turns >= self.config.turn_limit:
            self._finish("turn_limit", events)  # H1
            return None
        seat = self.turn_seat
        if self.forfeited[seat]:
            events.append(Skipped(seat))
            self._end_turn()
            return None
        hand = self.hands[seat]
        notes = self.notes[seat]
        held = [i for i in _NOTE_RANGE if notes[i]]
        options: list[Any] = []
        # T0: 10 cards force a war, no card forces a roll; [A] no dirty note forces a roll.
        if len(hand) < HAND_LIMIT or not held:
            options.append(_ROLL)
        if held:
            for card in hand:
                row = _START_WAR[card]
                options.extend([row[i] for i in held])
        return seat, "turn", options

    def _do_turn(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        self.turns += 1
        if action.__class__ is Roll:
            self._roll(seat, events)
        else:
            self._start_war(seat, action, events)

    def _roll(self, seat: int, events: list[msgspec.Struct]) -> None:
        # T1/H3: every roll draws exactly three numbers from the "dice" stream, so the
        # n-th roll of a game sees the same dice whoever rolls it.
        below = self._chance.below
        c1 = below("dice", N_COLOURS)
        c2 = below("dice", N_COLOURS)
        face = self._faces[below("dice", len(self._faces))]
        self.dice = (seat, c1, c2, face)
        events.append(Rolled(seat, [COLOURS[c1], COLOURS[c2]], DIE_ACTIONS[face]))
        room = HAND_LIMIT - len(self.hands[seat])
        if room <= 0:
            # Only reachable by a seat with 10 cards and no note ([A] of T0).
            events.append(TookNothing(seat, "T0", "the hand already holds 10 cards"))
            self._end_turn()
        elif face == _TAKE2_FACE:
            if room >= 2:
                for colour in (c1, c2):
                    if self.piles[colour]:
                        self._take_top(seat, colour, "top", events)
                    else:
                        events.append(TookNothing(seat, "D2", f"the {COLOURS[colour]} pile is empty"))
                self._end_turn()
            else:
                self.stage = TAKE2
        elif face == _TAKE1_FACE:
            self.stage = TAKE1
        else:
            self.stage = STEAL

    # -- D2 take 2 with 9 cards --------------------------------------------------

    def _rolled_colours(self) -> list[int]:
        assert self.dice is not None
        _, c1, c2, _ = self.dice
        return [c1] if c1 == c2 else sorted((c1, c2))

    def _prep_take2(self, events: list[msgspec.Struct]) -> _Prep:
        seat = self.turn_seat
        if self.forfeited[seat]:
            self._end_turn()
            return None
        options: list[Any] = [_DRAW[c] for c in self._rolled_colours() if self.piles[c]]
        if not options:
            events.append(TookNothing(seat, "D2", "both rolled piles are empty"))
            self._end_turn()
            return None
        return seat, "take2_colour", options

    def _do_take2(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        self._take_top(seat, COLOUR_INDEX[action.colour], "top", events)
        self._end_turn()

    # -- D1 take 1 ---------------------------------------------------------------

    def _prep_take1(self, events: list[msgspec.Struct]) -> _Prep:
        seat = self.turn_seat
        if self.forfeited[seat]:
            self._end_turn()
            return None
        piles = self.piles
        options: list[Any] = [_DRAW[c] for c in range(N_COLOURS) if piles[c]]
        options.extend([_INSPECT[c] for c in self._rolled_colours() if piles[c]])
        if not options:
            events.append(TookNothing(seat, "D1", "every pile is empty"))
            self._end_turn()
            return None
        return seat, "take1", options

    def _do_take1(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        colour = COLOUR_INDEX[action.colour]
        if action.__class__ is Draw:
            self._take_top(seat, colour, "top", events)
            self._end_turn()
            return
        self.inspecting = colour
        # I2: from now on the seat knows this pile's order until the pile changes, whether it picks,
        # forfeits before it picks, or the game ends by others' forfeits in the middle of its pick.
        self.known[seat][colour] = self.pile_version[colour]
        order = [value_of(card) for card in reversed(self.piles[colour])]
        events.append(Inspected(seat, action.colour, order))
        self.stage = PICK

    def _prep_pick(self, events: list[msgspec.Struct]) -> _Prep:
        seat = self.turn_seat
        if self.forfeited[seat]:
            self.inspecting = -1
            self._end_turn()
            return None
        return (
            seat,
            "pick",
            [_PICK[value_of(card)] for card in sorted(self.piles[self.inspecting])],
        )

    def _do_pick(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        colour = self.inspecting
        card = card_id(colour, action.value)
        self.piles[colour].remove(card)  # the others stay in their order
        self.pile_version[colour] += 1
        self.known[seat][colour] = self.pile_version[colour]
        insort(self.hands[seat], card)
        self.inspecting = -1
        events.append(Drew(seat, COLOURS[colour], action.value, "inspect"))
        self._end_turn()

    # -- DS steal ----------------------------------------------------------------

    def _prep_steal(self, events: list[msgspec.Struct]) -> _Prep:
        seat = self.turn_seat
        if self.forfeited[seat]:
            self._end_turn()
            return None
        n = self.n
        colours = self._rolled_colours()
        options: list[Any] = []
        for k in range(1, n):
            target = (seat + k) % n
            held = {colour_of(c) for c in self.hands[target]}
            options.extend([_STEAL[target][c] for c in colours if c in held])
        if not options:
            events.append(TookNothing(seat, "DS", "no other seat holds a rolled colour"))
            self._end_turn()
            return None
        return seat, "steal", options

    def _do_steal(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        target = action.target
        colour = COLOUR_INDEX[action.colour]
        cards = [c for c in self.hands[target] if colour_of(c) == colour]
        if self.config.steal_pick == "victim" and len(cards) > 1 and not self.forfeited[target]:
            self.steal_target = (target, colour)
            self.stage = GIVE
            return
        # [A] Values are hidden from the thief, so the card is drawn at random.
        card = cards[self._chance.below("steal", len(cards))] if len(cards) > 1 else cards[0]
        self._transfer(seat, target, card, "chance", events)
        self._end_turn()

    def _prep_give(self, events: list[msgspec.Struct]) -> _Prep:
        assert self.steal_target is not None
        victim, colour = self.steal_target
        cards = [c for c in self.hands[victim] if colour_of(c) == colour]
        if self.forfeited[victim]:
            card = cards[self._chance.below("steal", len(cards))] if len(cards) > 1 else cards[0]
            self._transfer(self.turn_seat, victim, card, "chance", events)
            self.steal_target = None
            self._end_turn()
            return None
        return victim, "give", [_GIVE[value_of(c)] for c in cards]

    def _do_give(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        assert self.steal_target is not None
        _, colour = self.steal_target
        self._transfer(self.turn_seat, seat, card_id(colour, action.value), "victim", events)
        self.steal_target = None
        self._end_turn()

    def _transfer(
        self,
        thief: int,
        victim: int,
        card: int,
        picked_by: Literal["chance", "victim"],
        events: list[msgspec.Struct],
    ) -> None:
        self.hands[victim].remove(card)
        insort(self.hands[thief], card)
        self.last_steal = (thief, victim, card)
        events.append(Stole(thief, victim, COLOURS[colour_of(card)], value_of(card), picked_by))

    # -- G1/G2 the war starts ------------------------------------------------------

    def _start_war(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        card = card_id(COLOUR_INDEX[action.colour], action.value)
        war = War(seat)
        self.hands[seat].remove(card)
        self.notes[seat][NOTE_INDEX[action.note]] -= 1
        war.enter(seat, card, action.note)
        events.append(WarStarted(seat, action.colour, action.value, action.note))
        n = self.n
        war.queue = [(seat + k) % n for k in range(1, n)]
        war.cursor = 0
        self.war = war
        self.stage = JOIN

    def _prep_join(self, events: list[msgspec.Struct]) -> _Prep:
        war = self.war
        assert war is not None
        if war.cursor >= len(war.queue):
            self._reveal(war, True, events)  # G3
            return None
        seat = war.queue[war.cursor]
        if self.forfeited[seat]:
            return seat, "join", [_STAY_OUT]
        notes = self.notes[seat]
        held = [i for i in _NOTE_RANGE if notes[i]]
        options: list[Any] = []
        if held:
            taken = war.seat_of
            for card in self.hands[seat]:
                if colour_of(card) not in taken:
                    row = _JOIN[card]
                    options.extend([row[i] for i in held])
        if not options:
            events.append(StayedOut(seat, "unable"))
            war.cursor += 1
            return None
        options.append(_STAY_OUT)
        return seat, "join", options

    def _do_join(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        war = self.war
        assert war is not None
        if action.__class__ is StayOut:
            events.append(StayedOut(seat, "forfeited" if self.forfeited[seat] else "chose"))
        else:
            card = card_id(COLOUR_INDEX[action.colour], action.value)
            self.hands[seat].remove(card)
            self.notes[seat][NOTE_INDEX[action.note]] -= 1
            war.enter(seat, card, action.note)
            events.append(Joined(seat, action.colour, action.value, action.note))
        war.cursor += 1

    # -- G3/G4 reveals and rounds ----------------------------------------------------

    def _reveal(self, war: War, first: bool, events: list[msgspec.Struct]) -> None:
        cards = war.face_down
        war.face_down = []
        war.reveals += 1
        seat_of = war.seat_of
        events.append(
            Revealed(
                first,
                [WarCardShown(seat_of[colour_of(c)], COLOURS[colour_of(c)], value_of(c)) for c in cards],
            )
        )
        # G5/G6: the Renegades and Bombs just revealed, in turn order from the initiator.
        war.queue = [c for c in cards if value_of(c) in (RENEGADE, BOMB)]
        war.cursor = 0
        war.first_reveal = first
        self.stage = SPECIAL

    def _start_round(self, war: War) -> None:
        war.queue = [p for p in war.order if p not in war.passed and p not in war.stopped]
        war.cursor = 0
        self.stage = PLAY

    def _prep_play(self, events: list[msgspec.Struct]) -> _Prep:
        war = self.war
        assert war is not None
        if war.cursor >= len(war.queue):
            if war.face_down:
                self._reveal(war, False, events)
            else:
                self._resolve(war, events)  # nobody played: the war ends (G4)
            return None
        seat = war.queue[war.cursor]
        if self.forfeited[seat]:
            return seat, "play", [_PASS]
        family = war.family[seat]
        options: list[Any] = [_PLAY[c] for c in self.hands[seat] if colour_of(c) == family]
        if not options:
            # No card of its family left: it cannot play now or later in this war.
            war.passed.add(seat)
            events.append(Passed(seat, "unable"))
            war.cursor += 1
            return None
        options.append(_PASS)
        return seat, "play", options

    def _do_play(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        war = self.war
        assert war is not None
        if action.__class__ is Pass:
            war.passed.add(seat)
            events.append(Passed(seat, "forfeited" if self.forfeited[seat] else "chose"))
        else:
            card = card_id(COLOUR_INDEX[action.colour], action.value)
            self.hands[seat].remove(card)
            war.cards[seat].append(card)
            war.face_down.append(card)
            events.append(Played(seat, action.colour, action.value))
        war.cursor += 1

    # -- G5/G6 Renegades and Bombs -----------------------------------------------------

    def _prep_special(self, events: list[msgspec.Struct]) -> _Prep:
        war = self.war
        assert war is not None
        if war.cursor >= len(war.queue):
            self._start_round(war)
            return None
        card = war.queue[war.cursor]
        seat = war.seat_of[colour_of(card)]
        if card not in war.cards[seat]:
            war.cursor += 1  # an earlier Bomb removed it before its owner decided
            return None
        if value_of(card) == RENEGADE:
            free = pair_of(colour_of(card)) not in war.used_pairs
            if war.first_reveal:
                # Must be a Renegade at the first reveal; [A] when the other card of
                # its pair was used first, it can only count for its family.
                return seat, "renegade", [_AS_RENEGADE if free else _AS_FAMILY]
            if not free or self.forfeited[seat]:
                return seat, "renegade", [_AS_FAMILY]
            return seat, "renegade", [_AS_FAMILY, _AS_RENEGADE]
        if self.forfeited[seat]:
            return seat, "bomb", [_AS_FAMILY]
        options: list[Any] = [_AS_FAMILY]
        options.extend([_EXPLODE[c] for c in war.bomb_targets(seat)])
        return seat, "bomb", options

    def _do_special(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        war = self.war
        assert war is not None
        card = war.queue[war.cursor]
        colour = colour_of(card)
        cls = action.__class__
        if cls is AsFamily:
            events.append(CardUsed(seat, COLOURS[colour], value_of(card), "family", None))
        elif cls is AsRenegade:
            war.used_pairs.add(pair_of(colour))
            war.renegade[seat] = card
            war.stopped.add(seat)
            ally = war.seat_of.get(PARTNER[colour])
            if ally is not None:
                war.ally[seat] = ally
                war.ally[ally] = seat
            events.append(CardUsed(seat, COLOURS[colour], RENEGADE, "renegade", ally))
        else:
            self._explode(war, seat, card, action, events)
        war.cursor += 1

    def _explode(self, war: War, seat: int, bomb: int, action: Any, events: list[msgspec.Struct]) -> None:
        colour = COLOUR_INDEX[action.colour]
        owner = war.seat_of[colour]
        aimed = card_id(colour, action.value)
        guard = card_id(colour, BODYGUARD)
        target_cards = war.cards[owner]
        # G6: the Bodyguard in play takes the hit for its family.
        removed = guard if guard in target_cards else aimed
        target_cards.remove(removed)
        if war.renegade.get(owner) == removed:
            # Its +4 goes with it; the alliance already made stays ([A]).
            del war.renegade[owner]
        self._put_under(removed)
        # [A] An exploded Bomb counts 0 and goes under its pile too.
        war.cards[seat].remove(bomb)
        self._put_under(bomb)
        events.append(
            Exploded(
                seat,
                COLOURS[colour_of(bomb)],
                owner,
                _CARDS[aimed],
                _CARDS[removed],
                removed != aimed,
            )
        )

    # -- G7-G9 the end of a war --------------------------------------------------------

    def _resolve(self, war: War, events: list[msgspec.Struct]) -> None:
        strength = war.strengths(revealed_only=False)
        best = winning_seat(strength)
        # G7: a seat whose every card was bombed away wins nothing, even with its ally.
        stripped = [p for p in war.order if not war.cards[p]]
        winners: list[int] = []
        if best is not None:
            candidates = [best]
            ally = war.ally.get(best)
            if ally is not None:
                candidates.append(ally)
            winners = [p for p in candidates if war.cards[p]]
            war.winning_colour = war.family[best]
        war.winners = winners
        events.append(
            WarResolved(
                [FamilyStrength(p, COLOURS[war.family[p]], strength[p]) for p in war.order],
                None if best is None else COLOURS[war.family[best]],
                winners[:],
                stripped,
            )
        )
        if len(winners) == 2:
            self.stage = SPOILS
        elif winners:
            war.taker = war.launderer = winners[0]
            self.stage = BUSINESS
        else:
            self._finish_war(war, events)

    def _prep_spoils(self, events: list[msgspec.Struct]) -> _Prep:
        war = self.war
        assert war is not None
        chooser = war.winners[0]  # the winning family's player chooses first (G8)
        if self.forfeited[chooser]:
            # [A] A forfeited seat never takes a business: it launders.
            return chooser, "spoils", [_SPOILS[1]]
        return chooser, "spoils", list(_SPOILS)

    def _do_spoils(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        war = self.war
        assert war is not None
        other = war.winners[1]
        if action.take == "business":
            war.taker, war.launderer = seat, other
        else:
            war.taker, war.launderer = other, seat
        events.append(SpoilsChosen(seat, action.take))
        self.stage = BUSINESS

    def _business_colour(self, war: War, taker: int) -> int:
        if self.config.business_colour == "winning" and war.winning_colour is not None:
            return war.winning_colour
        return war.family[taker]

    def _prep_business(self, events: list[msgspec.Struct]) -> _Prep:
        war = self.war
        assert war is not None and war.taker is not None
        taker = war.taker
        colour = self._business_colour(war, taker)
        if self.forfeited[taker]:
            events.append(NoBusiness(taker, COLOURS[colour], "forfeited"))
            self._finish_war(war, events)
            return None
        kinds = self.business_piles[colour]
        if not kinds:
            events.append(NoBusiness(taker, COLOURS[colour], "pile_empty"))
            self._finish_war(war, events)
            return None
        return taker, "business", [_TAKE_BUSINESS[k] for k in kinds]

    def _do_business(self, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        war = self.war
        assert war is not None
        colour = self._business_colour(war, seat)
        kind = KIND_INDEX[action.kind]
        self.business_piles[colour].remove(kind)
        self.businesses[seat].append(colour * 3 + kind)
        events.append(BusinessTaken(seat, COLOURS[colour], action.kind))
        self._finish_war(war, events)

    def _finish_war(self, war: War, events: list[msgspec.Struct]) -> None:
        winners = war.winners
        stake = war.stake
        if len(winners) == 1:
            winner = winners[0]
            paid = stake[winner]  # C6: the bank pays a note of the same value
            self.clean[winner] += 2 * paid
            self.bank -= paid
            events.append(Laundered(winner, 2 * paid, paid))
        elif len(winners) == 2:
            launderer = war.launderer
            assert launderer is not None
            # The launderer takes the ally's stake instead of a bank note.
            amount = stake[winners[0]] + stake[winners[1]]
            self.clean[launderer] += amount
            events.append(Laundered(launderer, amount, 0))
        losers = [p for p in war.order if p not in winners]
        if losers:
            self.bank += sum(stake[p] for p in losers)  # G9
            events.append(StakesLost(losers, [stake[p] for p in losers]))
        returned = []
        for p in war.order:
            for card in war.cards[p]:
                self._put_under(card)
                returned.append(_CARDS[card])
        if returned:
            events.append(Returned(returned))
        self.war = None
        self.turn_seat = war.initiator
        self._end_turn()  # T2: the seat left of the initiator plays next
        godfather = godfather_of(self.businesses)
        if godfather is not None:
            self.godfather = godfather
            self._finish("godfather", events)  # E1
        elif any(not any(notes) and not out for notes, out in zip(self.notes, self.forfeited, strict=True)):
            self._finish("no_dirty_money", events)  # E2, [A] among seats still in play

    # -- explaining an illegal action ------------------------------------------------

    def _explain(self, decision: Decision, action: Any) -> tuple[str, str]:
        """The rule an action breaks and why, for an action that is not among the options."""
        kind = decision.kind
        rule = DECISION_RULES[kind]
        expected = KIND_ACTIONS[kind]
        got = type(action).__name__
        if not any(isinstance(action, cls) for cls in expected):
            names = " or ".join(cls.__name__ for cls in expected)
            return rule, f"a {kind} decision takes {names}; got {got}"
        seat = decision.seat
        hand = self.hands[seat]
        colour = COLOUR_INDEX.get(getattr(action, "colour", ""), -1)
        value = getattr(action, "value", 0)
        card = card_id(colour, value) if colour >= 0 and type(value) is int and 1 <= value <= 11 else -1
        named = f"{getattr(action, 'colour', '?')} {value}"
        if kind == "setup":
            held = {colour_of(c) for c in hand}
            if colour in held:
                return (
                    "S3",
                    f"your 4 cards must have 4 colours and you hold a {action.colour} card already",
                )
            return "S3", f"the {action.colour} pile is empty"
        if kind == "turn":
            if got == "Roll":
                return "T0", f"you hold {len(hand)} cards and must start a gang war"
            return self._explain_stake(seat, "G1", action, card, named)
        if kind == "take2_colour":
            rolled = self._rolled_colours()
            if colour not in rolled:
                return (
                    "D2",
                    f"with 9 cards you take one card of a rolled colour ({_names(rolled)}), not {action.colour}",
                )
            return "D2", f"the {action.colour} pile is empty"
        if kind == "take1":
            rolled = self._rolled_colours()
            if got == "Inspect" and colour not in rolled:
                return (
                    "D1",
                    f"you may look through a rolled colour's pile ({_names(rolled)}), not {action.colour}",
                )
            return "D1", f"the {action.colour} pile is empty"
        if kind == "pick":
            there = sorted(value_of(c) for c in self.piles[self.inspecting])
            return (
                "D1",
                f"the {COLOURS[self.inspecting]} pile holds {there}, not {value}",
            )
        if kind == "steal":
            rolled = self._rolled_colours()
            target = action.target
            if target == seat:
                return "DS", "you cannot steal from yourself"
            if not 0 <= target < self.n:
                return "DS", f"there is no seat {target} at this {self.n}-player table"
            if colour not in rolled:
                return (
                    "DS",
                    f"you may steal a rolled colour ({_names(rolled)}), not {action.colour}",
                )
            return "DS", f"seat {target} holds no {action.colour} card"
        if kind == "give":
            assert self.steal_target is not None
            wanted = COLOURS[self.steal_target[1]]
            return (
                "DS",
                f"give one of your {wanted} cards; you hold no {wanted} {value}",
            )
        war = self.war
        assert war is not None
        if kind == "join":
            if colour in war.seat_of:
                return (
                    "G2",
                    f"{action.colour} is already played in this war; you offered {named}",
                )
            return self._explain_stake(seat, "G2", action, card, named)
        if kind == "play":
            family = war.family[seat]
            if colour != family:
                return (
                    "G4",
                    f"your family in this war is {COLOURS[family]}; you offered {named}",
                )
            return "G4", f"you do not hold {named}"
        if kind == "renegade":
            return (
                "G5",
                "the other Renegade of this pair is already used as a Renegade in this war",
            )
        if kind == "bomb":
            bomb_colour = war.family[seat]
            allowed = _names(BOMB_TARGETS[bomb_colour])
            if colour not in BOMB_TARGETS[bomb_colour]:
                return (
                    "G6",
                    f"the {COLOURS[bomb_colour]} Bomb hits {allowed}; you aimed at {named}",
                )
            if war.seat_of.get(colour) in (None, seat, war.ally.get(seat)):
                return "G6", f"no opposing {action.colour} family is in this war"
            return "G6", f"{named} is not a revealed card in play"
        if kind == "business":
            colour = self._business_colour(war, seat)
            left = [KINDS[k] for k in self.business_piles[colour]]
            return (
                "G8",
                f"the {COLOURS[colour]} business pile holds {', '.join(left)}; you asked for {action.kind}",
            )
        return (
            rule,
            f"{action!r} is not one of the {len(decision.options or ())} legal options",
        )

    def _explain_stake(self, seat: int, rule: str, action: Any, card: int, named: str) -> tuple[str, str]:
        if card not in self.hands[seat]:
            return rule, f"you do not hold {named}"
        notes = [NOTE_VALUES[i] for i in _NOTE_RANGE if self.notes[seat][i]]
        if not notes:
            return "T0", "you have no dirty note to stake"
        return (
            rule,
            f"you hold no {action.note} note to stake; your notes: {', '.join(map(str, notes))}",
        )


def events_for(seat: int, events: list[msgspec.Struct]) -> list[msgspec.Struct]:
    """The events as ``seat`` may see them: other seats' card values, pile orders and
    business kinds blanked (I2)."""
    out: list[msgspec.Struct] = []
    replace = msgspec.structs.replace
    for event in events:
        cls = event.__class__
        field = _PRIVATE_FIELD.get(cls)
        if field is not None:
            if cls is Stole:
                entitled = seat in (event.thief, event.victim)  # type: ignore[attr-defined]
            else:
                entitled = seat == event.seat  # type: ignore[attr-defined]
            if not entitled:
                event = replace(event, **{field: None})
        out.append(event)
    return out


# The field of each event that only some seats may see (its seat; thief and victim).
_PRIVATE_FIELD: Final[dict[type, str]] = {
    Drew: "value",
    WarStarted: "value",
    Joined: "value",
    Played: "value",
    Stole: "value",
    Inspected: "order",
    BusinessTaken: "kind",
}

_PHASES: Final[dict[int, Literal["setup", "turn", "war", "over"]]] = {
    SETUP: "setup",
    TURN: "turn",
    TAKE2: "turn",
    TAKE1: "turn",
    PICK: "turn",
    STEAL: "turn",
    GIVE: "turn",
    JOIN: "war",
    PLAY: "war",
    SPECIAL: "war",
    SPOILS: "war",
    BUSINESS: "war",
    OVER: "over",
}
_WAR_STAGES: Final[dict[int, Literal["join", "play", "decide", "spoils"]]] = {
    JOIN: "join",
    PLAY: "play",
    SPECIAL: "decide",
}

_PrepFn = Callable[[SicilianosState, list[msgspec.Struct]], _Prep]
_HandleFn = Callable[[SicilianosState, int, Any, list[msgspec.Struct]], None]

# Indexed by stage (OVER has no step).
_PREP: Final[tuple[_PrepFn, ...]] = (
    SicilianosState._prep_setup,
    SicilianosState._prep_turn,
    SicilianosState._prep_take2,
    SicilianosState._prep_take1,
    SicilianosState._prep_pick,
    SicilianosState._prep_steal,
    SicilianosState._prep_give,
    SicilianosState._prep_join,
    SicilianosState._prep_play,
    SicilianosState._prep_special,
    SicilianosState._prep_spoils,
    SicilianosState._prep_business,
)
_HANDLE: Final[tuple[_HandleFn, ...]] = (
    SicilianosState._do_setup,
    SicilianosState._do_turn,
    SicilianosState._do_take2,
    SicilianosState._do_take1,
    SicilianosState._do_pick,
    SicilianosState._do_steal,
    SicilianosState._do_give,
    SicilianosState._do_join,
    SicilianosState._do_play,
    SicilianosState._do_special,
    SicilianosState._do_spoils,
    SicilianosState._do_business,
)
