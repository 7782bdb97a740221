"""I1-I3: no view, event or option ever shows a seat what is private to another.

The checker works from the true hidden state, not from the engine's idea of it.
For seat s, the hidden family cards are: every other seat's hand, the other
seats' face-down war cards, and every pile whose order s has not legitimately
seen (s looked through it and it is unchanged since, or s is looking now). The
card of the last steal is known to its thief and victim. Hidden businesses are
every business s does not own, until the game ends.

Two checks per seat and step:

* Mentions: any card (a "colour" with a "value", or with an "order" of values)
  or business (a "colour" with a "kind") in the view, the decision options or
  the filtered events must not be hidden. For events, hidden means hidden both
  before and after the step and not turned face up in a war during it: an event
  may tell what the step revealed.
* Twin: the hidden cards are permuted within each colour and the hidden
  businesses within each colour; the seat's view of that twin state must be the
  very same bytes. This catches a leak in any form, not only a card-shaped one.

The last tests feed deliberately leaky views and event filters to the same
checker and require it to catch them.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import msgspec

from referee.games.base import SeededChance
from referee.games.sicilianos import RULES, SicilianosState
from referee.games.sicilianos.components import (
    COLOUR_INDEX,
    N_COLOURS,
    card_id,
    colour_of,
    value_of,
)
from referee.games.sicilianos.messages import (
    Card,
    Inspected,
    Pick,
    PlayerView,
    Revealed,
    Roll,
    SicilianosView,
    Stole,
)

ViewFn = Callable[[SicilianosState, int], msgspec.Struct]
EventsFn = Callable[[SicilianosState, int, list[msgspec.Struct]], list[msgspec.Struct]]


class Knowledge:
    """What each seat learned by its own actions, tracked from the unfiltered events."""

    def __init__(self) -> None:
        self.seen_piles: dict[tuple[int, int], tuple[int, ...]] = {}  # (seat, colour) -> pile
        self.looking: tuple[int, int] | None = None  # (seat, colour) of a pile being looked at
        self.last_steal: tuple[int, int, int] | None = None  # thief, victim, card

    def observe(self, state: SicilianosState, seat: int, action: Any, events: list[msgspec.Struct]) -> None:
        for event in events:
            if isinstance(event, Stole):
                assert event.value is not None
                self.last_steal = (event.thief, event.victim, card_id(COLOUR_INDEX[event.colour], event.value))
            elif isinstance(event, Inspected):
                self.looking = (event.seat, COLOUR_INDEX[event.colour])
        if isinstance(action, Pick) and self.looking is not None:
            looker, colour = self.looking
            self.seen_piles[(looker, colour)] = tuple(state.piles[colour])
            self.looking = None

    def knows_pile(self, state: SicilianosState, seat: int, colour: int) -> bool:
        decision = state.decision()
        if self.looking == (seat, colour) and decision is not None and (decision.seat, decision.kind) == (seat, "pick"):
            return True
        return self.seen_piles.get((seat, colour)) == tuple(state.piles[colour])


def hidden_cards(state: SicilianosState, seat: int, know: Knowledge) -> set[int]:
    """The family cards whose value and place ``seat`` may not know now."""
    hidden: set[int] = set()
    for p, hand in enumerate(state.hands):
        if p != seat:
            hidden.update(hand)
    war = state.war
    if war is not None:
        for p, cards in war.cards.items():
            if p != seat:
                hidden.update(c for c in cards if c in war.face_down)
    for colour in range(N_COLOURS):
        if not know.knows_pile(state, seat, colour):
            hidden.update(state.piles[colour])
    if know.last_steal is not None and seat in know.last_steal[:2]:
        hidden.discard(know.last_steal[2])
    return hidden


def hidden_businesses(state: SicilianosState, seat: int) -> set[int]:
    """The business cards (colour * 3 + kind) ``seat`` may not know the kind of."""
    if state.is_over():
        return set()
    return set(range(18)) - set(state.businesses[seat])


def mentions(obj: Any) -> tuple[set[int], set[int]]:
    """The family cards and business cards named anywhere in ``obj`` (a Struct or builtins)."""
    cards: set[int] = set()
    businesses: set[int] = set()
    stack = [msgspec.to_builtins(obj)]
    kinds = {"antique": 0, "restaurant": 1, "laundry": 2}
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            colour = COLOUR_INDEX.get(item.get("colour"))  # type: ignore[arg-type]
            if colour is not None:
                value = item.get("value")
                if isinstance(value, int):
                    cards.add(card_id(colour, value))
                order = item.get("order")
                if isinstance(order, list):
                    cards.update(card_id(colour, v) for v in order)
                kind = item.get("kind")
                if isinstance(kind, str):
                    businesses.add(colour * 3 + kinds[kind])
            stack.extend(item.values())
    return cards, businesses


def names(cards: set[int]) -> list[str]:
    from referee.games.sicilianos.components import COLOURS

    return sorted(f"{COLOURS[colour_of(c)]} {value_of(c)}" for c in cards)


def mention_leaks(what: str, obj: Any, cards: set[int], businesses: set[int]) -> list[str]:
    named_cards, named_businesses = mentions(obj)
    leaks = []
    if named_cards & cards:
        leaks.append(f"{what} names hidden cards {names(named_cards & cards)}")
    if named_businesses & businesses:
        leaks.append(f"{what} names hidden businesses {sorted(named_businesses & businesses)}")
    return leaks


class _NoChance:
    """A twin never draws: it is only viewed."""

    def shuffle(self, stream: str, n: int) -> list[int]:
        raise AssertionError("a twin state drew a shuffle")

    def below(self, stream: str, n: int) -> int:
        raise AssertionError("a twin state drew a number")


def twin(state: SicilianosState, seat: int, know: Knowledge, rng: random.Random) -> SicilianosState:
    """A copy where every card and business hidden from ``seat`` is swapped within its colour."""
    other = state.copy(chance=_NoChance())
    swap: dict[int, int] = {}
    hidden = sorted(hidden_cards(state, seat, know))
    for colour in range(N_COLOURS):
        group = [c for c in hidden if colour_of(c) == colour]
        shuffled = group[:]
        rng.shuffle(shuffled)
        swap.update(zip(group, shuffled, strict=True))
    for p in range(state.n):
        if p != seat:
            other.hands[p] = sorted(swap.get(c, c) for c in other.hands[p])
    other.piles = [[swap.get(c, c) for c in pile] for pile in other.piles]
    if other.war is not None:
        other.war.cards = {p: [swap.get(c, c) for c in cards] for p, cards in other.war.cards.items()}
        other.war.face_down = [swap.get(c, c) for c in other.war.face_down]
    # Businesses: the kinds of each colour not owned by ``seat`` are dealt again at random.
    secret = hidden_businesses(state, seat)
    for colour in range(N_COLOURS):
        kinds = [b % 3 for b in secret if b // 3 == colour]
        rng.shuffle(kinds)
        for p in range(state.n):
            if p == seat:
                continue
            owned = other.businesses[p]
            for i, b in enumerate(owned):
                if b // 3 == colour and b in secret:
                    owned[i] = colour * 3 + kinds.pop()
        pile = other.business_piles[colour]
        other.business_piles[colour] = sorted(kinds.pop() if colour * 3 + k in secret else k for k in pile)
    return other


def view_leaks(state: SicilianosState, seat: int, know: Knowledge, rng: random.Random, view: ViewFn) -> list[str]:
    """Every way ``view(state, seat)`` shows what ``seat`` may not know."""
    shown = view(state, seat)
    leaks = mention_leaks(
        f"view of seat {seat}", shown, hidden_cards(state, seat, know), hidden_businesses(state, seat)
    )
    if msgspec.json.encode(view(twin(state, seat, know, rng), seat)) != msgspec.json.encode(shown):
        leaks.append(f"view of seat {seat} changes when its hidden cards are swapped")
    return leaks


def step_leaks(
    state: SicilianosState,
    know: Knowledge,
    rng: random.Random,
    action: Any,
    view: ViewFn,
    events_for: EventsFn,
    forfeit: int | None = None,
) -> tuple[list[str], list[msgspec.Struct]]:
    """Apply ``action`` (or forfeit that seat), check every seat's filtered events, view
    and options: (leaks, events)."""
    n = state.n
    before = [hidden_cards(state, s, know) for s in range(n)]
    before_b = [hidden_businesses(state, s) for s in range(n)]
    could_show = set(state.war.face_down) if state.war is not None else set()
    held = {c for hand in state.hands for c in hand}
    if forfeit is None:
        decision = state.decision()
        assert decision is not None
        events = state.apply(decision.seat, action)
        know.observe(state, decision.seat, action, events)
    else:
        events = state.forfeit(forfeit)
        know.observe(state, forfeit, None, events)
    # Cards turned face up during the step may be named even if they went back
    # under a pile at once; a reveal can only show a card that was face down or
    # left a hand in this step.
    could_show |= held - {c for hand in state.hands for c in hand}
    shown = set()
    for event in events:
        if isinstance(event, Revealed):
            shown |= {card_id(COLOUR_INDEX[c.colour], c.value) for c in event.cards}
    assert shown <= could_show, names(shown - could_show)
    leaks = []
    for s in range(n):
        after = hidden_cards(state, s, know)
        leaks += mention_leaks(
            f"events for seat {s}",
            events_for(state, s, events),
            (before[s] & after) - shown,
            before_b[s] & hidden_businesses(state, s),
        )
        leaks += view_leaks(state, s, know, rng, view)
    upcoming = state.decision()
    if upcoming is not None:
        leaks += mention_leaks(
            f"options of seat {upcoming.seat}",
            upcoming.options,
            hidden_cards(state, upcoming.seat, know),
            hidden_businesses(state, upcoming.seat),
        )
    return leaks, events


def honest_view(state: SicilianosState, seat: int) -> msgspec.Struct:
    return state.view(seat)


def honest_events(state: SicilianosState, seat: int, events: list[msgspec.Struct]) -> list[msgspec.Struct]:
    return state.events_for(seat, events)


def choose(state: SicilianosState, rng: random.Random, roller: bool) -> Any:
    decision = state.decision()
    assert decision is not None and decision.options is not None
    if roller and decision.options[0] == Roll() and rng.random() < 0.85:
        return Roll()
    return state.random_action(rng)


def test_I1_I2_I3_no_view_event_or_option_shows_another_seats_secrets() -> None:
    steps = 0
    checked_views = 0
    game = 0
    seen: Counter[str] = Counter()
    while steps < 3000:
        n = 3 + game % 4
        variants = {"steal_pick": "victim"} if game % 3 == 2 else {}
        state = RULES.new_game(n, RULES.config(variants), SeededChance(1000 + game))
        rng = random.Random(game)
        know = Knowledge()
        roller = game % 2 == 1
        forfeit_at = 25 if game % 5 == 4 else -1
        for s in range(n):
            assert view_leaks(state, s, know, rng, honest_view) == []
        while not state.is_over():
            action = choose(state, rng, roller)
            leaks, events = step_leaks(state, know, rng, action, honest_view, honest_events)
            assert leaks == [], (game, steps, leaks)
            seen.update(type(e).__name__ for e in events)
            steps += 1
            checked_views += n
            if steps % 100 == forfeit_at and not state.is_over():
                leaks, events = step_leaks(state, know, rng, None, honest_view, honest_events, forfeit=rng.randrange(n))
                assert leaks == [], (game, steps, leaks)
                seen.update(type(e).__name__ for e in events)
        game += 1
    # Thousands of steps, every seat's view at every one of them, through every kind
    # of private information. (No wall-clock limit: a loaded machine is not a leak.)
    assert checked_views > 10_000
    for private in ("Drew", "Inspected", "Stole", "Joined", "Played", "BusinessTaken", "Forfeited"):
        assert seen[private] > 0, private


def _midgame(seed: int = 7, steps: int = 60) -> tuple[SicilianosState, Knowledge, random.Random]:
    """A 4-player game some way in, with its knowledge tracked."""
    state = RULES.new_game(4, RULES.config({}), SeededChance(seed))
    rng = random.Random(seed)
    know = Knowledge()
    for _ in range(steps):
        action = choose(state, rng, roller=True)
        decision = state.decision()
        assert decision is not None
        know.observe(state, decision.seat, action, state.apply(decision.seat, action))
    assert not state.is_over()
    return state, know, rng


def test_I3_checker_catches_a_view_showing_another_hand() -> None:
    state, know, rng = _midgame()

    def leaky(st: SicilianosState, seat: int) -> msgspec.Struct:
        honest = st.view(seat)
        neighbour = st.hands[(seat + 1) % st.n]
        return msgspec.structs.replace(honest, hand=honest.hand + [Card(*_name(c)) for c in neighbour])

    assert view_leaks(state, 0, know, rng, honest_view) == []
    leaks = view_leaks(state, 0, know, rng, leaky)
    assert any("names hidden cards" in leak for leak in leaks)
    assert any("changes when its hidden cards are swapped" in leak for leak in leaks)


def test_I3_checker_catches_values_hidden_in_plain_numbers() -> None:
    state, know, rng = _midgame()

    def leaky(st: SicilianosState, seat: int) -> msgspec.Struct:
        honest = st.view(seat)
        # Not card-shaped at all: the next seat's values smuggled in as "notes".
        players = [
            msgspec.structs.replace(p, notes=[value_of(c) for c in st.hands[p.seat]]) if p.seat != seat else p
            for p in honest.players
        ]
        return msgspec.structs.replace(honest, players=players)

    leaks = view_leaks(state, 1, know, rng, leaky)
    assert leaks == ["view of seat 1 changes when its hidden cards are swapped"]


def test_I3_checker_catches_a_pile_order_and_business_kinds() -> None:
    state, know, rng = _midgame()

    def pile_leak(st: SicilianosState, seat: int) -> msgspec.Struct:
        honest: SicilianosView = st.view(seat)
        from referee.games.sicilianos.messages import KnownPile

        top_first = [value_of(c) for c in reversed(st.piles[2])]
        return msgspec.structs.replace(honest, known_piles=[KnownPile("black", top_first)])

    assert any("names hidden cards" in leak for leak in view_leaks(state, 2, know, rng, pile_leak))
    state.businesses[3] = [4]  # white restaurant
    state.business_piles[1] = [0, 2]

    def kind_leak(st: SicilianosState, seat: int) -> msgspec.Struct:
        honest = st.view(seat)
        from referee.games.sicilianos.messages import BusinessView

        players = [
            msgspec.structs.replace(p, businesses=[BusinessView("white", "restaurant")]) if p.seat == 3 else p
            for p in honest.players
        ]
        return msgspec.structs.replace(honest, players=players)

    assert view_leaks(state, 2, know, rng, honest_view) == []
    leaks = view_leaks(state, 2, know, rng, kind_leak)
    assert any("names hidden businesses" in leak for leak in leaks)


def test_I3_checker_catches_an_event_filter_that_filters_nothing() -> None:
    def unfiltered(st: SicilianosState, seat: int, events: list[msgspec.Struct]) -> list[msgspec.Struct]:
        return events

    caught: list[str] = []
    for seed in range(3):
        state = RULES.new_game(3, RULES.config({}), SeededChance(seed))
        rng = random.Random(seed)
        know = Knowledge()
        while not state.is_over() and not caught:
            leaks, _ = step_leaks(state, know, rng, choose(state, rng, True), honest_view, unfiltered)
            caught = [leak for leak in leaks if leak.startswith("events")]
        if caught:
            break
    assert caught and "names hidden cards" in caught[0]


def _name(card: int) -> tuple[Any, int]:
    from referee.games.sicilianos.components import COLOURS

    return COLOURS[colour_of(card)], value_of(card)


def test_I1_public_part_of_the_view_is_the_same_for_every_seat() -> None:
    state, _, _ = _midgame(seed=3, steps=45)
    views = [state.view(s) for s in range(state.n)]
    sizes = {tuple(p.hand_size for p in v.players) for v in views}
    colours = {tuple(tuple(p.hand) for p in v.players) for v in views}
    money = {tuple((tuple(p.notes), p.clean) for p in v.players) for v in views}
    assert len(sizes) == len(colours) == len(money) == 1
    for s, v in enumerate(views):
        assert [(c.colour, c.value) for c in v.hand] == [_name(c) for c in state.hands[s]]
        assert isinstance(v.players[s], PlayerView)


def test_every_view_is_each_seats_own_view_to_the_byte() -> None:
    # The replay viewer takes all the seats' views of a step from every_view, which
    # builds them together; each must still be exactly view(seat), which the checker
    # above clears, or a seat's page could hold what another seat saw.
    steps = 0
    for game in range(24):
        n = 3 + game % 4
        state = RULES.new_game(n, RULES.config({}), SeededChance(2000 + game))
        rng = random.Random(game)
        while True:
            together = state.every_view()
            assert [msgspec.json.encode(v) for v in together] == [msgspec.json.encode(state.view(s)) for s in range(n)]
            steps += 1
            decision = state.decision()
            if decision is None:
                break  # the views of the ended game (every business face up) were compared too
            if game % 3 == 2 and steps % 40 == 0:
                state.forfeit(decision.seat)
            else:
                state.apply(decision.seat, choose(state, rng, roller=game % 2 == 1))
    assert steps > 1000
