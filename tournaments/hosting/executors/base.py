"""The executor interface and the values every executor hands back.

An executor receives games on a channel and reports one outcome per game it
was given: ``GameDone`` (a result and its record) or ``GameFailed`` (the
harness failed to referee it: a bug of famiglia, recorded as that game's
harness error). It never writes the store: ``tournaments.runner.run_pending``
does, in the host process alone. Awaiting ``report`` is the executor's back
pressure: it returns once the outcome is queued for writing
(``tournaments.runner.Recorder``), and waits while that queue is full.
"""

from __future__ import annotations

import traceback
from collections.abc import Awaitable, Callable
from typing import Protocol

import msgspec
import trio

from protocol.untrusted import bounded
from referee.bots import BotSpec
from referee.errors import BotCrashed, BotError
from referee.match import MatchRecord
from referee.settings import RefereeSettings
from tournaments.config.tournament import TournamentConfig
from tournaments.hosting.faults import stops_the_run
from tournaments.hosting.schedule import ScheduledGame

__all__ = [
    "Executor",
    "GameDone",
    "GameFailed",
    "Outcome",
    "Report",
    "TournamentWork",
    "WorkerFailed",
    "harness_failure",
]


class WorkerFailed(RuntimeError):
    """The executor cannot go on (a worker process died, a cluster was lost); the run stops, resumable."""


class GameDone(msgspec.Struct, tag="done", tag_field="type", kw_only=True):
    """A finished game and its record."""

    game: ScheduledGame
    record: MatchRecord


class GameFailed(msgspec.Struct, tag="failed", tag_field="type", kw_only=True):
    """A game the harness failed to referee: an unexpected exception (a bug of famiglia), with its traceback."""

    game: ScheduledGame
    error: str
    traceback: str


Outcome = GameDone | GameFailed
Report = Callable[[Outcome], Awaitable[None]]


class TournamentWork(msgspec.Struct, frozen=True, kw_only=True):
    """What every game of one run shares: the tournament, its bots, how they are refereed."""

    config: TournamentConfig
    bots: list[BotSpec]
    """The entrants' bots, in entrant order, as the tournament file gives them (not built yet)."""
    settings: RefereeSettings
    tournament: str
    """The tournament's id (``Store.tournament_id``): it names the replays and the match ids."""
    concurrency: int
    """Games at once, in all."""
    warm: bool
    """The seat source, chosen once: warm processes kept across games, or a fresh process per game."""
    unavailable: dict[int, str] = {}
    """Entrants (by index) whose bot cannot start (its build failed, ...), with the reason: their seats forfeit."""

    def dead_entrants(self) -> dict[int, BotError]:
        """``unavailable`` as the error each such entrant's seats fail with."""
        return {entrant: BotCrashed(f"cannot start: {reason}") for entrant, reason in self.unavailable.items()}

    @property
    def max_games_per_process(self) -> int:
        """For ``referee.seats.open_pool``: 0 keeps processes warm without limit, 1 is a cold start per game."""
        return 0 if self.warm else 1


class Executor(Protocol):
    """Plays the games it receives, reporting each one's outcome once."""

    async def run(
        self, work: TournamentWork, games: trio.MemoryReceiveChannel[ScheduledGame], report: Report
    ) -> None: ...


_MAX_TRACEBACK = 64 << 10


def harness_failure(game: ScheduledGame, exc: Exception) -> GameFailed | None:
    """``exc``, raised while refereeing ``game``, as that game's harness error; None if it must stop the run
    (``tournaments.hosting.faults.stops_the_run``)."""
    if stops_the_run(exc):
        return None
    leaf: BaseException = exc
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    text = "".join(traceback.format_exception(exc))
    if len(text) > _MAX_TRACEBACK:
        text = text[: _MAX_TRACEBACK // 2] + "\n[... cut ...]\n" + text[-_MAX_TRACEBACK // 2 :]
    return GameFailed(game=game, error=bounded(f"{type(leaf).__name__}: {leaf}", 300), traceback=text)
