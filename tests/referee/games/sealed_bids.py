"""Sealed bids for 2 to 4 players: a throwaway game whose secrets are made by choices, not by chance.

Written the way docs/writing-a-game.md tells an outsider to write a game, and
keeping the contract; tests/referee/games/test_contract_secret_choices.py plants
leaks in subclasses and shows that the suite names each one.

The rules. Every seat holds the cards 1 to ``prizes`` (default 4). The prize
cards 1 to ``prizes`` are shuffled face down; each round the top one is shown,
then every seat in play bids one card of its hand, face down, one after the
other from the round's first seat (seat ``round mod n``). When every seat in
play has bid, the bids are shown: the highest bid no other seat matched takes
the prize (nobody takes it when every bid is matched), and the bid cards are
discarded. After ``prizes`` rounds the seats rank by the prizes they took.
Each prize shown is an event: the first one at the deal (``deal_events``).

What is secret: a bid, until the round's bids are shown. Its seat is told its
own card; the others are told only that it bid (``events_for`` blanks the
card), and no view holds another seat's pending card. The game declares it in
``SealedRules.secret_choices``, so the contract suite plays each sampled bid
again with another card. The prize order is chance no seat sees.

A forfeited seat bids no more; a bid it made this round stays on the table.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, ClassVar

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

__all__ = ["RULES", "Bid", "BidMade", "PrizeShown", "SealedRules", "SealedState", "SealedView", "register"]


class SealedConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    prizes: int = 4


class Bid(Action, tag="bid"):
    card: int


class PrizeShown(Event, tag="prize_shown"):
    round: int
    prize: int


class BidMade(Event, tag="bid_made"):
    """A seat bid: its card for that seat alone, None for the others (``events_for``)."""

    seat: int
    card: int | None


class BidsShown(Event, tag="bids_shown"):
    """The round's bids, face up: None for a seat that did not bid."""

    round: int
    bids: list[int | None]
    taker: int | None
    prize: int


class GameEnded(Event, tag="game_ended"):
    ended_by: str
    prizes: list[int]
    ranks: list[int]


SealedEvent = PrizeShown | BidMade | BidsShown | Forfeited | GameEnded


class SealedView(msgspec.Struct, frozen=True, tag="sealed_bids", tag_field="type", kw_only=True):
    seat: int
    n_players: int
    hand: list[int]
    hand_sizes: list[int]
    round: int
    prize: int | None
    my_bid: int | None
    bid_made: list[bool]
    taken: list[int]
    shown: list[list[int | None]]
    """Every finished round's bids, face up."""
    to_move: int | None
    forfeited: list[bool]
    over: bool


