"""The cpu clock: a seat is charged what it could have used while asked, its sleep included, not its waits for a CPU.

Real sandboxed bots in real matches: one that sleeps (no CPU) and is charged
its sleep, one that sleeps past its budget and times out there (issue 42,
item 4), one that computes past its budget, the same at start-up, and honest
bots on a host kept busy by other processes, which lose nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol.messages import TimeControl
from referee.bots import BotSpec, load_bot
from referee.match import MatchSpec
from referee.play import play_match
from referee.replay import ActionRecord, Header, read_replay
from referee.sandbox import require_level
from referee.sandbox.cgroup_host import cgroup_support
from referee.settings import Clock, RefereeSettings

pytestmark = pytest.mark.slow

BOT = """
import itertools, sys, time
from protocol.bot import serve

SLEEP, BURN, AT = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
START_SLEEP, START_BURN = float(sys.argv[4]), float(sys.argv[5])


class Timed:
    name = "timed"

    def __init__(self):
        self.asked = 0

    def decide(self, request):
        self.asked += 1
        if AT in (0, self.asked):
            time.sleep(SLEEP)
            began = time.thread_time()
            while time.thread_time() - began < BURN:
                pass
        return request.options[0] if request.options else {"type": "place", "placements": []}


line = sys.stdin.buffer.readline()  # the start line: what follows is the bot's own start-up work
time.sleep(START_SLEEP)
began = time.thread_time()
while time.thread_time() - began < START_BURN:
    pass
serve(Timed(), stdin=itertools.chain([line], sys.stdin.buffer))
"""


@pytest.fixture
def timed_bot(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "timed"
    folder.mkdir()
    (folder / "bot.py").write_text(BOT)
    (folder / "bot.toml").write_text('name = "timed"\ncommand = "python3 bot.py"\n')
    for path in (tmp_path, folder):
        os.chmod(path, 0o755)
    for path in folder.iterdir():
        os.chmod(path, 0o644)
    yield folder


def timed(
    folder: Path,
    *,
    sleep: float = 0.0,
    burn: float = 0.0,
    at: int = 0,
    start_sleep: float = 0.0,
    start_burn: float = 0.0,
) -> BotSpec:
    """The timed bot: at its ``at``-th request (0: every one) it sleeps ``sleep`` s, then computes ``burn`` s;
    after its start line and before its ready line, it sleeps ``start_sleep`` s, then computes ``start_burn`` s."""
    spec = load_bot(str(folder))
    numbers = [str(sleep), str(burn), str(at), str(start_sleep), str(start_burn)]
    return BotSpec(name=spec.name, command=[*spec.command, *numbers], cwd=spec.cwd)


def cpu_clock(move_ms: int, bank_ms: int = 0, startup_ms: int = 10_000, backstop: float = 5.0) -> RefereeSettings:
    support = cgroup_support()
    if not support.cpu_usage:
        pytest.skip(f"no cgroup CPU accounting on this host: {support.missing()}")
    time = TimeControl(startup_ms=startup_ms, move_ms=move_ms, bank_ms=bank_ms)
    return RefereeSettings(clock=Clock(mode="cpu", time=time, backstop=backstop), sandbox=require_level("standard"))


async def test_a_bot_that_sleeps_is_charged_its_sleep(timed_bot: Path, tmp_path: Path) -> None:
    # 150 ms of sleep at its first decision and almost no CPU, against a roomy clock: the
    # charge is the sleep, as the wall clock's would be, not the CPU it used.
    sleeper = timed(timed_bot, sleep=0.15, at=1)
    quick = timed(timed_bot)
    settings = cpu_clock(move_ms=1000)
    replay = tmp_path / "game.jsonl"
    record = await play_match(MatchSpec(game="vendetta", seed=5), [quick, sleeper, quick], settings, replay_path=replay)
    assert record.result.terminations == []
    lines = read_replay(replay)
    header = next(line for line in lines if isinstance(line, Header))
    assert header.clock == "cpu"
    first = next(line for line in lines if isinstance(line, ActionRecord) and line.seat == 1)
    # Charged its sleep, where its CPU is a millisecond or so: less only what the referee itself waited
    # for a CPU meanwhile (credited to the seat, docs/sandbox.md), which a busy host makes more than 0.
    assert first.ms > 75, first.ms


async def test_a_bot_that_sleeps_past_its_budget_times_out_at_its_budget_not_the_backstop(timed_bot: Path) -> None:
    # Issue 42, item 4: 3 s of sleep at every decision under --move-ms 200 --bank-ms 600 was
    # charged 0.2 ms and never timed out. Now it forfeits on time at its budget (200 + 600 +
    # 50 ms margin), long before the backstop (5 x that), whatever else the host runs.
    sleeper = timed(timed_bot, sleep=3.0)
    quick = timed(timed_bot)
    settings = cpu_clock(move_ms=200, bank_ms=600)
    record = await play_match(MatchSpec(game="vendetta", seed=5), [quick, sleeper, quick], settings)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (1, "timeout")
    assert termination.reason.startswith(f"no answer to request {termination.request} within 850 ms, not counting the ")
    assert termination.reason.endswith(" ms its processes and the referee waited for a CPU (200 ms + 600 ms bank)")


async def test_a_bot_that_computes_past_its_budget_times_out_at_its_budget(timed_bot: Path) -> None:
    burner = timed(timed_bot, burn=0.4, at=1)
    quick = timed(timed_bot)
    # A wall-time backstop of 5 s: beside busy loops the burner may need several times its 100 ms
    # of wall time to compute 100 ms, and must still be stopped by what it used, not the backstop.
    settings = cpu_clock(move_ms=100, backstop=50.0)
    record = await play_match(MatchSpec(game="vendetta", seed=5), [quick, burner, quick], settings)
    (termination,) = record.result.terminations
    assert termination.seat == 1 and termination.kind == "timeout"
    assert f"request {termination.request} within 150 ms" in termination.reason or (
        "more than 150 ms of CPU" in termination.reason
    ), termination.reason
    assert "wall time" not in termination.reason


async def test_a_busy_host_costs_honest_bots_no_time_on_the_cpu_clock(timed_bot: Path) -> None:
    # Six busy loops beside the referee on this machine; honest bots computing 2 ms
    # per decision on a 20 ms clock. The wall clock would charge them every wait for
    # a CPU; the cpu clock charges what they computed.
    honest = timed(timed_bot, burn=0.002)
    # The wall-time backstop far (2 s, not 5 x 20 ms): six loops beside a loaded CI host's own work
    # can keep a decision off the CPUs for more than 100 ms of wall; what is checked is the charge.
    settings = cpu_clock(move_ms=20, backstop=100.0)
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(6)]  # noqa: ASYNC220 - six quick spawns before the match
    try:
        record = await play_match(MatchSpec(game="vendetta", seed=9), [honest, honest, honest], settings)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    assert record.result.terminations == [], record.result.terminations
    assert all(timing.decisions > 0 for timing in record.timings)


async def test_a_start_up_that_sleeps_past_the_limit_times_out_at_the_limit(timed_bot: Path) -> None:
    # 1.2 s of sleep before its ready line, against a startup limit of 500 ms: sleeping is the
    # bot's own time at start-up too; the backstop (5 x 500 ms) is not what ends it.
    slow_start = timed(timed_bot, start_sleep=1.2)
    quick = timed(timed_bot)
    settings = cpu_clock(move_ms=100, startup_ms=500)
    record = await play_match(MatchSpec(game="vendetta", seed=5), [quick, slow_start, quick], settings)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (1, "timeout")
    assert termination.reason.startswith("no ready line within the startup limit of 500 ms, not counting the ")


async def test_a_start_up_that_computes_past_the_limit_times_out_on_cpu(timed_bot: Path) -> None:
    burner = timed(timed_bot, start_burn=2.0)
    quick = timed(timed_bot)
    # A far backstop: on a loaded machine the burner may get a tenth of a core, and what is
    # checked here is the CPU limit, not the wall-time bound (tested above).
    settings = cpu_clock(move_ms=100, startup_ms=500, backstop=60.0)
    record = await play_match(MatchSpec(game="vendetta", seed=5), [quick, burner, quick], settings)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (1, "timeout")
    assert termination.reason.startswith("no ready line within the startup limit of 500 ms"), termination.reason
    assert "wall time" not in termination.reason  # the limit, not the far backstop


CHILD_BURNS_AT_START = """
import itertools, os, sys, time
from protocol.bot import serve

