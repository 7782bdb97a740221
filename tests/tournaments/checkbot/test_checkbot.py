"""famiglia check-bot: sample bots pass, each hostile bot fails the check that names its fault.

Every case runs the real check (real processes, the referee's run_match) with
short clocks, so a timeout costs under a second.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import trio
from typer.testing import CliRunner

from protocol.messages import TimeControl
from referee.bots import load_bot
from referee.build import build_bot
from referee.settings import BotLimits, RefereeSettings
from tests.conftest import ROOT, SAMPLE_BOTS, TEST_BOTS
from tournaments.checkbot.checks import Recorder, Report, check_bot
from tournaments.cli import app

pytestmark = pytest.mark.slow

CLOCK = TimeControl(startup_ms=3000, move_ms=300, bank_ms=500)
HOSTILE = TEST_BOTS / "hostile"


def run_check(folder: Path, game: str = "vendetta", **settings: Any) -> Report:
    # As root, the default sandbox runs the bot as a uid of its own, which must
    # read its folder: pytest's tmp_path is closed to other users.
    folder.chmod(0o755)
    spec = build_bot(load_bot(str(folder)))
    return trio.run(check_bot, spec, game, RefereeSettings(**{"time": CLOCK, **settings}))


def failing(report: Report) -> list[str]:
    return [result.name for result in report.checks if result.status == "fail"]


@pytest.mark.parametrize(
    ("bot", "game"),
    [
        ("random_py", "vendetta"),
        ("greedy_py", "vendetta"),
        ("c_bot", "vendetta"),
        ("node_js", "vendetta"),
        ("sicilianos_py", "sicilianos"),
        ("random_py", "sicilianos"),
        ("c_bot", "sicilianos"),
        ("node_js", "sicilianos"),
    ],
)
def test_every_sample_bot_passes_every_check(bot: str, game: str) -> None:
    if bot == "c_bot" and shutil.which("gcc") is None or bot == "node_js" and shutil.which("node") is None:
        pytest.skip("compiler or runtime missing")
    report = run_check(SAMPLE_BOTS / bot, game)
    assert failing(report) == [], [r for r in report.checks if r.status == "fail"]
    assert report.passed
    names = {result.name for result in report.checks}
    kinds = {"vendetta": 4, "sicilianos": 13}[game]
    assert sum(name.startswith("decision: ") for name in names) == kinds
    # Every forced position was found and played, none skipped.
    assert all(result.status == "pass" for result in report.checks), report.checks
    assert report.thinking.decisions > 50
    assert report.seconds < 30


# (hostile bot, the check that must fail, extra settings)
HOSTILE_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("crash_at_start", "startup", {}),
    ("mute_handshake", "startup", {"time": TimeControl(startup_ms=800, move_ms=300, bank_ms=500)}),
    ("exit_midgame", "whole game", {}),
    ("closes_stdout", "whole game", {}),
    # A roomy clock: under load, filling 256 MiB may take longer than the short one.
    ("memory_hog", "whole game", {"limits": BotLimits(memory_mb=256), "time": TimeControl(move_ms=5000)}),
    ("fork_bomb", "whole game", {"limits": BotLimits(processes=16)}),
    ("sleep_once", "time", {}),
    # check-bot charges a decision as the host's clock does: sleeping is charged on the wall clock
    # only, computing on both (the cpu clock is the default).
    ("slow_bank", "time", {"clock": "wall"}),
    ("slow_thinker", "time", {}),
    ("cpu_loop", "time", {}),
    ("immortal", "time", {}),
    ("endless_line", "messages", {}),
    ("garbage", "messages", {}),
    ("wrong_shape", "messages", {}),
    ("wrong_id", "request ids", {}),
    ("double_answer", "nothing unasked", {}),
    ("stderr_flood", "stderr", {"stderr_flood_bytes": 4 << 20}),
    ("stubborn_grandchild", "exits when input closes", {}),
    ("setsid_grandchild", "exits when input closes", {}),
]


@pytest.mark.parametrize(("bot", "check", "settings"), HOSTILE_CASES, ids=[case[0] for case in HOSTILE_CASES])
def test_each_hostile_bot_fails_the_check_naming_its_fault(
    bot: str, check: str, settings: dict[str, Any], tmp_path: Path
) -> None:
    report = run_check(HOSTILE / bot, **settings)
    assert not report.passed
    assert failing(report)[0] == check, report.checks
    result = next(r for r in report.checks if r.name == check)
    assert result.detail and result.wanted and "PROTOCOL.md, section" in result.fix


@pytest.mark.parametrize(
    ("bot", "level"),
    [("net_probe", "standard"), ("kill_everyone", "standard"), ("dawdler", "standard"), ("write_outside", "strict")],
)
def test_contained_hostile_bots_break_no_protocol_rule(bot: str, level: str) -> None:
    # Their attempts (a refused connection, kill(-1) inside their PID namespace, a
    # wait of 0 s, writes refused by the strict level's read-only filesystem; at the
    # standard level write_outside would write into /tmp and $HOME of this machine)
    # are contained by the sandbox and break no rule of the protocol.
    assert run_check(HOSTILE / bot, sandbox=level).passed


def test_a_bot_that_writes_into_its_own_folder_fails_that_check(tmp_path: Path) -> None:
    shutil.copytree(TEST_BOTS / "passer", tmp_path / "scribbler")
    bot = tmp_path / "scribbler" / "bot.py"
    bot.write_text('open("scratch.txt", "w").write("state")\n' + bot.read_text())
    # Unconfined, the write happens and the check names the file.
    report = run_check(tmp_path / "scribbler", sandbox="none")
    assert failing(report) == ["own folder untouched"]
    assert "scratch.txt" in next(r.detail for r in report.checks if r.name == "own folder untouched")
    (tmp_path / "scribbler" / "scratch.txt").unlink()
    # In the default sandbox the folder is read-only: the bot cannot even start.
    report = run_check(tmp_path / "scribbler")
    assert failing(report) == ["startup"]
    assert "Read-only file system" in next(r.detail for r in report.checks if r.name == "startup")
    assert not (tmp_path / "scribbler" / "scratch.txt").exists()


def test_a_bot_that_breaks_only_on_a_rare_kind_is_caught() -> None:
    report = run_check(TEST_BOTS / "rare_breaker", "sicilianos")
    assert "decision: renegade" in failing(report)
    for result in report.checks:
        if result.status == "fail":
            assert "at a renegade decision" in result.detail
    assert next(r for r in report.checks if r.name == "decision: bomb").status == "pass"


runner = CliRunner()


def test_cli_exit_codes_and_json() -> None:
    passed = runner.invoke(app, ["check-bot", str(SAMPLE_BOTS / "random_py"), "--json", "--move-ms", "300"])
    assert passed.exit_code == 0, passed.output
    report = json.loads(passed.output)
    assert report["passed"] is True and report["thinking"]["decisions"] > 0
    failed = runner.invoke(app, ["check-bot", str(HOSTILE / "wrong_id"), "--move-ms", "300"])
    assert failed.exit_code == 1
    assert "FAIL  request ids" in failed.output and "some checks failed" in failed.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check-bot", "no/such/folder"], "not a folder with bot.toml"),
        (["check-bot", str(SAMPLE_BOTS / "random_py"), "--game", "chess"], "unknown game 'chess'"),
    ],
)
def test_cli_user_mistake_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_every_section_a_fix_names_is_a_heading_of_protocol_md() -> None:
    from referee.games import get_rules
    from referee.games.base import GameRules
    from tournaments.checkbot.checks import _CAUSE_FIX, CHECKS

    doc = (ROOT / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8")
    headings = {line.lstrip("#").strip() for line in doc.splitlines() if line.startswith("#")}
    games = [get_rules("vendetta"), get_rules("sicilianos")]
    # The games' own sections, and the one a plug-in inherits (GameRules' default, called unbound).
    sections = [rules.checkbot_section() for rules in games] + [GameRules.checkbot_section(games[0])]
    for section in [*(s for _, s in CHECKS.values()), *(s for _, s in _CAUSE_FIX.values()), *sections]:
        assert section in headings, section


def test_a_failing_build_is_a_failed_check_with_exit_1(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_text(
        'name = "broken"\ncommand = "./bot"\nbuild = "sh -c \'echo no compiler >&2; exit 3\'"\n'
    )
    result = runner.invoke(app, ["check-bot", str(tmp_path), "--json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert [(c["name"], c["status"]) for c in report["checks"]] == [("build", "fail")]
    assert "no compiler" in report["checks"][0]["detail"]


NO_FLUSH = """
import json, sys
out = open(1, "w", buffering=65536, closefd=False)  # block-buffered, never flushed
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        out.write(json.dumps({"type": "ready"}) + "\\n")
    elif message["type"] == "request":
        action = (message.get("options") or [{"type": "place", "placements": []}])[0]
        out.write(json.dumps({"type": "action", "id": message["id"], "action": action}) + "\\n")
