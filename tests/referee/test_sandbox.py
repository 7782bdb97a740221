"""The sandbox levels: the launcher chain they build, what a bot inside sees, and dying with the referee."""

from __future__ import annotations

import os
import resource
import shutil
import signal
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
from referee import sandbox
from referee.bots import BotSpec, load_bot
from referee.match import MatchSpec
from referee.play import play_match
from referee.process import open_bot
from referee.sandbox import HostSupport, SandboxUnavailable, launcher_argv, memory_resource, require_level, unreachable
from referee.settings import BotLimits, RefereeSettings
from tests.conftest import ROOT, TEST_BOTS, processes_in, wait_until_gone
from tournaments.cli import app
from tournaments.config import ConfigProblems, parse_tournament

HOST = HostSupport(
    root=True,
    sh="/bin/sh",
    prlimit="/usr/bin/prlimit",
    unshare="/usr/bin/unshare",
    setpriv="/usr/bin/setpriv",
    bwrap="/usr/bin/bwrap",
    namespaces=None,
)
BOT = BotSpec(name="b", command=["/usr/bin/python3", "bot.py"], cwd="/srv/bots/b")


# --- the chain, built without running anything --------------------------------


def test_none_runs_the_bot_itself() -> None:
    assert launcher_argv("none", BOT, BotLimits(), HOST, uid=None, fifo=None) == BOT.command


def test_standard_as_root_limits_unshares_and_drops_to_the_bots_uid() -> None:
    argv = launcher_argv("standard", BOT, BotLimits(), HOST, uid=1234, fifo="/f")
    text = " ".join(argv)
    # The order matters: the death signal first, limits while still root, then the
    # namespaces (which need root), then the uid change, then the bot.
    assert argv[:4] == ["/usr/bin/setpriv", "--pdeathsig", "KILL", "--"]
    assert text.index("prlimit") < text.index("unshare") < text.index("--reuid 1234") < text.index("bot.py")
    for flag in ("--cpu=600:601", "--as=2147483648", "--nofile=256", "--fsize=67108864", "--nproc=128", "--core=0"):
        assert flag in argv
    for flag in ("--net", "--pid", "--mount-proc", "--fork", "--kill-child"):
        assert flag in argv
    assert "--user" not in argv  # root needs no user namespace
    # The uid change clears a death signal, so the inner setpriv sets it again after.
    inner = argv[argv.index("--reuid") :]
    assert inner[inner.index("--pdeathsig") + 1] == "KILL" and "--nnp" in inner
    # Last, the shell that starts the bot with its stdout on the FIFO: sh -c INIT FIFO BOT...
    assert argv[-6:-4] == ["/bin/sh", "-c"] and argv[-3:] == ["/f", "/usr/bin/python3", "bot.py"]


def test_standard_without_root_maps_a_user_namespace_and_sets_no_process_limit() -> None:
    host = msgspec.structs.replace(HOST, root=False)
    argv = launcher_argv("standard", BOT, BotLimits(), host, uid=None, fifo="/f")
    assert "--user" in argv and "--map-root-user" in argv
    assert not any(a.startswith("--nproc") for a in argv) and "--reuid" not in argv


def test_standard_without_unshare_keeps_the_limits_and_the_plain_pipes() -> None:
    host = msgspec.structs.replace(HOST, namespaces="no namespaces here")
    argv = launcher_argv("standard", BOT, BotLimits(), host, uid=1234, fifo=None)
    assert "/usr/bin/unshare" not in argv and "/usr/bin/prlimit" in argv
    assert argv[-2:] == BOT.command


def test_the_jvm_and_node_get_a_data_limit_other_bots_an_address_space_limit() -> None:
    limits = BotLimits(memory_mb=512)
    java = msgspec.structs.replace(BOT, command=["java", "-jar", "bot.jar"])
    node = msgspec.structs.replace(BOT, command=["/usr/bin/node", "bot.js"])
    kotlin = msgspec.structs.replace(BOT, command=["./run"], language="Kotlin")
    assert [memory_resource(b, limits) for b in (BOT, java, node, kotlin)] == ["as", "data", "data", "data"]
    assert memory_resource(java, BotLimits(memory_kind="as")) == "as"
    argv = launcher_argv("standard", java, limits, HOST, uid=1, fifo="/f")
    assert f"--data={512 << 20}" in argv and not any(a.startswith("--as=") for a in argv)


def test_a_zero_limit_is_no_limit() -> None:
    argv = launcher_argv("standard", BOT, BotLimits(memory_mb=0, cpu_s=0, open_files=0, file_mb=0, processes=0),
                         HOST, uid=1, fifo="/f")  # fmt: skip
    assert [a for a in argv if a.startswith("--") and "=" in a] == ["--core=0"]


