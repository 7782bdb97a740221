"""Each entrant's share of the ladder: of the games in flight and of recent game time. Pure, no I/O.

Matchmaking deals around the version that most needs games (``ladder.matchmaking``),
which alone lets one version take any number of tables: a new one (its warm-up) or
one whose interval stays wide because its games teach nothing, a bot that fails in
every game. A month-long ladder saw one such bot at 11 of its first 26 tables and in
96.5 % of its game time. The share bounds that, whatever the interval says.

With ``n`` entrants playing and tables of ``k`` seats, an entrant sits at ``k / n`` of
all tables when every one is dealt alike (``fair_share``), and owns ``1 / n`` of all
game time, a game's seconds being split among its seats (``fair_time_share``).
``SLACK`` above either is allowed (ratings need some unevenness: the neediest first);
beyond that the entrant waits. Two shares are bounded, both counted by entrant, not by
version, so that a resubmission starts with its entrant's share and cannot reset it:

* games in flight: at most ``max(1, floor(SLACK * k / n * slots))`` of the ``slots``
  games played at once;
* recent game time: its seconds of the last ``RECENT_GAMES`` games the ladder
  finished (its own thinking, and the waits its failures cost: ``seat_seconds``), at
  most ``SLACK / n`` of their seconds. A slow bot's games are long, so it reaches
  this bound after few of them; the bots beside it are not charged its slowness.

A pending game waits while one of its entrants is past a bound, and a new table is
dealt from the entrants within both. Only when those cannot fill a table is it topped
up from the others not ``held``, the least loaded first (``ShareBook.seatable``): a small field
(five entrants, two games at once, three seats: six seats to fill from five) must
still play, and game time moves on only as games are played. New tables are dealt
so while fewer than ``slots + 1`` are pending; past that, the pending game that goes
least past the shares (``ShareBook.load``) plays, so pending tables do not pile up
when a small field's honest entrants are at their bound game after game. Such a
game never seats an entrant ``held`` (at its share of games in flight, its games not
known to be quick): a new table is dealt instead.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["RECENT_GAMES", "SLACK", "ShareBook", "fair_share", "fair_time_share", "seat_seconds"]

SLACK = 1.25
"""How far above its fair share an entrant may go."""
RECENT_GAMES = 200
"""Finished games over which game time is shared: a few minutes of a busy ladder."""


def fair_share(seats: int, entrants: int) -> float:
    """The share of tables an entrant sits at when all are dealt alike (at most all of them)."""
    return min(1.0, seats / entrants) if entrants else 1.0


def fair_time_share(entrants: int) -> float:
    """The share of all game time an entrant owns when all are dealt alike and think alike: each game's
    seconds are split among its seats, so the shares of all entrants sum to one."""
    return 1.0 / entrants if entrants else 1.0


def seat_seconds(
    seconds: float, entrants: Sequence[str], thought: Sequence[float], failed: Sequence[bool]
) -> dict[str, float]:
    """Whose the ``seconds`` a game held its slot were: each seat's own thinking (``thought``, seconds),
    and the rest to the seats that ``failed`` (a timed-out decision is on no seat's meter: its wait
    is the rest), or shared alike when none did. A slow or failing bot's time is its own, not its
    table's: the others at its table are not pushed past their share by sitting beside it."""
    thinking = [max(0.0, thought[seat]) if seat < len(thought) else 0.0 for seat in range(len(entrants))]
    rest = max(0.0, seconds - sum(thinking))
    owners = [seat for seat, fault in enumerate(failed) if fault] or list(range(len(entrants)))
    spent: dict[str, float] = {}
    for seat, name in enumerate(entrants):
        share = rest / len(owners) if seat in owners else 0.0
        spent[name] = spent.get(name, 0.0) + thinking[seat] + share
    return spent