line = sys.stdin.buffer.readline()
child = os.fork()
if child == 0:  # the work is done by a child: the bot itself uses no CPU
    began = time.process_time()
    while time.process_time() - began < 3.0:
        pass
    os._exit(0)
os.waitpid(child, 0)


class Quick:
    name = "child-burns"

    def decide(self, request):
        return request.options[0] if request.options else {"type": "place", "placements": []}


serve(Quick(), stdin=itertools.chain([line], sys.stdin.buffer))
"""


async def test_a_start_up_whose_child_computes_past_the_limit_times_out_on_the_trees_cpu(
    timed_bot: Path,
) -> None:
    # The charge is the whole tree's: work handed to a child counts as the bot's own.
    (timed_bot / "child.py").write_text(CHILD_BURNS_AT_START)
    os.chmod(timed_bot / "child.py", 0o644)
    spec = load_bot(str(timed_bot))
    burner = BotSpec(name="child-burns", command=[spec.command[0], "child.py"], cwd=spec.cwd)
    quick = timed(timed_bot)
    settings = cpu_clock(move_ms=100, startup_ms=500, backstop=60.0)  # far, as above
    record = await play_match(MatchSpec(game="vendetta", seed=5), [quick, burner, quick], settings)
    (termination,) = record.result.terminations
    assert (termination.seat, termination.kind) == (1, "timeout")
    assert termination.reason.startswith("no ready line within the startup limit of 500 ms"), termination.reason
    assert "wall time" not in termination.reason  # the limit, not the far backstop
