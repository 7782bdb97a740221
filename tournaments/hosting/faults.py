"""Which exceptions stop a run, and which leave a game to be played again later: the one classification.

A game whose refereeing raises costs one of three things:

- the run (``stops_the_run``): a fault of the machine or of the run's setup
  (``STOPS_THE_RUN``: a full disk, no memory, an unusable store or sandbox, a
  bot that cannot be built or was edited during the run, an unknown game or
  variant) is the same for every game, so the run stops, to be fixed and
  resumed, instead of costing each game in turn. Looked for inside exception
  groups too: a nursery's group holding one of them stops the run as well.
  ``MACHINE_FAULTS`` are the machine's part of it: the ladder, whose setup
  faults are one version's (its games fail, the server goes on), stops for
  those alone, and its restart plays the game again.
- nothing (``played_again_later``): the game could not be played where it was
  sent, through no fault of its own (``NotPlayed``; a Dask worker that cannot
  play: another famiglia, famiglia not importable, its machine's fault): it is
  played again later. ``CLUSTER_LOST`` is what a Dask client raises when its
  scheduler went away under it, which leaves the game unplayed as well.
- that game alone: anything else is a fault of the harness with this game,
  recorded as its harness error (a tournament) or failed game (the ladder),
  in the words of ``failure_of``. A game refereed elsewhere (a worker process,
  a Dask worker) comes back as ``RefereeFailed``, carrying those words.
"""

from __future__ import annotations

import traceback
from concurrent.futures import CancelledError

from protocol.untrusted import bounded
from referee.bots import BotBuildFailed, BotSpecError
from referee.games import UnknownGame
from referee.games.base import UnknownVariant
from referee.sandbox import SandboxUnavailable
from tournaments.hosting.executors.installed import WrongFamiglia
from tournaments.hosting.storage import StorageError

__all__ = [
    "CLUSTER_LOST",
    "MACHINE_FAULTS",
    "STOPS_THE_RUN",
    "WORKER_FAULTS",
    "NotPlayed",
    "RefereeFailed",
    "failure_of",
    "machine_fault",
    "played_again_later",
    "stop_reason",
    "stops_the_run",
]

MACHINE_FAULTS: tuple[type[Exception], ...] = (OSError, MemoryError)
"""This machine's fault, not the game's: whoever plays here stops, and the game is played again."""

STOPS_THE_RUN: tuple[type[Exception], ...] = (
    *MACHINE_FAULTS, StorageError, SandboxUnavailable, BotSpecError, BotBuildFailed, UnknownGame, UnknownVariant,
)  # fmt: skip
"""Faults of the machine or of the run's setup: the same for every game. ``BotSpecError`` includes
``referee.pinning.BotChangedDuringRun``: a bot edited during a run stops it."""

WORKER_FAULTS: tuple[type[Exception], ...] = (WrongFamiglia, ImportError, *MACHINE_FAULTS)
"""What a Dask task raises when its worker, not its game, is at fault: the game is played again later."""

CLUSTER_LOST: tuple[type[Exception], ...] = (OSError, CancelledError, TimeoutError)
"""What a Dask client raises when the scheduler went away under it (``TimeoutError`` is an ``OSError``; named)."""


_MAX_TRACEBACK = 64 << 10


class NotPlayed(Exception):
    """The game could not be played now through no fault of its own (the cluster went away): it waits its turn again."""


class RefereeFailed(Exception):
    """The harness failed the game where it was refereed (a worker process, a Dask worker): its one line and
    its traceback there, to be recorded as they are."""

    def __init__(self, error: str, traceback: str = "") -> None:
        super().__init__(error)
        self.error = error
        self.traceback = traceback


def failure_of(exc: BaseException) -> RefereeFailed:
    """``exc``, raised while refereeing a game, in the words it is recorded with: the innermost exception's
    type and message (one bounded line) and the whole traceback (bounded)."""
    leaf: BaseException = exc
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    text = "".join(traceback.format_exception(exc))
    if len(text) > _MAX_TRACEBACK:
        text = text[: _MAX_TRACEBACK // 2] + "\n[... cut ...]\n" + text[-_MAX_TRACEBACK // 2 :]
    return RefereeFailed(bounded(f"{type(leaf).__name__}: {leaf}", 300), text)


def stops_the_run(exc: BaseException) -> bool:
    """Whether ``exc``, raised while refereeing a game, must stop the run (``STOPS_THE_RUN``, in a group too)."""
    return _holds(exc, STOPS_THE_RUN)


def stop_reason(exc: BaseException) -> str:
    """The line a run stopped by ``exc`` is told with: the innermost fault that stops it, in its own words."""
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup):
        stops, _ = leaf.split(STOPS_THE_RUN)
        leaf = (stops or leaf).exceptions[0]
    return bounded(str(leaf) or type(leaf).__name__, 300)


def machine_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is the machine's fault (``MACHINE_FAULTS``: a full disk, no memory), alone or in a group.

    A replay that cannot be written fails inside the referee's nursery: its group holds the disk's fault.
    """
    return _holds(exc, MACHINE_FAULTS)


def _holds(exc: BaseException, kinds: tuple[type[Exception], ...]) -> bool:
    """Whether ``exc`` is one of ``kinds``, or a group (at any depth) holding one."""
    if isinstance(exc, kinds):
        return True
    return isinstance(exc, BaseExceptionGroup) and exc.split(kinds)[0] is not None


def played_again_later(exc: BaseException) -> bool:
    """Whether a game whose play raised ``exc`` is left unplayed, to be played again later (not recorded)."""
    return isinstance(exc, (NotPlayed, *WORKER_FAULTS))
