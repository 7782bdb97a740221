"""The sandbox levels: the launcher chain they build, what a bot inside sees, and dying with the referee."""

from __future__ import annotations

import fcntl
import itertools
import os
import re
import resource
import secrets
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
from typer.testing import CliRunner

from protocol.messages import TimeControl
from referee.bots import BotSpec, BotSpecError, load_bot
from referee.match import MatchSpec
from referee.play import play_match, prepare_bots
from referee.process import open_bot, raise_open_file_limit
from referee.sandbox import (
    HostSupport,
    SandboxUnavailable,
    host_support,
    launcher_argv,
    leftovers,
    memory_resource,
    prepare,
    require_level,
    resources,
)
from referee.sandbox import launch as launch_module
from referee.sandbox import view as view_module
from referee.sandbox.cgroup import BotCgroup
from referee.sandbox.cgroup_host import cgroup_support
from referee.sandbox.launch import Purpose, nproc_counted_per_namespace
from referee.sandbox.leftovers import _kill_chains_of, _sweep_fifo_folders, sweep_dead_referees
from referee.sandbox.names import FIFO_NAME, FIFO_PREFIX
from referee.sandbox.resources import _locked_folder
from referee.sandbox.seccomp import UnknownArchitecture, filter_for
from referee.sandbox.view import FIFO_INSIDE, runtime_paths
from referee.settings import BotLimits, Clock, RefereeSettings
from tests.conftest import ROOT, TEST_BOTS, processes_in, wait_until_gone
from tournaments.cli import app
from tournaments.config.tournament import ConfigProblems, parse_tournament

HOST = HostSupport(
    root=True,
    sh="/bin/sh",
    prlimit="/usr/bin/prlimit",
    setpriv="/usr/bin/setpriv",
    bwrap="/usr/bin/bwrap",
    bwrap_problem=None,
)
BOT = BotSpec(name="b", command=["/usr/bin/python3", "bot.py"], cwd="/srv/bots/b")


def chain(level: str = "standard", spec: BotSpec = BOT, host: HostSupport = HOST, **limits: Any) -> list[str]:
    return launcher_argv(
        level, spec, BotLimits(**limits), host, uid=1234 if host.root else None, fifo="/f", seccomp_fd=9
    )  # type: ignore[arg-type]


def pairs(argv: list[str], flag: str) -> list[str]:
    """Every value that follows ``flag`` in ``argv`` (for flags with one value)."""
    return [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == flag]


# --- the chain, built without running anything --------------------------------


def test_none_runs_the_bot_itself() -> None:
    assert launcher_argv("none", BOT, BotLimits(), HOST, uid=None, fifo=None, seccomp_fd=9) == BOT.command


def test_standard_as_root_limits_then_sandboxes_then_drops_to_the_bots_uid() -> None:
    argv = chain()
    text = " ".join(argv)
    # The death signal first, limits while still root, then bwrap (privileged: it
    # can mount folders other users cannot enter), then the uid change, then the bot.
    assert argv[:4] == ["/usr/bin/setpriv", "--pdeathsig", "KILL", "--"]
    assert text.index("prlimit") < text.index("bwrap") < text.index("--reuid 1234") < text.index("bot.py")
    for flag in ("--cpu=600:601", "--as=2147483648", "--nofile=256", "--fsize=67108864", "--nproc=128", "--core=0"):
        assert flag in argv
    for flag in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent"):
        assert flag in argv
    assert pairs(argv, "--seccomp") == ["9"]
    assert "--unshare-user" not in argv  # root needs no user namespace
    inner = argv[argv.index("--reuid") :]
    assert inner[inner.index("--pdeathsig") + 1] == "KILL" and "--nnp" in inner and "-all" in inner
    # Last, the shell that opens the FIFO (at its path inside) as the bot's stdout.
    assert argv[-6:-3] == ["/bin/sh", "-c", 'exec "$@" 1<>"$0"'] and argv[-3:] == [FIFO_INSIDE, *BOT.command]
    assert f"--bind /f {FIFO_INSIDE}" in text


