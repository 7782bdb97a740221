"""The contract every rules engine follows, and the chance sources that feed it.

A rules engine is pure: no I/O, no clocks, no global random state. The referee,
the sample bots, the tests and the benchmarks all drive a game through the same
small surface:

* ``GameRules`` describes a game (name, player counts, how to read its variants)
  and builds a fresh ``GameState`` from a configuration and a ``Chance`` source.
* ``GameState.decision()`` says who must decide now and what kind of decision it
  is, with the legal options when they are few, or the constraints when they are
  many (a Vendetta placement).
* ``GameState.view(seat)`` is everything that seat may know, and nothing more.
* ``GameState.apply(seat, action)`` changes the state and returns the events it
  caused, or raises ``IllegalAction`` and changes nothing.

All chance is drawn through ``Chance`` from named streams. Each stream's n-th draw
depends only on the seed and the stream's name, never on the players' actions, so
the same seed with rotated seats deals the same game (duplicate games). A
``RecordingChance`` keeps every draw so a replay can re-run the game without the
seed, through ``ScriptedChance``.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar, Protocol, runtime_checkable

import msgspec

__all__ = [
    "Chance",
    "ChanceDraw",
    "ChanceMismatch",
    "Decision",
    "GameRules",
    "GameState",
    "IllegalAction",
    "Outcome",
    "RecordingChance",
    "ScriptedChance",
    "SeededChance",
    "UnknownVariant",
    "choice_variant",
    "int_variant",
]


class IllegalAction(ValueError):
    """An action breaks a rule of the game; the state is unchanged."""

    def __init__(self, rule_id: str, message: str) -> None:
        self.rule_id = rule_id
        self.detail = message
        super().__init__(f"{rule_id}: {message}")


class UnknownVariant(ValueError):
    """A variant key or value that the game does not know."""


def choice_variant(game: str, key: str, value: str, allowed: tuple[str, ...]) -> str:
    """``value`` if it is one of ``allowed``; else UnknownVariant saying what is."""
    text = str(value).strip()
    if text not in allowed:
        raise UnknownVariant(f"{game} {key}={value!r}: use one of {', '.join(allowed)}")
    return text


def int_variant(game: str, key: str, value: str, low: int, high: int) -> int:
    """``value`` as a whole number in ``low..high``; else UnknownVariant saying so."""
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise UnknownVariant(f"{game} {key}={value!r}: use an integer from {low} to {high}")
    return int(text)


class ChanceMismatch(ValueError):
    """A scripted chance source was asked for a draw its script does not hold."""


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """Who must decide now, and what they may choose from.

    ``options`` lists every legal action when the list is small; the bot answers
    with one of them, unchanged. ``constraints`` describes a large decision (a
    Vendetta placement) by its limits instead. At most one of the two is set.
    """

    seat: int
    kind: str
    options: list[Any] | None = None
    constraints: Any = None


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """The final result of a game, one entry per seat in every list.

    ``ranks`` are 1-based and shared on ties (1, 1, 3, 4). ``scores`` are the
    game's points (Vendetta) or final score (Sicilianos). ``stats`` carries other
    per-seat figures worth showing, e.g. ``{"districts": [...]}``. ``ended_by``
    names why the game stopped: "victory", "round_limit", "godfather", ...
    """

    ranks: list[int]
    scores: list[int]
    winners: list[int]
    forfeited: list[int]
    ended_by: str
    stats: dict[str, list[int]] = {}


# ---------------------------------------------------------------------------
# Chance


class ChanceDraw(msgspec.Struct, frozen=True, array_like=True):
    """One draw from a chance source: which stream, which kind, and its outcome."""

    stream: str
    kind: str  # "shuffle" (outcome: a permutation of range(n)) or "below" (0 <= x < n)
    n: int
    outcome: list[int]


@runtime_checkable
class Chance(Protocol):
    """Where a game's randomness comes from."""

    def shuffle(self, stream: str, n: int) -> list[int]:
        """A uniformly random permutation of ``range(n)``."""
        ...

    def below(self, stream: str, n: int) -> int:
        """A uniformly random integer in ``range(n)``."""
        ...


class SeededChance:
    """Independent named streams derived from one integer seed.

    Streams are created on first use; the n-th draw of stream "dice" is the same
    for a seed whatever else the game drew before, which is what makes duplicate
    games possible.
    """

    __slots__ = ("_streams", "seed")

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._streams: dict[str, random.Random] = {}

    def _stream(self, stream: str) -> random.Random:
        rng = self._streams.get(stream)
        if rng is None:
            # A str seed is hashed with SHA-512 by random.Random: stable across runs
            # and independent of PYTHONHASHSEED.
            rng = self._streams[stream] = random.Random(f"famiglia:{self.seed}:{stream}")
        return rng

    def shuffle(self, stream: str, n: int) -> list[int]:
        order = list(range(n))
        self._stream(stream).shuffle(order)
        return order

    def below(self, stream: str, n: int) -> int:
        return self._stream(stream).randrange(n)


