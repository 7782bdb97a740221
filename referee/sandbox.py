"""Containment for bot processes: the launcher chain that starts a bot, per level.

A bot is started through a chain of small programs from util-linux (and
bubblewrap at the strict level). Each sets one thing up and execs the next, so
the referee still spawns with vfork speed: no ``preexec_fn``, no Python launcher.
For the standard level, when the referee is root::

    setpriv --pdeathsig KILL --              # dies with the referee's thread (see below)
    prlimit --cpu=.. --as=.. --nofile=.. --fsize=.. --nproc=.. --core=0 --
    unshare --net --pid --mount --mount-proc --fork --kill-child --
    setpriv --reuid U --regid U --clear-groups --nnp --bounding-set -all --pdeathsig KILL --
    sh -c INIT <stdout fifo> <bot argv...>

``INIT`` is a three-line shell that starts the bot in the background and waits
for it. The bot is then pid 2 of its PID namespace, so it gets ordinary signal
semantics (a pid 1 ignores SIGTERM and SIGXCPU it has no handler for), and
when it exits, the shell (pid 1) exits and the kernel kills everything else in
the namespace: grandchildren that called ``setsid`` included.

The strict level runs ``bwrap`` instead of ``unshare``: every namespace, all
capabilities dropped, a read-only root, a private /tmp.

Two details every level shares:

- The bot's stdout is a FIFO the last step of the chain opens, not an inherited
  pipe. ``unshare --fork`` and bwrap keep a parent process waiting outside the
  namespace, which holds every descriptor it was given; with a plain pipe the
  referee would never see end-of-file from a bot that closes its stdout and
  keeps running (a stall), only a timeout.
- Dying with the referee: each forking link of the chain has a parent-death
  signal. That signal follows the *thread* that spawned the process, so the
  referee spawns bots from its Trio thread (``referee.process``), never from a
  worker thread that may exit while the bot still plays.
"""

from __future__ import annotations

import functools
import itertools
import os
import resource
import secrets
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

import msgspec

from referee.bots import BotSpec
from referee.settings import BotLimits, RefereeSettings, SandboxLevel

__all__ = [
    "LEVELS",
    "HostSupport",
    "Launch",
    "SandboxUnavailable",
    "host_support",
    "launcher_argv",
    "memory_resource",
    "prepare_launch",
    "raise_open_file_limit",
    "require_level",
]

LEVELS: tuple[SandboxLevel, ...] = ("none", "standard", "strict")

# Runtimes that reserve far more address space than they use (the JVM's heap and
# code cache, V8's cages, Go's arenas, GHC's 1 TB heap reservation): an address
# space limit stops them at start-up, so their memory is bounded by RLIMIT_DATA.
_ADDRESS_RESERVERS = frozenset(
    {
        "java", "jvm", "kotlin", "scala", "clojure", "groovy",
        "node", "nodejs", "javascript", "js", "typescript", "ts", "deno", "bun",
        "go", "golang", "csharp", "c#", "dotnet", "fsharp", "haskell", "ghc",
    }
)  # fmt: skip

# The first shell of the chain inside the PID namespace (pid 1). fd 3 carries the
# referee's pipe to the bot's stdin past the rule that a background job reads
# /dev/null; the shell then drops its own copy so the bot alone holds it.
_INIT = 'exec 3<&0 0</dev/null; "$@" <&3 >"$0" 3<&- & exec 3<&-; wait $!'
# The last step inside bwrap, whose own init is already pid 1.
_EXEC = 'exec "$@" >"$0"'

_UIDS_PER_REFEREE = 1024


class SandboxUnavailable(ValueError):
    """The requested sandbox level cannot run on this machine; the message says what to install or change."""


class HostSupport(msgspec.Struct, frozen=True, kw_only=True):
    """What this machine offers for containment, found once per referee process."""

    root: bool
    sh: str
    prlimit: str | None
    unshare: str | None
    setpriv: str | None
    bwrap: str | None
    namespaces: str | None
    """Why ``unshare`` cannot give a bot its own network and PID namespaces (None: it can)."""


