"""Liar's dice for 2 to 4 players: a throwaway game for the contract suite's tests.

It is written the way docs/writing-a-game.md tells an outsider to write a game,
and keeps the contract; tests/referee/games/test_contract_faults.py plants in
subclasses the faults an outsider's version of it once had, and shows that the
suite names each one.

The rules. Each seat has ``dice`` dice (default 3). Every round each seat with
dice rolls them; a seat sees only its own. From the round's starter, clockwise,
each seat either bids "at least ``count`` dice show ``face``" (higher than the
last bid: more dice, or as many showing a higher face) or challenges the last
bid. At a challenge every die is shown: if fewer dice show the face than bid,
the bidder loses a die, else the challenger does, and the loser starts the next
round (or the next seat with dice). A seat without dice is out; the last seat
with dice wins. Seats rank by dice left, then by how late they went out.

Chance: every round, every seat rolls ``dice`` dice from a stream of its own
(``dice:<seat>``), whether or not it still has that many (a seat uses the first
ones): the n-th draw of a stream always means the same die of the same seat.
A forfeited seat's dice are put away, and it is skipped (H2 of every game).
"""

from __future__ import annotations

import random
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
    rank_seats,
)
from referee.games.wire import Action, Event

FACES = 6


class LiarsConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    dice: int = 3


class Bid(Action, tag="bid"):
    count: int
    face: int


class Challenge(Action, tag="challenge"):
    pass


class RoundStarted(Event, tag="round_started"):
    round: int
    starter: int
    counts: list[int]


class Rolled(Event, tag="rolled"):
    """A seat's roll: sent to that seat alone (``events_for``)."""

    seat: int
    dice: list[int]


class BidMade(Event, tag="bid_made"):
    seat: int
    count: int
    face: int


class Challenged(Event, tag="challenged"):
    """Every die shown: public, and no longer anyone's secret once shown."""

    seat: int
    dice: list[list[int]]
    loser: int


class GameEnded(Event, tag="game_ended"):
    ended_by: str
    ranks: list[int]


LiarsEvent = RoundStarted | Rolled | BidMade | Challenged | Forfeited | GameEnded


class LiarsView(msgspec.Struct, frozen=True, kw_only=True, tag="liars_dice", tag_field="type"):
    seat: int
    n_players: int
    dice_shown: list[list[int]]  # per seat, the dice this seat may see: its own
    counts: list[int]
    bid: list[int] | None  # [seat, count, face]
    round: int
    to_move: int | None
    forfeited: list[bool]
    over: bool