def test_standard_without_root_makes_a_user_namespace_and_limits_processes_inside_it() -> None:
    argv = chain(host=msgspec.structs.replace(HOST, root=False))
    assert "--unshare-user" in argv and "--disable-userns" in argv and "--reuid" not in argv
    # The process count is set after bwrap, in the new user namespace: set before it,
    # it would count every process of the user's uid.
    nproc = [i for i, a in enumerate(argv) if a.startswith("--nproc")]
    if not nproc_counted_per_namespace():
        assert nproc == []
        return
    (at,) = nproc
    assert argv[at - 1] == HOST.prlimit and at > argv.index("--unshare-user")


def test_the_bot_sees_the_system_its_runtime_and_its_own_folder_read_only_and_nothing_else(tmp_path: Path) -> None:
    folder = tmp_path / "bots" / "b"
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text('name = "b"\ncommand = "python3 bot.py"\n')
    argv = chain(spec=BotSpec(name="b", command=[sys.executable, "bot.py"], cwd=str(folder)))
    read_only = pairs(argv, "--ro-bind")
    assert "/" not in read_only and "/usr" in read_only and "/etc" in read_only
    assert str(folder) in read_only and str(folder) not in pairs(argv, "--bind")
    for hidden in ("/home", "/root", "/run", "/var", "/srv", "/mnt", str(tmp_path)):
        assert hidden not in read_only, hidden
    # famiglia's own Python: its prefix and famiglia's protocol and referee packages, not the whole checkout.
    assert sys.prefix in read_only and str(ROOT / "referee") in read_only and str(ROOT) not in read_only
    assert str(ROOT / "tournaments") not in read_only
    # A private /tmp first, then what lives under it mounted over it; folders above mounts created open.
    text = " ".join(argv)
    assert text.index("--tmpfs /tmp") < text.index(f"--ro-bind {folder}")
    assert f"--perms 0755 --dir {tmp_path}" in text


def test_a_command_line_bot_sees_only_the_files_it_names_not_its_working_folder(tmp_path: Path) -> None:
    (tmp_path / "my_bot.py").write_text("")
    (tmp_path / "results.sqlite").write_text("secret")
    argv = chain(spec=BotSpec(name="m", command=[sys.executable, "my_bot.py", "--fast"], cwd=str(tmp_path)))
    read_only = pairs(argv, "--ro-bind")
    assert str(tmp_path / "my_bot.py") in read_only and str(tmp_path) not in read_only
    assert not any("results" in path for path in read_only)


def test_the_jvm_and_node_get_a_data_limit_other_bots_an_address_space_limit() -> None:
    limits = BotLimits(memory_mb=512)
    java = msgspec.structs.replace(BOT, command=["java", "-jar", "bot.jar"])
    node = msgspec.structs.replace(BOT, command=["/usr/bin/node", "bot.js"])
    kotlin = msgspec.structs.replace(BOT, command=["./run"], language="Kotlin")
    assert [memory_resource(b, limits) for b in (BOT, java, node, kotlin)] == ["as", "data", "data", "data"]
    assert memory_resource(java, BotLimits(memory_kind="as")) == "as"
    argv = chain(spec=java, memory_mb=512)
    assert f"--data={512 << 20}" in argv and not any(a.startswith("--as=") for a in argv)


def test_a_zero_limit_is_no_limit() -> None:
    argv = chain(memory_mb=0, cpu_s=0, open_files=0, file_mb=0, processes=0, tmp_mb=0)
    assert [a for a in argv if a.startswith("--") and "=" in a] == ["--core=0"]
    assert "--size" not in argv


def test_both_levels_give_a_cgroup_namespace_and_strict_a_stricter_system_call_filter() -> None:
    assert "--unshare-cgroup-try" in chain("strict") and "--unshare-cgroup-try" in chain("standard")
    assert len(filter_for("strict")) > len(filter_for("standard"))


def test_unknown_levels_and_a_level_that_cannot_apply_are_refused_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxUnavailable, match="choose one of none, standard, strict"):
        require_level("paranoid")
    monkeypatch.setattr(launch_module, "host_support", lambda: msgspec.structs.replace(HOST, bwrap=None))
    for level in ("standard", "strict"):
        with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap.*--sandbox none"):
            require_level(level)
    assert require_level("none") == "none"
    broken = msgspec.structs.replace(HOST, root=False, bwrap_problem="setting up uid map: Permission denied")
    monkeypatch.setattr(launch_module, "host_support", lambda: broken)
    with pytest.raises(SandboxUnavailable, match="uid map: Permission denied.*unprivileged user namespaces"):
        require_level("standard")
    monkeypatch.setattr(launch_module, "host_support", lambda: msgspec.structs.replace(HOST, prlimit=None))
    with pytest.raises(SandboxUnavailable, match="prlimit"):
        require_level("standard")