class ShareBook:
    """The games each entrant is in now and the seconds of its recent games, as the loop plays them.

    Kept in memory: a restart begins its recent time afresh (what matters is the ladder's
    present), while the games in flight are the loop's own by construction.
    """

    def __init__(self, recent_games: int = RECENT_GAMES) -> None:
        self._in_flight: dict[int, tuple[str, ...]] = {}
        """The entrants of each game being played, by game id."""
        self._recent: deque[dict[str, float]] = deque()
        """Each entrant's seconds of each of the last finished games, at most ``recent_games`` of them."""
        self._limit = recent_games
        # Running sums over ``_recent`` and ``_in_flight``: matchmaking reads them for every pending game
        # at every deal, so they are kept as games come and go rather than summed at each read.
        self._flight: Counter[str] = Counter()
        self._spent: dict[str, float] = {}
        self._games: Counter[str] = Counter()
        self._total = 0.0

    def started(self, game: int, entrants: Iterable[str]) -> None:
        self._in_flight[game] = tuple(dict.fromkeys(entrants))
        self._flight.update(self._in_flight[game])

    def ended(self, game: int, spent: Mapping[str, float] | None) -> None:
        """The game is over: each entrant's seconds of it (``seat_seconds``) count towards its game time;
        None when it was not played (it goes back to pending)."""
        entrants = self._in_flight.pop(game, ())
        self._flight.subtract(entrants)
        self._flight = +self._flight  # drop the zeros: an entrant in no game is absent
        if spent is None or not entrants:
            return
        seconds = {name: max(0.0, spent.get(name, 0.0)) for name in entrants}
        self._recent.append(seconds)
        self._count(seconds, 1)
        if len(self._recent) > self._limit:
            self._count(self._recent.popleft(), -1)

    def _count(self, seconds: Mapping[str, float], sign: int) -> None:
        for name, value in seconds.items():
            self._total = max(0.0, self._total + sign * value)
            self._spent[name] = max(0.0, self._spent.get(name, 0.0) + sign * value)
            self._games[name] += sign
            if self._games[name] <= 0:
                del self._games[name], self._spent[name]

    def in_flight(self) -> Counter[str]:
        """How many games being played each entrant sits in."""
        return Counter(self._flight)

    def time_shares(self) -> dict[str, float]:
        """Each entrant's share of the recent games' seconds (absent: none of them)."""
        return {name: self._share(name) for name in self._spent} if self._total > 0 else {}

    def _share(self, name: str) -> float:
        return self._spent.get(name, 0.0) / self._total if self._total > 0 else 0.0

    def seconds_per_game(self) -> dict[str, float]:
        """Each entrant's mean seconds over its recent games (absent: none of them)."""
        return {name: self._spent[name] / games for name, games in self._games.items()}

    def flight_limit(self, seats: int, entrants: int, slots: int) -> int:
        """The most games in flight one entrant sits in while others can fill the table instead."""
        return max(1, math.floor(SLACK * fair_share(seats, entrants) * slots + 1e-9))

    def time_limit(self, entrants: int) -> float:
        """The most of recent game time one entrant's games may take while others can fill the table instead."""
        return min(1.0, SLACK * fair_time_share(entrants))

    def within(self, names: Iterable[str], seats: int, entrants: int, slots: int) -> bool:
        """Whether a game of ``names`` keeps each of them within its shares of games in flight and of game time."""
        flight, time = self.flight_limit(seats, entrants, slots), self.time_limit(entrants)
        return all(self._flight[name] < flight and self._share(name) <= time + 1e-9 for name in names)

    def load(self, names: Iterable[str], seats: int, entrants: int) -> tuple[int, int]:
        """How far a game of ``names`` would go past the shares: how many of them are past their share of
        game time, and their games in flight in all. What orders the pending games when none is within."""
        time = self.time_limit(entrants)
        named = list(names)
        return sum(self._share(name) > time + 1e-9 for name in named), sum(self._flight[name] for name in named)

    def held(self, name: str, seats: int, entrants: int, slots: int, *, quick_below: float | None = None) -> bool:
        """Whether ``name`` may not join another game even when nothing else can be played: it is at its
        share of games in flight and its games are not known to be quick (none recent, or on average more
        than twice the field's median). A small field's quick entrants go past their share then; a bot
        whose games run their clock out never holds two of them at once. ``quick_below``: the field's
        bound (``_quick_below``), when a caller asks of many entrants at once."""
        at_limit = self._flight[name] >= self.flight_limit(seats, entrants, slots)
        return at_limit and not self.known_quick(name, quick_below=quick_below)

    def known_quick(self, name: str, *, quick_below: float | None = None) -> bool:
        """Whether ``name``'s recent games are known to be quick: it has some, and their mean seconds are at
        most twice the median of every entrant's mean."""
        games = self._games[name]
        if not games:
            return False
        bound = self._quick_below() if quick_below is None else quick_below
        return self._spent[name] / games <= bound

    def _quick_below(self) -> float:
        """Twice the median of the entrants' mean seconds a recent game (0 when none has any)."""
        means = sorted(self._spent[name] / count for name, count in self._games.items())
        return 2 * means[len(means) // 2] if means else 0.0

    def seatable(self, owners: Mapping[int, str], seats: int, slots: int) -> list[int]:
        """Of ``owners`` (version id: its entrant, for every version playing), those a new table of
        ``seats`` may be dealt from: every one within its shares, topped up to ``seats`` if need be from
        the others, the least loaded first, so that a small field still fills its tables. Fewer than
        ``seats`` when even the top-up cannot fill one: no table is dealt until a game ends.

        The top-up never takes an entrant ``held`` (at its share of games in flight, its games not known
        to be quick: a new version's first game may be its first timeout, and a bot slow only when it
        is losing must not hold two tables at once). Its order: past its share of game time last; then
        fewest games in flight; then the quickest recent games first.
        """
        entrants = len(set(owners.values()))
        flight, time = self.flight_limit(seats, entrants, slots), self.time_limit(entrants)
        fits = [v for v, name in owners.items() if self._flight[name] < flight and self._share(name) <= time + 1e-9]
        if len(fits) >= seats:
            return fits

        def load(version: int) -> tuple[bool, int, float]:
            name = owners[version]
            return self._share(name) > time + 1e-9, self._flight[name], self._spent[name] / self._games[name]

        within, bound = set(fits), self._quick_below()  # asked of every other entrant: made once
        rest = [
            v for v in owners if v not in within and not self.held(owners[v], seats, entrants, slots, quick_below=bound)
        ]
        return fits + sorted(rest, key=load)[: seats - len(fits)]
