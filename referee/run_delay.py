"""How long threads waited for a CPU: the run delay Linux keeps per thread in ``/proc/<tid>/schedstat``.

The second figure of that file is the time the thread has spent runnable but
not running (on a run queue, waiting for a CPU), in nanoseconds, since it
started. The cpu clock subtracts it from a decision's wall time: what is left
is the time the seat's bot computed or chose to wait (sleeping, blocking), which
is its to spend, while a busy host's delays are not (referee.match.clock).

The kernel adds a wait to the figure only when it ends (the thread gets a
CPU): a thread on a run queue now shows none of its present wait. Where it
matters (the referee looks whether a seat's time has run out, the seat not yet
answered), ``TaskDelays.total_ns(going_on=True)`` counts that wait too: a task
runnable now whose figures have not moved for longer than a scheduler tick has
not run since, so it has waited all that time.

``thread_delay_ns`` reads it for the calling thread (the referee's own wait
for a CPU while a seat's answer sat in the pipe); ``TaskDelays`` sums it over
every task a control group lists, those that ended meanwhile at their last
reading. The kernel keeps the figure where it is built with
``CONFIG_SCHED_INFO`` (most distributions); ``available`` says whether it does.
Each file is read with one ``pread`` (the kernel renders it afresh at offset
0) on a descriptor kept in ``KEPT``: at most ``KEPT_FILES`` for the whole
process, the least recently read closed first, so a referee holding thousands
of idle bots holds no more descriptors for this (tournaments.config.capacity
counts them once).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict

__all__ = ["KEPT", "KEPT_FILES", "KeptFiles", "TaskDelays", "available", "read_kept", "thread_delay_ns"]


def available() -> bool:
    """Whether this kernel keeps each thread's run delay."""
    return os.path.exists("/proc/thread-self/schedstat")


def _delay(text: bytes) -> int:
    """The run delay from a schedstat file's text (``<run ns> <delay ns> <slices>``)."""
    return int(text.split()[1])


_own = threading.local()


def thread_delay_ns() -> int:
    """The calling thread's run delay so far, in nanoseconds (0 where the kernel keeps none)."""
    fd: int | None = getattr(_own, "fd", None)
    if fd is None:
        try:
            # thread-self names the thread that opens it: one descriptor per thread, kept.
            fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            fd = -1
        _own.fd = fd
    if fd < 0:
        return 0
    try:
        return _delay(os.pread(fd, 128, 0))
    except (OSError, IndexError, ValueError):
        return 0


KEPT_FILES = 512
"""The most descriptors this module keeps open in one process (``KEPT``)."""


class KeptFiles:
    """Open descriptors of files read again and again, by path, at most ``limit`` of them: the
    least recently read is closed when another is needed. Safe to share between threads."""

    def __init__(self, limit: int = KEPT_FILES) -> None:
        self.limit = limit
        self._open: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, path: str, size: int = 4096) -> bytes:
        """What ``path`` holds now (one ``pread`` at offset 0); OSError when it cannot be opened or read
        (after which its descriptor is closed: the next read opens it afresh)."""
        with self._lock:
            fd = self._open.get(path)
            if fd is None:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                self._open[path] = fd
                while len(self._open) > self.limit:
                    os.close(self._open.popitem(last=False)[1])
            else:
                self._open.move_to_end(path)
        try:
            return os.pread(fd, size, 0)
        except OSError:
            self.forget(path)
            raise

    def forget(self, path: str) -> None:
        """Close ``path``'s descriptor, if one is kept (a task gone, a group removed)."""
        with self._lock:
            fd = self._open.pop(path, None)
        if fd is not None:
            os.close(fd)

    def forget_under(self, folder: str) -> None:
        """Close the descriptors of every file in ``folder``."""
        prefix = folder.rstrip("/") + "/"
        with self._lock:
            gone = [path for path in self._open if path.startswith(prefix)]
            fds = [self._open.pop(path) for path in gone]
        for fd in fds:
            os.close(fd)

    def __len__(self) -> int:
        return len(self._open)


KEPT = KeptFiles()
"""The one cache of this process: the run delays of every group, and v2's pressure files."""


def read_kept(path: str, size: int = 4096) -> bytes:
    """``KEPT.read``: ``path``'s text now, on a kept descriptor."""
    return KEPT.read(path, size)


PROC = "/proc"
"""Where the threads' files are (a test puts made-up ones elsewhere)."""

_TICK_NS = 10_000_000
"""The longest a running thread's CPU figure may stand still (a scheduler tick at the lowest usual
rate, 100 Hz): a thread whose figures stood still longer has not run meanwhile."""


class _Seen:
    """One task's figures at the last reading: CPU, run delay, times run; when; and the present wait
    counted for it (``TaskDelays.total_ns(going_on=True)``)."""

    __slots__ = ("figures", "going_on", "when")

    def __init__(self, figures: tuple[int, int, int], when: int, going_on: int) -> None:
        self.figures = figures
        self.when = when
        self.going_on = going_on