def test_a_root_referee_refuses_to_run_bots_as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch_module, "host_support", lambda: HOST)
    with pytest.raises(SandboxUnavailable, match="bot_uid_base = 0 would run bots as root"):
        prepare(BOT, RefereeSettings(bot_uid_base=0))


def test_a_uid_base_too_high_for_a_block_of_bot_uids_is_refused_with_the_highest_that_fits(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(launch_module, "host_support", lambda: HOST)
    # Locks of the test's own: another referee on the machine may hold the top block right now.
    monkeypatch.setattr(resources, "_UID_BLOCKS", str(tmp_path / "uid-blocks"))
    highest = 2**31 - 1 - resources.UIDS_PER_REFEREE  # its last uid is 2**31 - 2
    with pytest.raises(SandboxUnavailable, match=f"no room for a block of 8192 bot uids.*at most {highest}"):
        prepare(BOT, RefereeSettings(bot_uid_base=highest + 1))
    launch = prepare(BOT, RefereeSettings(bot_uid_base=highest))  # the highest that fits is taken
    launch.release()


def test_the_system_call_filter_refuses_unix_sockets_and_io_uring_on_both_known_machines() -> None:
    for machine in ("x86_64", "aarch64"):
        for level in ("standard", "strict"):
            program = filter_for(level, machine)  # type: ignore[arg-type]
            assert len(program) % 8 == 0 and program[-8:] == struct.pack("=HBBI", 0x06, 0, 0, 0x7FFF0000)
    with pytest.raises(UnknownArchitecture):
        filter_for("standard", "sparc64")


def test_the_referees_open_file_limit_is_raised() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    now = raise_open_file_limit()
    assert now == resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= min(soft, hard)
    assert now >= min(65536, hard) or hard == resource.RLIM_INFINITY


# --- settings from a tournament file and the command line ---------------------


def test_a_tournament_chooses_its_sandbox_and_limits(tmp_path: Path) -> None:
    base: dict[str, Any] = {"tournament": {"game": "vendetta", "table_size": 3},
            "entrant": [{"name": f"p{i}", "bot": str(TEST_BOTS / "passer")} for i in range(3)]}  # fmt: skip
    assert parse_tournament(base, base=tmp_path).sandbox.level == "standard"
    base["tournament"] |= {"sandbox": "none", "limits": {"memory_mb": 512, "memory_kind": "data", "processes": 0}}
    config = parse_tournament(base, base=tmp_path)
    assert config.sandbox.level == "none" and config.sandbox.limits == BotLimits(
        memory_mb=512, memory_kind="data", processes=0
    )
    base["tournament"] |= {"sandbox": "jail", "limits": {"memory_mb": -1, "memory_kind": "rss", "cores": 2}}
    with pytest.raises(ConfigProblems) as caught:
        parse_tournament(base, base=tmp_path)
    text = str(caught.value)
    for fragment in ("tournament.sandbox: unknown sandbox level 'jail'", "tournament.limits.memory_mb",
                     "tournament.limits.memory_kind", "tournament.limits.cores: unknown key"):  # fmt: skip
        assert fragment in text


def test_famiglia_play_takes_a_sandbox_and_shows_it() -> None:
    passer = str(TEST_BOTS / "passer")
    bad = CliRunner().invoke(app, ["play", "vendetta", passer, passer, passer, "--sandbox", "jail"])
    assert bad.exit_code == 2 and "unknown sandbox level 'jail'" in bad.output
    good = CliRunner().invoke(app, ["play", "vendetta", passer, passer, passer, "--sandbox", "none", "--seed", "3"])
    assert good.exit_code == 0, good.output
    assert "sandbox: none" in good.output


# --- what a bot inside sees ----------------------------------------------------

# A shell bot that reports its surroundings on stderr, then waits for end of input.
FACTS = """
echo "uid=$(id -u)" >&2
echo "pids=$(ls /proc | grep -c '^[0-9]')" >&2
echo "net=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' ')" >&2
echo "host=$(cat /proc/sys/kernel/hostname)" >&2
echo "caps=$(grep CapEff /proc/self/status | cut -f2)" >&2
echo "nofile=$(ulimit -n)" >&2
echo "tmp=$(mktemp /tmp/famiglia-facts-XXXXXX 2>/dev/null)" >&2
echo "done=1" >&2
cat > /dev/null
"""


def facts(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


@pytest.mark.slow
@pytest.mark.parametrize("level", ["standard", "strict"])
async def test_inside_the_sandbox_a_bot_has_its_own_uid_no_network_no_view_of_other_processes(level: str) -> None:
    spec = BotSpec(name="facts", command=["sh", "-c", FACTS], cwd=str(TEST_BOTS))
    settings = RefereeSettings(sandbox=require_level(level), grace_ms=200)
    async with open_bot(spec, settings) as first, open_bot(spec, settings) as second:
        with trio.fail_after(120):  # a guard against a hang only: the bots print at once
            while "done=" not in first.stderr_text() or "done=" not in second.stderr_text():
                await trio.sleep(0.02)
    seen = [facts(bot.stderr_text()) for bot in (first, second)]
    uids = {int(f["uid"]) for f in seen}
    if host_support().root:
        assert len(uids) == 2 and min(uids) >= settings.bot_uid_base  # a uid each, not root
    else:  # the referee's own uid, inside a user namespace
        assert uids == {os.getuid()}
    for found in seen:
        assert int(found["pids"]) <= 6  # its own PID namespace: the bot, a shell or two, ls
        assert found["net"].split() in ([], ["lo"])
        assert int(found["caps"], 16) == 0
        assert found["nofile"] == str(settings.limits.open_files)
        assert found["host"] == "famiglia"
    written = [Path(f["tmp"]) for f in seen]
    assert all(path.name.startswith("famiglia-facts-") for path in written)
    # /tmp is private at both levels: what the bot wrote there is not on the host.
    assert not any(path.exists() for path in written)


@pytest.mark.slow
@pytest.mark.parametrize("level", ["standard", "strict"])
async def test_a_bot_that_cannot_start_inside_the_sandbox_is_a_crash_with_its_reason(level: str) -> None:
    spec = BotSpec(name="ghost", command=["/no/such/program"], cwd=str(TEST_BOTS))
    settings = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=20_000)), sandbox=require_level(level))
    passer = load_bot(str(TEST_BOTS / "passer"))
    record = await play_match(MatchSpec(game="vendetta", seed=2), [passer, spec, passer], settings)
    (termination,) = record.result.terminations
    # A crash with the chain's reason, not a wait for the startup limit (a timeout).
    assert termination.kind == "crash" and "/no/such/program" in termination.reason
    assert "exited with code 127" in termination.reason


