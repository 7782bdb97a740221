"""How long a group's tasks waited for a CPU (referee.run_delay): summed, never going back, present waits counted on a look.

Made-up /proc files stand in for the kernel's, so each rule is shown on
figures the test sets; the last test reads this process's own thread.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee import run_delay
from referee.run_delay import KEPT, KeptFiles, TaskDelays, thread_delay_ns


class FakeProc:
    """A /proc of made-up tasks and a group listing them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.listing = root / "cgroup.threads"
        self.listing.write_text("")

    def task(self, tid: int, run_ns: int, delay_ns: int, slices: int, state: str = "S") -> None:
        folder = self.root / str(tid)
        folder.mkdir(exist_ok=True)
        (folder / "schedstat").write_text(f"{run_ns} {delay_ns} {slices}\n")
        (folder / "stat").write_text(f"{tid} (bot) {state} 1 1 1\n")

    def end(self, tid: int) -> None:
        """The task is gone: its files read as nothing (the kernel's fail with ESRCH), then vanish."""
        for name in ("schedstat", "stat"):
            (self.root / str(tid) / name).write_text("")
            (self.root / str(tid) / name).unlink()
        (self.root / str(tid)).rmdir()

    def list(self, *tids: int) -> None:
        self.listing.write_text("".join(f"{tid}\n" for tid in tids))


@pytest.fixture
def proc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProc]:
    monkeypatch.setattr(run_delay, "PROC", str(tmp_path))
    monkeypatch.setattr(run_delay, "_TICK_NS", 1_000_000)  # 1 ms: the test's pauses are longer
    yield FakeProc(tmp_path)
    KEPT.forget_under(str(tmp_path))


def test_the_descriptors_kept_are_bounded_and_the_least_recently_read_goes_first(tmp_path: Path) -> None:
    kept = KeptFiles(limit=2)
    paths = [tmp_path / name for name in "abc"]
    for path in paths:
        path.write_text(path.name)
    opened = len(os.listdir("/proc/self/fd"))
    assert kept.read(str(paths[0])) == b"a"
    assert kept.read(str(paths[1])) == b"b"
    assert kept.read(str(paths[0])) == b"a"  # a is now the most recent
    assert kept.read(str(paths[2])) == b"c"  # b closed
    assert len(kept) == 2 and len(os.listdir("/proc/self/fd")) == opened + 2
    paths[0].write_text("A")
    assert kept.read(str(paths[0])) == b"A"  # read afresh on the kept descriptor
    kept.forget_under(str(tmp_path))
    assert len(kept) == 0 and len(os.listdir("/proc/self/fd")) == opened


def test_the_run_delays_of_the_listed_tasks_are_summed(proc: FakeProc) -> None:
    proc.task(10, 5_000, 300, 2)
    proc.task(11, 7_000, 200, 3)
    proc.list(10, 11)
    delays = TaskDelays(str(proc.listing), fresh=True)
    assert delays.total_ns() == 500
    proc.task(11, 9_000, 700, 4)
    assert delays.total_ns() == 1000
    delays.close()


def test_a_task_that_ended_keeps_counting_so_the_sum_never_goes_back(proc: FakeProc) -> None:
    proc.task(10, 5_000, 300, 2)
    proc.task(11, 7_000, 200, 3)
    proc.list(10, 11)
    delays = TaskDelays(str(proc.listing), fresh=True)
    assert delays.total_ns() == 500
    proc.end(11)
    proc.list(10)
    assert delays.total_ns() == 500
    proc.task(12, 1_000, 50, 1)  # a new task counts from its own start
    proc.list(10, 12)
    assert delays.total_ns() == 550
    delays.close()


def test_a_new_task_with_an_ended_tasks_number_is_read_afresh(proc: FakeProc) -> None:
    proc.task(10, 5_000, 300, 2)
    proc.list(10)
    delays = TaskDelays(str(proc.listing), fresh=True)
    assert delays.total_ns() == 300
    proc.end(10)
    proc.task(10, 100, 40, 1)  # the number handed out again: another file
    assert delays.total_ns() == 340
    delays.close()


def test_a_v1_listing_is_read_again_only_when_the_count_of_tasks_changed(proc: FakeProc) -> None:
    count = proc.root / "pids.current"
    count.write_text("1\n")
    proc.task(10, 5_000, 300, 2)
    proc.task(11, 7_000, 200, 3)
    proc.list(10)
    delays = TaskDelays(str(proc.listing), fresh=False, count=str(count))
    assert delays.total_ns() == 300
    proc.list(10, 11)  # the list changed, its count not yet: the last listing stands
    assert delays.total_ns() == 300
    count.write_text("2\n")
    assert delays.total_ns() == 500
    delays.close()


def test_a_task_queued_now_has_its_present_wait_counted_on_a_look_only(proc: FakeProc) -> None:
    # Runnable, and its figures have not moved since the last reading: it has waited for a CPU
    # all along, though the kernel adds that wait only once it runs.
    proc.task(10, 5_000, 300, 2, state="R")
    proc.list(10)
    delays = TaskDelays(str(proc.listing), fresh=True)
    before = time.monotonic_ns()
    assert delays.total_ns() == 300
    time.sleep(0.01)
    look = delays.total_ns(going_on=True)
    assert 300 + (time.monotonic_ns() - before) >= look >= 300 + 10_000_000
    assert delays.total_ns() == 300  # without going_on, the kernel's figure alone
    # It ran: the kernel's figure now holds the wait, and the estimate is dropped.
    proc.task(10, 6_000, 12_000_300, 3, state="S")
    assert delays.total_ns(going_on=True) == 12_000_300
    delays.close()


def test_a_sleeping_task_whose_figures_stand_still_has_no_present_wait(proc: FakeProc) -> None:
    proc.task(10, 5_000, 300, 2, state="S")
    proc.list(10)
    delays = TaskDelays(str(proc.listing), fresh=True)
    assert delays.total_ns() == 300
    time.sleep(0.01)
    assert delays.total_ns(going_on=True) == 300
    delays.close()


def test_this_threads_run_delay_counts_upwards() -> None:
    if not run_delay.available():
        pytest.skip("this kernel keeps no run delays (CONFIG_SCHED_INFO)")
    first = thread_delay_ns()
    for _ in range(1000):
        os.sched_yield()
    assert isinstance(first, int) and 0 <= first <= thread_delay_ns()
