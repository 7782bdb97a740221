"""What this host's control groups give a bot, probed once: the layout, the controllers, where groups go.

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
--scope -p Delegate=yes``): a referee that finds none asks the user's systemd
for such a scope itself (``referee.sandbox.delegation``); v1 is root's alone.

On v1 the referee also moves into a group of its own in the cpu hierarchy
(the same name), and its bots' cpu groups are made *inside* it
(``_cpu_home_v1``). The scheduler then sees the referee and its bots as one
entity, as it sees a program and the children in its session: a bot's group
made next to the referee's competed on its own with every other process each
time it woke, and beside 8 busy loops on 2 cores a referee played a third of
the decisions per second it plays nested (bench/README.md, issue 30). Each bot
keeps its one-core cap inside; the referee's group has no cap of its own.

One bot's group itself is ``referee.sandbox.cgroup``; this module also holds
the few file operations both use (``read_file``, ``write_file``, ``pids_in``).
"""

from __future__ import annotations

import errno
import functools
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from referee.sandbox.delegation import delegate_this_process
from referee.sandbox.names import LEAF_NAME, LEAF_PREFIX, group_name, leaf_name

__all__ = ["GUARANTEES", "WITHOUT", "CgroupError", "CgroupSupport", "CgroupUnavailable", "Guarantee", "cgroup_support",
           "pids_in", "read_file", "write_file"]  # fmt: skip

Guarantee = Literal["memory", "processes", "cpu_bound", "cpu_usage", "freezer"]

GUARANTEES: tuple[Guarantee, ...] = ("memory", "processes", "cpu_bound", "cpu_usage", "freezer")
"""What a bot's group can give: its tree's memory, its tree's process count, a CPU cap,
its tree's CPU time, and freezing the tree between requests."""