def test_a_bot_folder_closed_to_other_users_is_refused_before_the_game_with_the_fix(tmp_path: Path) -> None:
    if not host_support().root:
        pytest.skip("only a root referee gives bots a uid of their own")
    folder = tmp_path / "closed"
    shutil.copytree(TEST_BOTS / "passer", folder)
    os.chmod(folder, 0o700)
    with pytest.raises(BotSpecError, match=f"{folder} is not readable by other users.*chmod -R o\\+rX"):
        prepare_bots([load_bot(str(folder))])
    assert prepare_bots([load_bot(str(folder))], RefereeSettings(sandbox="none"))


@pytest.mark.slow
async def test_a_runtime_inside_a_folder_other_users_cannot_enter_runs_as_the_bots_own_uid(tmp_path: Path) -> None:
    # As with an interpreter under /root/.pyenv and /root at mode 700: the sandbox
    # mounts the runtime without opening the folder above it.
    home = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        os.chmod(home, 0o700)
        runtime = home / "rt" / "bin"
        runtime.mkdir(parents=True)
        shutil.copy2(shutil.which("sh") or "/bin/sh", runtime / "mysh")
        os.chmod(home / "rt", 0o755)
        os.chmod(runtime, 0o755)
        spec = BotSpec(name="facts", command=[str(runtime / "mysh"), "-c", FACTS], cwd=str(TEST_BOTS))
        async with open_bot(spec, RefereeSettings(grace_ms=200)) as bot:
            with trio.fail_after(60):
                while "done=" not in bot.stderr_text():
                    await trio.sleep(0.02)
        found = facts(bot.stderr_text())
        assert bot.sandbox == "standard"
        if host_support().root:
            assert int(found["uid"]) >= RefereeSettings().bot_uid_base
        assert int(found["caps"], 16) == 0
    finally:
        shutil.rmtree(home)


