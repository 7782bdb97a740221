"""The gang war on the table (G1-G7): who plays which family, the cards, the alliances."""

from __future__ import annotations

from referee.games.sicilianos.components import (
    BOMB_TARGETS,
    RENEGADE_BONUS,
    colour_of,
    value_of,
)


class War:
    """One gang war: participants, their cards and stakes, and where the war stands.

    Each participant plays exactly one family (G2 forbids a colour twice), so a
    colour names a participant: ``seat_of[colour]``. ``queue``/``cursor`` walk the
    current step: the seats asked to join, the seats asked to play this round, or
    the revealed Renegades and Bombs waiting for their owner's decision.
    """

    __slots__ = (
        "ally",
        "cards",
        "cursor",
        "face_down",
        "family",
        "first_reveal",
        "initiator",
        "launderer",
        "order",
        "passed",
        "queue",
        "renegade",
        "reveals",
        "seat_of",
        "stake",
        "stopped",
        "taker",
        "used_pairs",
        "winners",
        "winning_colour",
    )

    def __init__(self, initiator: int) -> None:
        self.initiator = initiator
        self.order: list[int] = []  # participants, clockwise from the initiator
        self.family: dict[int, int] = {}  # seat -> colour
        self.seat_of: dict[int, int] = {}  # colour -> seat
        self.stake: dict[int, int] = {}  # seat -> note value
        # seat -> its cards on the table, in play order
        self.cards: dict[int, list[int]] = {}
        self.face_down: list[int] = []  # cards not revealed yet, in play order
        self.passed: set[int] = set()
        self.stopped: set[int] = set()  # used a Renegade (G5)
        self.renegade: dict[int, int] = {}  # seat -> its 8 counted as a Renegade
        self.ally: dict[int, int] = {}  # both directions
        self.used_pairs: set[int] = set()  # pair_of() ids with a Renegade used
        self.queue: list[int] = []
        self.cursor = 0
        self.reveals = 0
        self.first_reveal = False
        self.winners: list[int] = []
        self.winning_colour: int | None = None
        self.taker: int | None = None  # who takes the business (G8)
        self.launderer: int | None = None  # who launders (G8)

    def copy(self) -> War:
        """An independent copy."""
        other = War.__new__(War)
        other.initiator = self.initiator
        other.order = self.order[:]
        other.family = dict(self.family)
        other.seat_of = dict(self.seat_of)
        other.stake = dict(self.stake)
        other.cards = {seat: cards[:] for seat, cards in self.cards.items()}
        other.face_down = self.face_down[:]
        other.passed = set(self.passed)
        other.stopped = set(self.stopped)
        other.renegade = dict(self.renegade)
        other.ally = dict(self.ally)
        other.used_pairs = set(self.used_pairs)
        other.queue = self.queue[:]
        other.cursor = self.cursor
        other.reveals = self.reveals
        other.first_reveal = self.first_reveal
        other.winners = self.winners[:]
        other.winning_colour = self.winning_colour
        other.taker = self.taker
        other.launderer = self.launderer
        return other

    def enter(self, seat: int, card: int, note: int) -> None:
        """``seat`` joins with ``card`` face down and ``note`` as stake (G1, G2)."""
        colour = colour_of(card)
        self.order.append(seat)
        self.family[seat] = colour
        self.seat_of[colour] = seat
        self.stake[seat] = note
        self.cards[seat] = [card]
        self.face_down.append(card)

    def strengths(self, revealed_only: bool) -> dict[int, int]:
        """Each participant's family strength (G7); a Renegade adds 4 to its ally."""
        hidden = self.face_down if revealed_only else ()
        strength = dict.fromkeys(self.order, 0)
        for seat in self.order:
            renegade = self.renegade.get(seat)
            for card in self.cards[seat]:
                if card in hidden:
                    continue
                if card == renegade:
                    # [A] With nobody playing the other colour the Renegade counts 0.
                    ally = self.ally.get(seat)
                    if ally is not None:
                        strength[ally] += RENEGADE_BONUS
                else:
                    strength[seat] += value_of(card)
        return strength

    def bomb_targets(self, seat: int) -> list[int]:
        """The cards ``seat``'s revealed Bomb may aim at (G6): opposing families of its colours."""
        ally = self.ally.get(seat)
        targets: list[int] = []
        for colour in BOMB_TARGETS[self.family[seat]]:
            owner = self.seat_of.get(colour)
            # C4 never lists a colour's Renegade partner, so an ally is never hit;
            # the check keeps that true whatever the tables say.
            if owner is not None and owner != seat and owner != ally:
                targets.extend(self.cards[owner])
        targets.sort()
        return targets


def winning_seat(strength: dict[int, int]) -> int | None:
    """The seat of the winning family (G7), or None when every family cancels out.

    Families with equal strength cancel each other; the strongest family left wins.
    [A] A family needs a positive strength to win.
    """
    counts: dict[int, int] = {}
    for value in strength.values():
        counts[value] = counts.get(value, 0) + 1
    best: int | None = None
    best_value = 0
    for seat, value in strength.items():
        if value > best_value and counts[value] == 1:
            best, best_value = seat, value
    return best