def _run_probe(argv: list[str]) -> str | None:
    """None when ``argv`` succeeds; else the last line of its complaint."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False, cwd="/")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit code {done.returncode}"


@functools.cache
def host_support() -> HostSupport:
    """Probe the tools and namespaces once (a few milliseconds), then remember."""
    root = os.geteuid() == 0
    unshare = shutil.which("unshare")
    problem: str | None = "unshare (util-linux) is not installed"
    if unshare is not None:
        probe = [unshare, *_unshare_flags(root), "--", "true"]
        problem = _run_probe(probe)
        if problem is not None:
            problem = f"unshare cannot create namespaces here ({problem})"
    return HostSupport(
        root=root,
        sh=shutil.which("sh") or "/bin/sh",
        prlimit=shutil.which("prlimit"),
        unshare=unshare,
        setpriv=shutil.which("setpriv"),
        bwrap=shutil.which("bwrap"),
        namespaces=problem,
    )


def _unshare_flags(root: bool) -> list[str]:
    # Without root the namespaces need a user namespace of their own, where the
    # referee's uid is mapped to root.
    user = [] if root else ["--user", "--map-root-user"]
    return [*user, "--net", "--pid", "--mount", "--mount-proc", "--fork", "--kill-child"]


_BWRAP_INSTALL = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"


@functools.cache
def _bwrap_modes() -> tuple[bool, bool, str]:
    """(bwrap works as an unprivileged uid, bwrap works as root, the complaint if neither)."""
    host = host_support()
    if host.bwrap is None:
        return False, False, f"the strict sandbox needs bwrap, which is not installed: {_BWRAP_INSTALL}"
    base = [host.bwrap, *_bwrap_namespace_flags(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    unprivileged = [base[0], "--unshare-user", "--disable-userns", *base[1:], "--", "true"]
    if host.root:
        if host.setpriv is None:
            first: str | None = "setpriv (util-linux) is missing"
        else:
            first = _run_probe([host.setpriv, *_drop_to(0x7FFF0000), "--", *unprivileged])
        second = _run_probe([*base, "--", "true"])
        if first is None or second is None:
            return first is None, second is None, ""
        return False, False, f"bwrap cannot create a sandbox here: {second}"
    first = _run_probe(unprivileged)
    if first is None:
        return True, False, ""
    return False, False, f"bwrap cannot create a sandbox here ({first}); are unprivileged user namespaces disabled?"


def _bwrap_namespace_flags() -> list[str]:
    # --unshare-all: user (when unprivileged), ipc, pid, net, uts, cgroup.
    return ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--hostname", "famiglia"]


def require_level(level: str) -> SandboxLevel:
    """The level by name; SandboxUnavailable when it cannot run here (strict without bwrap)."""
    if level not in LEVELS:
        raise SandboxUnavailable(f"unknown sandbox level {level!r}; choose one of {', '.join(LEVELS)}")
    if level == "strict":
        unprivileged, privileged, complaint = _bwrap_modes()
        if not (unprivileged or privileged):
            raise SandboxUnavailable(complaint)
    return level


def memory_resource(spec: BotSpec, limits: BotLimits) -> str:
    """``as`` or ``data``: which rlimit bounds this bot's memory."""
    if limits.memory_kind != "auto":
        return limits.memory_kind
    names = {spec.language.strip().lower(), Path(spec.command[0]).name.lower() if spec.command else ""}
    return "data" if names & _ADDRESS_RESERVERS else "as"


def _prlimit_flags(spec: BotSpec, limits: BotLimits, *, root: bool, with_nproc: bool) -> list[str]:
    wanted: list[tuple[str, int, int]] = []  # (flag, resource, value)
    mib = 1 << 20
    if limits.memory_mb > 0:
        kind = memory_resource(spec, limits)
        wanted.append((kind, resource.RLIMIT_AS if kind == "as" else resource.RLIMIT_DATA, limits.memory_mb * mib))
    if limits.open_files > 0:
        wanted.append(("nofile", resource.RLIMIT_NOFILE, limits.open_files))
    if limits.file_mb > 0:
        wanted.append(("fsize", resource.RLIMIT_FSIZE, limits.file_mb * mib))
    if with_nproc and limits.processes > 0:
        wanted.append(("nproc", resource.RLIMIT_NPROC, limits.processes))
    flags = []
    for name, which, value in wanted:
        if not root:
            # Without root a hard limit can only be lowered: never ask for more.
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
        flags.append(f"--{name}={value}")
    if limits.cpu_s > 0:
        # SIGXCPU at the soft limit names the cause; SIGKILL a second later if ignored.
        flags.append(f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}")
    flags.append("--core=0")  # a crashing bot must not fill its folder with a core dump
    return flags


def _drop_to(uid: int | None) -> list[str]:
    """setpriv flags: become ``uid`` (None: stay), with no capabilities now or after any exec."""
    switch = ["--reuid", str(uid), "--regid", str(uid), "--clear-groups"] if uid is not None else []
    return [*switch, "--nnp", "--inh-caps", "-all", "--bounding-set", "-all"]