# --- the pitfall: a game longer than Trio's idle worker threads live ------------


@pytest.mark.slow
async def test_a_bot_at_each_level_outlives_the_idle_timeout_of_trios_worker_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Trio's worker threads exit after 10 idle seconds; a bot spawned from one with
    # a parent-death signal would be killed then. Here they exit after 0.5 s
    # (Trio's own setting, private), and the dawdler waits 3 s before its ready
    # line, then plays the game out.
    monkeypatch.setattr(trio._core._thread_cache, "IDLE_TIMEOUT", 0.5)
    dawdler = load_bot(str(TEST_BOTS / "hostile" / "dawdler"))
    dawdler = msgspec.structs.replace(dawdler, command=[*dawdler.command, "3"])
    passer = load_bot(str(TEST_BOTS / "passer"))
    records = {}

    async def play(level: str) -> None:
        settings = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=30_000)), sandbox=require_level(level))
        records[level] = await play_match(MatchSpec(game="vendetta", seed=5), [passer, dawdler, passer], settings)

    async with trio.open_nursery() as nursery:
        for level in ("none", "standard", "strict"):
            nursery.start_soon(play, level)
    for level, record in records.items():
        assert record.result.terminations == [], (level, record.result.terminations)
        # The dawdler's 3 s run from its own start, a little before the match's clock
        # starts: the game lasted far longer than the threads' 0.5 s, if not quite 3 s.
        assert record.seconds >= 2 and record.timings[1].decisions > 0
        assert record.sandbox.startswith(level) or f": {level}" in record.sandbox


# --- bots die with their referee ----------------------------------------------

REFEREE = """
import sys
import trio
from protocol.messages import TimeControl
from referee.bots import load_bot
from referee.match import MatchSpec
from referee.play import play_match, prepare_bots
from referee.settings import Clock, RefereeSettings

async def main() -> None:
    passer = load_bot(sys.argv[1])
    async with trio.open_nursery() as nursery:
        for level, folder in zip(sys.argv[2::2], sys.argv[3::2]):
            settings = RefereeSettings(sandbox=level, clock=Clock(time=TimeControl(startup_ms=60_000, move_ms=60_000, bank_ms=0)))
            bots = [passer, load_bot(folder), passer]
            nursery.start_soon(play_match, MatchSpec(game="vendetta", seed=1), bots, settings)

trio.run(main)
"""


