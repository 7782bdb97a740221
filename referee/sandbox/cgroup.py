"""One control group per bot: memory, processes and CPU bounded for a bot and everything it starts.

prlimit bounds each *process*; an entrant is a tree of them (an interpreter, its
helpers, whatever they fork, the sandbox's own init), and RLIMIT_AS does not
count shared memory at all (memfd, tmpfs). A control group does: it charges
every page its processes touch, anonymous or shmem, counts its tasks, caps its
CPU, freezes the whole tree at once and kills it without a race against fork.

Two layouts exist. cgroup v2 is one hierarchy where a group gets every
controller its parent enables; cgroup v1 mounts each controller (or a few
together) as a hierarchy of its own, and a bot's group must be made in each
(``memory``, ``pids``, ``cpu``, ``cpuacct``, ``freezer``). A hybrid host mounts
both, usually with every controller on v1 and an empty v2 at
``/sys/fs/cgroup/unified``: such a v2 limits nothing, so v1 is used there.

Groups are made *below* this process's own group in each hierarchy, so the
host's limits on the referee still hold for its bots. On v2 a group that
holds processes cannot hand controllers to subgroups, so when the referee's
group holds only the referee, the referee moves itself into a leaf of its own
(``famiglia-referee-<pid>-<ns>``) and the bots' groups become its siblings:
the procedure systemd prescribes for a delegated unit. Without root, v2 groups
can be made only in a group delegated to the user (``systemd-run --user
--scope -p Delegate=yes``); v1 is root's alone.

On v1 the referee also moves into a group of its own in the cpu hierarchy
(the same name), and its bots' cpu groups are made *inside* it
(``_cpu_home_v1``). The scheduler then sees the referee and its bots as one
entity, as it sees a program and the children in its session: a bot's group
made next to the referee's competed on its own with every other process each
time it woke, and beside 8 busy loops on 2 cores a referee played a third of
the decisions per second it plays nested (bench/README.md, issue 30). Each bot
keeps its one-core cap inside; the referee's group has no cap of its own.

A bot's group is named ``famiglia-<pid>-<ns>-<name>`` after the referee's pid
and PID namespace, so a later referee can sweep (kill and remove) the groups
of one that died by SIGKILL, as it does for FIFO folders.

A process enters a group by writing its own pid into ``cgroup.procs``
(``BotCgroup.join_paths``), in the launcher chain's shell link, before it
execs the rest: whatever it runs or forks afterwards is born inside, bwrap's
monitor, the namespace's init and the bot alike.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import secrets
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal, Self

import msgspec

from referee.settings import BotLimits

__all__ = ["GUARANTEES", "JOIN_FAILED", "BotCgroup", "CgroupError", "CgroupSupport", "CgroupUnavailable",
           "cgroup_support"]  # fmt: skip

Guarantee = Literal["memory", "processes", "cpu_bound", "cpu_usage", "freezer"]

GUARANTEES: tuple[Guarantee, ...] = ("memory", "processes", "cpu_bound", "cpu_usage", "freezer")
"""What a bot's group can give: its tree's memory, its tree's process count, a CPU cap,
its tree's CPU time, and freezing the tree between requests."""

JOIN_FAILED = 124
"""The exit status of ``BotCgroup.join_script`` when the shell could not enter the group."""

# What the sandbox line says when a guarantee is missing: what a bot gets instead.
_WITHOUT: dict[Guarantee, str] = {
    "memory": "no cgroup memory controller: memory is bounded per process only",
    "processes": "no cgroup pids controller: processes are bounded by RLIMIT_NPROC (a uid of its own, or its user namespace)",
    "cpu_bound": "no cgroup cpu controller: a bot's CPU share is not capped",
    "cpu_usage": "no cgroup CPU accounting: a bot's CPU time is not measured",
    "freezer": "no cgroup freezer: bots are not frozen between requests",
}
# The v1 controller behind each guarantee (on v2, cpu_usage and freezer are core features).
_V1_CONTROLLER: dict[Guarantee, str] = {
    "memory": "memory",
    "processes": "pids",
    "cpu_bound": "cpu",
    "cpu_usage": "cpuacct",
    "freezer": "freezer",
}
_V2_LIMITS = ("memory", "pids", "cpu")  # the v2 controllers a bot's group needs enabled by its parent
_V2_GUARANTEE: dict[str, Guarantee] = {"memory": "memory", "pids": "processes", "cpu": "cpu_bound"}