class TaskDelays:
    """The run delay of every task a control group has held while this reads it, summed.

    ``listing`` is the group's file of thread ids (v1 ``tasks``, v2
    ``cgroup.threads``), numbered in this process's PID namespace. A task that
    ends keeps counting with its last reading, so the sum never goes back: a
    decision is never charged for a task leaving.

    A v2 listing is read afresh with one ``pread`` on a kept descriptor. A v1
    listing is not (the kernel keeps the list an open file first read), so it
    is opened again whenever the group may hold other tasks than at the last
    listing: when ``count`` (the group's v1 ``pids.current``, where it has one)
    changed, when a listed task has ended, and at every reading without a count.
    Nothing is held open between readings but what ``KEPT`` keeps.
    """

    __slots__ = ("_count", "_counted", "_ended", "_fresh", "_listing", "_seen", "_tids")

    def __init__(self, listing: str, *, fresh: bool, count: str | None = None) -> None:
        """``fresh``: a ``pread`` of ``listing`` renders it anew (v2)."""
        self._listing = listing
        self._fresh = fresh
        self._count = count if not fresh else None
        self._counted = b""  # the count at the last listing
        self._tids: list[int] = []  # the last listing
        self._seen: dict[int, _Seen] = {}  # tid -> its figures at the last reading
        self._ended = 0  # the last run delays of the tasks that have ended

    def total_ns(self, *, going_on: bool = False) -> int:
        """The sum of the run delays of the group's tasks, live and ended, in nanoseconds; with
        ``going_on``, the present waits of tasks on a run queue now as well (one more file read for
        each task whose figures stood still)."""
        tids = self._list()
        when = time.monotonic_ns()
        seen = self._seen
        now: dict[int, _Seen] = {}
        live = 0
        for tid in tids:
            figures = self._read(tid)
            if figures is None:  # ended since the listing: the group holds other tasks now
                self._counted = b""
                continue
            before = seen.get(tid)
            if before is None or before.figures != figures:
                now[tid] = _Seen(figures, when, 0)  # it ran since: its waits so far are in its figures
            elif not going_on:
                now[tid] = before
            elif when - before.when <= _TICK_NS:
                now[tid] = before  # too soon to tell whether it ran
            elif _runnable(tid):
                now[tid] = _Seen(figures, when, before.going_on + when - before.when)  # queued all along
            else:
                now[tid] = _Seen(figures, when, 0)
            live += figures[1] + (now[tid].going_on if going_on else 0)
        for tid, last in seen.items():
            if tid not in now and last is not None:
                self._ended += last.figures[1]
                KEPT.forget(f"{PROC}/{tid}/schedstat")
        self._seen = now
        return self._ended + live

    def _list(self) -> list[int]:
        """The group's thread ids now (as last listed, when its count says nothing changed)."""
        if self._fresh:
            return [int(word) for word in _read_all(self._listing, kept=True).split()]
        if self._count is not None:
            counted = KEPT.read(self._count, 64)
            if counted == self._counted:
                return self._tids
            self._counted = counted
        self._tids = [int(word) for word in _read_all(self._listing, kept=False).split()]
        return self._tids

    def _read(self, tid: int) -> tuple[int, int, int] | None:
        """``tid``'s figures (CPU, run delay, times run); None when it has ended since the listing. A
        kept descriptor that fails belonged to an ended task: a new one with its number is read afresh."""
        path = f"{PROC}/{tid}/schedstat"
        for _ in range(2):
            try:
                return _figures(KEPT.read(path, 128))
            except OSError:  # ended, or its number handed to a new task: once more, opened anew
                pass
            except (IndexError, ValueError):
                KEPT.forget(path)
            ended = self._seen.pop(tid, None)
            if ended is not None:
                self._ended += ended.figures[1]
        return None

    def close(self) -> None:
        """Let go of every descriptor kept for this group; safe to call twice."""
        for tid in self._seen:
            KEPT.forget(f"{PROC}/{tid}/schedstat")
        self._seen = {}
        for path in (self._listing, self._count):
            if path is not None:
                KEPT.forget(path)


def _figures(text: bytes) -> tuple[int, int, int]:
    """A schedstat file's three figures: CPU time (ns), run delay (ns), times run."""
    run, delay, slices = text.split()
    return int(run), int(delay), int(slices)


def _runnable(tid: int) -> bool:
    """Whether the task is running or on a run queue now (state R in /proc/<tid>/stat)."""
    try:
        with open(f"{PROC}/{tid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split(maxsplit=1)[0] == b"R"
    except (OSError, IndexError):
        return False


def _read_all(path: str, *, kept: bool) -> bytes:
    """A listing whole: on a kept descriptor (v2, rendered afresh by ``pread``), or opened for the
    one read (v1, whose list an open file keeps)."""
    if kept:
        text = KEPT.read(path, 1 << 20)
        if len(text) < 1 << 20:
            return text
    with open(path, "rb") as listing:
        return listing.read()
