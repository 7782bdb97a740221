"""Each entrant's share of the ladder: of the games in flight and of recent game time. Pure, no I/O.

Matchmaking deals around the version that most needs games (``ladder.matchmaking``),
which alone lets one version take any number of tables: a new one (its warm-up) or
one whose interval stays wide because its games teach nothing, a bot that fails in
every game. A month-long ladder saw one such bot at 11 of its first 26 tables and in
96.5 % of its game time. The share bounds that, whatever the interval says.

With ``n`` entrants playing and tables of ``k`` seats, an entrant sits at ``k / n`` of
all tables when every one is dealt alike: its fair share. ``SLACK`` above it is
allowed (ratings need some unevenness: the neediest first); beyond that the entrant
waits. Two shares are bounded, both counted by entrant, not by version, so that a
resubmission starts with its entrant's share and cannot reset it:

* games in flight: at most ``max(1, floor(SLACK * k / n * slots))`` of the ``slots``
  games played at once;
* recent game time: the seconds of the games it sat in, among the last
  ``RECENT_GAMES`` the ladder finished, at most ``SLACK * k / n`` of their seconds. A
  slow bot's games are long, so it reaches this bound after few of them.

A pending game waits while one of its entrants is past a bound, and a new table is
dealt from the entrants within both. Only when those cannot fill a table is it topped
up from the others, the least loaded first and those past their share of game time
last: a small field (five entrants, two games at once, three seats: six seats to fill
from five) must still play, and game time moves on only as games are played.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Mapping

__all__ = ["RECENT_GAMES", "SLACK", "ShareBook", "fair_share"]

SLACK = 1.25
"""How far above its fair share an entrant may go."""
RECENT_GAMES = 200
"""Finished games over which game time is shared: a few minutes of a busy ladder."""


def fair_share(seats: int, entrants: int) -> float:
    """The share of tables an entrant sits at when all are dealt alike (at most all of them)."""
    return min(1.0, seats / entrants) if entrants else 1.0


class ShareBook:
    """The games each entrant is in now and the seconds of its recent games, as the loop plays them.

    Kept in memory: a restart begins its recent time afresh (what matters is the ladder's
    present), while the games in flight are the loop's own by construction.
    """

    def __init__(self, recent_games: int = RECENT_GAMES) -> None:
        self._in_flight: dict[int, tuple[str, ...]] = {}
        """The entrants of each game being played, by game id."""
        self._recent: deque[tuple[float, tuple[str, ...]]] = deque(maxlen=recent_games)
        """(seconds, entrants) of the last finished games."""

    def started(self, game: int, entrants: Iterable[str]) -> None:
        self._in_flight[game] = tuple(dict.fromkeys(entrants))

    def ended(self, game: int, seconds: float | None) -> None:
        """The game is over: its seconds count towards its entrants' time, unless it was not played (None)."""
        entrants = self._in_flight.pop(game, ())
        if seconds is not None and entrants:
            self._recent.append((max(0.0, seconds), entrants))

    def in_flight(self) -> Counter[str]:
        """How many games being played each entrant sits in."""
        return Counter(name for entrants in self._in_flight.values() for name in entrants)

    def time_shares(self) -> dict[str, float]:
        """Each entrant's share of the recent games' seconds (absent: none of them)."""
        total = sum(seconds for seconds, _ in self._recent)
        if total <= 0:
            return {}
        spent: dict[str, float] = {}
        for seconds, entrants in self._recent:
            for name in entrants:
                spent[name] = spent.get(name, 0.0) + seconds
        return {name: value / total for name, value in spent.items()}

    def flight_limit(self, seats: int, entrants: int, slots: int) -> int:
        """The most games in flight one entrant sits in while others can fill the table instead."""
        return max(1, math.floor(SLACK * fair_share(seats, entrants) * slots + 1e-9))

    def time_limit(self, seats: int, entrants: int) -> float:
        """The most of recent game time one entrant's games may take while others can fill the table instead."""
        return min(1.0, SLACK * fair_share(seats, entrants))

    def within(self, names: Iterable[str], seats: int, entrants: int, slots: int) -> bool:
        """Whether a game of ``names`` keeps each of them within its shares of games in flight and of game time."""
        in_flight, shares = self.in_flight(), self.time_shares()
        flight, time = self.flight_limit(seats, entrants, slots), self.time_limit(seats, entrants)
        return all(in_flight[name] < flight and shares.get(name, 0.0) <= time + 1e-9 for name in names)

    def seatable(self, owners: Mapping[int, str], seats: int, slots: int) -> list[int]:
        """Of ``owners`` (version id: its entrant, for every version playing), those a new table of
        ``seats`` may be dealt from: every one within its shares, topped up to ``seats`` if need be by the
        least loaded of the others (past their share of game time last, then fewest games in flight,
        then least game time), so a ladder with few entrants still plays."""
        entrants = len(set(owners.values()))
        fits = [v for v, name in owners.items() if self.within([name], seats, entrants, slots)]
        if len(fits) >= seats:
            return fits
        in_flight, shares = self.in_flight(), self.time_shares()
        time = self.time_limit(seats, entrants)

        def load(version: int) -> tuple[bool, int, float]:
            share = shares.get(owners[version], 0.0)
            return share > time + 1e-9, in_flight[owners[version]], share

        rest = sorted((v for v in owners if v not in fits), key=load)
        return fits + rest[: seats - len(fits)]
