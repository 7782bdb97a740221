"""The command line: user mistakes are one line and exit 2; real matches print results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import TEST_BOTS, processes_in, wait_until_gone
from tests.tournaments.test_runner import own_passer
from tournaments.cli import app

runner = CliRunner()
PASSER = str(TEST_BOTS / "passer")


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["play", "chess", PASSER, PASSER, PASSER], "unknown game 'chess'"),
        (["play", "vendetta", PASSER, PASSER], "vendetta is for 3 to 5 players, not 2"),
        (["play", "vendetta", PASSER, PASSER, str(TEST_BOTS)], "folder has no bot.toml"),
        (["play", "vendetta", PASSER, PASSER, "no-such-program --x"], "'no-such-program' not found on PATH"),
        (["play", "vendetta", PASSER, PASSER, PASSER, "--variant", "control=most"], "control"),
        (["play", "vendetta", PASSER, PASSER, PASSER, "--variant", "control"], "KEY=VALUE"),
        (["play", "vendetta", PASSER, PASSER, PASSER, "--illegal", "shrug"], "choose forfeit or pass"),
        (["play", "vendetta", PASSER, PASSER, PASSER, "--margin-ms", "-5"], "--margin-ms"),
        (["replay", "verify", "/no/such/replay.jsonl"], "cannot read"),
        (["standings", "--db", "/no/such.sqlite"], "no such results database"),
        (["tournament", "run", "/no/such.toml"], "no such file"),
    ],
)
def test_user_mistakes_print_one_line_and_exit_2(args: list[str], complaint: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("famiglia: error:"), result.output
    assert complaint in lines[0]
    assert "Traceback" not in result.output


def test_play_prints_the_result_as_json_and_the_replay_verifies(tmp_path: Path) -> None:
    replay = tmp_path / "m.jsonl"
    result = runner.invoke(app, ["play", "vendetta", PASSER, PASSER, PASSER, PASSER, "--seed", "4",
                                 "--replay", str(replay), "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["seed"] == 4 and len(record["result"]["ranks"]) == 4
    assert record["result"]["terminations"] == []
    verified = runner.invoke(app, ["replay", "verify", str(replay)])
    assert verified.exit_code == 0 and "ok" in verified.output
    shown = runner.invoke(app, ["replay", "show", str(replay)])
    assert shown.exit_code == 0 and "seat 0 passer place" in shown.output
    assert "(simultaneous)" not in shown.output  # Vendetta asks one seat at a time


def test_replay_verify_exits_1_naming_the_difference(tmp_path: Path) -> None:
    replay = tmp_path / "m.jsonl"
    assert (
        runner.invoke(
            app, ["play", "vendetta", PASSER, PASSER, PASSER, "--seed", "2", "--replay", str(replay)]
        ).exit_code
        == 0
    )
    lines = replay.read_text().splitlines()
    result_line = json.loads(lines[-1])
    result_line["result"]["scores"][0] += 1
    lines[-1] = json.dumps(result_line)
    replay.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["replay", "verify", str(replay)])
    assert result.exit_code == 1 and "result scores" in result.output


def test_the_report_commands_read_a_finished_tournament(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    bots = "".join(f'[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(3))
    toml.write_text('[tournament]\nname = "tiny"\ngame = "vendetta"\ntable_size = 3\n' + bots)
    db = tmp_path / "t.sqlite"
    ran = runner.invoke(app, ["tournament", "run", str(toml), "--db", str(db), "--workers", "1"])
    assert ran.exit_code == 0, ran.output
    assert "tiny (vendetta): 6 of 6 games" in ran.output
    standings = runner.invoke(app, ["standings", "--db", str(db), "--format", "json"])
    report = json.loads(standings.output)
    assert report["games"] == 6 and {row["name"] for row in report["standings"]} == {"p0", "p1", "p2"}
    csv_out = runner.invoke(app, ["standings", "--db", str(db), "--format", "csv"]).output.splitlines()
    assert csv_out[0].startswith("place,entrant,rating") and len(csv_out) == 4
    cross = runner.invoke(app, ["crosstable", "--db", str(db)])
    assert cross.exit_code == 0 and "/6" in cross.output
    games = runner.invoke(app, ["games", "--db", str(db), "--entrant", "p1", "--format", "json"])
    assert len(json.loads(games.output)) == 6
    none = runner.invoke(app, ["games", "--db", str(db), "--termination", "timeout", "--format", "json"])
    assert json.loads(none.output) == []
    unknown = runner.invoke(app, ["games", "--db", str(db), "--entrant", "nobody"])
    assert unknown.exit_code == 2 and "no entrant called 'nobody'" in unknown.output
    page = runner.invoke(app, ["report", "--db", str(db)])
    # Replays are kept by default (beside the database, t-replays/): each game has its viewer pages.
    assert page.exit_code == 0 and page.output.strip().splitlines() == [
        f"report: {tmp_path / 't.html'}",
        f"viewer pages: {tmp_path / 't-games'}/",
    ]
    html = (tmp_path / "t.html").read_text()
    assert "<h1>tiny (vendetta)</h1>" in html and html.count("<tr><td") >= 3 + 6
    # Missing folders of --out are made; a place nothing can be written is named as the user gave it.
    deeper = runner.invoke(app, ["report", "--db", str(db), "--out", str(tmp_path / "no" / "such" / "r.html")])
    assert deeper.exit_code == 0 and (tmp_path / "no" / "such" / "r.html").is_file()
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    nowhere = runner.invoke(app, ["report", "--db", str(db), "--out", str(blocked / "r.html")])
    assert nowhere.exit_code == 2 and nowhere.output.startswith(f"famiglia: error: --out {blocked / 'r.html'}: ")
    assert len(nowhere.output.strip().splitlines()) == 1 and ".tmp" not in nowhere.output


def test_a_bad_tournament_file_prints_each_problem_and_starts_nothing(tmp_path: Path) -> None:
    toml = tmp_path / "bad.toml"
    toml.write_text('[tournament]\ngame = "vendetta"\ntable_size = 7\nformat = "ladder"\n')
    result = runner.invoke(app, ["tournament", "run", str(toml)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) >= 3 and all(line.startswith("famiglia: error: ") for line in lines)
    assert not (tmp_path / "bad.sqlite").exists()


@pytest.mark.slow
def test_ctrl_c_during_play_is_one_line_exit_130_and_no_bot_left(tmp_path: Path) -> None:
    # The third bot takes 15 s to say ready: the match is certainly running when Ctrl-C comes.
    dawdler = f"{sys.executable} {TEST_BOTS / 'hostile' / 'dawdler' / 'bot.py'} 15"
    passer = str(own_passer(tmp_path / "bots"))  # its own: the wait below is for this test's bots alone
    # A path longer than the width the CLI gives piped output: the line must not wrap.
    (folder := tmp_path / ("replays-" + "x" * 160)).mkdir()
    replay = folder / "m.jsonl"
    command = [
        sys.executable,
        "-m",
        "tournaments.cli",
        "play",
        "vendetta",
        passer,
        passer,
        dawdler,
        "--replay",
        str(replay),
    ]
    player = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 30
    while len(processes_in(tmp_path)) < 2 and time.monotonic() < deadline:  # the CLI and the dawdler
        time.sleep(0.05)
    os.killpg(player.pid, signal.SIGINT)  # as a terminal's Ctrl-C does
    _, stderr = player.communicate(timeout=120)
    assert player.returncode == 130, stderr
    assert (
        stderr.strip()
        == f"interrupted: the match was stopped before its end; no result (the replay so far is {replay}.partial)"
    )
    assert not replay.exists() and (folder / "m.jsonl.partial").exists()
    assert wait_until_gone(tmp_path) == [] and wait_until_gone(Path(passer)) == []