def unreachable(path: str, *, want: int) -> str | None:
    """The first part of ``path`` another user cannot pass, or None.

    ``want`` is the permission needed on the path itself (``os.R_OK``,
    ``os.X_OK``, or both); every folder above it needs search permission. Both
    the path as written and the file it resolves to are checked.
    """
    absolute = os.path.abspath(path)
    for candidate in dict.fromkeys((absolute, os.path.realpath(absolute))):
        parts = Path(candidate).parts
        for depth in range(1, len(parts)):
            folder = os.path.join(*parts[:depth])
            try:
                mode = os.stat(folder).st_mode
            except OSError:
                return folder
            if not mode & stat.S_IXOTH:
                return folder
        try:
            mode = os.stat(candidate).st_mode
        except OSError:
            return candidate
        need = (stat.S_IROTH if want & os.R_OK else 0) | (stat.S_IXOTH if want & os.X_OK else 0)
        if mode & need != need:
            return candidate
    return None


def _python_paths() -> list[str]:
    """What a bot on famiglia's own interpreter reads: the standard library, the
    installed packages, famiglia's packages (``protocol.bot``) and PYTHONPATH."""
    paths = [sys.prefix, sys.base_prefix, sysconfig.get_path("stdlib"), sysconfig.get_path("purelib"),
             sysconfig.get_path("platlib"), str(Path(__file__).resolve().parents[1])]  # fmt: skip
    paths += os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return [p for p in dict.fromkeys(paths) if p and os.path.isdir(p)]


def _runs_our_python(spec: BotSpec) -> bool:
    if not spec.command:
        return False
    program = spec.command[0]
    return os.path.realpath(program) == os.path.realpath(sys.executable)


def _needed_paths(spec: BotSpec) -> list[tuple[str, int]]:
    """The files a bot cannot start without, with the access each needs."""
    needed: list[tuple[str, int]] = [(spec.cwd, os.R_OK | os.X_OK)]
    if spec.command:
        program = spec.command[0]
        if "/" not in program:
            program = shutil.which(program) or program
        elif not os.path.isabs(program):
            program = os.path.join(spec.cwd, program)
        needed.append((program, os.X_OK))
        for arg in spec.command[1:]:
            candidate = os.path.join(spec.cwd, arg)
            if not arg.startswith("-") and os.path.isfile(candidate):
                needed.append((candidate, os.R_OK))
    if _runs_our_python(spec):
        needed += [(path, os.R_OK | os.X_OK) for path in _python_paths()]
    return needed


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _binds_under_tmp(paths: Iterable[str]) -> list[str]:
    """The outermost of ``paths`` that lie under /tmp, which strict hides behind a tmpfs."""
    inside = sorted({os.path.abspath(p) for p in paths if _under(os.path.abspath(p), ["/tmp"])})
    chosen: list[str] = []
    for path in inside:
        if path != "/tmp" and not _under(path, chosen):
            chosen.append(path)
    return chosen


def launcher_argv(
    level: SandboxLevel,
    spec: BotSpec,
    limits: BotLimits,
    host: HostSupport,
    *,
    uid: int | None,
    fifo: str | None,
    privileged_bwrap: bool = False,
) -> list[str]:
    """The full argv that starts ``spec`` at ``level`` (pure: builds, runs nothing).

    ``uid``: run the bot as this uid (root referee only); ``fifo``: the path the
    bot's stdout is opened on (levels with a forking link). Tools the host lacks
    are left out; ``Launch.notes`` says what that costs.
    """
    argv = list(spec.command)
    if level == "none":
        return argv
    head: list[str] = []
    if host.setpriv is not None:
        if level == "strict" and uid is not None:
            # bwrap runs unprivileged as the bot's uid. A uid change clears the
            # death signal; setpriv sets it after the change, so it holds.
            head = [host.setpriv, *_drop_to(uid), "--pdeathsig", "KILL", "--"]
        else:
            head = [host.setpriv, "--pdeathsig", "KILL", "--"]
    # RLIMIT_NPROC counts every process of the uid, and root is exempt: it only
    # means something for a bot with a uid of its own. (A non-root referee's bots
    # share its uid, so a limit would count the referee's processes too.)
    with_nproc = host.root and uid is not None
    limit: list[str] = []
    if host.prlimit is not None:
        limit = [host.prlimit, *_prlimit_flags(spec, limits, root=host.root, with_nproc=with_nproc), "--"]
    if level == "strict":
        assert host.bwrap is not None and fifo is not None
        binds = _binds_under_tmp([spec.cwd, fifo, *(p for p, _ in _needed_paths(spec))])
        sandbox = [host.bwrap]
        if not privileged_bwrap:
            sandbox += ["--unshare-user", "--disable-userns"]
        sandbox += [
            *_bwrap_namespace_flags(),
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            *(["--size", str(limits.tmp_mb << 20)] if limits.tmp_mb > 0 else []),
            "--tmpfs", "/tmp",
        ]  # fmt: skip
        for path in binds:
            sandbox += ["--ro-bind", path, path]
        sandbox += ["--chdir", spec.cwd, "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"]
        return [*head, *limit, *sandbox, "--", host.sh, "-c", _EXEC, fifo, *argv]
    # standard
    inner: list[str] = []
    if host.setpriv is not None:
        inner = [host.setpriv, *_drop_to(uid), "--pdeathsig", "KILL", "--"]
    if host.namespaces is None and host.unshare is not None:
        assert fifo is not None
        namespaces = [host.unshare, *_unshare_flags(host.root), "--"]
        return [*head, *limit, *namespaces, *inner, host.sh, "-c", _INIT, fifo, *argv]
    # No namespaces here: the chain never forks, so the bot keeps the plain pipes.
    return [*head, *limit, *inner, *argv]


