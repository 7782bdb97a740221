"""A fault of the machine (a full disk under a store, a folder not writable) is one line and exit 1, wherever
it is raised; a fault of famiglia's own code keeps its traceback."""

from __future__ import annotations

import sqlite3

import pytest
import typer

from tournaments.cli.common import host_fault, user_errors

FULL = sqlite3.OperationalError("database or disk is full")


def exit_code_of(error: BaseException) -> int:
    with pytest.raises(typer.Exit) as stopped, user_errors():
        raise error
    return stopped.value.exit_code


@pytest.mark.parametrize(
    "error",
    [
        FULL,
        sqlite3.OperationalError("attempt to write a readonly database"),
        ExceptionGroup("a server's tasks", [FULL]),  # the ladder's loop, inside Trio's nurseries
        ExceptionGroup("outer", [ExceptionGroup("inner", [OSError(28, "No space left on device", "r.jsonl")])]),
    ],
)
def test_a_fault_of_the_machine_is_one_line_and_exit_1(
    error: BaseException, capsys: pytest.CaptureFixture[str]
) -> None:
    assert exit_code_of(error) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("famiglia: error: ")
    assert "database or disk is full" in line or "No space left on device" in line or "readonly" in line


def test_a_full_store_is_said_to_hold_what_it_held(capsys: pytest.CaptureFixture[str]) -> None:
    exit_code_of(FULL)
    assert "what it holds is as it was: make room on its disk" in capsys.readouterr().err


def test_a_store_locked_too_long_says_to_run_again_not_to_make_room(capsys: pytest.CaptureFixture[str]) -> None:
    exit_code_of(sqlite3.OperationalError("database is locked"))
    assert "held it too long; run the command again" in capsys.readouterr().err


@pytest.mark.parametrize(
    "error", [sqlite3.OperationalError("no such table: game"), ExceptionGroup("tasks", [FULL, KeyError("seat")])]
)
def test_a_fault_of_the_code_keeps_its_traceback(error: BaseException) -> None:
    # A query famiglia got wrong is not the machine's fault: hiding it would hide the bug.
    with pytest.raises(type(error)), user_errors():
        raise error
    assert not host_fault(sqlite3.OperationalError("no such table: game"))
