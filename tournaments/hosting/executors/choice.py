"""Which executor a competition plays with: the one choice, by name, for a tournament and a ladder alike.

``executor_for`` takes what the command line and the competition's file say
(``local`` or ``dask``, worker processes, a scheduler's address) and returns
the executor ready to open, or one ``ExecutorChoiceError`` line naming what to
change. A Dask scheduler is reached here, before anything is stored: one that
does not answer, or has a worker running another famiglia, is said at once.
"""

from __future__ import annotations

from tournaments.hosting.executors.base import Executor
from tournaments.hosting.executors.inprocess import InProcessExecutor
from tournaments.hosting.executors.processes import ProcessExecutor
from tournaments.hosting.ranges import scheduler_problem

__all__ = [
    "EXECUTORS",
    "DaskUnavailable",
    "ExecutorChoiceError",
    "check_scheduler",
    "executor_for",
    "local_executor",
]

EXECUTORS = ("local", "dask")


class ExecutorChoiceError(ValueError):
    """An executor asked for in a way that cannot work (an unknown name, a Dask executor without a scheduler)."""


class DaskUnavailable(ExecutorChoiceError):
    """The Dask executor was asked for but the dask packages are not installed."""


def check_scheduler(scheduler: str | None, executor: str) -> None:
    """``--scheduler`` (None: not given) against the executor in use; ExecutorChoiceError when it would be
    ignored or is no address.

    A scheduler named on the command line is meant to be used: playing on this
    machine instead, with the address dropped in silence, is refused.
    """
    if scheduler is not None and executor != "dask":
        raise ExecutorChoiceError(
            f"--scheduler {scheduler}: the executor is {executor!r}, which uses no scheduler; "
            "add --executor dask to play on that cluster, or leave --scheduler out"
        )
    if scheduler is not None and (problem := scheduler_problem(scheduler)) is not None:
        raise ExecutorChoiceError(f"--scheduler {scheduler}: {problem}")


def local_executor(concurrency: int, workers: int = 1) -> Executor:
    """This machine's executor: in this process for one worker, else that many worker processes."""
    return InProcessExecutor(concurrency) if workers <= 1 else ProcessExecutor(workers, concurrency)


def executor_for(
    kind: str,
    *,
    concurrency: int,
    workers: int = 1,
    scheduler: str | None,
    file_section: str,
    retry_s: float | None = None,
) -> Executor:
    """The executor named ``kind``; ExecutorChoiceError for a choice that cannot work.

    ``file_section``: where the competition's file names a scheduler (``[tournament.executor]``,
    ``[ladder]``), for the line that asks for one. ``retry_s``: how often a Dask executor reaches its
    scheduler again once it is lost (None: it does not, and the competition stops).
    """
    if kind == "local":
        return local_executor(concurrency, workers)
    if kind != "dask":
        raise ExecutorChoiceError(f"--executor {kind!r}: choose {' or '.join(EXECUTORS)}")
    if not scheduler:
        raise ExecutorChoiceError(
            "--executor dask needs the scheduler's address: --scheduler tcp://HOST:8786, "
            f'or scheduler = "tcp://HOST:8786" in {file_section}'
        )
    try:
        from tournaments.hosting.executors.dask import DaskExecutor
    except ImportError:
        raise DaskUnavailable(
            "the dask executor needs the dask packages; install them with: pip install 'famiglia[dask]'"
        ) from None
    executor = DaskExecutor(scheduler, concurrency=concurrency, retry_s=retry_s)
    executor.check_reachable()
    return executor
