"""Faults of a Dask cluster under a running tournament: the scheduler dies, a game kills its workers, a task raises.

Real Dask throughout: ``dask scheduler`` and ``dask worker`` processes of
their own on 127.0.0.1 where the scheduler must die, a ``LocalCluster``
elsewhere. Nothing of Dask is mocked; faults are injected on the workers by a
worker plugin (so a worker the nanny restarts gets the fault again).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trio

pytest.importorskip("distributed")

from distributed import Client, Future, LocalCluster, WorkerPlugin

from tests.ports import free_port
from tests.tournaments.hosting.executors.dask_settings import quiet_environment
from tests.tournaments.hosting.executors.test_dask_executor import (
    assert_no_bot_left,
    results,
    tournament_file,
    wait_for_results,
)
from tournaments.cli.live import worker_failure
from tournaments.config.tournament import load_tournament
from tournaments.hosting.executors.dask import DaskExecutor, when_settled
from tournaments.runner import GameFailed, Progress, run_tournament
from tournaments.store import Store

pytestmark = pytest.mark.slow


@contextmanager
def separate_cluster() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``dask scheduler`` and ``dask worker`` processes on 127.0.0.1: (the scheduler's address, its process).

    One single-thread worker, run by the ``dask worker`` process itself (no
    nanny): what dies here is the scheduler, which ends its worker either way,
    and one process starts in a third of the time of a nanny and two workers.
    """
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "dask"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": {**os.environ, **quiet_environment()}}
    scheduler = subprocess.Popen(
        [*dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0"], **quiet
    )  # type: ignore[call-overload]
    worker = subprocess.Popen(
        [*dask, "worker", address, "--no-nanny", "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"],
        start_new_session=True, **quiet,
    )  # type: ignore[call-overload]  # fmt: skip
    try:
        with Client(address, timeout=120, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=300)
        yield address, scheduler
    finally:
        for process in (worker, scheduler):
            if process.poll() is None:
                process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL) if process is worker else process.kill()
                process.wait()