def test_strict_is_bwrap_with_every_namespace_no_capabilities_a_read_only_root_and_a_private_tmp() -> None:
    bot = msgspec.structs.replace(BOT, cwd="/tmp/venv-like/bots/b")
    argv = launcher_argv("strict", bot, BotLimits(), HOST, uid=1234, fifo="/tmp/famiglia-bots-x/out-1")
    text = " ".join(argv)
    assert "--unshare-all" in argv and "--die-with-parent" in argv
    assert "--cap-drop ALL" in text and "--ro-bind / /" in text and "--tmpfs /tmp" in text
    # What lives under /tmp must be bound back in after the tmpfs hides it, read-only.
    assert f"--ro-bind {bot.cwd} {bot.cwd}" in text and "--ro-bind /tmp/famiglia-bots-x/out-1" in text
    assert text.index("--tmpfs /tmp") < text.index(f"--ro-bind {bot.cwd}")
    # bwrap runs unprivileged as the bot's uid, with the death signal set after the change.
    assert argv[0] == "/usr/bin/setpriv" and argv[argv.index("--pdeathsig") - 1] == "-all"
    privileged = launcher_argv("strict", bot, BotLimits(), HOST, uid=None, fifo="/f", privileged_bwrap=True)
    assert "--unshare-user" not in privileged and "--cap-drop" in privileged


def test_unreachable_names_the_first_folder_other_users_cannot_pass() -> None:
    # Not pytest's tmp_path: its parent folder is closed to other users.
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        outer = base / "outer"
        (outer / "bot").mkdir(parents=True)
        script = outer / "bot" / "bot.py"
        script.write_text("")
        os.chmod(outer, 0o700)
        assert unreachable(str(script), want=os.R_OK) == str(outer)
        os.chmod(outer, 0o755)
        os.chmod(script, 0o600)
        assert unreachable(str(script), want=os.R_OK) == str(script)
        os.chmod(script, 0o644)
        assert unreachable(str(script), want=os.R_OK) is None
        assert unreachable(str(script), want=os.X_OK) == str(script)
    finally:
        shutil.rmtree(base)


def test_unknown_levels_and_a_missing_bwrap_are_clear_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxUnavailable, match="choose one of none, standard, strict"):
        require_level("paranoid")
    monkeypatch.setattr(sandbox, "host_support", lambda: msgspec.structs.replace(HOST, bwrap=None))
    sandbox._bwrap_modes.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
            require_level("strict")
        assert require_level("standard") == "standard"
    finally:
        sandbox._bwrap_modes.cache_clear()


def test_the_referees_open_file_limit_is_raised() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    now = sandbox.raise_open_file_limit()
    assert now == resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= min(soft, hard)
    assert now >= min(65536, hard) or hard == resource.RLIM_INFINITY


# --- settings from a tournament file and the command line ---------------------


def test_a_tournament_chooses_its_sandbox_and_limits(tmp_path: Path) -> None:
    base: dict[str, Any] = {"tournament": {"game": "vendetta", "table_size": 3},
            "entrant": [{"name": f"p{i}", "bot": str(TEST_BOTS / "passer")} for i in range(3)]}  # fmt: skip
    assert parse_tournament(base, base=tmp_path).sandbox == "standard"
    base["tournament"] |= {"sandbox": "none", "limits": {"memory_mb": 512, "memory_kind": "data", "processes": 0}}
    config = parse_tournament(base, base=tmp_path)
    assert config.sandbox == "none" and config.limits == BotLimits(memory_mb=512, memory_kind="data", processes=0)
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
        with trio.fail_after(5):
            while "done=" not in first.stderr_text() or "done=" not in second.stderr_text():
                await trio.sleep(0.02)
    seen = [facts(bot.stderr_text()) for bot in (first, second)]
    uids = {int(f["uid"]) for f in seen}
    if sandbox.host_support().root:
        assert len(uids) == 2 and min(uids) >= settings.bot_uid_base  # a uid each, not root
    else:  # the referee's own uid, seen as root in a user namespace at the standard level
        assert uids == ({0} if level == "standard" else {os.getuid()})
    for found in seen:
        assert int(found["pids"]) <= 6  # its own PID namespace: the bot, a shell or two, ls
        assert found["net"].split() in ([], ["lo"])
        assert int(found["caps"], 16) == 0
        assert found["nofile"] == str(settings.limits.open_files)
    written = [Path(f["tmp"]) for f in seen]
    assert all(path.name.startswith("famiglia-facts-") for path in written)
    if level == "strict":
        assert all(f["host"] == "famiglia" for f in seen)
        # /tmp is private: what the bot wrote there is not on the host.
        assert not any(path.exists() for path in written)
    else:
        # The standard level shares /tmp (docs/sandbox.md): the files are there.
        assert all(path.exists() for path in written)
        for path in written:
            path.unlink()