class RecordingChance:
    """Wraps another chance source and keeps every draw, for the replay."""

    __slots__ = ("draws", "inner")

    def __init__(self, inner: Chance) -> None:
        self.inner = inner
        self.draws: list[ChanceDraw] = []

    def shuffle(self, stream: str, n: int) -> list[int]:
        order = self.inner.shuffle(stream, n)
        self.draws.append(ChanceDraw(stream, "shuffle", n, list(order)))
        return order

    def below(self, stream: str, n: int) -> int:
        value = self.inner.below(stream, n)
        self.draws.append(ChanceDraw(stream, "below", n, [value]))
        return value


class ScriptedChance:
    """Gives back recorded draws in order; any other request is a mismatch."""

    __slots__ = ("_draws", "_next")

    def __init__(self, draws: list[ChanceDraw]) -> None:
        self._draws = draws
        self._next = 0

    def _take(self, stream: str, kind: str, n: int) -> list[int]:
        if self._next >= len(self._draws):
            raise ChanceMismatch(
                f"draw {self._next} ({kind} {n} from {stream!r}) is not in the script "
                f"of {len(self._draws)} draws"
            )
        draw = self._draws[self._next]
        if (draw.stream, draw.kind, draw.n) != (stream, kind, n):
            raise ChanceMismatch(
                f"draw {self._next}: the game asked for {kind} {n} from {stream!r}, "
                f"the script holds {draw.kind} {draw.n} from {draw.stream!r}"
            )
        self._next += 1
        return list(draw.outcome)

    def shuffle(self, stream: str, n: int) -> list[int]:
        order = self._take(stream, "shuffle", n)
        if sorted(order) != list(range(n)):
            raise ChanceMismatch(f"draw {self._next - 1}: {order} is not a permutation of 0..{n - 1}")
        return order

    def below(self, stream: str, n: int) -> int:
        (value,) = self._take(stream, "below", n)
        if not 0 <= value < n:
            raise ChanceMismatch(f"draw {self._next - 1}: {value} is not below {n}")
        return value

    @property
    def exhausted(self) -> bool:
        return self._next == len(self._draws)


# ---------------------------------------------------------------------------
# Games


class GameState(Protocol):
    """One game in progress. Mutable, but only ``apply`` and ``forfeit`` change it."""

    @property
    def n_players(self) -> int:
        """How many seats the game has."""
        ...

    def decision(self) -> Decision | None:
        """Who must decide now, or None when the game is over.

        Never names a forfeited seat: the engine plays a forfeited seat's turns
        itself (a pass, rule H2 of each game) inside ``apply``/``forfeit``.
        """
        ...

    def view(self, seat: int) -> msgspec.Struct:
        """Everything ``seat`` may know now, and nothing it may not."""
        ...

    def apply(self, seat: int, action: Any) -> list[msgspec.Struct]:
        """Play ``action`` for ``seat``; the events it caused, in order.

        Raises IllegalAction (with the rule id and the numbers) and changes
        nothing when the action is not legal now, including when ``seat`` is not
        the one that must decide.
        """
        ...

    def forfeit(self, seat: int) -> list[msgspec.Struct]:
        """Take ``seat`` out of play for the rest of the game (H2); the events caused."""
        ...

    def events_for(self, seat: int, events: list[msgspec.Struct]) -> list[msgspec.Struct]:
        """The part of ``events`` that ``seat`` may see (private details removed)."""
        ...

    def is_over(self) -> bool:
        ...

    def outcome(self) -> Outcome:
        """The final ranking; only valid once ``is_over()``."""
        ...

    def random_action(self, rng: random.Random) -> Any:
        """A uniformly random legal action for the seat that must decide now."""
        ...

    def pass_action(self) -> Any:
        """The mildest legal action for the seat that must decide now (a pass where
        the game has one); the referee plays it for a seat whose action was illegal
        under the "pass" policy."""
        ...


class GameRules(Protocol):
    """A game: its name, its table sizes, its types, and how to start one."""

    name: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    # The msgspec types of the wire: configuration, one seat's view, an action
    # (a tagged union), an event (a tagged union). Used for decoding bot actions
    # and for the JSON Schema.
    config_type: ClassVar[type[msgspec.Struct]]
    view_type: ClassVar[Any]
    action_type: ClassVar[Any]
    event_type: ClassVar[Any]

    def config(self, variants: dict[str, str]) -> msgspec.Struct:
        """The game configuration from ``key=value`` variants; UnknownVariant if bad."""
        ...

    def variants(self, config: msgspec.Struct) -> dict[str, str]:
        """The inverse of ``config``: every variant as text, defaults included."""
        ...

    def new_game(self, n_players: int, config: msgspec.Struct, chance: Chance) -> GameState:
        """A fresh game; ValueError if ``n_players`` is out of range."""
        ...