def test_the_scheduler_killed_mid_run_stops_the_host_with_one_line_and_a_rerun_resumes(
    tmp_path: Path, cluster: LocalCluster, bot_cache: Path
) -> None:
    # 24 games, 4 to a task: the kill lands after the first task's answers, with tasks in flight and games left.
    toml = tournament_file(tmp_path)
    db = tmp_path / "t.sqlite"

    def command(address: str) -> list[str]:
        return [sys.executable, "-m", "tournaments.cli", "tournament", "run", str(toml), "--db", str(db),
                "--executor", "dask", "--scheduler", address]  # fmt: skip

    with separate_cluster() as (address, scheduler):
        host = subprocess.Popen(command(address), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_for_results(host, db, 4)
        scheduler.kill()
        began = time.monotonic()
        _, stderr = host.communicate(timeout=300)
        stopped_in = time.monotonic() - began
    assert host.returncode == 1, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert f"lost the Dask scheduler at {address}" in lines[0] and "run the same command again" in lines[0]
    assert stopped_in < 30, f"the host took {stopped_in:.0f} s to notice"
    before = results(db)
    assert 4 <= len(before) < 24, "the kill should land mid-tournament"
    # The rerun, against a scheduler again: the module's cluster (a second one of its own would only cost its start).
    again = subprocess.run(command(cluster.scheduler_address), capture_output=True, text=True, timeout=240, check=False)
    assert again.returncode == 0, again.stderr
    assert f"resuming 't': {len(before)} of 24 games already recorded" in again.stdout
    after = results(db)
    assert sorted(after) == list(range(24)), "every game recorded once"
    assert all(after[game] == row for game, row in before.items()), "a game recorded before was played again"
    assert_no_bot_left(bot_cache)


def within(seconds: float, run: Callable[[], int]) -> int:
    """``run()``, failing the test instead of hanging it when it takes longer than ``seconds``."""
    outcome: list[int | BaseException] = []

    def target() -> None:
        try:
            outcome.append(run())
        except BaseException as exc:  # noqa: BLE001  # raised again in the test's thread
            outcome.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert outcome, f"the run did not finish in {seconds} s"
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


@contextmanager
def fault_on_workers(cluster: LocalCluster, game: int, fault: str) -> Iterator[None]:
    """Every Dask worker, and every one the nanny restarts, meets ``fault`` when a task holding ``game`` starts.

    ``fault``: "exit" (the worker process dies at once, as on a machine fault
    or the kernel's OOM killer) or "disk full" (OSError ENOSPC, a fault of the
    worker's machine).
    """

    class Fault(WorkerPlugin):  # type: ignore[misc]
        def setup(self, worker: object) -> None:
            from tournaments.hosting.executors import dask_worker

            real = self.real = dask_worker.WorkerReferee.play

            def play(
                referee: dask_worker.WorkerReferee, games: list[dask_worker.DaskGame], packages: dict[str, bytes]
            ) -> list[dask_worker.DaskAnswer]:
                if any(g.spec.match.endswith(f"#{game}") for g in games):
                    if fault == "exit":
                        os._exit(1)
                    raise OSError(28, "No space left on device")
                return real(referee, games, packages)

            dask_worker.WorkerReferee.play = play  # type: ignore[method-assign,assignment]

        def teardown(self, worker: object) -> None:
            from tournaments.hosting.executors import dask_worker

            dask_worker.WorkerReferee.play = self.real  # type: ignore[method-assign]

    with Client(cluster.scheduler_address, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=300)
        client.register_plugin(Fault(), name="fault")
        try:
            yield
        finally:
            client.unregister_worker_plugin("fault")
            client.wait_for_workers(2, timeout=600)  # the nanny restarted the killed ones


def test_a_game_that_kills_its_dask_workers_is_recorded_as_a_harness_error_and_no_other_game_is(
    tmp_path: Path, cluster: LocalCluster, bot_cache: Path
) -> None:
    # Dask gives up on a task at the first worker that dies under it: every
    # game queued on that worker with the culprit is given up on too.
    scheduler = cluster.scheduler
    allowed = scheduler.allowed_failures
    scheduler.allowed_failures = 0
    events: list[Progress] = []
    store = Store(tmp_path / "t.sqlite")
    try:
        with fault_on_workers(cluster, 5, "exit"):
            played = within(180, lambda: run_tournament(
                load_tournament(tournament_file(tmp_path)), store, events.append,
                executor=DaskExecutor(cluster.scheduler_address),
            ))  # fmt: skip
    finally:
        scheduler.allowed_failures = allowed
    assert played == 23 and store.counts() == (23, 24) and store.pending() == []
    [error] = store.harness_errors()
    assert error.game == 5 and "the Dask workers playing it died every time" in error.error
    assert "KilledWorker" in error.traceback
    assert sorted(g.game for g in store.finished()) == [g for g in range(24) if g != 5]
    [failed] = [e for e in events if isinstance(e, GameFailed)]
    assert failed.game.index == 5, "the run says so"
    assert_no_bot_left(bot_cache)


def test_a_fault_of_a_workers_machine_stops_the_run_and_the_same_run_resumes(
    tmp_path: Path, cluster: LocalCluster
) -> None:
    config = load_tournament(tournament_file(tmp_path))
    store = Store(tmp_path / "t.sqlite")
    with fault_on_workers(cluster, 9, "disk full"), pytest.raises(BaseException) as stopped:
        run_tournament(config, store, executor=DaskExecutor(cluster.scheduler_address))
    failure = worker_failure(stopped.value)
    assert failure is not None, stopped.value
    assert "OSError: [Errno 28] No space left on device" in str(failure)
    assert re.search(r"failed the games [^:]*#9\b", str(failure)), "the line names the games its task held"
    assert store.harness_errors() == [] and 9 in {g.index for g in store.pending()}
    done = {g.game for g in store.finished()}
    assert run_tournament(config, store, executor=DaskExecutor(cluster.scheduler_address)) == 24 - len(done)
    assert sorted(g.game for g in store.finished()) == list(range(24)) and store.harness_errors() == []


def test_an_answer_lost_with_its_worker_before_the_host_gathered_it_is_handed_over_again(
    cluster: LocalCluster,
) -> None:
    # A task's done callback fires once. When the worker holding a finished
    # task's answer dies before the host gathers it, Dask computes the task
    # again, but no callback says so: the host must wait for it itself.
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=300)

        # A second to compute: the host has time to see the answer lost before it is there again.
        def pid_after_a_second() -> int:  # local, as the lambda was: pickled by value
            time.sleep(1)
            return os.getpid()

        future = client.submit(pid_after_a_second, pure=False, key="famiglia-test-lost-answer")
        callbacks: list[str] = []
        future.add_done_callback(lambda f: callbacks.append(f.status))
        future.result(timeout=120)
        deadline = time.monotonic() + 120
        while not callbacks and time.monotonic() < deadline:
            time.sleep(0.01)
        [holder] = client.who_has(future)[future.key]
        holder_pid = client.run(os.getpid, workers=[holder])[holder]
        os.kill(holder_pid, signal.SIGKILL)
        while future.status == "finished" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert future.status in ("lost", "pending"), "the answer should be gone with its worker"
        delivered: list[Future] = []
        trio.run(when_settled, future, delivered.append)
        assert delivered == [future] and future.status == "finished"
        assert future.result(timeout=120) != holder_pid, "computed again on another worker"
        assert callbacks == ["finished"], "Dask called back once only"
        client.wait_for_workers(2, timeout=600)  # the nanny restarted the killed one
