"""Sicilianos states sampled from one seat's view: the forward model of a search bot (a determinization).

``state_from_view(view, config, rng)`` builds a full ``SicilianosState`` whose
``view(view.seat)`` is ``view``, with what the seat cannot see dealt at random
among what the view allows:

* each card the seat cannot see (in another hand, face down on another seat's
  war card, or in a pile it has not looked through) is one of the cards of its
  colour that the seat sees nowhere, every such deal equally likely: a hand's
  colours, a pile's size and a war card's colour are public (I1), so the deal
  is within each colour;
* the kind of each business the seat does not own, among the kinds of that
  colour it does not own (the business piles' sizes are public);
* what the view holds only as a consequence of earlier play is rebuilt from it:
  the setup step from the hand sizes, the war's queue from who moves and who
  passed, the pair of a used Renegade from the alliance it made, the bank from
  the money the view shows (it holds what the seats lost).

What the view does not show is chosen at random where the play could have
left several things: the order in which forfeited seats left (it ranks them at
the end), the pile a seat looks through while another seat watches (one of the
rolled colours), the colour a victim must give (one it holds two cards of),
and where a stolen card the seat saw has gone since. A search that needs more
than the view (what the seat saw earlier in the game) filters the samples.
Later chance (dice, piles' new orders after a war, random steals) comes from
``rng`` too.
"""

from __future__ import annotations

import random

from referee.games.base import GameState, SeededChance
from referee.games.sicilianos.components import (
    COLOUR_INDEX,
    COLOURS,
    DIE_ACTIONS,
    KIND_INDEX,
    KINDS,
    N_COLOURS,
    NOTE_INDEX,
    NOTE_VALUES,
    SETUP_CARDS,
    START_MONEY,
    VALUES_PER_COLOUR,
    card_id,
    colour_of,
    pair_of,
    parse_action_die,
)
from referee.games.sicilianos.messages import SicilianosConfig, SicilianosView
from referee.games.sicilianos.state import (
    BUSINESS,
    GIVE,
    JOIN,
    PICK,
    PLAY,
    SETUP,
    SPECIAL,
    SPOILS,
    STEAL,
    TAKE1,
    TAKE2,
    TURN,
    SicilianosState,
)
from referee.games.sicilianos.war import War, winning_seat

__all__ = ["state_from_view"]

_STAGE_OF_KIND = {
    "setup": SETUP,
    "turn": TURN,
    "take2_colour": TAKE2,
    "take1": TAKE1,
    "pick": PICK,
    "steal": STEAL,
    "give": GIVE,
    "join": JOIN,
    "play": PLAY,
    "renegade": SPECIAL,
    "bomb": SPECIAL,
    "spoils": SPOILS,
    "business": BUSINESS,
}


def state_from_view(view: SicilianosView, config: SicilianosConfig, rng: random.Random) -> SicilianosState:
    """A state that shows ``view`` to ``view.seat``, its hidden part dealt from ``rng`` (module docstring).

    ValueError for a finished game, a view of another table or turn limit than
    ``config``'s, or a view no game could show (cards that do not add up).
    """
    n = view.n_players
    me = view.seat
    if view.phase == "over" or view.decision is None or view.to_move is None:
        raise ValueError("sample_state: the game in this view is over")
    if view.turn_limit != config.turn_limit:
        raise ValueError(f"sample_state: the view's turn limit {view.turn_limit} is not the configuration's")
    if len(view.players) != n or not 0 <= me < n:
        raise ValueError("sample_state: the view's players do not match its table size")
    stage = _STAGE_OF_KIND.get(view.decision)
    if stage is None:
        raise ValueError(f"sample_state: unknown decision kind {view.decision!r}")

    state = SicilianosState.__new__(SicilianosState)
    GameState.__init__(state, n, config, SeededChance(rng.getrandbits(63)))
    state._faces = parse_action_die(config.action_die)
    state.forfeited = [p.forfeited for p in view.players]
    state.forfeit_order = [p.seat for p in view.players if p.forfeited]
    rng.shuffle(state.forfeit_order)
    state.notes = [[0] * len(NOTE_VALUES) for _ in range(n)]
    for p in view.players:
        for note in p.notes:
            state.notes[p.seat][NOTE_INDEX[note]] += 1
    state.clean = [p.clean for p in view.players]
    state.turns = view.turns
    state.turn_seat = view.turn_seat
    state.stage = stage
    hand_sizes = [p.hand_size for p in view.players]
    state.setup_step = hand_sizes[view.to_move] * n + view.to_move if stage == SETUP else SETUP_CARDS * n
    state.dice = None
    if view.dice is not None:
        c1, c2 = (COLOUR_INDEX[c] for c in view.dice.colours)
        state.dice = (view.dice.seat, c1, c2, DIE_ACTIONS.index(view.dice.action))
    state.godfather = None
    state._decision = None

    cards = _deal_cards(view, rng)
    state.hands = cards.hands
    state.piles = cards.piles
    state.pile_version = [0] * N_COLOURS
    state.known = [{} for _ in range(n)]
    state.known[me] = {COLOUR_INDEX[pile.colour]: 0 for pile in view.known_piles}
    state.businesses, state.business_piles = _deal_businesses(view, rng)
    state.war = cards.war
    stakes = 0 if cards.war is None else sum(cards.war.stake.values())
    dirty = sum(NOTE_VALUES[i] * count for notes in state.notes for i, count in enumerate(notes))
    state.bank = n * START_MONEY - dirty - sum(state.clean) - stakes  # the money the seats no longer hold
    state.last_steal = None
    if view.last_steal is not None:
        steal = view.last_steal
        state.last_steal = (steal.thief, steal.victim, card_id(COLOUR_INDEX[steal.colour], steal.value or 1))
    state.inspecting = -1
    state.steal_target = None
    to_move = view.to_move
    if stage == PICK:
        state.inspecting = _inspected(state, view, rng)
    elif stage == GIVE:
        state.steal_target = (to_move, _colour_to_give(state, to_move, rng))
    if cards.war is not None:
        _rebuild_war_steps(state, view, cards.war)
    state._advance([])
    return state


