"""The values a match takes and gives: the game to play, and the record of how it went.

Plain msgspec Structs, so a spec can be sent to a worker and a record back
(tournaments' executors), and every stage that handles them can be tested alone.
"""

from __future__ import annotations

import msgspec

from protocol.messages import Result

__all__ = ["MatchRecord", "MatchSpec", "SeatTiming"]


class MatchSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One game to play: which game and variants, the deal seed, an id for the records."""

    game: str
    seed: int
    variants: dict[str, str] = {}
    match: str = ""


class SeatTiming(msgspec.Struct, frozen=True, kw_only=True):
    """How long a seat thought: decisions answered, total and slowest, in ms."""

    decisions: int
    total_ms: float
    max_ms: float
    bank_left_ms: float


class MatchRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A finished match: the result, who played, how long it took, where the replay is."""

    match: str
    game: str
    seed: int
    variants: dict[str, str]
    names: list[str]
    result: Result
    timings: list[SeatTiming]
    seconds: float
    replay: str | None = None
    sandbox: str = ""
    """How the bots were contained (referee.sandbox), with anything this host could not apply."""
