"""What dead referees left on this host, swept once per referee process; and the cgroup v1 guardian.

A referee killed with SIGKILL removes nothing it made: its bots' control
groups, with whatever still runs in them (frozen, maybe); its own v2 leaf, or
on v1 its cpu group with its bots' cpu groups inside (``referee.sandbox.cgroup_host``);
and its FIFO folder, with, rarely, a sandbox whose parent-death signal was
never armed. Each group is named after that referee's pid
(``referee.sandbox.names``) and its FIFO folder is locked while the referee
lives, so the next referee sweeps the groups whose pid names no live process
and the folders no process holds locked (``sweep_dead_referees``): once per
process, at its first sandboxed launch (``sweep_once``, called by
``referee.sandbox.launch.prepare``), never when a group or a folder is made. Its uid block needs nothing: the kernel drops the
lock that held it (``referee.sandbox.resources``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import threading

from referee.sandbox.cgroup import BotCgroup
from referee.sandbox.cgroup_host import CgroupSupport
from referee.sandbox.names import FIFO_NAME, FIFO_PREFIX, GROUP_NAME, LEAF_NAME, ns_tag

__all__ = ["sweep_dead_referees", "sweep_once"]

_lock = threading.Lock()
_swept_in: int | None = None  # the pid that swept: a forked child sweeps anew


def sweep_once(support: CgroupSupport) -> None:
    """Sweep what dead referees left, and start the v1 guardian, the first time this process calls it."""
    global _swept_in
    with _lock:
        if _swept_in == os.getpid():
            return
        _swept_in = os.getpid()
    sweep_dead_referees(support)
    _start_guardian(support)


def sweep_dead_referees(support: CgroupSupport) -> None:
    """Remove what referees of this host that died without cleaning up left: FIFO folders, then control groups."""
    _sweep_fifo_folders()
    _sweep_groups(support)
    if support.version == "v1":
        _sweep_dead_cpu_homes(support, ns_tag(), os.getpid())


# --- FIFO folders ----------------------------------------------------------------


def _sweep_fifo_folders() -> None:
    """Remove the FIFO folders that referees killed with SIGKILL left behind.

    A folder named as this famiglia names them (``famiglia-bots-<16 hex>``) is
    a dead referee's once no process holds its lock. One named as earlier
    versions did (``famiglia-bots-<pid>-...``), by a referee of an earlier
    famiglia on the same host, holds no lock: it is a dead referee's when its pid names no live process.
    """
    tmp = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(tmp) if n.startswith(FIFO_PREFIX)]
    except OSError:
        return
    for name in names:
        folder = os.path.join(tmp, name)
        if FIFO_NAME.fullmatch(name):
            dead = _unlocked(folder)
        else:
            pid = name[len(FIFO_PREFIX) :].split("-", 1)[0]
            dead = pid.isdigit() and _owned(folder) and not _alive(int(pid))
        if dead:
            _kill_chains_of(folder)
            shutil.rmtree(folder, ignore_errors=True)


def _owned(folder: str) -> bool:
    try:
        return os.lstat(folder).st_uid == os.geteuid()
    except OSError:
        return False


def _unlocked(folder: str) -> bool:
    """Whether ``folder`` is this user's and no process holds its lock (``referee.sandbox.resources``)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:  # gone meanwhile, or not a folder
        return False
    try:
        if os.fstat(fd).st_uid != os.geteuid():
            return False
        # A live referee (or a child it forked) holds the lock; the kernel dropped a dead one's.
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _kill_chains_of(folder: str) -> None:
    """SIGKILL what is left of a dead referee's sandboxes: the processes whose command line names its FIFO folder.

    A referee killed while spawning can leave a sandbox whose parent-death
    signal was never armed (it is set after the parent may already be gone).
    """
    marker = (folder.rstrip("/") + "/").encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if marker in handle.read():
                    os.kill(int(entry), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


# --- control groups --------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process has that pid now: not provably dead
        return True
    return True


def _sweep_groups(support: CgroupSupport) -> None:
    """Kill and remove the groups left by referees of this PID namespace that died without removing them.

    A pid names a referee only within its PID namespace, so groups named in
    another are left alone. A referee's own v2 leaf is only removed, never
    killed: a worker it started may still live there (then rmdir fails).
    """
    ns, me = ns_tag(), os.getpid()
    dead: set[str] = set()
    for parent in support.folders:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            if (leaf := LEAF_NAME.fullmatch(name)) is not None:
                if leaf[2] == ns and int(leaf[1]) != me and not _alive(int(leaf[1])):
                    try:
                        os.rmdir(os.path.join(parent, name))
                    except OSError:
                        pass
                continue
            group = GROUP_NAME.fullmatch(name)
            if group is not None and group[2] == ns and int(group[1]) != me and not _alive(int(group[1])):
                dead.add(name)
    for name in sorted(dead):
        BotCgroup.adopt(support, name).remove(timeout=0.1)


def _sweep_dead_cpu_homes(support: CgroupSupport, ns: str, me: int) -> None:
    """On v1, remove the cpu groups of dead referees of this namespace (``_cpu_home_v1``) and their bots' cpu groups.

    They sit next to this referee's own (or, for a worker, next to the group it
    lives in), out of the folders the sweep above lists. By now the bots in them
    are dead (their groups in the other hierarchies were swept above), so each
    comes out with ``rmdir``; one that still holds a process (a live worker of
    a dead referee) refuses, and stays for a later sweep.
    """
    homes = [f for f in support.folders if LEAF_NAME.fullmatch(os.path.basename(f))]
    for base in dict.fromkeys(os.path.dirname(home) for home in homes):
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            owner = LEAF_NAME.fullmatch(name) or GROUP_NAME.fullmatch(name)  # a bot group: left by an older famiglia
            if owner is None or owner[2] != ns or int(owner[1]) == me or _alive(int(owner[1])):
                continue
            folder = os.path.join(base, name)
            try:
                inside = os.listdir(folder)
            except OSError:
                continue
            for child in inside:
                bot = GROUP_NAME.fullmatch(child)
                if bot is not None and bot[2] == ns and not _alive(int(bot[1])):
                    try:
                        os.rmdir(os.path.join(folder, child))
                    except OSError:
                        pass
            try:
                os.rmdir(folder)
            except OSError:
                pass


# --- the guardian (cgroup v1) ------------------------------------------------------

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
    with _lock:
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