_PREFIX = "famiglia-"
_LEAF_PREFIX = "famiglia-referee-"  # the referee's own v2 leaf: swept only when empty, never killed
_GROUP_NAME = re.compile(r"famiglia-(\d+)-([0-9a-f]+)-(.+)")
_LEAF_NAME = re.compile(r"famiglia-referee-(\d+)-([0-9a-f]+)")
_BOT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,80}")
_CPU_PERIOD_US = 100_000
_KILL_ROUNDS = 64  # listings in one kill_all; remove() calls it again while processes are left
_DELEGATE = (
    "run famiglia in a control group of its own with the controllers delegated: "
    "systemd-run --scope -p Delegate=yes famiglia ... (add --user when not root)"
)


class CgroupUnavailable(ValueError):
    """A guarantee this machine's control groups cannot give; the message says what is missing and how to fix it."""


class CgroupError(RuntimeError):
    """A control-group file could not be read or written: the harness's fault, never a bot's.

    ``path`` is the file or folder, ``errno`` the system's error number (None: not a system error).
    """

    def __init__(self, message: str, path: str, error_number: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.errno = error_number


class CgroupSupport(msgspec.Struct, frozen=True, kw_only=True):
    """What this machine's control groups give a bot, probed once (``cgroup_support``)."""

    version: Literal["v2", "v1", "none"]
    """The layout in use: v2 (unified), v1 (a hierarchy per controller) or none at all."""
    memory: bool = False
    """The memory of a bot's whole tree is bounded, shared memory (memfd, tmpfs) included."""
    swap: bool = False
    """Swap is bounded too (set to none), or the host has no swap."""
    processes: bool = False
    """The number of tasks (processes and threads) of a bot's whole tree is bounded."""
    cpu_bound: bool = False
    """A bot's tree can be capped to a number of cores."""
    cpu_usage: bool = False
    """The CPU time of a bot's whole tree can be read."""
    freezer: bool = False
    """A bot's whole tree can be frozen and thawed."""
    kill: bool = False
    """One write kills the whole tree (v2 ``cgroup.kill``, Linux 5.14); else it is killed process by process."""
    memory_peak: bool = False
    """The group's peak memory can be read."""
    parents: dict[str, str] = {}
    """Per guarantee, the folder bots' groups are made in (its hierarchy's)."""
    folders: tuple[str, ...] = ()
    """Every folder a bot's group is made in, one per hierarchy."""
    reasons: dict[str, str] = {}
    """Per missing guarantee, why and how to fix it."""
    problem: str | None = None
    """Why no group can be made here at all (None: groups can be made)."""

    def has(self, guarantee: Guarantee) -> bool:
        """Whether ``guarantee`` is available."""
        available: bool = getattr(self, guarantee)
        return available

    def missing(self) -> str | None:
        """One line for the sandbox summary: what bots do not get here, None when nothing is missing."""
        if self.version == "none":
            return "no usable control groups: memory, processes and CPU are bounded per process only"
        gaps = [_WITHOUT[g] for g in GUARANTEES if not self.has(g)]
        if self.memory and not self.swap:
            gaps.append("no swap accounting: a bot may swap beyond its memory bound")
        return "; ".join(gaps) or None

    def require(self, guarantees: Iterable[Guarantee] = GUARANTEES) -> None:
        """CgroupUnavailable, with what is missing and how to fix it, unless every one of ``guarantees`` is there."""
        gaps = [g for g in guarantees if not self.has(g)]
        if not gaps:
            return
        if self.problem is not None:
            raise CgroupUnavailable(f"{_WITHOUT[gaps[0]]}: {self.problem}")
        reasons = list(dict.fromkeys(self.reasons.get(g, "unknown reason") for g in gaps))
        raise CgroupUnavailable(f"{_WITHOUT[gaps[0]]}: {'; '.join(reasons)}")


# --- reading the host's layout -------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """Where this process's own groups are: the candidate folders per hierarchy, best first."""

    unified: list[str] = field(default_factory=list)
    """This process's group in the cgroup v2 hierarchy, one candidate per mount."""
    v1: dict[str, list[str]] = field(default_factory=dict)
    """Per v1 controller, this process's group in that controller's hierarchy."""


def _unescape(word: str) -> str:
    """A mountinfo field with its octal escapes (``\\040`` for a space) decoded."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), word)


def _under(path: str, root: str, mountpoint: str) -> str | None:
    """Where the group ``path`` of a hierarchy is, through a mount of that hierarchy's ``root``; None if outside it."""
    if "/.." in path:  # above this process's cgroup namespace: not reachable from here
        return None
    if root == "/":
        return mountpoint.rstrip("/") + path if path != "/" else mountpoint
    if path == root:
        return mountpoint
    if path.startswith(root + "/"):
        return mountpoint.rstrip("/") + path[len(root) :]
    return None


def _layout(mountinfo: str, own: str) -> _Layout:
    """Parse /proc/self/mountinfo and /proc/self/cgroup (pure: reads no file)."""
    v2_mounts: list[tuple[str, str]] = []  # (root, mount point)
    v1_mounts: list[tuple[frozenset[str], str, str]] = []  # (controllers, root, mount point)
    for line in mountinfo.splitlines():
        head, sep, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if not sep or len(fields) < 5 or len(rest) < 3:
            continue
        root, mountpoint = _unescape(fields[3]), _unescape(fields[4])
        if rest[0] == "cgroup2":
            v2_mounts.append((root, mountpoint))
        elif rest[0] == "cgroup":
            v1_mounts.append((frozenset(rest[2].split(",")) & set(_V1_CONTROLLER.values()), root, mountpoint))
    # A later mount on the same point hides an earlier one: try the latest first.
    v2_mounts.reverse()
    v1_mounts.reverse()
    layout = _Layout()
    for line in own.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, names, path = parts
        if hierarchy == "0" and names == "":
            layout.unified.extend(f for root, mp in v2_mounts if (f := _under(path, root, mp)) is not None)
            continue
        controllers = frozenset(names.split(",")) & set(_V1_CONTROLLER.values())
        for controller in controllers:
            found = [f for c, root, mp in v1_mounts if controller in c if (f := _under(path, root, mp)) is not None]
            layout.v1[controller] = found
    return layout


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read()
    except OSError as exc:
        raise CgroupError(f"cannot read {path}: {exc.strerror}", path, exc.errno) from None


def _write(path: str, value: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise CgroupError(f"cannot open {path} to write {value!r}: {exc.strerror}", path, exc.errno) from None
    try:
        os.write(fd, value.encode())
    except OSError as exc:
        raise CgroupError(f"cannot write {value!r} to {path}: {exc.strerror}", path, exc.errno) from None
    finally:
        os.close(fd)


def _first_group(candidates: list[str]) -> str | None:
    return next((c for c in candidates if os.path.isfile(os.path.join(c, "cgroup.procs"))), None)


@functools.cache
def _ns_tag() -> str:
    """This process's PID namespace, in hex: a pid names a referee only within its namespace."""
    try:
        return format(os.stat("/proc/self/ns/pid").st_ino, "x")
    except OSError:
        return "0"


def _host_has_swap() -> bool:
    try:
        with open("/proc/swaps", encoding="ascii") as handle:
            return len(handle.read().splitlines()) > 1
    except OSError:
        return False


def _probe_group(folder: str) -> str:
    """Make an empty group in ``folder`` to see what a bot's group would get; the caller removes it."""
    path = os.path.join(folder, f"{_PREFIX}{os.getpid()}-{_ns_tag()}-probe-{secrets.token_hex(4)}")
    os.mkdir(path)
    return path


def _probe_v2(group: str) -> CgroupSupport:
    """What v2 gives below ``group`` (this process's own), after enabling the controllers there."""
    parent = group
    # A worker started by a referee lives in that referee's leaf: its bots go next to the leaf.
    if os.path.basename(group).startswith(_LEAF_PREFIX):
        parent = os.path.dirname(group)
    reasons: dict[str, str] = {}
    available = set(_read(os.path.join(parent, "cgroup.controllers")).split())
    for controller in _V2_LIMITS:
        if controller not in available:
            reasons[_V2_GUARANTEE[controller]] = (
                f"the {controller} controller is not delegated to {parent} (cgroup.controllers: "
                f"{' '.join(sorted(available)) or 'none'}); {_DELEGATE}"
            )
    wanted = [c for c in _V2_LIMITS if c in available]
    try:
        failures = _enable_v2(parent, wanted)
    except CgroupError as exc:
        failures = {c: str(exc) for c in wanted}
    for controller, why in failures.items():
        reasons[_V2_GUARANTEE[controller]] = why
    try:
        probe = _probe_group(parent)
    except OSError as exc:
        return CgroupSupport(
            version="none",
            problem=f"cannot create a control group in {parent}: {exc.strerror}; {_DELEGATE}",
            reasons=reasons,
        )
    try:
        files = set(os.listdir(probe))
        try:
            counts_cpu = "usage_usec" in _read(os.path.join(probe, "cpu.stat"))
        except CgroupError:
            counts_cpu = False
    finally:
        os.rmdir(probe)
    has: dict[Guarantee, bool] = {
        "memory": "memory.max" in files and "memory" not in failures,
        "processes": "pids.max" in files and "pids" not in failures,
        "cpu_bound": "cpu.max" in files and "cpu" not in failures,
        "cpu_usage": counts_cpu,
        "freezer": "cgroup.freeze" in files,
    }
    if not counts_cpu:
        reasons["cpu_usage"] = f"the groups in {parent} have no usage_usec in cpu.stat (Linux 4.15 or later has it)"
    if "cgroup.freeze" not in files:
        reasons["freezer"] = f"the groups in {parent} have no cgroup.freeze (Linux 5.2 or later has it)"
    limits: tuple[tuple[Guarantee, str], ...] = (("memory", "memory.max"), ("processes", "pids.max"),
                                                 ("cpu_bound", "cpu.max"))  # fmt: skip
    for guarantee, name in limits:
        if guarantee not in reasons and not has[guarantee]:
            reasons[guarantee] = f"the groups in {parent} have no {name}"
    return _support("v2", has, parent_of=lambda _: parent, folders=(parent,), reasons=reasons,
                    swap="memory.swap.max" in files or not _host_has_swap(),
                    kill="cgroup.kill" in files, memory_peak="memory.peak" in files)  # fmt: skip


def _support(
    version: Literal["v2", "v1"],
    has: dict[Guarantee, bool],
    *,
    parent_of: Callable[[Guarantee], str],
    folders: tuple[str, ...],
    reasons: dict[str, str],
    swap: bool,
    kill: bool,
    memory_peak: bool,
) -> CgroupSupport:
    return CgroupSupport(
        version=version,
        memory=has["memory"],
        swap=swap,
        processes=has["processes"],
        cpu_bound=has["cpu_bound"],
        cpu_usage=has["cpu_usage"],
        freezer=has["freezer"],
        kill=kill,
        memory_peak=memory_peak and has["memory"],
        parents={g: parent_of(g) for g in GUARANTEES if has[g]},
        folders=folders,
        reasons={g: reasons[g] for g in GUARANTEES if g in reasons and not has[g]},
    )


def _enable_v2(parent: str, controllers: list[str]) -> dict[str, str]:
    """Enable ``controllers`` for ``parent``'s subgroups; per controller that failed, why.

    The kernel refuses (EBUSY) while ``parent`` holds processes (unless it is
    the root). When the only one is this process, it moves into a leaf of its
    own first; any other process there is not ours to move.
    """
    control = os.path.join(parent, "cgroup.subtree_control")
    enabled = set(_read(control).split())
    failures: dict[str, str] = {}
    moved = False
    for controller in controllers:
        if controller in enabled:
            continue
        try:
            _write(control, f"+{controller}")
            continue
        except CgroupError as exc:
            if exc.errno != errno.EBUSY or moved:
                failures[controller] = f"{exc}; {_DELEGATE}"
                continue
        others = [pid for pid in _pids_in(parent) if pid != os.getpid()]
        if others:
            failures[controller] = (
                f"{parent} also holds {len(others)} other process(es), and a v2 group with processes "
                f"cannot give controllers to subgroups; {_DELEGATE}"
            )
            continue
        leaf = os.path.join(parent, f"{_LEAF_PREFIX}{os.getpid()}-{_ns_tag()}")
        try:
            os.makedirs(leaf, exist_ok=True)
        except OSError as exc:
            failures[controller] = f"cannot create {leaf} to move this referee into: {exc.strerror}; {_DELEGATE}"
            continue
        try:
            _write(os.path.join(leaf, "cgroup.procs"), str(os.getpid()))
        except CgroupError as exc:  # moving needs write access to the parent's cgroup.procs too
            failures[controller] = f"cannot move this referee into {leaf}: {exc}; {_DELEGATE}"
            continue
        moved = True
        try:
            _write(control, f"+{controller}")
        except CgroupError as exc:
            failures[controller] = f"{exc}; {_DELEGATE}"
    return failures


def _cpu_home_v1(folder: str) -> str | None:
    """This referee's own group in the v1 cpu hierarchy, its bots' cpu groups to be made inside; None if it has none.

    ``folder`` is the process's group there. A process already in a referee's
    group (a worker that referee started) stays, and its bots nest there too:
    one referee's whole tree is one entity to the scheduler. Else the referee
    makes ``famiglia-referee-<pid>-<ns>`` below ``folder`` and moves itself, every
    thread, into it. When that fails (no write access, a real-time thread the
    group gives no real-time budget) the bots' groups go below ``folder`` as before.
    """
    if _LEAF_NAME.fullmatch(os.path.basename(folder)):
        return folder
    home = os.path.join(folder, f"{_LEAF_PREFIX}{os.getpid()}-{_ns_tag()}")
    try:
        os.makedirs(home, exist_ok=True)
    except OSError:
        return None
    try:
        _write(os.path.join(home, "cgroup.procs"), str(os.getpid()))  # v1: the whole thread group moves
    except CgroupError:
        try:
            os.rmdir(home)
        except OSError:
            pass
        return None
    return home


def _probe_v1(layout: _Layout) -> CgroupSupport:
    """What the v1 hierarchies give below this process's own groups."""
    reasons: dict[str, str] = {}
    parents: dict[Guarantee, str] = {}
    for guarantee in GUARANTEES:
        controller = _V1_CONTROLLER[guarantee]
        folder = _first_group(layout.v1.get(controller, []))
        if folder is None:
            reasons[guarantee] = (
                f"the {controller} controller is not mounted "
                f"(mount -t cgroup -o {controller} cgroup /sys/fs/cgroup/{controller})"
            )
        else:
            parents[guarantee] = folder
    cpu = parents.get("cpu_bound")
    if cpu is not None and (home := _cpu_home_v1(cpu)) is not None:
        # cpuacct is often mounted with cpu: every guarantee of that hierarchy nests with it.
        parents = {g: home if f == cpu else f for g, f in parents.items()}
    files: dict[str, set[str]] = {}
    for folder in dict.fromkeys(parents.values()):
        try:
            probe = _probe_group(folder)
        except OSError as exc:
            for guarantee in [g for g, f in parents.items() if f == folder]:
                reasons[guarantee] = f"cannot create a control group in {folder}: {exc.strerror} (v1 needs root)"
                del parents[guarantee]
            continue
        try:
            files[folder] = set(os.listdir(probe))
        finally:
            os.rmdir(probe)
    needs: dict[Guarantee, str] = {
        "memory": "memory.limit_in_bytes",
        "processes": "pids.max",
        "cpu_bound": "cpu.cfs_quota_us",
        "cpu_usage": "cpuacct.usage",
        "freezer": "freezer.state",
    }
    for guarantee, name in needs.items():
        folder = parents.get(guarantee)
        if folder is not None and name not in files.get(folder, set()):
            reasons[guarantee] = f"the groups in {folder} have no {name}"
            del parents[guarantee]
    if not parents:
        return CgroupSupport(version="none", problem="; ".join(dict.fromkeys(reasons.values())), reasons=reasons)
    memory_files = files.get(parents.get("memory", ""), set())
    return _support("v1", {g: g in parents for g in GUARANTEES}, parent_of=parents.__getitem__,
                    folders=tuple(dict.fromkeys(parents.values())), reasons=reasons,
                    swap="memory.memsw.limit_in_bytes" in memory_files or not _host_has_swap(), kill=False,
                    memory_peak="memory.max_usage_in_bytes" in memory_files)  # fmt: skip


def _probe(layout: _Layout) -> CgroupSupport:
    """v2 when it offers a controller; else v1 when a controller of ours is mounted; else v2 for what it has."""
    unified = _first_group(layout.unified)
    has_v1 = any(_first_group(candidates) for candidates in layout.v1.values())
    if unified is not None:
        parent = os.path.dirname(unified) if os.path.basename(unified).startswith(_LEAF_PREFIX) else unified
        try:
            offered = set(_read(os.path.join(parent, "cgroup.controllers")).split())
        except CgroupError as exc:
            if not has_v1:
                return CgroupSupport(version="none", problem=str(exc))
            offered = set()
        # A hybrid host's v2 has no controllers: it could freeze but limits nothing, so v1 does the work.
        if offered & set(_V2_LIMITS) or not has_v1:
            return _probe_v2(unified)
    if has_v1:
        return _probe_v1(layout)
    return CgroupSupport(
        version="none", problem="no cgroup file system is mounted (mount -t cgroup2 none /sys/fs/cgroup)"
    )


_probe_lock = threading.Lock()


@functools.cache
def cgroup_support() -> CgroupSupport:
    """Probe this machine's control groups once (about a millisecond: it makes and removes a group), then remember.

    This may move the referee into a group of its own (see the module's
    docstring): on v2 into a leaf, the one way any bot's group can get a
    controller; on v1 into a cpu group that its bots' cpu groups nest in.
    """
    with _probe_lock:
        try:
            return _probe(_layout(_read("/proc/self/mountinfo"), _read("/proc/self/cgroup")))
        except CgroupError as exc:
            return CgroupSupport(version="none", problem=str(exc))
        except OSError as exc:  # a probe group that could not be removed, a folder that vanished
            return CgroupSupport(version="none", problem=f"{exc.filename}: {exc.strerror}")


# --- one bot's group -----------------------------------------------------------


def _pids_in(folder: str) -> list[int]:
    try:
        with open(os.path.join(folder, "cgroup.procs"), "rb") as handle:
            return [int(word) for word in handle.read().split()]
    except FileNotFoundError:  # removed meanwhile: it holds nothing
        return []
    except OSError as exc:
        raise CgroupError(f"cannot read {folder}/cgroup.procs: {exc.strerror}", folder, exc.errno) from None


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
        The first call in a process also sweeps the groups of dead referees.
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
        _housekeeping(support)
        folder = f"{_PREFIX}{os.getpid()}-{_ns_tag()}-{name}"
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
        except BaseException:
            group._all = made  # a folder of that name this call did not make is not ours to remove
            group.remove()
            raise
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
            raise CgroupUnavailable(f"{_WITHOUT[guarantee]}: {self._support.reasons.get(guarantee, 'not probed')}")
        return folder

    def _file(self, guarantee: Guarantee, v2_name: str, v1_name: str) -> str:
        return os.path.join(self._folder(guarantee), v2_name if self._v2 else v1_name)

    def _apply(self, memory_bytes: int, max_processes: int, cores: float) -> None:
        if memory_bytes > 0:
            folder = self._folder("memory")
            if self._v2:
                _write(os.path.join(folder, "memory.max"), str(memory_bytes))
                if os.path.exists(os.path.join(folder, "memory.swap.max")):
                    _write(os.path.join(folder, "memory.swap.max"), "0")
            else:
                _write(os.path.join(folder, "memory.limit_in_bytes"), str(memory_bytes))
                if os.path.exists(os.path.join(folder, "memory.memsw.limit_in_bytes")):
                    # The bound on memory plus swap, set equal, leaves the group no swap.
                    _write(os.path.join(folder, "memory.memsw.limit_in_bytes"), str(memory_bytes))
                else:
                    try:  # no swap accounting: at least keep the group's pages off swap
                        _write(os.path.join(folder, "memory.swappiness"), "0")
                    except CgroupError:
                        pass
        if max_processes > 0:
            _write(os.path.join(self._folder("processes"), "pids.max"), str(max_processes))
        if cores > 0:
            quota = max(1000, round(cores * _CPU_PERIOD_US))  # the kernel's least quota is 1 ms
            folder = self._folder("cpu_bound")
            if self._v2:
                _write(os.path.join(folder, "cpu.max"), f"{quota} {_CPU_PERIOD_US}")
            else:
                _write(os.path.join(folder, "cpu.cfs_period_us"), str(_CPU_PERIOD_US))
                _write(os.path.join(folder, "cpu.cfs_quota_us"), str(quota))

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
        self._freezer_write(b"1" if self._v2 else b"FROZEN")

    def thaw(self) -> None:
        """Let the tree run again."""
        self._freezer_write(b"0" if self._v2 else b"THAWED")

    @property
    def can_measure(self) -> bool:
        """Whether this host accounts the group's CPU time (``cpu_usage_ns``)."""
        return self._support.cpu_usage

    @property
    def can_freeze(self) -> bool:
        """Whether this host gives the group a freezer (``freeze`` and ``thaw``)."""
        return self._support.freezer

    def _freezer_write(self, value: bytes) -> None:
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
            return _field(_read(path).encode(), b"frozen", path) == 1
        return _read(path).strip() == "FROZEN"

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

    def memory_peak(self) -> int:
        """The most memory the tree held at once, in bytes (v2: Linux 5.19 or later)."""
        if not self._support.memory_peak:
            raise CgroupUnavailable(f"no peak memory of control groups here ({self._support.version})")
        return int(_read(self._file("memory", "memory.peak", "memory.max_usage_in_bytes")))

    def oom_kills(self) -> int:
        """How many processes of the tree the kernel has killed for the group's memory bound."""
        path = self._file("memory", "memory.events", "memory.oom_control")
        return _field(_read(path).encode(), b"oom_kill", path)

    def pids(self) -> list[int]:
        """The processes in the group now, in any of its hierarchies (numbered in this process's PID namespace)."""
        found: set[int] = set()
        for folder in self._all:
            found.update(_pids_in(folder))
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
            _write(os.path.join(self._all[0], "cgroup.kill"), "1")
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


def _open(path: str, flags: int) -> int:
    try:
        return os.open(path, flags | os.O_CLOEXEC)  # never inherited: a bot must not reach its own freezer
    except OSError as exc:
        raise CgroupError(f"cannot open {path}: {exc.strerror}", path, exc.errno) from None


# --- what a referee leaves behind ------------------------------------------------

_state_lock = threading.Lock()
_swept: tuple[int, set[str]] = (0, set())  # (pid, the parent folders it swept): a forked child sweeps anew
_later: list[BotCgroup] = []  # this process's groups that did not empty in time


def _keep_for_later(group: BotCgroup) -> None:
    with _state_lock:
        if group not in _later:
            _later.append(group)


def _housekeeping(support: CgroupSupport) -> None:
    """Sweep dead referees' groups once per process and folder; retry this process's own leftovers every time."""
    global _swept
    with _state_lock:
        if _swept[0] != os.getpid():
            _swept = (os.getpid(), set())
        sweep = not _swept[1].issuperset(support.folders)
        _swept[1].update(support.folders)
        pending = list(_later)
        _later.clear()
    if sweep:
        _sweep_dead_referees(support)
        _start_guardian(support)
    for group in pending:
        group.remove(timeout=0)


# The guardian's end of its pipe, held by this process alone (not inheritable): when
# this process dies, however, the guardian reads end of file.
_guardian_pipe: tuple[int, int] | None = None  # (pid, write end)
# At end of file: each group of the referee ($0) in the freezer hierarchy ($1) thawed, and
# every process in it killed, twice over for a fork that was under way.
_GUARDIAN = (
    'cat >/dev/null; for round in 1 2; do for group in "$1"/famiglia-"$0"-*/; do '
    'echo THAWED > "$group/freezer.state"; for pid in $(cat "$group/cgroup.procs"); do kill -9 "$pid"; done; '
    "done; done 2>/dev/null"
)


def _start_guardian(support: CgroupSupport) -> None:
    """On cgroup v1, a process that stops this referee's bots and builds when it dies, however it dies.

    A frozen process takes no signal on v1, not even SIGKILL, until it is
    thawed: bots frozen between their requests would outlive a referee killed
    with SIGKILL (their parent-death signal waits), holding their memory until
    another referee sweeps them. And a referee killed in the instant it starts
    a sandbox can leave it running: a parent-death signal is armed only after
    the fork (seen with builds). The guardian, a shell in a session of its own,
    waits for end of file on a pipe only this process writes; then it thaws
    every group of this referee and kills what is in it. On v2 a frozen process
    dies of SIGKILL; there the next referee's sweep removes what such an
    instant left.
    """
    global _guardian_pipe
    folder = support.parents.get("freezer")
    if support.version != "v1" or folder is None:
        return
    with _state_lock:
        if _guardian_pipe is not None and _guardian_pipe[0] == os.getpid():
            return
        read_end, write_end = os.pipe()  # neither inheritable: only the guardian gets the read end
        try:
            subprocess.Popen(
                ["/bin/sh", "-c", _GUARDIAN, str(os.getpid()), folder],
                stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, cwd="/",
            )  # fmt: skip
        except OSError:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        _guardian_pipe = (os.getpid(), write_end)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process has that pid now: not provably dead
        return True
    return True


def _sweep_dead_referees(support: CgroupSupport) -> None:
    """Kill and remove the groups left by referees of this PID namespace that died without removing them.

    A pid names a referee only within its PID namespace, so groups named in
    another are left alone. A referee's own v2 leaf is only removed, never
    killed: a worker it started may still live there (then rmdir fails).
    """
    ns, me = _ns_tag(), os.getpid()
    dead: set[str] = set()
    for parent in support.folders:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            if (leaf := _LEAF_NAME.fullmatch(name)) is not None:
                if leaf[2] == ns and int(leaf[1]) != me and not _alive(int(leaf[1])):
                    try:
                        os.rmdir(os.path.join(parent, name))
                    except OSError:
                        pass
                continue
            group = _GROUP_NAME.fullmatch(name)
            if group is not None and group[2] == ns and int(group[1]) != me and not _alive(int(group[1])):
                dead.add(name)
    for name in sorted(dead):
        folders = {g: os.path.join(p, name) for g, p in support.parents.items()}
        leftover = BotCgroup(
            support,
            name,
            {g: f for g, f in folders.items() if os.path.isdir(f)},
            [f for p in support.folders if os.path.isdir(f := os.path.join(p, name))],
        )
        if "freezer" in leftover._folders:
            try:
                leftover._freeze_fd = _open(leftover._file("freezer", "cgroup.freeze", "freezer.state"), os.O_WRONLY)
            except CgroupError:
                pass
        leftover.remove(timeout=0.1)
    if support.version == "v1":
        _sweep_dead_cpu_homes(support, ns, me)


def _sweep_dead_cpu_homes(support: CgroupSupport, ns: str, me: int) -> None:
    """On v1, remove the cpu groups of dead referees of this namespace (``_cpu_home_v1``) and their bots' cpu groups.

    They sit next to this referee's own (or, for a worker, next to the group it
    lives in), out of the folders the sweep above lists. By now the bots in them
    are dead (their groups in the other hierarchies were swept above), so each
    comes out with ``rmdir``; one that still holds a process (a live worker of
    a dead referee) refuses, and stays for a later sweep.
    """
    homes = [f for f in support.folders if _LEAF_NAME.fullmatch(os.path.basename(f))]
    for base in dict.fromkeys(os.path.dirname(home) for home in homes):
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            owner = _LEAF_NAME.fullmatch(name) or _GROUP_NAME.fullmatch(name)  # a bot group: left by an older famiglia
            if owner is None or owner[2] != ns or int(owner[1]) == me or _alive(int(owner[1])):
                continue
            folder = os.path.join(base, name)
            try:
                inside = os.listdir(folder)
            except OSError:
                continue
            for child in inside:
                bot = _GROUP_NAME.fullmatch(child)
                if bot is not None and bot[2] == ns and not _alive(int(bot[1])):
                    try:
                        os.rmdir(os.path.join(folder, child))
                    except OSError:
                        pass
            try:
                os.rmdir(folder)
            except OSError:
                pass