# What the sandbox line says when a guarantee is missing: what a bot gets instead.
WITHOUT: dict[Guarantee, str] = {
    "memory": "no cgroup memory controller: memory is bounded per process only",
    "processes": "no cgroup pids controller: processes are bounded by RLIMIT_NPROC (a uid of its own, or its user namespace)",
    "cpu_bound": "no cgroup cpu controller: a bot's CPU share is not capped",
    "cpu_usage": "no cgroup CPU accounting: a bot's CPU time is not measured",
    "freezer": "no cgroup freezer: bots are stopped by SIGSTOP between requests instead",
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
    delegation: str | None = None
    """Why the user's systemd gave famiglia no delegated scope, where one was asked for (None: not asked, or given)."""

    def has(self, guarantee: Guarantee) -> bool:
        """Whether ``guarantee`` is available."""
        available: bool = getattr(self, guarantee)
        return available

    def missing(self) -> str | None:
        """One line for the sandbox summary: what bots do not get here, None when nothing is missing."""
        asked = f" ({self.delegation})" if self.delegation is not None else ""
        if self.version == "none":
            return (
                "no usable control groups: memory, processes and CPU are bounded per process only, "
                f"and bots are stopped by SIGSTOP between their requests{asked}"
            )
        gaps = [WITHOUT[g] for g in GUARANTEES if not self.has(g)]
        if self.memory and not self.swap:
            gaps.append("no swap accounting: a bot may swap beyond its memory bound")
        return "; ".join(gaps) + asked if gaps else None

    def require(self, guarantees: Iterable[Guarantee] = GUARANTEES) -> None:
        """CgroupUnavailable, with what is missing and how to fix it, unless every one of ``guarantees`` is there."""
        gaps = [g for g in guarantees if not self.has(g)]
        if not gaps:
            return
        if self.problem is not None:
            raise CgroupUnavailable(f"{WITHOUT[gaps[0]]}: {self.problem}")
        reasons = list(dict.fromkeys(self.reasons.get(g, "unknown reason") for g in gaps))
        raise CgroupUnavailable(f"{WITHOUT[gaps[0]]}: {'; '.join(reasons)}")


# --- the files of a group: read, written, listed -------------------------------


def read_file(path: str) -> str:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read()
    except OSError as exc:
        raise CgroupError(f"cannot read {path}: {exc.strerror}", path, exc.errno) from None


def write_file(path: str, value: str) -> None:
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


def pids_in(folder: str) -> list[int]:
    try:
        with open(os.path.join(folder, "cgroup.procs"), "rb") as handle:
            return [int(word) for word in handle.read().split()]
    except FileNotFoundError:  # removed meanwhile: it holds nothing
        return []
    except OSError as exc:
        raise CgroupError(f"cannot read {folder}/cgroup.procs: {exc.strerror}", folder, exc.errno) from None


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


def _first_group(candidates: list[str]) -> str | None:
    return next((c for c in candidates if os.path.isfile(os.path.join(c, "cgroup.procs"))), None)


def _host_has_swap() -> bool:
    try:
        with open("/proc/swaps", encoding="ascii") as handle:
            return len(handle.read().splitlines()) > 1
    except OSError:
        return False


def _probe_group(folder: str) -> str:
    """Make an empty group in ``folder`` to see what a bot's group would get; the caller removes it."""
    path = os.path.join(folder, group_name(f"probe-{secrets.token_hex(4)}"))
    os.mkdir(path)
    return path


def _probe_v2(group: str) -> CgroupSupport:
    """What v2 gives below ``group`` (this process's own), after enabling the controllers there."""
    parent = group
    # A worker started by a referee lives in that referee's leaf: its bots go next to the leaf.
    if os.path.basename(group).startswith(LEAF_PREFIX):
        parent = os.path.dirname(group)
    reasons: dict[str, str] = {}
    available = set(read_file(os.path.join(parent, "cgroup.controllers")).split())
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
            counts_cpu = "usage_usec" in read_file(os.path.join(probe, "cpu.stat"))
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
    enabled = set(read_file(control).split())
    failures: dict[str, str] = {}
    moved = False
    for controller in controllers:
        if controller in enabled:
            continue
        try:
            write_file(control, f"+{controller}")
            continue
        except CgroupError as exc:
            if exc.errno != errno.EBUSY or moved:
                failures[controller] = f"{exc}; {_DELEGATE}"
                continue
        others = [pid for pid in pids_in(parent) if pid != os.getpid()]
        if others:
            failures[controller] = (
                f"{parent} also holds {len(others)} other process(es), and a v2 group with processes "
                f"cannot give controllers to subgroups; {_DELEGATE}"
            )
            continue
        leaf = os.path.join(parent, leaf_name())
        try:
            os.makedirs(leaf, exist_ok=True)
        except OSError as exc:
            failures[controller] = f"cannot create {leaf} to move this referee into: {exc.strerror}; {_DELEGATE}"
            continue
        try:
            write_file(os.path.join(leaf, "cgroup.procs"), str(os.getpid()))
        except CgroupError as exc:  # moving needs write access to the parent's cgroup.procs too
            failures[controller] = f"cannot move this referee into {leaf}: {exc}; {_DELEGATE}"
            continue
        moved = True
        try:
            write_file(control, f"+{controller}")
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
    if LEAF_NAME.fullmatch(os.path.basename(folder)):
        return folder
    home = os.path.join(folder, leaf_name())
    try:
        os.makedirs(home, exist_ok=True)
    except OSError:
        return None
    try:
        write_file(os.path.join(home, "cgroup.procs"), str(os.getpid()))  # v1: the whole thread group moves
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
        parent = os.path.dirname(unified) if os.path.basename(unified).startswith(LEAF_PREFIX) else unified
        try:
            offered = set(read_file(os.path.join(parent, "cgroup.controllers")).split())
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
        support = _probe_here()
        if support.missing() is not None and os.geteuid() != 0:
            # A regular user's session is seldom delegated: ask the user's systemd for a scope
            # that is (referee.sandbox.delegation), then look again from inside it.
            why = delegate_this_process()
            support = _probe_here() if why is None else msgspec.structs.replace(support, delegation=why)
        return support


def _probe_here() -> CgroupSupport:
    try:
        return _probe(_layout(read_file("/proc/self/mountinfo"), read_file("/proc/self/cgroup")))
    except CgroupError as exc:
        return CgroupSupport(version="none", problem=str(exc))
    except OSError as exc:  # a probe group that could not be removed, a folder that vanished
        return CgroupSupport(version="none", problem=f"{exc.filename}: {exc.strerror}")