out.flush()
"""


def test_a_bot_that_never_flushes_fails_the_flush_check(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(NO_FLUSH)
    (tmp_path / "bot.toml").write_text('name = "no_flush"\ncommand = "python bot.py"\n')
    report = run_check(tmp_path, time=TimeControl(startup_ms=800, move_ms=300, bank_ms=500))
    assert failing(report) == ["flushes each line"]
    assert "came out only when its input closed" in next(r.detail for r in report.checks if r.status == "fail")


ONE_GAME = """
import json, sys
games = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        games += 1
        if games == 2:
            {second_start}
        print(json.dumps({{"type": "ready"}}), flush=True)
    elif message["type"] == "request":
        action = (message.get("options") or [{{"type": "place", "placements": []}}])[0]
        print(json.dumps({{"type": "action", "id": message["id"], "action": action}}), flush=True)
"""


@pytest.mark.parametrize(
    ("second_start", "passes"),
    [("sys.exit(0)", True), ("sys.exit(9)", False), ("continue", False)],
    ids=["exits cleanly", "crashes", "ignores it"],
)
def test_warm_reuse_allows_a_clean_exit_but_not_a_broken_second_start(
    second_start: str, passes: bool, tmp_path: Path
) -> None:
    (tmp_path / "bot.py").write_text(ONE_GAME.format(second_start=second_start))
    (tmp_path / "bot.toml").write_text('name = "one_game"\ncommand = "python bot.py"\n')
    report = run_check(tmp_path, time=TimeControl(startup_ms=800, move_ms=300, bank_ms=500))
    warm = next(r for r in report.checks if r.name == "warm reuse")
    if passes:
        assert report.passed and "exits after each game" in warm.detail
    else:
        assert failing(report)[0] == "warm reuse", report.checks


def test_a_process_of_the_host_in_the_bots_folder_is_not_blamed_on_the_bot(tmp_path: Path) -> None:
    # Like the person's interactive shell, which ignores SIGTERM, sitting in the bot's folder.
    import subprocess

    shutil.copytree(TEST_BOTS / "passer", tmp_path / "passer")
    shell = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 60"], cwd=tmp_path / "passer")
    try:
        report = run_check(tmp_path / "passer")
    finally:
        shell.kill()
        shell.wait()
    assert report.passed, [r for r in report.checks if r.status == "fail"]


class _MeteredProcess:
    """Stands in for a BotProcess: a CPU meter the test turns, and what the Recorder reads besides."""

    def __init__(self) -> None:
        self.cpu_ns = 0
        self.meter = lambda: self.cpu_ns
        self.sandbox = "none"
        self.can_hold = False
        self.sent: list[bytes] = []

    async def send(self, data: bytes) -> None:
        self.sent.append(data)


@pytest.mark.parametrize(("cpu_clock", "charged_ms"), [(True, 40.0), (False, 1000.0)])
async def test_thinking_is_charged_as_the_hosts_clock_charges_it(
    cpu_clock: bool, charged_ms: float, autojump_clock: trio.abc.Clock
) -> None:
    # 40 ms of CPU over 1 s of wall time (a bot that sleeps, or waits for a core): the cpu clock
    # charges the 40 ms, the wall clock the second; check-bot's "time" check judges the same figure.
    process = _MeteredProcess()
    recorder = Recorder(process, cpu_clock=cpu_clock)  # type: ignore[arg-type]
    await recorder.send(b'{"type":"request","id":1,"decision":"place"}\n')
    process.cpu_ns += 40_000_000
    await trio.sleep(1.0)
    assert recorder._thinking_ms() == pytest.approx(charged_ms)
