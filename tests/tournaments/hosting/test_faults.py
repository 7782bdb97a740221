"""The one classification: what stops a run, what leaves a game to be played again later, what costs one game."""

from __future__ import annotations

from concurrent.futures import CancelledError
from typing import TypeVar

import pytest
from distributed import KilledWorker

from referee.bots import BotBuildFailed, BotSpecError
from referee.games import UnknownGame
from referee.games.base import UnknownVariant
from referee.pinning import BotChangedDuringRun
from referee.sandbox import SandboxUnavailable
from tournaments.hosting.executors.installed import WrongFamiglia
from tournaments.hosting.faults import (
    CLUSTER_LOST,
    MACHINE_FAULTS,
    NotPlayed,
    RefereeFailed,
    failure_of,
    played_again_later,
    stops_the_run,
)
from tournaments.hosting.schedule import ScheduledGame
from tournaments.hosting.storage import StorageError, StoreBusy
from tournaments.outcomes import GameFailed, harness_failure
from tournaments.store import BotChanged, StoreError

E = TypeVar("E", bound=BaseException)

GAME = ScheduledGame(index=3, table=0, row=0, seed=1, seating=(0, 1, 2))


def made(kind: type[E]) -> E:
    """An instance without its constructor's arguments: only its class is classified."""
    return kind.__new__(kind)


# What tournaments/hosting/executors/base.py's STOPS_THE_RUN held, with subclasses the run met.
STOPPING = [
    OSError, FileNotFoundError, PermissionError, TimeoutError, MemoryError,
    StorageError, StoreError, StoreBusy, BotChanged,
    SandboxUnavailable, BotSpecError, BotChangedDuringRun, BotBuildFailed, UnknownGame, UnknownVariant,
]  # fmt: skip
GAME_ONLY = [RuntimeError, ValueError, KeyError, AssertionError, ZeroDivisionError, WrongFamiglia, NotPlayed]


@pytest.mark.parametrize("kind", STOPPING)
def test_a_fault_of_the_machine_or_the_setup_stops_the_run(kind: type[Exception]) -> None:
    exc = made(kind)
    assert stops_the_run(exc)
    assert harness_failure(GAME, exc) is None


@pytest.mark.parametrize("kind", GAME_ONLY)
def test_anything_else_costs_that_game_alone(kind: type[Exception]) -> None:
    exc = made(kind)
    assert not stops_the_run(exc)
    failure = harness_failure(GAME, exc)
    assert isinstance(failure, GameFailed) and failure.game == GAME
    assert failure.error.startswith(kind.__name__)


def test_a_bot_edited_during_a_run_is_a_bot_spec_error_and_stops_it() -> None:
    exc = BotChangedDuringRun("alice", "folder:aa", "folder:bb")
    assert isinstance(exc, BotSpecError)
    assert stops_the_run(exc)


def test_a_group_stops_the_run_when_any_member_anywhere_in_it_would() -> None:
    assert stops_the_run(ExceptionGroup("nursery", [RuntimeError("a"), ExceptionGroup("inner", [OSError(28, "full")])]))
    assert harness_failure(GAME, ExceptionGroup("nursery", [RuntimeError("a"), MemoryError()])) is None
    group = ExceptionGroup("nursery", [RuntimeError("a"), ValueError("b")])
    assert not stops_the_run(group)
    failure = harness_failure(GAME, group)
    assert failure is not None and failure.error == "RuntimeError: a"


@pytest.mark.parametrize("kind", [NotPlayed, WrongFamiglia, ImportError, ModuleNotFoundError, OSError, MemoryError])
def test_a_worker_or_a_cluster_at_fault_leaves_the_game_to_be_played_again_later(kind: type[Exception]) -> None:
    assert played_again_later(made(kind))


@pytest.mark.parametrize("kind", [KilledWorker, RuntimeError, ValueError, BotSpecError, BotBuildFailed, CancelledError])
def test_a_game_that_failed_itself_is_not_played_again_later(kind: type[Exception]) -> None:
    # KilledWorker: Dask gave up on it after its workers died under it: the Dask executor tries it once more alone.
    assert not played_again_later(made(kind))


def test_the_machine_and_the_lost_cluster_are_named_once() -> None:
    assert MACHINE_FAULTS == (OSError, MemoryError)
    assert CLUSTER_LOST == (OSError, CancelledError, TimeoutError)


def test_a_failure_is_recorded_as_its_innermost_exception_in_one_bounded_line_with_the_whole_traceback() -> None:
    try:
        raise ExceptionGroup("nursery", [KeyError("seat 9\n" + "x" * 1000)])
    except ExceptionGroup as group:
        failure = failure_of(group)
    assert failure.error.startswith("KeyError: 'seat 9") and "\n" not in failure.error and len(failure.error) <= 300
    assert failure.traceback.startswith("  + Exception Group Traceback") and "KeyError" in failure.traceback
    assert isinstance(failure, RefereeFailed) and str(failure) == failure.error