class LiarsState(GameState):
    """One game of Liar's dice."""

    __slots__ = ("bid", "counts", "dice", "out_round", "round")

    game: ClassVar[str] = "liars_dice"
    action_classes: ClassVar[frozenset[type]] = frozenset({Bid, Challenge})
    end_rules: ClassVar[dict[str, str]] = {"last_dice": "end", "forfeits": "H2"}

    config: LiarsConfig
    dice: list[list[int]]
    counts: list[int]
    bid: tuple[int, int, int] | None
    round: int
    out_round: list[int]

    def __init__(self, n_players: int, config: LiarsConfig, chance: Chance) -> None:
        super().__init__(n_players, config, chance)
        self.counts = [config.dice] * n_players
        self.out_round = [0] * n_players
        self.dice = [[] for _ in range(n_players)]
        self.bid = None
        self.round = 0
        self._start_round(0, self.deal_events)  # the first round's start and rolls: told with the first request

    # -- the rules -------------------------------------------------------------

    def _in_play(self, seat: int) -> bool:
        return self.counts[seat] > 0 and not self.forfeited[seat]

    def _next_in_play(self, seat: int) -> int:
        for step in range(1, self.n + 1):
            other = (seat + step) % self.n
            if self._in_play(other):
                return other
        return -1

    def _roll(self) -> list[list[int]]:
        """Every seat rolls every die it started with, so each stream keeps its meaning."""
        rolls = [
            [self._chance.below(f"dice:{seat}", FACES) + 1 for _ in range(self.config.dice)] for seat in range(self.n)
        ]
        return [sorted(rolls[seat][: self.counts[seat]]) for seat in range(self.n)]

    def _start_round(self, starter: int, events: list[msgspec.Struct]) -> None:
        self.round += 1
        self.bid = None
        self.dice = self._roll()
        self.to_move = starter if self._in_play(starter) else self._next_in_play(starter)
        events.append(RoundStarted(self.round, self.to_move, self.counts[:]))
        events += [Rolled(seat, self.dice[seat][:]) for seat in range(self.n) if self.counts[seat]]

    def _options(self) -> list[Any]:
        total = sum(self.counts)
        bids: list[Any] = [
            Bid(count, face)
            for count in range(1, total + 1)
            for face in range(1, FACES + 1)
            if self.bid is None or (count, face) > (self.bid[1], self.bid[2])
        ]
        return bids + ([Challenge()] if self.bid is not None else [])

    def _after_challenge(self, loser: int, events: list[msgspec.Struct]) -> None:
        self.counts[loser] -= 1
        if self.counts[loser] == 0:
            self.out_round[loser] = self.round
        if sum(1 for seat in range(self.n) if self._in_play(seat)) < 2:
            self._finish("last_dice", events)
        else:
            self._start_round(loser, events)

    # -- the hooks of GameState --------------------------------------------------

    def decision(self) -> Decision | None:
        if self._outcome is not None:
            return None
        return Decision(seat=self.to_move, kind="bid", options=self._options())

    def _out_of_turn(self, seat: int) -> IllegalAction:
        return IllegalAction("turn", f"seat {self.to_move} bids now, not seat {seat}")

    def _action_rule(self) -> str:
        return "bid"

    def _apply_action(self, seat: int, action: Any) -> list[msgspec.Struct]:
        events: list[msgspec.Struct] = []
        if isinstance(action, Challenge):
            if self.bid is None:
                raise IllegalAction("challenge", "there is no bid to challenge yet")
            bidder, count, face = self.bid
            shown = sum(die == face for dice in self.dice for die in dice)
            loser = bidder if shown < count else seat
            events.append(Challenged(seat, [d[:] for d in self.dice], loser))
            self._after_challenge(loser, events)
            return events
        if not (1 <= action.face <= FACES and 1 <= action.count <= sum(self.counts)):
            raise IllegalAction("bid", f"bid {action.count} x {action.face} is out of range")
        if self.bid is not None and (action.count, action.face) <= (self.bid[1], self.bid[2]):
            raise IllegalAction("bid", f"bid {action.count} x {action.face} does not raise {self.bid[1:]}")
        self.bid = (seat, action.count, action.face)
        events.append(BidMade(seat, action.count, action.face))
        self.to_move = self._next_in_play(seat)
        return events

    def _after_forfeit(self, seat: int, events: list[msgspec.Struct]) -> None:
        self.counts[seat] = 0
        self.dice[seat] = []
        if sum(1 for other in range(self.n) if self._in_play(other)) < 2:
            self._finish("last_dice", events)
        elif seat == self.to_move:
            self.to_move = self._next_in_play(seat)

    def _final_outcome(self, ended_by: str) -> Outcome:
        keys = [(self.counts[seat], self.out_round[seat]) for seat in range(self.n)]
        ranks = rank_seats(keys, self.forfeit_order)
        return Outcome(
            ranks=ranks,
            scores=self.counts[:],
            winners=[seat for seat in range(self.n) if ranks[seat] == 1],
            forfeited=self.forfeit_order[:],
            ended_by=ended_by,
        )

    def _end_event(self, outcome: Outcome) -> GameEnded:
        return GameEnded(outcome.ended_by, outcome.ranks[:])

    def events_for(self, seat: int, events: list[msgspec.Struct]) -> list[msgspec.Struct]:
        return [e for e in events if not isinstance(e, Rolled) or e.seat == seat]

    def _view(self, seat: int) -> LiarsView:
        over = self._outcome is not None
        return LiarsView(
            seat=seat,
            n_players=self.n,
            dice_shown=[self.dice[other][:] if other == seat else [] for other in range(self.n)],
            counts=self.counts[:],
            bid=None if self.bid is None else list(self.bid),
            round=self.round,
            to_move=None if over else self.to_move,
            forfeited=self.forfeited[:],
            over=over,
        )

    def _random_action(self, rng: random.Random) -> Any:
        options = self._options()
        # Challenge often enough that random games end in a few dozen decisions.
        if self.bid is not None and rng.random() < 0.4:
            return options[-1]
        return options[int(rng.random() * min(len(options), 8))]

    def _pass_action(self) -> Any:
        return self._options()[0]

    def _copy_into(self, other: LiarsState) -> None:
        other.dice = [dice[:] for dice in self.dice]
        other.counts = self.counts[:]
        other.bid = self.bid
        other.round = self.round
        other.out_round = self.out_round[:]

    def hidden_twin(self, seat: int, rng: random.Random) -> LiarsState:
        """Every other seat's dice rolled again."""
        twin = self.copy()
        for other in range(self.n):
            if other != seat:
                twin.dice[other] = sorted(rng.randrange(FACES) + 1 for _ in self.dice[other])
        return twin


class LiarsRules(GameRules):
    name: ClassVar[str] = "liars_dice"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    variant_spec: ClassVar[tuple[Variant, ...]] = (IntVariant("dice", 1, 5, 3),)
    config_type: ClassVar[type[msgspec.Struct]] = LiarsConfig
    view_type: ClassVar[Any] = LiarsView
    action_type: ClassVar[Any] = Bid | Challenge
    event_type: ClassVar[Any] = LiarsEvent
    state_type: ClassVar[type[GameState]] = LiarsState


RULES = LiarsRules()