class SealedState(GameState):
    __slots__ = ("bids", "hands", "order", "round", "shown", "taken")

    game: ClassVar[str] = "sealed_bids"
    action_classes: ClassVar[frozenset[type]] = frozenset({Bid})
    end_rules: ClassVar[dict[str, str]] = {"all_prizes": "end", "forfeits": "forfeit"}

    config: SealedConfig
    hands: list[list[int]]
    order: list[int]
    round: int
    bids: list[int | None]
    taken: list[int]
    shown: list[list[int | None]]

    def __init__(self, n_players: int, config: SealedConfig, chance: Chance) -> None:
        super().__init__(n_players, config, chance)
        self.order = [card + 1 for card in checked_shuffle(chance, "prizes", config.prizes)]
        self.hands = [list(range(1, config.prizes + 1)) for _ in range(n_players)]
        self.round = 0
        self.bids = [None] * n_players
        self.taken = [0] * n_players
        self.shown = []
        self.to_move = 0
        self.deal_events = [PrizeShown(0, self.order[0])]  # each seat is told it with its first request

    # -- the game's own rules --------------------------------------------------

    def _next_bidder(self, events: list[msgspec.Struct]) -> None:
        """The next seat in play without a bid this round, from the round's first seat; the bids
        shown when there is none."""
        n = self.n
        first = self.round % n
        for offset in range(n):
            seat = (first + offset) % n
            if not self.forfeited[seat] and self.bids[seat] is None:
                self.to_move = seat
                return
        self._show_bids(events)

    def _show_bids(self, events: list[msgspec.Struct]) -> None:
        bids = self.bids
        prize = self.order[self.round]
        counts = {bid: bids.count(bid) for bid in bids if bid is not None}
        unmatched = [
            (bid, seat)
            for seat, bid in enumerate(bids)
            if bid is not None and counts[bid] == 1 and not self.forfeited[seat]
        ]
        taker = max(unmatched)[1] if unmatched else None
        if taker is not None:
            self.taken[taker] += prize
        events.append(BidsShown(self.round, bids[:], taker, prize))
        self.shown.append(bids[:])
        self.bids = [None] * self.n
        self.round += 1
        if self.round == self.config.prizes:
            self._finish("all_prizes", events)
            return
        events.append(PrizeShown(self.round, self.order[self.round]))
        self._next_bidder(events)

    # -- the hooks of GameState ------------------------------------------------

    def decision(self) -> Decision | None:
        if self._outcome is not None:
            return None
        seat = self.to_move
        return Decision(seat=seat, kind="bid", options=[Bid(card) for card in self.hands[seat]])

    def events_for(self, seat: int, events: list[msgspec.Struct]) -> list[msgspec.Struct]:
        return [BidMade(e.seat, None) if isinstance(e, BidMade) and e.seat != seat else e for e in events]

    def _out_of_turn(self, seat: int) -> IllegalAction:
        return IllegalAction("turn", f"seat {self.to_move} bids now, not seat {seat}")

    def _action_rule(self) -> str:
        return "bid"

    def _apply_action(self, seat: int, action: Bid) -> list[msgspec.Struct]:
        if action.card not in self.hands[seat]:
            raise IllegalAction("bid", f"card {action.card!r} is not in your hand {self.hands[seat]}")
        self.hands[seat].remove(action.card)
        self.bids[seat] = action.card
        events: list[msgspec.Struct] = [BidMade(seat, action.card)]
        self._next_bidder(events)
        return events

    def _after_forfeit(self, seat: int, events: list[msgspec.Struct]) -> None:
        if seat == self.to_move:
            self._next_bidder(events)

    def _final_outcome(self, ended_by: str) -> Outcome:
        ranks = rank_seats([(t,) for t in self.taken], self.forfeit_order)
        return Outcome(
            ranks=ranks,
            scores=self.taken[:],
            winners=[s for s in range(self.n) if ranks[s] == 1],
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
            hand_sizes=[len(hand) for hand in self.hands],
            round=self.round,
            prize=None if over else self.order[self.round],
            my_bid=self.bids[seat],
            bid_made=[bid is not None for bid in self.bids],
            taken=self.taken[:],
            shown=[bids[:] for bids in self.shown],
            to_move=None if over else self.to_move,
            forfeited=self.forfeited[:],
            over=over,
        )

    def _random_action(self, rng: random.Random) -> Bid:
        hand = self.hands[self.to_move]
        return Bid(hand[int(rng.random() * len(hand))])

    def _pass_action(self) -> Bid:
        return Bid(self.hands[self.to_move][0])

    def _copy_into(self, other: SealedState) -> None:
        other.order = self.order  # never changes
        other.hands = [hand[:] for hand in self.hands]
        other.round = self.round
        other.bids = self.bids[:]
        other.taken = self.taken[:]
        other.shown = [bids[:] for bids in self.shown]


class SealedRules(GameRules):
    name: ClassVar[str] = "sealed_bids"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    variant_spec: ClassVar[tuple[Variant, ...]] = (IntVariant("prizes", 2, 8, 4),)
    config_type: ClassVar[type[msgspec.Struct]] = SealedConfig
    view_type: ClassVar[Any] = SealedView
    action_type: ClassVar[Any] = Bid
    event_type: ClassVar[Any] = SealedEvent
    state_type: ClassVar[type[GameState]] = SealedState
    secret_choices: ClassVar[dict[str, tuple[str, ...]]] = {"bid": ("card",)}


RULES = SealedRules()


def register(site: Path) -> Path:
    """Write a distribution into ``site`` that registers this game as the plug-in ``sealed_bids``:
    put ``site`` on sys.path to find it by name (a replay is verified by its game's name)."""
    info = site / "sealed_bids_plugin-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sealed-bids-plugin\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[famiglia.games]\nsealed_bids = tests.referee.games.sealed_bids:RULES\n", encoding="utf-8"
    )
    return site