class _Dealt:
    def __init__(self, hands: list[list[int]], piles: list[list[int]], war: War | None) -> None:
        self.hands = hands
        self.piles = piles
        self.war = war


def _deal_cards(view: SicilianosView, rng: random.Random) -> _Dealt:
    """Every card placed: the seen ones where the view shows them, the unseen ones dealt within their colour."""
    n = view.n_players
    me = view.seat
    seen: set[int] = set()
    hands: list[list[int]] = [[] for _ in range(n)]
    hands[me] = sorted(card_id(COLOUR_INDEX[c.colour], c.value) for c in view.hand)
    seen.update(hands[me])
    # Slots to fill with an unseen card of a colour: (colour, where) in a fixed order.
    slots: list[tuple[int, tuple[str, int, int]]] = []
    for p in view.players:
        if p.seat != me:
            for held in p.hand:
                slots.append((COLOUR_INDEX[held], ("hand", p.seat, 0)))
    piles: list[list[int] | None] = [None] * N_COLOURS
    for pile in view.known_piles:
        colour = COLOUR_INDEX[pile.colour]
        piles[colour] = [card_id(colour, value) for value in reversed(pile.order)]  # top card last
        seen.update(piles[colour] or ())
    for name, left in view.piles.items():
        colour = COLOUR_INDEX[name]
        if piles[colour] is None:
            piles[colour] = [-1] * left
            slots += [(colour, ("pile", colour, i)) for i in range(left)]
        elif len(piles[colour] or ()) != left:
            raise ValueError(f"sample_state: the known {name} pile holds {left} cards in the view's count")
    war: War | None = None
    if view.war is not None:
        war = War(view.war.initiator)
        for participant in view.war.participants:
            seat = participant.seat
            colour = COLOUR_INDEX[participant.colour]
            war.order.append(seat)
            war.family[seat] = colour
            war.seat_of[colour] = seat
            war.stake[seat] = participant.stake
            war.cards[seat] = []
            for i, on_table in enumerate(participant.cards):
                card_colour = COLOUR_INDEX[on_table.colour]
                if on_table.value is None:
                    war.cards[seat].append(-1)
                    slots.append((card_colour, ("war", seat, i)))
                else:
                    known = card_id(card_colour, on_table.value)
                    war.cards[seat].append(known)
                    seen.add(known)
    # Deal: per colour, the cards the seat sees nowhere, shuffled into that colour's slots.
    by_colour: dict[int, list[tuple[str, int, int]]] = {}
    for colour, where in slots:
        by_colour.setdefault(colour, []).append(where)
    for colour in range(N_COLOURS):
        wanted = by_colour.get(colour, [])
        unseen = [card_id(colour, v) for v in range(1, VALUES_PER_COLOUR + 1) if card_id(colour, v) not in seen]
        if len(unseen) != len(wanted):
            raise ValueError(
                f"sample_state: the view places {len(wanted)} unseen {COLOURS[colour]} cards, "
                f"but {len(unseen)} are unseen"
            )
        rng.shuffle(unseen)
        for (kind, owner, index), card in zip(wanted, unseen, strict=True):
            if kind == "hand":
                hands[owner].append(card)
            elif kind == "pile":
                dealt = piles[owner]
                assert dealt is not None
                dealt[index] = card
            else:
                assert war is not None
                war.cards[owner][index] = card
    for hand in hands:
        hand.sort()
    if war is not None and view.war is not None:
        for participant in view.war.participants:
            seat = participant.seat
            for card, shown in zip(war.cards[seat], participant.cards, strict=True):
                if shown.face_down:
                    war.face_down.append(card)
                if shown.use == "renegade":
                    war.renegade[seat] = card
                    war.used_pairs.add(pair_of(colour_of(card)))
            war.passed.update([seat] if participant.passed else [])
            war.stopped.update([seat] if participant.stopped else [])
            if participant.ally is not None:
                war.ally[seat] = participant.ally
                war.used_pairs.add(pair_of(war.family[seat]))
        # Face-down cards lie in play order: one per seat and round, the seats in war order.
        position = {seat: i for i, seat in enumerate(war.order)}
        war.face_down.sort(key=lambda card: position[war.seat_of[colour_of(card)]])
        war.reveals = view.war.round
        war.winners = list(view.war.winners)
    return _Dealt(hands, [pile or [] for pile in piles], war)