class _UidPool:
    """Distinct uids for the bots alive in this referee process.

    A uid of its own per bot makes its process count its own (a fork bomb cannot
    starve another seat of threads) and keeps it from signalling, tracing or
    reading another bot's processes. The block of 1024 uids is picked from the
    referee's pid, so worker processes of one tournament do not collide.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._used: set[int] = set()

    def acquire(self, base: int) -> int:
        block = base + (os.getpid() % 16384) * _UIDS_PER_REFEREE
        with self._lock:
            for slot in range(_UIDS_PER_REFEREE):
                if block + slot not in self._used:
                    self._used.add(block + slot)
                    return block + slot
        raise RuntimeError(f"more than {_UIDS_PER_REFEREE} bots at once in one referee process")

    def release(self, uid: int) -> None:
        with self._lock:
            self._used.discard(uid)


_uids = _UidPool()


class _FifoFolder:
    """The folder of this referee's stdout FIFOs, there only while a bot uses one.

    Searchable but not listable by others: a bot reaches only the FIFO whose
    name it was given, and only its own (each FIFO is owned by its bot's uid).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._path: str | None = None
        self._users = 0
        self._count = itertools.count()
        self._swept = False

    def make_fifo(self, uid: int | None) -> str:
        with self._lock:
            if not self._swept:
                self._swept = True
                _sweep_dead_referees()
            if self._path is None:
                self._path = tempfile.mkdtemp(prefix=f"{_FIFO_PREFIX}{os.getpid()}-")
                os.chmod(self._path, 0o711)
            self._users += 1
            path = os.path.join(self._path, f"out-{next(self._count)}-{secrets.token_hex(4)}")
        try:
            os.mkfifo(path, 0o600)
            if uid is not None:
                os.chown(path, uid, uid)
                os.chmod(path, 0o200)  # the bot writes, nobody else opens it
        except BaseException:
            self.remove(path)
            raise
        return path

    def remove(self, path: str) -> None:
        with self._lock:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            self._users -= 1
            if self._users == 0 and self._path is not None:
                try:
                    os.rmdir(self._path)
                except OSError:
                    pass
                self._path = None


_FIFO_PREFIX = "famiglia-bots-"


def _sweep_dead_referees() -> None:
    """Remove the FIFO folders that referees killed with SIGKILL left behind."""
    tmp = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(tmp) if n.startswith(_FIFO_PREFIX)]
    except OSError:
        return
    for name in names:
        pid = name[len(_FIFO_PREFIX) :].split("-", 1)[0]
        folder = os.path.join(tmp, name)
        try:
            if not pid.isdigit() or os.stat(folder).st_uid != os.geteuid():
                continue
            os.kill(int(pid), 0)  # still running: its folder is in use
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


_fifos = _FifoFolder()


class Launch:
    """A bot ready to spawn: its argv, what it is contained by, and what to clean up."""

    def __init__(
        self, level: SandboxLevel, argv: list[str], *, uid: int | None, fifo: str | None, notes: list[str]
    ) -> None:
        self.level = level
        self.argv = argv
        self.uid = uid
        self.fifo = fifo
        self.notes = notes
        # Links that fork (unshare, bwrap) report a bot killed by signal N as exit 128+N.
        self.signal_exit_codes = fifo is not None

    @property
    def description(self) -> str:
        """The level as the results show it, with what could not be applied here."""
        return self.level if not self.notes else f"{self.level} ({'; '.join(self.notes)})"

    def release(self) -> None:
        if self.fifo is not None:
            _fifos.remove(self.fifo)
            self.fifo = None
        if self.uid is not None:
            _uids.release(self.uid)
            self.uid = None


