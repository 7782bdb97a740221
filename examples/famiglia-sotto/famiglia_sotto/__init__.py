"""Sotto: a tiny trick game with hidden hands, written as a famiglia game plug-in.

The rules. A deck holds the cards 1 to ``players * hand``; one shuffle deals each
seat ``hand`` cards (default 3), which only that seat sees. The game has ``hand``
tricks. Before each trick a draw picks the seat that leads it; from there every
seat in play puts one card face up, clockwise. The highest card takes the trick.
When the hands are empty, the seats rank by tricks taken (ties share a rank).
A seat that forfeits leaves play: the engine plays its lowest card for it, it can
take tricks no more, and it ranks last. When one seat is left, the game ends.

Everything famiglia needs comes from ``referee.games.base`` and
``referee.games.wire``: the wire types are msgspec Structs (actions and events
on the bases ``Action`` and ``Event``, which carry the ``"type"`` tag field),
``SottoState`` fills in the hooks of ``GameState`` (the base does the turn, end
and forfeit checks, copying and ranking), and ``SottoRules`` declares the name,
the table sizes and the one variant. pyproject.toml registers ``RULES`` under
the entry point group ``famiglia.games``. docs/writing-a-game.md holds this
whole module, block by block, with what each part is for.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar, Final

import msgspec

from referee.games.base import (
    Chance,
    Decision,
    Forfeited,
    GameRules,
    GameState,
    IllegalAction,
    IntVariant,
    Outcome,
    Variant,
    checked_shuffle,
    rank_seats,
)
from referee.games.wire import Action, Event

__all__ = ["RULES", "Play", "SottoConfig", "SottoRules", "SottoState", "SottoView"]


class SottoConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The one variant: how many cards each seat is dealt (and so how many tricks)."""

    hand: int = 3


class Play(Action, tag="play"):
    """The one action: put this card of your hand on the table."""

    card: int


class Led(Event, tag="led"):
    """The draw chose the seat that leads this trick."""

    trick: int
    seat: int


class Played(Event, tag="played"):
    """A seat put a card face up."""

    seat: int
    card: int


class Took(Event, tag="took"):
    """The highest card took the trick."""

    seat: int
    card: int


class GameEnded(Event, tag="game_ended"):
    """The game is over: why, the tricks taken and the ranks."""

    ended_by: str
    tricks: list[int]
    ranks: list[int]


SottoEvent = Led | Played | Took | Forfeited | GameEnded


class SottoView(msgspec.Struct, frozen=True, tag="sotto", tag_field="type", kw_only=True):
    """What one seat may know: its own hand, and everything on the table."""

    seat: int
    n_players: int
    hand: list[int]
    hand_sizes: list[int]
    trick: list[int | None]  # the card each seat put down this trick, None if none yet
    tricks: list[int]
    leader: int
    to_move: int | None
    forfeited: list[bool]
    over: bool


