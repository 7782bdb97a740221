"""check-bot's games (tournaments.hosting.checkbot.games): sample bots pass, each hostile bot fails the check naming its fault.

Every case runs the real check (real processes, the referee's run_match) with
short clocks, so a timeout costs under a second.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from protocol.messages import TimeControl
from referee.settings import BotLimits, Clock
from tests.conftest import SAMPLE_BOTS, TEST_BOTS
from tests.tournaments.hosting.checkbot.bot_checks import CLOCK, bot_folder, check_named, failing, run_check

pytestmark = pytest.mark.slow

HOSTILE = TEST_BOTS / "hostile"


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
    ("mute_handshake", "startup", {"clock": Clock(time=TimeControl(startup_ms=800, move_ms=300, bank_ms=500))}),
    ("exit_midgame", "whole game", {}),
    ("closes_stdout", "whole game", {}),
    # A roomy clock: under load, filling 256 MiB may take longer than the short one.
    ("memory_hog", "whole game", {"limits": BotLimits(memory_mb=256), "clock": Clock(time=TimeControl(move_ms=5000))}),
    ("fork_bomb", "whole game", {"limits": BotLimits(processes=16)}),
    ("sleep_once", "time", {}),
    # check-bot charges a decision as the host's clock does: sleeping is charged on the wall clock
    # only, computing on both (the cpu clock is the default).
    ("slow_bank", "time", {"clock": Clock(time=CLOCK, mode="wall")}),
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
    # Every check runs now (issue 44): on a loaded machine a slow bot may fail another one first.
    assert check in failing(report), report.checks
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


# Crashes at every 3-player game's first request (the whole game among them), answers 4-player games with a
# placement of the wrong shape, plays 5-player games well, and writes a scratch file beside itself.
SEVERAL_FAULTS = """
import json, sys
open("scratch.txt", "w").write("state")
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({"type": "ready"}), flush=True)
    elif message["type"] == "request":
        players = message["view"]["n_players"]
        if players == 3:
            sys.exit(1)
        action = {"type": "place", "placements": "lots" if players == 4 else []}
        print(json.dumps({"type": "action", "id": message["id"], "action": action}), flush=True)
"""


def test_a_first_try_shows_every_fault_not_only_the_first(tmp_path: Path) -> None:
    report = run_check(bot_folder(tmp_path, SEVERAL_FAULTS, "several_faults"), sandbox="none")
    failed = failing(report)
    assert {"whole game", "3 players", "messages", "own folder untouched"} <= set(failed), report.checks
    assert "4 players" not in failed  # its game ended on the wrong shape, charged to "messages"
    for name in ("5 players", "restart", "exits when input closes"):
        assert check_named(report, name).status == "pass", check_named(report, name)
    assert not [r for r in report.checks if r.detail.startswith("not run")], report.checks


# Sleeps past its clock at the first request it ever gets (the marker file says whether it has), then plays well.
SLOW_ONCE = """
import json, os, sys, time
MARKER = {marker!r}
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({{"type": "ready"}}), flush=True)
    elif message["type"] == "request":
        if not os.path.exists(MARKER):
            open(MARKER, "w").close()
            time.sleep(3)
        action = (message.get("options") or [{{"type": "place", "placements": []}}])[0]
        print(json.dumps({{"type": "action", "id": message["id"], "action": action}}), flush=True)
"""


def test_one_timeout_fails_time_and_every_later_game_is_still_played(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    source = SLOW_ONCE.format(marker=str(tmp_path / "slept"))
    report = run_check(
        bot_folder(tmp_path / "bot", source, "slow_once"), sandbox="none", clock=Clock(time=CLOCK, mode="wall")
    )
    assert failing(report) == ["time"], report.checks
    assert check_named(report, "whole game").detail.startswith("not judged")  # its game was the one that timed out
    later = [r for r in report.checks if r.name.endswith("players") or r.name.startswith("decision: ")]
    assert later and all(r.status == "pass" for r in later), later


def test_a_bot_that_does_not_start_skips_every_check_that_needs_a_start_and_says_so() -> None:
    report = run_check(HOSTILE / "crash_at_start")
    assert failing(report) == ["startup"]
    judged = {"build", "startup", "own folder untouched"}
    for result in report.checks:
        if result.name not in judged:
            assert result.status == "skip" and 'it needs "startup" to pass' in result.detail, result


def test_after_two_games_in_a_row_time_out_the_rest_are_skipped_saying_why() -> None:
    report = run_check(HOSTILE / "cpu_loop")
    assert failing(report)[0] == "time" and report.games == 2
    skipped = [r for r in report.checks if r.detail.startswith("not run: the last 2 games ended on a timeout")]
    assert {"5 players", "restart", "exits when input closes"} <= {r.name for r in skipped}, report.checks


def test_after_two_games_in_a_row_stall_the_rest_are_skipped_saying_why() -> None:
    # A bot that closes its output and keeps running is waited out to its clock, like a timeout.
    report = run_check(HOSTILE / "closes_stdout")
    assert failing(report)[:2] == ["whole game", "3 players"] and report.games == 2
    skipped = [r for r in report.checks if r.detail.startswith("not run: the last 2 games ended on a stall")]
    assert {"5 players", "decision: place, turn 0"} <= {r.name for r in skipped}, report.checks
