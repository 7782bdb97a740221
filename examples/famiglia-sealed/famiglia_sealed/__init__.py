"""Sealed: a bidding game in which every seat bids at once, written as a famiglia game plug-in.

The rules. Every seat holds the cards 1 to ``prizes`` (default 5); the prize
cards 1 to ``prizes`` are shuffled face down. Each round the top prize is shown
and every seat in play bids one card of its hand, all at the same time. Then the
bids are shown: the highest bid that no other seat matched takes the prize (when
every bid is matched, nobody does), and the bid cards are gone. After ``prizes``
rounds the seats rank by the value of the prizes they took (ties share a rank).
A seat that forfeits bids no more (its bid in the round under way, if any, is
void) and ranks last; when one seat is left, the game ends.

What makes it simultaneous: every round is one step that asks every seat in play
at once. ``SealedState`` sets ``to_move`` to ``TOGETHER`` and lists the seats
asked in ``_asked``; the referee sends each its own request, and when all have
answered (or timed out, or forfeited) plays their bids together through
``_apply_together``. No seat learns another's bid before the round's ``shown``
event: the bids are never in a view or an event until they are all in, which
the contract suite checks by bidding other cards (a simultaneous answer is a
secret of its seat by default). docs/writing-a-game.md walks through it.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import msgspec

from referee.games.base import (
    TOGETHER,
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

__all__ = ["RULES", "Bid", "BidsShown", "PrizeShown", "SealedConfig", "SealedRules", "SealedState", "SealedView"]


class SealedConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The one variant: how many prizes (and so rounds, and cards in each hand)."""

    prizes: int = 5


class Bid(Action, tag="bid"):
    """The one action: bid this card of your hand for the prize shown."""

    card: int


class PrizeShown(Event, tag="prize_shown"):
    """A round begins: its prize is turned face up."""

    round: int
    prize: int


class BidsShown(Event, tag="bids_shown"):
    """The round's bids, face up (None for a seat that did not bid), and who took the prize (None: nobody)."""

    round: int
    bids: list[int | None]
    taker: int | None
    prize: int


class GameEnded(Event, tag="game_ended"):
    ended_by: str
    scores: list[int]
    ranks: list[int]


SealedEvent = PrizeShown | BidsShown | Forfeited | GameEnded


class SealedView(msgspec.Struct, frozen=True, tag="sealed", tag_field="type", kw_only=True):
    """What one seat knows: its hand, the prize up for bids, every finished round face up."""

    seat: int
    n_players: int
    hand: list[int]
    round: int
    prize: int | None
    """The prize up for bids; None once the game is over."""
    taken: list[int]
    """The value of the prizes each seat has taken."""
    history: list[BidsShown]
    """Every finished round: its prize, the bids face up, who took it."""
    forfeited: list[bool]
    over: bool


class SealedState(GameState):
    """One game of Sealed: every round is a simultaneous step (``to_move`` is ``TOGETHER``)."""

    __slots__ = ("hands", "history", "order", "round", "taken")

    game: ClassVar[str] = "sealed"
    action_classes: ClassVar[frozenset[type]] = frozenset({Bid})
    end_rules: ClassVar[dict[str, str]] = {"all_prizes": "end", "forfeits": "forfeit"}

    config: SealedConfig
    hands: list[list[int]]
    order: list[int]
    round: int
    taken: list[int]
    history: list[BidsShown]

    def __init__(self, n_players: int, config: SealedConfig, chance: Chance) -> None:
        super().__init__(n_players, config, chance)
        self.order = [card + 1 for card in checked_shuffle(chance, "prizes", config.prizes)]
        self.hands = [list(range(1, config.prizes + 1)) for _ in range(n_players)]
        self.round = 0
        self.taken = [0] * n_players
        self.history = []
        self.to_move = TOGETHER  # every round asks every seat at once
        self.deal_events = [PrizeShown(0, self.order[0])]

    # -- the simultaneous step -------------------------------------------------------------

    def _asked(self) -> list[Decision]:
        return [
            Decision(seat=seat, kind="bid", options=[Bid(card) for card in self.hands[seat]])
            for seat in range(self.n)
            if not self.forfeited[seat]
        ]

    def _apply_together(self, actions: dict[int, Any]) -> list[msgspec.Struct]:
        bids: list[int | None] = [None] * self.n
        for seat, bid in actions.items():
            self.hands[seat].remove(bid.card)
            bids[seat] = bid.card
        counts = {card: bids.count(card) for card in bids if card is not None}
        unmatched = [(card, seat) for seat, card in enumerate(bids) if card is not None and counts[card] == 1]
        taker = max(unmatched)[1] if unmatched else None
        prize = self.order[self.round]
        if taker is not None:
            self.taken[taker] += prize
        shown = BidsShown(self.round, bids, taker, prize)
        self.history.append(shown)
        events: list[msgspec.Struct] = [shown]
        self.round += 1
        if self.round == self.config.prizes:
            self._finish("all_prizes", events)
        else:
            events.append(PrizeShown(self.round, self.order[self.round]))
        return events

    # -- the hooks every game fills in -------------------------------------------------------

    def _out_of_turn(self, seat: int) -> IllegalAction:
        return IllegalAction("bid", f"seat {seat} is not at this {self.n}-player table")

    def _action_rule(self) -> str:
        return "bid"

    def _after_forfeit(self, seat: int, events: list[msgspec.Struct]) -> None:
        """Nothing to play for it: the round goes on without its bid (the base plays the round
        at once if it was the last seat the round waited for)."""

    def _final_outcome(self, ended_by: str) -> Outcome:
        ranks = rank_seats([(value,) for value in self.taken], self.forfeit_order)
        return Outcome(
            ranks=ranks,
            scores=self.taken[:],
            winners=[seat for seat in range(self.n) if ranks[seat] == 1],
            forfeited=self.forfeit_order[:],
            ended_by=ended_by,
        )

    def _end_event(self, outcome: Outcome) -> GameEnded:
        return GameEnded(outcome.ended_by, outcome.scores[:], outcome.ranks[:])

    def _view(self, seat: int) -> SealedView:
        over = self._outcome is not None
        return SealedView(
            seat=seat,
            n_players=self.n,
            hand=self.hands[seat][:],
            round=self.round,
            prize=None if over else self.order[self.round],
            taken=self.taken[:],
            history=self.history[:],  # frozen events: the list alone is copied
            forfeited=self.forfeited[:],
            over=over,
        )

    def _copy_into(self, other: SealedState) -> None:
        other.order = self.order  # never changes after the deal
        other.hands = [hand[:] for hand in self.hands]
        other.round = self.round
        other.taken = self.taken[:]
        other.history = self.history[:]

    def hidden_twin(self, seat: int, rng: random.Random) -> SealedState:
        """The prizes not yet shown, shuffled again: the only thing chance hides from any seat."""
        twin = self.copy()
        unseen = twin.order[self.round + 1 :]
        rng.shuffle(unseen)
        twin.order = twin.order[: self.round + 1] + unseen
        return twin


class SealedRules(GameRules):
    name: ClassVar[str] = "sealed"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 5
    variant_spec: ClassVar[tuple[Variant, ...]] = (IntVariant("prizes", 2, 10, 5),)
    config_type: ClassVar[type[msgspec.Struct]] = SealedConfig
    view_type: ClassVar[Any] = SealedView
    action_type: ClassVar[Any] = Bid
    event_type: ClassVar[Any] = SealedEvent
    state_type: ClassVar[type[GameState]] = SealedState


RULES = SealedRules()
