"""What a tournament's game came to: finished (``GameDone``) or failed by the harness (``GameFailed``).

The runner makes one outcome per game from what its executor's ``play``
returned or raised, writes it to the store (``tournaments.runner.StoreWriter``)
and tells the command line (progress, the live standings) once it is committed.
"""

from __future__ import annotations

import msgspec

from referee.match import MatchRecord
from tournaments.hosting.faults import failure_of, stops_the_run
from tournaments.hosting.schedule import ScheduledGame

__all__ = ["GameDone", "GameFailed", "GameOutcome", "harness_failure"]


class GameDone(msgspec.Struct, tag="done", tag_field="type", kw_only=True):
    """A finished game and its record."""

    game: ScheduledGame
    record: MatchRecord


class GameFailed(msgspec.Struct, tag="failed", tag_field="type", kw_only=True):
    """A game the harness failed to referee: an unexpected exception (a bug of famiglia), with its traceback."""

    game: ScheduledGame
    error: str
    traceback: str


GameOutcome = GameDone | GameFailed


def harness_failure(game: ScheduledGame, exc: Exception) -> GameFailed | None:
    """``exc``, raised while refereeing ``game``, as that game's harness error; None if it must stop the run
    (``tournaments.hosting.faults.stops_the_run``)."""
    if stops_the_run(exc):
        return None
    failure = failure_of(exc)
    return GameFailed(game=game, error=failure.error, traceback=failure.traceback)