def prepare_launch(spec: BotSpec, settings: RefereeSettings) -> Launch:
    """Plan how to start ``spec`` under ``settings.sandbox``: pick a uid, make the FIFO.

    The caller must ``release()`` the launch when the bot is gone.
    SandboxUnavailable when the strict level cannot run here.
    """
    level = require_level(settings.sandbox)
    if level == "none":
        return Launch("none", list(spec.command), uid=None, fifo=None, notes=[])
    host = host_support()
    notes: list[str] = []
    if host.prlimit is None:
        notes.append("no resource limits: prlimit (util-linux) is missing")
    if level == "standard" and host.namespaces is not None:
        notes.append(f"bots can reach the network and escape with setsid: {host.namespaces}")
    # Can this bot run as a uid of its own? Only a root referee can switch, and
    # only to a uid that can still read the bot's folder and program.
    own_uid = False
    if not host.root:
        notes.append("processes not limited: the referee is not root, so bots share its uid")
    elif settings.bot_uid_base <= 0:
        notes.append("ran as root without capabilities (bot_uid_base = 0), processes not limited")
    elif host.setpriv is None:
        notes.append("ran as root, processes not limited: setpriv (util-linux) is missing")
    else:
        blocked = next((where for path, want in _needed_paths(spec) if (where := unreachable(path, want=want))), None)
        if blocked is not None:
            notes.append(
                f"ran as root without capabilities, processes not limited: {blocked} is not open to other users "
                "(chmod o+rX it so bots get their own uid)"
            )
        own_uid = blocked is None
    privileged_bwrap = False
    if level == "strict" and host.root:
        unprivileged, privileged, _ = _bwrap_modes()
        if own_uid and not unprivileged:
            own_uid = False
            notes.append("ran as root without capabilities, processes not limited: unprivileged bwrap fails here")
        privileged_bwrap = not own_uid
        if privileged_bwrap and not privileged:
            raise SandboxUnavailable(f"{spec.name}: the strict sandbox cannot run it here: {'; '.join(notes)}")
    uid = _uids.acquire(settings.bot_uid_base) if own_uid else None
    forks = level == "strict" or (host.namespaces is None and host.unshare is not None)
    fifo: str | None = None
    try:
        fifo = _fifos.make_fifo(uid) if forks else None
        argv = launcher_argv(level, spec, settings.limits, host, uid=uid, fifo=fifo, privileged_bwrap=privileged_bwrap)
    except BaseException:
        Launch(level, [], uid=uid, fifo=fifo, notes=[]).release()
        raise
    return Launch(level, argv, uid=uid, fifo=fifo, notes=notes)


def raise_open_file_limit(wanted: int = 65536) -> int:
    """Raise this process's soft open-file limit towards ``wanted`` (capped by the hard limit).

    Each bot costs the referee four descriptors (three pipes and a pidfd), and a
    tournament runs many at once; the common soft default of 1024 is too few.
    Returns the soft limit now in force.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


async def _time_spawns(level: SandboxLevel, count: int) -> float:
    """Mean ms to start ``/bin/true`` at ``level`` and see it exit, through ``open_bot``."""
    import trio

    from referee.process import open_bot

    spec = BotSpec(name="true", command=[shutil.which("true") or "/bin/true"], cwd="/")
    settings = RefereeSettings(sandbox=level, grace_ms=0)
    start = trio.current_time()
    for _ in range(count):
        async with open_bot(spec, settings) as bot:
            await bot.process.wait()
    return (trio.current_time() - start) / count * 1000


def main(argv: list[str] | None = None) -> None:
    """``python -m referee.sandbox [N]``: what works here, and what each level costs a spawn."""
    import trio

    count = int((argv if argv is not None else sys.argv[1:] or ["50"])[0])
    host = host_support()
    print(f"root: {host.root}")
    for tool in ("prlimit", "unshare", "setpriv", "bwrap"):
        print(f"{tool}: {getattr(host, tool) or 'missing'}")
    print(f"namespaces (standard): {host.namespaces or 'ok'}")
    for level in LEVELS:
        try:
            require_level(level)
        except SandboxUnavailable as exc:
            print(f"{level}: unavailable: {exc}")
            continue
        mean = trio.run(_time_spawns, level, count)
        print(f"{level}: {mean:.1f} ms per spawn of /bin/true (mean of {count})")


if __name__ == "__main__":
    main()