@pytest.mark.slow
def test_bots_that_ignore_eof_and_sigterm_die_with_a_referee_killed_by_sigkill(tmp_path: Path) -> None:
    # One referee process plays a match per level, each with a copy of the immortal
    # bot (ignores SIGTERM and end of input, leaves a setsid grandchild, hangs).
    # The none level is the control: there nothing ties the bot to the referee.
    levels = ["none", "standard", "strict"]
    require_level("strict")
    folders = {}
    for level in levels:
        folders[level] = tmp_path / level
        shutil.copytree(TEST_BOTS / "hostile" / "immortal", folders[level])
    passer = tmp_path / "passer"  # a copy of our own: other test runs may use the original
    shutil.copytree(TEST_BOTS / "passer", passer)
    argv = [sys.executable, "-c", REFEREE, str(passer)]
    for level in levels:
        argv += [level, str(folders[level])]
    cgroups_here = cgroup_support()  # before the referee starts: on v1 it is born in this process's cpu group
    folders_before = fifo_folders()
    referee = subprocess.Popen(argv, cwd=ROOT, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        # Each immortal bot and its grandchild, plus bwrap's monitor where there is a sandbox (its
        # namespace's init, the seat's sysinfo supervisor, works in / rather than the bot's folder).
        expected = {"none": 2, "standard": 3, "strict": 3}
        while not all(len(processes_in(folders[level])) >= expected[level] for level in levels):
            assert time.monotonic() < deadline, {level: processes_in(folders[level]) for level in levels}
            assert referee.poll() is None, "the referee exited early"
            time.sleep(0.05)
        time.sleep(0.5)  # let every match reach the immortal bot's hang
        bot_cpu_groups: list[Path] = []
        if cgroups_here.version == "v1" and cgroups_here.cpu_bound:
            # The referee, started by this process, lives in this process's own cpu group, and its
            # bots' cpu groups are made inside that group (referee.sandbox.cgroup_host).
            home = Path(cgroups_here.parents["cpu_bound"])
            bot_cpu_groups = list(home.glob(f"famiglia-{referee.pid}-*"))
            assert bot_cpu_groups, sorted(p.name for p in home.iterdir())
            for pid in processes_in(folders["standard"]):
                cpu_line = next(
                    line for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines() if ":cpu:" in line
                )
                assert f"/{home.name}/famiglia-{referee.pid}-" in cpu_line
        os.kill(referee.pid, signal.SIGKILL)
        referee.wait()
        # The dead referee's FIFO folder is left behind, no longer locked; any referee that starts
        # later sweeps it. Looked at at once: on a busy machine another test's referee may start,
        # and sweep, meanwhile.
        leftovers = [path for path in fifo_folders() - folders_before if not locked(path)]
        assert leftovers
        for level in ("standard", "strict"):
            assert wait_until_gone(folders[level], 30.0) == [], f"{level}: bots outlived their referee"
        # The control: at level none the bot and its grandchild are still there.
        assert len(processes_in(folders["none"])) >= 2
        assert wait_until_gone(passer, 30.0) == []  # well-behaved bots leave at end of input
        sweep_dead_referees(cgroups_here)  # as the next referee does at its first bot
        assert not any(path.exists() for path in leftovers)
        assert not any(path.exists() for path in bot_cpu_groups)
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()
        for folder in folders.values():
            for pid in processes_in(folder):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def fifo_folders() -> set[Path]:
    """The referees' FIFO folders on this host (``referee.sandbox.resources``), as this famiglia names them."""
    return {path for path in Path(tempfile.gettempdir()).glob(f"{FIFO_PREFIX}*") if FIFO_NAME.fullmatch(path.name)}


def locked(folder: Path) -> bool:
    """Whether a live referee holds ``folder``'s lock."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_a_bot_toml_naming_a_program_outside_its_folder_path_and_system_is_refused(tmp_path: Path) -> None:
    # Mounting that program's folder would show the bot whatever else is there.
    outside = tmp_path / "hosts-private" / "bin"
    outside.mkdir(parents=True)
    tool = outside / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text(f'name = "sly"\ncommand = "{tool} bot.py"\n')
    with pytest.raises(BotSpecError, match=f"its program {tool} lies outside its own folder"):
        prepare_bots([load_bot(str(folder))])


def test_a_program_on_path_in_a_home_bin_folder_shows_only_that_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / ".nvm" / "v20" / "bin").mkdir(parents=True)
    for program in (home / "bin" / "mytool", home / ".nvm" / "v20" / "bin" / "mynode"):
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{home / 'bin'}:{home / '.nvm' / 'v20' / 'bin'}:/usr/bin:/bin")
    monkeypatch.setattr(view_module, "_homes", lambda: {str(home), "/"})
    assert runtime_paths(BotSpec(name="t", command=["mytool"], cwd="/srv")) == [str(home / "bin")]
    assert runtime_paths(BotSpec(name="n", command=["mynode"], cwd="/srv")) == [str(home / ".nvm" / "v20")]


def test_a_build_runs_sandboxed_and_leaves_no_setuid_program(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    os.chmod(folder, 0o755)
    outside = tmp_path / "outside.txt"
    # The build tries to write outside its folder, and leaves a setuid copy of a program.
    build = f"sh -c 'echo x > {outside}; cp /bin/true ./bot && chmod u+s,g+s ./bot && touch done'"
    (folder / "bot.toml").write_text(f'name = "b"\ncommand = "./bot"\nbuild = "{build}"\n')
    (spec,) = prepare_bots([load_bot(str(folder))])
    assert spec.build is None and spec.command[0].endswith("bot")
    built = Path(spec.cwd)
    # It built a copy: the bot's own folder is as it was.
    assert built != folder and not (folder / "done").exists() and not (folder / "bot").exists()
    assert (built / "done").exists() and not outside.exists()
    mode = (built / "bot").stat().st_mode
    assert mode & (stat.S_ISUID | stat.S_ISGID) == 0 and mode & stat.S_IXUSR


def test_a_tournament_run_says_which_level_its_bots_run_at(tmp_path: Path) -> None:
    passer = TEST_BOTS / "passer"
    (tmp_path / "t.toml").write_text(
        '[tournament]\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\n'
        + "".join(f'[[entrant]]\nname = "p{i}"\nbot = "{passer}"\n' for i in range(3))
    )
    done = CliRunner().invoke(app, ["tournament", "run", str(tmp_path / "t.toml"), "--workers", "1"])
    assert done.exit_code == 0, done.output
    assert "sandbox: standard (bots run as" in done.output


def test_the_chain_stops_when_its_parent_is_no_longer_the_referee() -> None:
    # A parent-death signal set after the parent died never comes, so the link
    # after setpriv checks its parent: a chain spawned as the referee was
    # killed must not go on to start a bot nobody will stop.
    argv = chain()
    check = argv[4:8]
    assert check[:2] == ["/bin/sh", "-c"] and check[3] == str(os.getpid())
    orphan = subprocess.run(["sh", "-c", check[2], "1", "echo", "went on"], capture_output=True, text=True, check=False)
    assert orphan.returncode == 125 and orphan.stdout == ""
    ours = subprocess.run(
        ["sh", "-c", check[2], str(os.getpid()), "echo", "went on"], capture_output=True, text=True, check=False
    )
    assert ours.stdout == "went on\n"


def test_what_dead_referees_left_is_swept_at_the_first_launch_of_a_process_and_not_when_a_group_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    swept: list[object] = []
    monkeypatch.setattr(leftovers, "sweep_dead_referees", swept.append)
    monkeypatch.setattr(leftovers, "_start_guardian", lambda support: None)
    monkeypatch.setattr(leftovers, "_swept_in", None)  # as in a process that has launched nothing yet
    purposes: tuple[Purpose, ...] = ("bot", "build", "bot")
    for purpose in purposes:
        prepare(BOT, RefereeSettings(), purpose=purpose).release()
    assert swept == [cgroup_support()]
    if cgroup_support().version != "none":
        BotCgroup.create("no-sweep", memory_bytes=0, max_processes=0, cores=0).remove()
    assert len(swept) == 1


def test_a_fifo_folder_is_swept_once_no_process_holds_its_lock_whatever_its_name() -> None:
    # Issue 42: the folder's path shows in the bot's /proc/self/mountinfo, so it names no pid; the
    # lock the referee holds on it (dropped by the kernel when the referee dies) says it is in use.
    folder, hold = _locked_folder()
    try:
        name = Path(folder).name
        assert re.fullmatch(FIFO_PREFIX + "r[0-9a-f]{16}", name) and str(os.getpid()) not in name
        _sweep_fifo_folders()
        assert Path(folder).is_dir()  # held: a live referee's
    finally:
        os.close(hold)
    _sweep_fifo_folders()
    assert not Path(folder).exists()  # the holder gone: swept


def test_an_earlier_famiglias_fifo_folder_is_swept_by_its_pid_and_never_while_that_referee_lives() -> None:
    # A referee of an earlier version on the same host names its folder after its pid and holds
    # no lock on it: taken for unlocked, its live folder (and its bots' chains) would be removed.
    tmp = Path(tempfile.gettempdir())
    live = tmp / f"{FIFO_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    ended = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    dead = tmp / f"{FIFO_PREFIX}{int(ended.stdout)}-{secrets.token_hex(4)}"  # that shell has exited
    live.mkdir()
    dead.mkdir()
    try:
        _sweep_fifo_folders()
        assert live.is_dir() and not dead.exists()
    finally:
        shutil.rmtree(live, ignore_errors=True)
        shutil.rmtree(dead, ignore_errors=True)


def test_the_next_referee_kills_what_is_left_of_a_dead_referees_sandboxes(tmp_path: Path) -> None:
    folder = str(tmp_path / "famiglia-bots-r0123456789abcdef")
    leftover = subprocess.Popen(["sh", "-c", "sleep 30", f"{folder}/fedcba9876543210"])
    try:
        # A dead referee's leftover has long shown its command line; wait until this one does too.
        cmdline = Path(f"/proc/{leftover.pid}/cmdline")
        deadline = time.monotonic() + 5
        while folder.encode() not in cmdline.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)
        _kill_chains_of(folder)
        assert leftover.wait(timeout=60) == -signal.SIGKILL
    finally:
        leftover.kill()


CLAIM_A_UID = """
import os, sys
from referee.sandbox import resources
resources._UID_BLOCKS = sys.argv[1]
if sys.argv[2] == "same start":
    os.getpid = lambda: 4242  # every referee starts its search at the same block
print(resources.uids.acquire(0x70000000), flush=True)
if sys.argv[2] == "fork":
    child = os.fork()
    if child == 0:
        print(resources.uids.acquire(0x70000000), flush=True)
        os._exit(0)
    os.waitpid(child, 0)
sys.stdin.read()  # holds its block until the test closes its stdin
"""


def referee_holding_a_uid(folder: Path, how: str) -> tuple[subprocess.Popen[str], list[int]]:
    process = subprocess.Popen(
        [sys.executable, "-c", CLAIM_A_UID, str(folder), how], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True, cwd=ROOT,
    )  # fmt: skip
    assert process.stdout is not None
    uids = [int(process.stdout.readline()) for _ in range(2 if how == "fork" else 1)]
    return process, uids


def test_referees_on_one_host_get_disjoint_uid_blocks_even_when_their_pids_point_at_the_same_block(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "blocks"
    folder.mkdir(mode=0o700)
    held = [referee_holding_a_uid(folder, "same start") for _ in range(3)]
    try:
        firsts = [uids[0] for _, uids in held]
        assert len(set(firsts)) == 3, firsts
        spans = sorted(firsts)
        assert all(b - a >= resources.UIDS_PER_REFEREE for a, b in itertools.pairwise(spans))
        # A referee that dies (here: killed, no cleanup of its own) frees its block for the next one.
        killed, [freed] = held.pop(0)
        killed.kill()
        killed.wait()
        held.append(referee_holding_a_uid(folder, "same start"))
        assert held[-1][1] == [freed]
    finally:
        for process, _ in held:
            process.communicate("")


def test_a_forked_referee_claims_a_uid_block_of_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "blocks"
    folder.mkdir(mode=0o700)
    process, [parent, child] = referee_holding_a_uid(folder, "fork")
    process.communicate("")
    assert abs(parent - child) >= resources.UIDS_PER_REFEREE


def test_a_uid_block_whose_lock_file_is_a_link_or_a_folder_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "blocks"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(resources, "_UID_BLOCKS", str(folder))
    monkeypatch.setattr(os, "getpid", lambda: 7)  # the search starts at block 7
    size = resources.UIDS_PER_REFEREE
    (folder / str(0x70000000 + 7 * size)).symlink_to(tmp_path / "elsewhere")
    (folder / str(0x70000000 + 8 * size)).mkdir()
    assert resources._claim_block(0x70000000) == 0x70000000 + 9 * size
    assert not (tmp_path / "elsewhere").exists()


def test_uid_blocks_are_not_claimed_through_a_folder_others_can_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "blocks"
    folder.mkdir()
    folder.chmod(0o777)
    monkeypatch.setattr(resources, "_UID_BLOCKS", str(folder))
    assert resources._uid_blocks_folder() is None
    first = resources._claim_block(0x70000000)
    assert list(folder.iterdir()) == [] and (first - 0x70000000) % resources.UIDS_PER_REFEREE == 0


def test_play_says_what_its_bots_get_and_what_this_host_cannot_give() -> None:
    passer = str(TEST_BOTS / "passer")
    done = CliRunner().invoke(app, ["play", "vendetta", passer, passer, passer, "--seed", "3"])
    assert done.exit_code == 0, done.output
    (line,) = [line for line in done.output.splitlines() if line.startswith("sandbox:")]
    missing = cgroup_support().missing()
    assert line.startswith("sandbox: standard (bots run as")
    assert (f"not given on this host: {missing}" if missing else "whole tree bounded in memory") in line
