"""Every read of Trio's private run loop the referee makes, in one module, guarded by Trio's version.

The referee's hot path asks Trio two things it has no public call for:

- ``idle_wait``: may this thread block in the kernel for one bot's answer (no
  other task runnable), and until when (Trio's next deadline), woken by what
  (Trio's epoll descriptor)? That saves a trip through the run loop per
  decision on a busy host (bench/README.md, issue 30).
- ``scheduled``: is a given task due to run (Trio has handed it its I/O or the
  end of a checkpoint)? The cpu clock's watchdog lets the decision loop take
  an answer that arrived in time before it ends a request at its backstop.

Both read Trio's runner and tasks by their private names, which any Trio
release may change. So they are read only on the Trio releases the tests have
run on (``TESTED_FROM`` up to, not including, ``TESTED_BELOW``; pyproject.toml
bounds Trio to the same range), and the tests fail when the fast path is off
on the installed Trio (tests/referee/match/test_trio_peek.py). On any other
release, or when a field is missing after all, both answer as Trio's public
calls alone would let them (``idle_wait`` None: the usual wait; ``scheduled``
False: the watchdog does not wait for the loop) and a ``TrioUntested`` warning
says so, once per process. Nothing is refused: the public path is as correct
as the fast one, only slower per decision, and on a starved referee a seat
whose answer came just in time may time out at the backstop.
docs/maintaining.md says how to lift the bound for a new Trio.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import trio

__all__ = ["IDLE_WAIT_TASKS", "TESTED_BELOW", "TESTED_FROM", "TrioUntested", "idle_wait", "problem", "scheduled"]

TESTED_FROM = (0, 25)
"""The oldest Trio release (major, minor) whose private fields these reads were tested on."""

TESTED_BELOW = (0, 36)
"""The first Trio release (major, minor) they were not tested on: pyproject.toml bounds Trio below it."""

IDLE_WAIT_TASKS = 64
"""The most Trio tasks a referee may have for ``idle_wait`` to look through them all (a few
matches); one with more (a tournament's hundreds of games) waits through Trio's run loop, whose
wait then collects many answers at once."""


class TrioUntested(RuntimeWarning):
    """The installed Trio is not one the fast path was tested on: the referee uses Trio's public calls only."""


def version_problem(version: str) -> str | None:
    """Why the fast path is off for Trio ``version`` (its ``__version__``), or None when it was tested on it."""
    found = re.match(r"(\d+)\.(\d+)", version)
    if found is None:
        return f"Trio's version {version!r} cannot be read"
    release = (int(found[1]), int(found[2]))
    if TESTED_FROM <= release < TESTED_BELOW:
        return None
    tested = f"{TESTED_FROM[0]}.{TESTED_FROM[1]} to {TESTED_BELOW[0]}.{TESTED_BELOW[1] - 1}"
    return f"Trio {version} is not a release the referee's fast path was tested on ({tested})"


_problem: str | None = None
_RUN_CONTEXT: Any = None  # Trio's GLOBAL_RUN_CONTEXT while the fast path is on; None turns idle_wait off
_SYSTEM_CLOCK: Any = None


def problem() -> str | None:
    """Why the fast path is off in this process, or None while it is on."""
    return _problem


def _turn_off(why: str) -> None:
    """Use Trio's public calls only from now on, and say so (once: the first reason is the one kept)."""
    global _problem, _RUN_CONTEXT
    _RUN_CONTEXT = None
    if _problem is not None:
        return
    _problem = why
    warnings.warn(
        f"{why}: the referee uses Trio's public calls only, which costs it more CPU per decision "
        "(docs/maintaining.md, 'Trio's private run loop')",
        TrioUntested,
        stacklevel=3,
    )


def _start() -> None:
    """Turn the fast path on when the installed Trio is one it was tested on."""
    global _RUN_CONTEXT, _SYSTEM_CLOCK
    if (why := version_problem(trio.__version__)) is not None:
        _turn_off(why)
        return
    try:
        run = trio._core._run
        _RUN_CONTEXT, _SYSTEM_CLOCK = run.GLOBAL_RUN_CONTEXT, run.SystemClock
    except AttributeError as exc:
        _turn_off(f"Trio {trio.__version__} has no {exc.name or 'field the referee reads'}")


def idle_wait() -> tuple[float, int] | None:
    """How long this thread may block in the kernel for one bot's answer, and the descriptor that
    wakes it for anything else: (seconds to Trio's next deadline, its epoll descriptor); or None.

    Under load an instant bot's answer is rarely there within the quick-answer
    poll: the bot waits for a core. Waiting through Trio's run loop then costs
    the referee several times the CPU of the rest of the decision (a wait, the
    epoll registration and its removal, and the loop's own steps), and on a
    busy host the referee's CPU share is what bounds its decisions per second.
    When no other task is runnable, one ``poll`` of the bot's pipe and of
    Trio's epoll descriptor, bounded by Trio's next deadline (the watchdog's),
    waits for what the run loop would have waited for: the answer, any other
    I/O or thread or signal wake-up (they all make the epoll descriptor
    readable), or a deadline. Anything unusual (another clock, instruments,
    guest mode, a test waiting for all tasks to block, more than
    ``IDLE_WAIT_TASKS`` tasks, the fast path off) gets None: the usual wait.
    """
    runner = getattr(_RUN_CONTEXT, "runner", None)
    if runner is None:
        return None
    try:
        if (
            runner.runq
            or len(runner.tasks) > IDLE_WAIT_TASKS
            # A task scheduled in the batch the run loop is stepping through now is in
            # no queue; it is marked by what it is to be resumed with (None once it runs).
            or any(task._next_send_fn is not None for task in runner.tasks)
            or runner.waiting_for_idle
            or runner.instruments["_all"]  # the run loop's hooks would miss this wait
            or runner.is_guest
            or type(runner.clock) is not _SYSTEM_CLOCK
        ):
            return None
        seconds: float = runner.deadlines.next_deadline() - runner.clock.current_time()
        wake_fd: int = runner.io_manager._epoll.fileno()
    except (AttributeError, KeyError, TypeError) as exc:
        _turn_off(f"Trio {trio.__version__}'s run loop differs from the one tested ({type(exc).__name__}: {exc})")
        return None
    # No deadline at all (not so in a match: the watchdog always has one): look again within a second.
    return (min(seconds, 1.0), wake_fd) if seconds > 0 else None


def scheduled(task: trio.lowlevel.Task) -> bool:
    """Whether ``task`` is scheduled to run (Trio has handed it its I/O or a checkpoint's end); False
    when the fast path is off, as if it were not."""
    if _RUN_CONTEXT is None:
        return False
    try:
        return task._next_send_fn is not None
    except AttributeError as exc:
        _turn_off(f"Trio {trio.__version__}'s tasks differ from the ones tested ({exc})")
        return False


_start()