def _deal_businesses(view: SicilianosView, rng: random.Random) -> tuple[list[list[int]], list[list[int]]]:
    """Each seat's businesses (their kinds where the seat cannot see them dealt) and the business piles."""
    n = view.n_players
    me = view.seat
    businesses: list[list[int]] = [[] for _ in range(n)]
    unseen: dict[int, list[int]] = {c: list(range(len(KINDS))) for c in range(N_COLOURS)}
    for business in view.players[me].businesses:
        colour = COLOUR_INDEX[business.colour]
        assert business.kind is not None  # a seat sees its own businesses' kinds
        kind = KIND_INDEX[business.kind]
        unseen[colour].remove(kind)
        businesses[me].append(colour * 3 + kind)
    for kinds in unseen.values():
        rng.shuffle(kinds)
    for p in view.players:
        if p.seat == me:
            continue
        for business in p.businesses:
            colour = COLOUR_INDEX[business.colour]
            if not unseen[colour]:
                raise ValueError(f"sample_state: more {business.colour} businesses than there are")
            businesses[p.seat].append(colour * 3 + unseen[colour].pop())
    piles: list[list[int]] = []
    for colour in range(N_COLOURS):
        left = view.business_piles[COLOURS[colour]]
        if len(unseen[colour]) != left:
            raise ValueError(f"sample_state: the {COLOURS[colour]} business pile does not add up")
        piles.append(sorted(unseen[colour]))
    return businesses, piles


def _inspected(state: SicilianosState, view: SicilianosView, rng: random.Random) -> int:
    """The pile the seat to move looks through: a rolled colour (one the viewing seat knows, if it is the seat)."""
    assert state.dice is not None and view.to_move is not None
    _, c1, c2, _ = state.dice
    rolled = sorted({c1, c2})
    candidates = [c for c in rolled if state.piles[c]]
    if view.to_move == view.seat:
        candidates = [c for c in candidates if c in state.known[view.seat]]
    if not candidates:
        raise ValueError("sample_state: a pick with no rolled pile to look through")
    return rng.choice(candidates)


def _colour_to_give(state: SicilianosState, victim: int, rng: random.Random) -> int:
    """The colour a victim gives: a rolled colour it holds two cards of or more (a single card goes by itself)."""
    assert state.dice is not None
    _, c1, c2, _ = state.dice
    candidates = [c for c in sorted({c1, c2}) if sum(colour_of(card) == c for card in state.hands[victim]) > 1]
    if not candidates:
        raise ValueError("sample_state: a give with no rolled colour the victim holds twice")
    return rng.choice(candidates)


def _rebuild_war_steps(state: SicilianosState, view: SicilianosView, war: War) -> None:
    """The war's queue and cursor for its pending step, from who moves now (the view's ``to_move``)."""
    assert view.war is not None and view.to_move is not None
    to_move = view.to_move
    n = state.n
    stage = state.stage
    if stage == JOIN:
        war.queue = [(war.initiator + k) % n for k in range(1, n)]
        war.cursor = war.queue.index(to_move)
    elif stage == PLAY:
        after = war.order[war.order.index(to_move) + 1 :]
        war.queue = [to_move] + [p for p in after if p not in war.passed and p not in war.stopped]
        war.cursor = 0
    elif stage == SPECIAL:
        undecided = [
            card
            for participant in view.war.participants
            for card, shown in zip(war.cards[participant.seat], participant.cards, strict=True)
            if shown.use == "undecided"
        ]
        war.queue = undecided
        war.cursor = 0
        war.first_reveal = war.reveals == 1
    elif stage in (SPOILS, BUSINESS):
        strengths = {p.seat: p.strength for p in view.war.participants}
        best = winning_seat(strengths)
        war.winning_colour = None if best is None else war.family[best]
        if stage == BUSINESS:
            war.taker = to_move
            others = [p for p in war.winners if p != to_move]
            war.launderer = others[0] if others else to_move
