"""The referee's reads of Trio's private run loop (referee.match.trio_peek): on for the Trio installed,
off with one warning for any other, and what each read tells.

``test_the_fast_path_is_on_for_the_installed_trio`` is the one that goes red
when a Trio release moves the fields the referee reads, or when the installed
Trio is outside the range they were tested on: docs/maintaining.md says what
to do then.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest
import trio
import trio.testing

from referee.match import trio_peek
from referee.match.trio_peek import TESTED_BELOW, TESTED_FROM, TrioUntested, version_problem

ROOT = Path(__file__).resolve().parents[3]


async def test_the_fast_path_is_on_for_the_installed_trio() -> None:
    # Both reads made for real, as a match makes them: a field that moved turns the path off.
    with trio.move_on_after(0.5):
        idle = trio_peek.idle_wait()
        await trio.lowlevel.checkpoint()
    trio_peek.scheduled(trio.lowlevel.current_task())
    assert trio_peek.problem() is None, trio_peek.problem()
    assert idle is not None


def test_pyproject_bounds_trio_to_the_releases_tested() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (trio_range,) = [dep for dep in project["project"]["dependencies"] if dep.startswith("trio")]
    low, high = (f"{major}.{minor}" for major, minor in (TESTED_FROM, TESTED_BELOW))
    assert trio_range == f"trio>={low},<{high}"


def test_a_release_outside_the_range_tested_is_named() -> None:
    assert version_problem("0.35.0") is None
    assert version_problem(f"{TESTED_FROM[0]}.{TESTED_FROM[1]}.0") is None
    newer = version_problem(f"{TESTED_BELOW[0]}.{TESTED_BELOW[1]}.0")
    assert newer is not None and "not a release the referee's fast path was tested on" in newer
    assert version_problem("0.24.0") is not None
    assert version_problem("1.0.0") is not None
    assert version_problem("a dev build") == "Trio's version 'a dev build' cannot be read"


def test_an_untested_trio_plays_on_the_public_path_and_says_so_once() -> None:
    # A process of its own: the guard is read when the module is first imported.
    script = """
import warnings
warnings.simplefilter("always")
import trio
trio.__version__ = "0.99.0"
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from referee.match import trio_peek
    from referee.match import MatchSpec, run_match
    from tests.referee.fakes import passer

    async def main():
        assert trio_peek.idle_wait() is None
        assert trio_peek.scheduled(trio.lowlevel.current_task()) is False
        record = await run_match(MatchSpec(game="vendetta", seed=3), [passer(), passer(), passer()])
        assert record.result.terminations == [], record.result.terminations

    trio.run(main)
print(len([w for w in caught if issubclass(w.category, trio_peek.TrioUntested)]))
print(trio_peek.problem())
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    count, problem = done.stdout.splitlines()
    assert count == "1"
    assert problem.startswith("Trio 0.99.0 is not a release the referee's fast path was tested on")


async def test_a_field_missing_on_a_tested_release_turns_the_fast_path_off_with_one_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Moved:
        runner = object()  # a runner with none of the fields the referee reads

    monkeypatch.setattr(trio_peek, "_RUN_CONTEXT", Moved())
    monkeypatch.setattr(trio_peek, "_problem", None)
    with pytest.warns(TrioUntested, match="run loop differs from the one tested"):
        assert trio_peek.idle_wait() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second warning would raise
        assert trio_peek.idle_wait() is None
        assert trio_peek.scheduled(trio.lowlevel.current_task()) is False
    assert "AttributeError" in (trio_peek.problem() or "")


async def test_a_task_handed_its_wake_up_reads_as_scheduled_and_a_waiting_one_does_not() -> None:
    event = trio.Event()
    seen: list[bool] = []

    async def waiter() -> None:
        await event.wait()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiter)
        await trio.testing.wait_all_tasks_blocked()
        task = next(t for t in nursery.child_tasks)
        seen.append(trio_peek.scheduled(task))
        event.set()  # the waiter is rescheduled now, and runs only at this task's next checkpoint
        seen.append(trio_peek.scheduled(task))
    assert seen == [False, True]


async def test_with_nothing_else_to_run_the_referee_may_wait_up_to_the_next_deadline() -> None:
    with trio.move_on_after(0.5):
        idle = trio_peek.idle_wait()
        await trio.lowlevel.checkpoint()
    assert idle is not None
    seconds, wake_fd = idle
    assert 0.4 < seconds <= 0.5 and wake_fd >= 0  # up to the scope's deadline, Trio's next


async def test_without_a_deadline_it_looks_again_within_a_second() -> None:
    idle = trio_peek.idle_wait()
    assert idle is not None and idle[0] == 1.0


async def test_another_runnable_task_means_the_usual_wait() -> None:
    seen: list[tuple[float, int] | None] = []

    async def other() -> None:
        await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other)  # runnable now, not yet run
        seen.append(trio_peek.idle_wait())
    assert seen == [None]


def test_a_virtual_clock_means_the_usual_wait() -> None:
    # pytest-trio's autojump clock moves only when every task waits in the run loop:
    # a wait in the kernel would hold real time for virtual seconds.
    async def look() -> tuple[float, int] | None:
        return trio_peek.idle_wait()

    assert trio.run(look, clock=trio.testing.MockClock(autojump_threshold=0)) is None
