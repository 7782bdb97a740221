"""One control group per bot: memory, processes and CPU bounded for a bot and everything it starts.

prlimit bounds each *process*; an entrant is a tree of them (an interpreter, its
helpers, whatever they fork, the sandbox's own init), and RLIMIT_AS does not
count shared memory at all (memfd, tmpfs). A control group does: it charges
every page its processes touch, anonymous or shmem, counts its tasks, caps its
CPU, freezes the whole tree at once and kills it without a race against fork.

Where groups go on this host, and what they give, is probed once by
``referee.sandbox.cgroup_host``. A bot's group is named
``famiglia-<pid>-<ns>-<name>`` after the referee's pid and PID namespace
(``referee.sandbox.names``), so a later referee can sweep (kill and remove)
the groups of one that died by SIGKILL (``referee.sandbox.leftovers``), as it
does for FIFO folders.

A process enters a group by writing its own pid into ``cgroup.procs``
(``BotCgroup.join_paths``), in the launcher chain's shell link, before it
execs the rest: whatever it runs or forks afterwards is born inside, bwrap's
monitor, the namespace's init and the bot alike.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import threading
import time
from collections.abc import Callable
from typing import Self

from referee.run_delay import KEPT, TaskDelays
from referee.run_delay import available as run_delays_available
from referee.sandbox.cgroup_host import (
    WITHOUT,
    CgroupError,
    CgroupSupport,
    CgroupUnavailable,
    Guarantee,
    cgroup_support,
    pids_in,
    read_file,
    write_file,
)
from referee.sandbox.names import group_name
from referee.settings import BotLimits

__all__ = ["JOIN_FAILED", "BotCgroup"]

JOIN_FAILED = 124
"""The exit status of ``BotCgroup.join_script`` when the shell could not enter the group."""

_BOT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,80}")
_CPU_PERIOD_US = 100_000
_KILL_ROUNDS = 64  # listings in one kill_all; remove() calls it again while processes are left


def _field(text: bytes, key: bytes, path: str) -> int:
    """The number after ``key`` in a flat keyed file (``usage_usec 123``) read from ``path``."""
    for line in text.splitlines():
        name, _, value = line.partition(b" ")
        if name == key:
            return int(value)
    raise CgroupError(f"{path} has no {key.decode()}", path)


def _poll(done: Callable[[], bool], timeout: float) -> bool:
    """Whether ``done()`` came true within ``timeout`` seconds.

    What is awaited (killed processes leaving, a freeze completing) usually
    takes well under a millisecond: yield the CPU for the first 200 us (to
    the very processes that are leaving, if they share it), then sleep in
    doubling steps from 100 us up to 10 ms, so a slow case neither spins nor
    oversleeps by much.
    """
    start = time.monotonic()
    deadline = start + timeout
    delay = 0.0
    while not done():
        now = time.monotonic()
        if now >= deadline:
            return False
        if now - start < 0.0002:
            os.sched_yield()
        else:
            delay = min(max(delay * 2, 0.0001), 0.01, deadline - now)
            time.sleep(delay)
    return True


class BotCgroup:
    """A control group of one bot's tree: made by ``create``, entered by the launcher, gone with ``remove``.

    Every method is synchronous and cheap (a few system calls, the frequent
    ones on descriptors kept open), fit for the Trio thread; one thread at a
    time per group. On v1 the group is a folder of the same name in each
    hierarchy; on v2 one folder.
    """

    def __init__(self, support: CgroupSupport, name: str, folders: dict[str, str], every: list[str]) -> None:
        """Use ``create``. Adopts existing folders: per guarantee the group's folder, and ``every`` folder of it."""
        self.name = name
        self._support = support
        self._v2 = support.version == "v2"
        self._folders = folders
        self._all = every
        self._freeze_fd: int | None = None
        self._usage_fd: int | None = None
        self._pressure: str | None = None  # v2's cpu.pressure, where the kernel keeps it per group
        self._delays: TaskDelays | None = None  # else each task's run delay
        self._removed = False
        self._signalled: set[int] = set()  # the pids kill_all has sent SIGKILL to

    @classmethod
    def create(
        cls,
        name: str,
        *,
        memory_bytes: int,
        max_processes: int,
        cores: float,
        support: CgroupSupport | None = None,
    ) -> BotCgroup:
        """Make the group ``name`` (unique among this referee's live bots) with its limits; 0 turns a limit off.

        ``memory_bytes`` bounds the tree's memory of every kind, with no swap
        where the kernel can say so; ``max_processes`` its tasks (threads
        count); ``cores`` its CPU (1.0: one core's time in every 100 ms).
        CgroupUnavailable when a limit asked for cannot be applied here (never
        a weaker group); CgroupError when a file of the group cannot be written.
        Each call also removes this process's groups that did not empty in time
        at their ``remove`` (dead referees' groups are swept by ``referee.sandbox.leftovers``).
        """
        support = support if support is not None else cgroup_support()
        if support.version == "none":
            raise CgroupUnavailable(f"no control groups: {support.problem}")
        if not _BOT_NAME.fullmatch(name):
            raise ValueError(f"a bot's group name must be 1 to 80 letters, digits, '_', '.' or '-', not {name!r}")
        asked: list[Guarantee] = []
        if memory_bytes > 0:
            asked.append("memory")
        if max_processes > 0:
            asked.append("processes")
        if cores > 0:
            asked.append("cpu_bound")
        support.require(asked)
        _remove_later()
        folder = group_name(name)
        group = cls(
            support,
            folder,
            {g: os.path.join(parent, folder) for g, parent in support.parents.items()},
            [os.path.join(parent, folder) for parent in support.folders],
        )
        made: list[str] = []
        try:
            for path in group._all:
                try:
                    os.mkdir(path, 0o755)
                except OSError as exc:
                    raise CgroupError(f"cannot create {path}: {exc.strerror}", path, exc.errno) from None
                made.append(path)
            group._apply(memory_bytes, max_processes, cores)
            # The freezer's file is opened at the first freeze (most bots are never
            # frozen: referee.match): a referee holding thousands of bots counts descriptors.
            if support.cpu_usage:
                group._usage_fd = _open(group._file("cpu_usage", "cpu.stat", "cpuacct.usage"), os.O_RDONLY)
                group._open_wait_meter()
        except BaseException:
            group._all = made  # a folder of that name this call did not make is not ours to remove
            group.remove()
            raise
        return group

    @classmethod
    def adopt(cls, support: CgroupSupport, folder: str) -> BotCgroup:
        """The group named ``folder`` as it is found in each hierarchy (a dead referee's), ready for ``remove``.

        Its freezer is opened, so that ``kill_all`` freezes the tree first (and,
        on v1, thaws it for the kill to land).
        """
        folders = {g: os.path.join(p, folder) for g, p in support.parents.items()}
        group = cls(
            support,
            folder,
            {g: f for g, f in folders.items() if os.path.isdir(f)},
            [f for p in support.folders if os.path.isdir(f := os.path.join(p, folder))],
        )
        if "freezer" in group._folders:
            try:
                group._freeze_fd = _open(group._file("freezer", "cgroup.freeze", "freezer.state"), os.O_WRONLY)
            except CgroupError:
                pass
        return group

    @classmethod
    def from_limits(cls, name: str, limits: BotLimits, *, cores: float = 1.0) -> BotCgroup:
        """The group for a bot under ``limits``: ``memory_mb`` and ``processes`` bound its whole tree.

        The memory bound adds ``tmp_mb``: the private /tmp is memory charged to
        the bot, and a bot that fills it still gets its ``memory_mb``.
        """
        memory = (limits.memory_mb + limits.tmp_mb) << 20 if limits.memory_mb > 0 else 0
        return cls.create(name, memory_bytes=memory, max_processes=limits.processes, cores=cores)

    # -- files

    def _folder(self, guarantee: Guarantee) -> str:
        folder = self._folders.get(guarantee)
        if folder is None:
            raise CgroupUnavailable(f"{WITHOUT[guarantee]}: {self._support.reasons.get(guarantee, 'not probed')}")
        return folder

    def _file(self, guarantee: Guarantee, v2_name: str, v1_name: str) -> str:
        return os.path.join(self._folder(guarantee), v2_name if self._v2 else v1_name)

    def _apply(self, memory_bytes: int, max_processes: int, cores: float) -> None:
        if memory_bytes > 0:
            folder = self._folder("memory")
            if self._v2:
                write_file(os.path.join(folder, "memory.max"), str(memory_bytes))
                if os.path.exists(os.path.join(folder, "memory.swap.max")):
                    write_file(os.path.join(folder, "memory.swap.max"), "0")
            else:
                write_file(os.path.join(folder, "memory.limit_in_bytes"), str(memory_bytes))
                if os.path.exists(os.path.join(folder, "memory.memsw.limit_in_bytes")):
                    # The bound on memory plus swap, set equal, leaves the group no swap.
                    write_file(os.path.join(folder, "memory.memsw.limit_in_bytes"), str(memory_bytes))
                else:
                    try:  # no swap accounting: at least keep the group's pages off swap
                        write_file(os.path.join(folder, "memory.swappiness"), "0")
                    except CgroupError:
                        pass
        if max_processes > 0:
            write_file(os.path.join(self._folder("processes"), "pids.max"), str(max_processes))
        if cores > 0:
            quota = max(1000, round(cores * _CPU_PERIOD_US))  # the kernel's least quota is 1 ms
            folder = self._folder("cpu_bound")
            if self._v2:
                write_file(os.path.join(folder, "cpu.max"), f"{quota} {_CPU_PERIOD_US}")
            else:
                write_file(os.path.join(folder, "cpu.cfs_period_us"), str(_CPU_PERIOD_US))
                write_file(os.path.join(folder, "cpu.cfs_quota_us"), str(quota))

    # -- entering

    def join_paths(self) -> list[str]:
        """The files a process writes its own pid into to enter the group: ``cgroup.procs`` in each hierarchy.

        The process writes them itself before it execs the bot, so everything
        it starts afterwards is born inside: a child is in its parent's groups.
        """
        return [os.path.join(folder, "cgroup.procs") for folder in self._all]

    def join_script(self) -> str:
        """A shell prefix that moves the shell running it (``$$``) into the group, or exits with ``JOIN_FAILED``.

        For an ``sh -c`` link of the launcher chain: ``join_script() + 'exec "$@"'``.
        """
        writes = " && ".join(f"echo $$ > {shlex.quote(path)}" for path in self.join_paths())
        return f"{{ {writes}; }} || exit {JOIN_FAILED}; "

    # -- freezing and accounting

    def freeze(self) -> None:
        """Stop every process of the tree where it is.

        A running process stops within microseconds; one waiting for a CPU
        stops as soon as it gets one, before it runs any code of its own
        (``frozen`` says when all have: milliseconds on a busy machine).
        A frozen process acts on no signal but SIGKILL (v2), or none at all
        until thawed (v1): ``thaw`` before SIGTERM and a grace period;
        ``kill_all`` and ``remove`` need no thaw.
        """
        self._freezerwrite_file(b"1" if self._v2 else b"FROZEN")

    def thaw(self) -> None:
        """Let the tree run again."""
        self._freezerwrite_file(b"0" if self._v2 else b"THAWED")

    @property
    def can_measure(self) -> bool:
        """Whether this host accounts the group's CPU time (``cpu_usage_ns``)."""
        return self._support.cpu_usage

    @property
    def can_freeze(self) -> bool:
        """Whether this host gives the group a freezer (``freeze`` and ``thaw``)."""
        return self._support.freezer

    def _freezerwrite_file(self, value: bytes) -> None:
        # The referee freezes and thaws a seat at every decision: one write on a
        # kept descriptor, the file's path worked out only to say what failed.
        fd = self._freeze_fd
        if fd is None:
            path = self._file("freezer", "cgroup.freeze", "freezer.state")  # CgroupUnavailable without a freezer
            if self._removed:
                raise CgroupError(f"cannot write {value.decode()} to {path}: the group is removed", path)
            fd = self._freeze_fd = _open(path, os.O_WRONLY)
        try:
            os.write(fd, value)
        except OSError as exc:
            path = self._file("freezer", "cgroup.freeze", "freezer.state")
            raise CgroupError(f"cannot write {value.decode()} to {path}: {exc.strerror}", path, exc.errno) from None

    def frozen(self) -> bool:
        """Whether every process of the tree is frozen now (a freeze completes shortly after ``freeze``)."""
        path = self._file("freezer", "cgroup.events", "freezer.state")
        if self._v2:
            return _field(read_file(path).encode(), b"frozen", path) == 1
        return read_file(path).strip() == "FROZEN"

    def cpu_usage_ns(self) -> int:
        """The CPU time the whole tree has used since the group was made, in nanoseconds (v2: whole microseconds)."""
        # Read twice per decision by the referee: the file's path is worked out only to say what failed.
        fd = self._usage_fd
        if fd is None:
            path = self._file("cpu_usage", "cpu.stat", "cpuacct.usage")  # CgroupUnavailable without accounting
            raise CgroupError(f"cannot read {path}: the group is removed", path)
        try:
            text = os.pread(fd, 4096, 0)  # one call; the kernel renders the file afresh at offset 0
        except OSError as exc:
            path = self._file("cpu_usage", "cpu.stat", "cpuacct.usage")
            raise CgroupError(f"cannot read {path}: {exc.strerror}", path, exc.errno) from None
        if self._v2:
            return _field(text, b"usage_usec", self._file("cpu_usage", "cpu.stat", "cpuacct.usage")) * 1000
        return int(text)

    @property
    def can_measure_waits(self) -> bool:
        """Whether this host tells how long the group's tasks waited for a CPU (``cpu_wait_ns``)."""
        return self._pressure is not None or self._delays is not None

    def _open_wait_meter(self) -> None:
        """Open what ``cpu_wait_ns`` reads: v2's cpu.pressure where the kernel keeps it for the group,
        else the group's list of tasks, whose run delays are summed; nothing where neither is there."""
        folder = self._folder("cpu_usage")
        if self._v2:
            pressure = os.path.join(folder, "cpu.pressure")
            try:
                _pressure_total(KEPT.read(pressure, 256))
                self._pressure = pressure
                return
            except (OSError, ValueError):  # pressure off for this group (cgroup.pressure 0, psi=0)
                KEPT.forget(pressure)
        if run_delays_available():
            try:
                listing = os.path.join(folder, "cgroup.threads" if self._v2 else "tasks")
                count = (
                    os.path.join(self._folders["processes"], "pids.current") if "processes" in self._folders else None
                )
                self._delays = TaskDelays(listing, fresh=self._v2, count=count)
            except OSError:
                self._delays = None

    def cpu_wait_ns(self, going_on: bool = False) -> int:
        """The time the tree's tasks have waited for a CPU while they could run, in nanoseconds; with
        ``going_on``, their waits not yet over as well (a look before the seat has answered).

        On v2 with pressure accounting, the group's cpu.pressure "some" total:
        the time at least one of its tasks waited, present waits included.
        Otherwise the sum of each task's run delay (referee.run_delay), counting
        a task that ended at its last reading: two tasks waiting at once count
        twice, which errs towards the bot (its charge is never less than its CPU
        time, referee.match.clock).
        """
        try:
            if self._pressure is not None:
                return _pressure_total(KEPT.read(self._pressure, 256)) * 1000
            if self._delays is not None:
                return self._delays.total_ns(going_on=going_on)
        except (OSError, ValueError) as exc:
            path = self._file("cpu_usage", "cpu.pressure", "tasks")
            raise CgroupError(f"cannot read how long {path}'s tasks waited: {exc}", path) from None
        path = self._file("cpu_usage", "cpu.pressure", "tasks")
        raise CgroupUnavailable(f"no wait for a CPU measured for {path} on this host")

    def memory_peak(self) -> int:
        """The most memory the tree held at once, in bytes (v2: Linux 5.19 or later)."""
        if not self._support.memory_peak:
            raise CgroupUnavailable(f"no peak memory of control groups here ({self._support.version})")
        return int(read_file(self._file("memory", "memory.peak", "memory.max_usage_in_bytes")))

    def oom_kills(self) -> int:
        """How many processes of the tree the kernel has killed for the group's memory bound."""
        path = self._file("memory", "memory.events", "memory.oom_control")
        return _field(read_file(path).encode(), b"oom_kill", path)

    def pids(self) -> list[int]:
        """The processes in the group now, in any of its hierarchies (numbered in this process's PID namespace)."""
        found: set[int] = set()
        for folder in self._all:
            found.update(pids_in(folder))
        return sorted(found)

    # -- ending

    def kill_all(self) -> None:
        """SIGKILL every process of the tree, those forked meanwhile too; returns once they are signalled.

        v2 with ``cgroup.kill``: one write, and the kernel lets no fork slip
        through. Otherwise the tree is frozen (each process stops on its next
        way out of the kernel, so few can still fork) and the listing is killed
        until it shows no process not yet signalled: a process killed cannot
        fork, so only children forked between a listing and its kills are left
        for the next round. On v1 the tree is then thawed, as a process frozen
        there dies only once it runs again. Nothing here waits for the freeze
        to complete: on v1 that takes milliseconds when the tree is busy.
        """
        if self._removed or not self._all:
            return
        if self._v2 and self._support.kill:
            write_file(os.path.join(self._all[0], "cgroup.kill"), "1")
            return
        if self._freeze_fd is not None:
            self.freeze()
        for _ in range(_KILL_ROUNDS):
            fresh = [pid for pid in self.pids() if pid not in self._signalled]
            if not fresh:
                break
            # A listed process could end by itself before its signal and its pid go to
            # a new process elsewhere; the kernel hands out pids in order up to pid_max,
            # so that takes the whole pid space going round within microseconds.
            for pid in fresh:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self._signalled.update(fresh)
        if self._freeze_fd is not None and not self._v2:
            self.thaw()

    def remove(self, timeout: float = 0.3) -> bool:
        """Kill the tree, wait until the group is empty (at most ``timeout`` seconds), remove it everywhere.

        Idempotent and safe in a ``finally``: it raises nothing. A group that
        does not empty in time is kept and removed by a later ``create`` in
        this process. True when the group is gone.
        """
        if self._removed:
            return True
        try:
            self.kill_all()
        except (CgroupError, OSError):
            pass  # the folders may be gone already; the listing below tells

        def empty() -> bool:
            listed = self.pids()
            if not set(listed) <= self._signalled:
                self.kill_all()  # one forked between a listing and its kills
            return not listed

        try:
            if not _poll(empty, timeout):
                _keep_for_later(self)
                return False
        except (CgroupError, OSError):
            _keep_for_later(self)
            return False
        for fd in (self._freeze_fd, self._usage_fd):
            if fd is not None:
                os.close(fd)
        self._freeze_fd = self._usage_fd = None
        if self._pressure is not None:
            KEPT.forget(self._pressure)
        if self._delays is not None:
            self._delays.close()
            self._delays = None
        self._removed = True
        left = []
        for folder in self._all:
            try:
                os.rmdir(folder)
            except FileNotFoundError:
                pass
            except OSError:
                left.append(folder)
        if left:  # empty but busy: the kernel was still letting go of it
            self._all, self._removed = left, False
            _keep_for_later(self)
            return False
        return True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"BotCgroup({self.name!r}, {'removed' if self._removed else ', '.join(self._all)})"


def _pressure_total(text: bytes) -> int:
    """The "some" line's total (microseconds) of a pressure file (``some avg10=0.00 ... total=123``)."""
    some = text.split(b"\n", 1)[0]
    if not some.startswith(b"some "):
        raise ValueError(f"not a pressure file: {text[:80]!r}")
    return int(some.rpartition(b"total=")[2])


def _open(path: str, flags: int) -> int:
    try:
        return os.open(path, flags | os.O_CLOEXEC)  # never inherited: a bot must not reach its own freezer
    except OSError as exc:
        raise CgroupError(f"cannot open {path}: {exc.strerror}", path, exc.errno) from None


_later_lock = threading.Lock()
_later: list[BotCgroup] = []  # this process's groups that did not empty in time


def _keep_for_later(group: BotCgroup) -> None:
    with _later_lock:
        if group not in _later:
            _later.append(group)


def _remove_later() -> None:
    """Try again to remove this process's groups that did not empty in time."""
    with _later_lock:
        pending = list(_later)
        _later.clear()
    for group in pending:
        group.remove(timeout=0)