class SottoState(GameState):
    """One game of Sotto."""

    __slots__ = ("hands", "leader", "trick", "trick_number", "tricks")

    game: ClassVar[str] = "sotto"
    action_classes: ClassVar[frozenset[type]] = frozenset({Play})
    end_rules: ClassVar[dict[str, str]] = {"all_tricks": "end", "forfeits": "forfeit"}

    config: SottoConfig
    hands: list[list[int]]
    trick: list[int | None]
    tricks: list[int]
    trick_number: int
    leader: int

    def __init__(self, n_players: int, config: SottoConfig, chance: Chance) -> None:
        super().__init__(n_players, config, chance)
        size = config.hand
        deal = checked_shuffle(chance, "deal", n_players * size)
        self.hands = [sorted(card + 1 for card in deal[s * size : (s + 1) * size]) for s in range(n_players)]
        self.tricks = [0] * n_players
        self.trick_number = 0
        self.trick = [None] * n_players
        self.leader = -1
        self._start_trick(self.deal_events)  # the first lead: told with each seat's first request

    # -- the game's own rules --------------------------------------------------

    def _start_trick(self, events: list[msgspec.Struct]) -> None:
        self.trick = [None] * self.n
        self.leader = self._chance.below("lead", self.n)
        events.append(Led(self.trick_number, self.leader))
        self.to_move = self.leader
        self._next_in_play(events)

    def _next_in_play(self, events: list[msgspec.Struct]) -> None:
        """Move to the next seat that has not played this trick, playing for forfeited ones."""
        while self.to_move != -1:
            seat = self.to_move
            if self.trick[seat] is not None:  # back at the leader: the trick is complete
                self._close_trick(events)
                return
            if not self.forfeited[seat]:
                return
            self._play(seat, self.hands[seat][0], events)

    def _play(self, seat: int, card: int, events: list[msgspec.Struct]) -> None:
        self.hands[seat].remove(card)
        self.trick[seat] = card
        events.append(Played(seat, card))
        self.to_move = (seat + 1) % self.n

    def _close_trick(self, events: list[msgspec.Struct]) -> None:
        best = max(
            (card, seat) for seat, card in enumerate(self.trick) if card is not None and not self.forfeited[seat]
        )
        self.tricks[best[1]] += 1
        events.append(Took(best[1], best[0]))
        self.trick_number += 1
        if self.trick_number == self.config.hand:
            self._finish("all_tricks", events)
        else:
            self._start_trick(events)

    # -- the hooks of GameState ------------------------------------------------

    def decision(self) -> Decision | None:
        if self._outcome is not None:
            return None
        seat = self.to_move
        return Decision(seat=seat, kind="play", options=[Play(card) for card in self.hands[seat]])

    def _out_of_turn(self, seat: int) -> IllegalAction:
        return IllegalAction("turn", f"seat {self.to_move} plays now, not seat {seat}")

    def _action_rule(self) -> str:
        return "play"

    def _apply_action(self, seat: int, action: Play) -> list[msgspec.Struct]:
        if action.card not in self.hands[seat]:
            raise IllegalAction("play", f"card {action.card!r} is not in your hand {self.hands[seat]}")
        events: list[msgspec.Struct] = []
        self._play(seat, action.card, events)
        self._next_in_play(events)
        return events

    def _after_forfeit(self, seat: int, events: list[msgspec.Struct]) -> None:
        if seat == self.to_move:
            self._next_in_play(events)

    def _final_outcome(self, ended_by: str) -> Outcome:
        ranks = rank_seats([(t,) for t in self.tricks], self.forfeit_order)
        return Outcome(
            ranks=ranks,
            scores=self.tricks[:],
            winners=[s for s in range(self.n) if ranks[s] == 1],
            forfeited=self.forfeit_order[:],
            ended_by=ended_by,
        )

    def _end_event(self, outcome: Outcome) -> GameEnded:
        return GameEnded(outcome.ended_by, outcome.scores[:], outcome.ranks[:])

    def _view(self, seat: int) -> SottoView:
        over = self._outcome is not None
        return SottoView(
            seat=seat,
            n_players=self.n,
            hand=self.hands[seat][:],
            hand_sizes=[len(hand) for hand in self.hands],
            trick=self.trick[:],
            tricks=self.tricks[:],
            leader=self.leader,
            to_move=None if over else self.to_move,
            forfeited=self.forfeited[:],
            over=over,
        )

    def _random_action(self, rng: random.Random) -> Play:
        hand = self.hands[self.to_move]
        return Play(hand[int(rng.random() * len(hand))])

    def _pass_action(self) -> Play:
        return Play(self.hands[self.to_move][0])  # the lowest card

    def _copy_into(self, other: SottoState) -> None:
        other.hands = [hand[:] for hand in self.hands]
        other.trick = self.trick[:]
        other.tricks = self.tricks[:]
        other.trick_number = self.trick_number
        other.leader = self.leader

    def hidden_twin(self, seat: int, rng: random.Random) -> SottoState:
        """The other seats' hands dealt again from the cards ``seat`` cannot see."""
        twin = self.copy()
        unseen = [card for other, hand in enumerate(self.hands) if other != seat for card in hand]
        rng.shuffle(unseen)
        for other, hand in enumerate(self.hands):
            if other != seat:
                twin.hands[other] = sorted(unseen[: len(hand)])
                del unseen[: len(hand)]
        return twin


class SottoRules(GameRules):
    """Sotto: 3 or 4 players, one variant, the wire types, new games."""

    name: ClassVar[str] = "sotto"
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 4
    variant_spec: ClassVar[tuple[Variant, ...]] = (IntVariant("hand", 1, 5, 3),)
    config_type: ClassVar[type[msgspec.Struct]] = SottoConfig
    view_type: ClassVar[Any] = SottoView
    action_type: ClassVar[Any] = Play
    event_type: ClassVar[Any] = SottoEvent
    state_type: ClassVar[type[GameState]] = SottoState


RULES: Final = SottoRules()
