"""Where a game's randomness comes from: named streams drawn from one seed.

All chance is drawn through ``Chance`` from named streams. Each stream's n-th draw
depends only on the seed and the stream's name, never on the players' actions, so
the same seed with rotated seats deals the same game (duplicate games). A
``RecordingChance`` keeps every draw so a replay can re-run the game without the
seed, through ``ScriptedChance``.
"""

from __future__ import annotations

import random
from typing import Protocol, runtime_checkable

import msgspec

__all__ = [
    "Chance",
    "ChanceDraw",
    "ChanceMismatch",
    "RecordingChance",
    "ScriptedChance",
    "SeededChance",
    "checked_shuffle",
]


class ChanceMismatch(ValueError):
    """A scripted chance source was asked for a draw its script does not hold."""


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

    # Both draws are written out here rather than left to random.Random.shuffle
    # and randrange: they give exactly what those give on CPython 3.11 (the
    # same getrandbits calls in the same order), but the deals no longer hang
    # on how a later Python implements them (a replay is checked by dealing
    # again from its seed), and without the calls per draw they cost the
    # engine about half as much.

    def shuffle(self, stream: str, n: int) -> list[int]:
        """Fisher-Yates from the last position down, each index drawn by rejection from getrandbits."""
        order = list(range(n))
        getrandbits = self._stream(stream).getrandbits
        for i in range(n - 1, 0, -1):
            size = i + 1
            bits = size.bit_length()
            j = getrandbits(bits)
            while j >= size:
                j = getrandbits(bits)
            order[i], order[j] = order[j], order[i]
        return order

    def below(self, stream: str, n: int) -> int:
        """By rejection from getrandbits(n.bit_length())."""
        if n <= 0:
            raise ValueError(f"below: no integer in range({n})")
        getrandbits = self._stream(stream).getrandbits
        bits = n.bit_length()
        r = getrandbits(bits)
        while r >= n:
            r = getrandbits(bits)
        return r


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
                f"draw {self._next} ({kind} {n} from {stream!r}) is not in the script of {len(self._draws)} draws"
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


def checked_shuffle(chance: Chance, stream: str, n: int) -> list[int]:
    """One ``chance.shuffle(stream, n)``, refused (ValueError) unless it is a permutation."""
    order = list(chance.shuffle(stream, n))
    if sorted(order) != list(range(n)):
        raise ValueError(f"the chance source gave {order} for {stream!r}, not a permutation of 0..{n - 1}")
    return order