@pytest.mark.slow
@pytest.mark.parametrize("level", ["standard", "strict"])
async def test_a_bot_that_cannot_start_inside_the_sandbox_is_a_crash_with_its_reason(level: str) -> None:
    spec = BotSpec(name="ghost", command=["/no/such/program"], cwd=str(TEST_BOTS))
    settings = RefereeSettings(sandbox=require_level(level), time=TimeControl(startup_ms=20_000))
    passer = load_bot(str(TEST_BOTS / "passer"))
    with trio.fail_after(5):  # well before the startup limit
        record = await play_match(MatchSpec(game="vendetta", seed=2), [passer, spec, passer], settings)
    (termination,) = record.result.terminations
    assert termination.kind == "crash" and "/no/such/program" in termination.reason
    assert "exited with code 127" in termination.reason


@pytest.mark.slow
@pytest.mark.parametrize("level", ["standard", "strict"])
async def test_a_bot_closed_to_other_users_runs_as_root_without_capabilities_and_says_so(
    level: str, tmp_path: Path
) -> None:
    os.chmod(tmp_path, 0o700)  # no other uid can enter the bot's folder
    spec = BotSpec(name="facts", command=["sh", "-c", FACTS], cwd=str(tmp_path))
    async with open_bot(spec, RefereeSettings(sandbox=require_level(level), grace_ms=200)) as bot:
        with trio.fail_after(5):
            while "done=" not in bot.stderr_text():
                await trio.sleep(0.02)
    found = facts(bot.stderr_text())
    assert found["uid"] == "0" and int(found["caps"], 16) == 0
    assert found["net"].split() in ([], ["lo"]) and int(found["pids"]) <= 6
    assert bot.sandbox.startswith(f"{level} (ran as root without capabilities, processes not limited: /tmp/")
    assert "is not open to other users" in bot.sandbox
    if found["tmp"]:
        Path(found["tmp"]).unlink(missing_ok=True)


# --- the pitfall: a game longer than Trio's idle worker threads live ------------


@pytest.mark.slow
async def test_a_bot_at_each_level_survives_a_fifteen_second_game() -> None:
    # Trio's worker threads exit after 10 idle seconds; a bot spawned from one with
    # a parent-death signal would be killed then. The dawdler waits 15 s before
    # its ready line, then plays the game out.
    dawdler = load_bot(str(TEST_BOTS / "hostile" / "dawdler"))
    dawdler = msgspec.structs.replace(dawdler, command=[*dawdler.command, "15"])
    passer = load_bot(str(TEST_BOTS / "passer"))
    records = {}

    async def play(level: str) -> None:
        settings = RefereeSettings(sandbox=require_level(level), time=TimeControl(startup_ms=30_000))
        records[level] = await play_match(MatchSpec(game="vendetta", seed=5), [passer, dawdler, passer], settings)

    async with trio.open_nursery() as nursery:
        for level in ("none", "standard", "strict"):
            nursery.start_soon(play, level)
    for level, record in records.items():
        assert record.result.terminations == [], (level, record.result.terminations)
        assert record.seconds >= 15 and record.timings[1].decisions > 0
        assert record.sandbox.startswith(level) or f": {level}" in record.sandbox


# --- bots die with their referee ----------------------------------------------

REFEREE = """
import sys
import trio
from protocol.messages import TimeControl
from referee.bots import load_bot
from referee.match import MatchSpec
from referee.play import play_match
from referee.settings import RefereeSettings

async def main() -> None:
    passer = load_bot(sys.argv[1])
    async with trio.open_nursery() as nursery:
        for level, folder in zip(sys.argv[2::2], sys.argv[3::2]):
            settings = RefereeSettings(sandbox=level, time=TimeControl(startup_ms=60_000, move_ms=60_000, bank_ms=0))
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
    referee = subprocess.Popen(argv, cwd=ROOT, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        # Each immortal bot and its grandchild, plus the sandbox's own two processes
        # (unshare and the shell init; bwrap's monitor and init) where there is one.
        expected = {"none": 2, "standard": 4, "strict": 4}
        while not all(len(processes_in(folders[level])) >= expected[level] for level in levels):
            assert time.monotonic() < deadline, {level: processes_in(folders[level]) for level in levels}
            assert referee.poll() is None, "the referee exited early"
            time.sleep(0.05)
        time.sleep(0.5)  # let every match reach the immortal bot's hang
        os.kill(referee.pid, signal.SIGKILL)
        referee.wait()
        for level in ("standard", "strict"):
            assert wait_until_gone(folders[level], 5.0) == [], f"{level}: bots outlived their referee"
        # The control: at level none the bot and its grandchild are still there.
        assert len(processes_in(folders["none"])) >= 2
        assert wait_until_gone(passer, 5.0) == []  # well-behaved bots leave at end of input
        # The dead referee's FIFO folder is left behind; the next referee sweeps it.
        leftovers = list(Path(tempfile.gettempdir()).glob(f"famiglia-bots-{referee.pid}-*"))
        assert leftovers
        sandbox._sweep_dead_referees()
        assert not any(path.exists() for path in leftovers)
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
