"""Small things the command line says: its version, its help, where results go, what a typo was."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.bots import BotSpecError, load_bot
from tests.conftest import TEST_BOTS, wait_until_gone
from tests.tournaments.test_runner import own_passer
from tournaments.cli import app
from tournaments.cli.common import famiglia_command
from tournaments.config.tournament import ConfigProblems, load_tournament, parse_tournament

runner = CliRunner()
PASSER = str(TEST_BOTS / "passer")


def _tournament_file(folder: Path, body: str, entrants: int = 3, bot: Path | str = PASSER) -> Path:
    path = folder / "t.toml"
    bots = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{bot}"\n' for i in range(entrants))
    path.write_text(body + bots)
    return path


def test_version_prints_the_installed_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"famiglia {version('famiglia')}"


@pytest.mark.parametrize("command", [[], ["play"], ["replay", "show"], ["tournament", "run"], ["games"]])
def test_help_shows_no_type_beside_a_flag(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.output
    assert "--help" in result.output


def test_help_still_shows_the_type_of_an_option_that_takes_a_value() -> None:
    result = runner.invoke(app, ["play", "--help"])
    assert "--seed <int>" in result.output


def test_tournament_run_prints_where_its_database_is(tmp_path: Path) -> None:
    toml = _tournament_file(tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\nseed = 3\n')
    result = runner.invoke(app, ["tournament", "run", str(toml), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert f"results database: {tmp_path / 't.sqlite'}" in result.output


@pytest.mark.slow
def test_the_interrupted_line_starts_a_line_of_its_own_when_output_is_not_a_terminal(tmp_path: Path) -> None:
    # A passer of its own: the wait below is for this test's bots alone.
    passer = own_passer(tmp_path)
    toml = _tournament_file(
        tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 8\nrepetitions = 20\n', bot=passer
    )
    command = [sys.executable, "-m", "tournaments.cli", "tournament", "run", str(toml), "--workers", "1"]
    # stdout and stderr into one pipe, as `famiglia tournament run ... > log 2>&1` does.
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    assert run.stdout is not None
    said: list[str] = []
    # Until the run says it has begun (its games under way, the live table drawn): a fixed
    # pause would be too short on a busy machine, and the store exists before the run begins.
    for line in run.stdout:
        said.append(line)
        if "results database:" in line:
            break
    assert run.poll() is None, "".join(said)
    os.killpg(run.pid, signal.SIGINT)
    rest, _ = run.communicate(timeout=120)
    output = "".join(said) + rest
    assert run.returncode == 130, output
    lines = [line for line in output.splitlines() if "interrupted: " in line]
    assert len(lines) == 1 and lines[0].startswith("interrupted: "), output
    assert wait_until_gone(passer) == []


def test_a_bot_path_error_names_the_folder_it_was_resolved_against(tmp_path: Path) -> None:
    with pytest.raises(BotSpecError, match=f"looked in {tmp_path}"):
        load_bot("no_such_bot", base=tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(BotSpecError, match=f"folder \\({tmp_path / 'empty'}\\) has no bot.toml"):
        load_bot("empty", base=tmp_path)


def test_a_tournament_bot_path_is_resolved_against_the_tournament_files_folder(tmp_path: Path) -> None:
    data = {"tournament": {"game": "vendetta", "table_size": 3}, "entrant": [{"name": "x", "bot": "missing_bot"}]}
    with pytest.raises(ConfigProblems) as caught:
        parse_tournament(data, base=tmp_path)
    assert any(f"looked in {tmp_path}" in problem for problem in caught.value.problems), caught.value.problems


def test_a_bot_toml_typo_names_the_key_the_likely_one_and_every_valid_key(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_text('name = "x"\ncomand = "python3 bot.py"\n')
    with pytest.raises(BotSpecError) as caught:
        load_bot(str(tmp_path))
    message = str(caught.value)
    assert "unknown key 'comand'; did you mean 'command'?" in message
    assert "the keys are name, command, build, language, description" in message


@pytest.mark.parametrize(
    ("section", "typo", "expected"),
    [
        ("tournament", "tabel_size", "tournament.tabel_size: unknown key; did you mean 'table_size'?"),
        ("time", "move_m", "tournament.time.move_m: unknown key; did you mean 'move_ms'?"),
        ("entrant", "nmae", "entrant 1.nmae: unknown key; did you mean 'name'?"),
    ],
)
def test_an_unknown_tournament_key_gets_a_did_you_mean(section: str, typo: str, expected: str) -> None:
    tournament: dict[str, object] = {"game": "vendetta", "table_size": 3}
    entrant: dict[str, object] = {"name": "a", "bot": PASSER}
    if section == "tournament":
        tournament[typo] = 3
    elif section == "time":
        tournament["time"] = {typo: 3}
    else:
        entrant = {typo: "a", "bot": PASSER}
    with pytest.raises(ConfigProblems) as caught:
        parse_tournament({"tournament": tournament, "entrant": [entrant] * 3}, base=Path.cwd())
    assert any(problem.startswith(expected) for problem in caught.value.problems), caught.value.problems


def test_an_unknown_key_far_from_every_valid_one_lists_them_without_a_guess() -> None:
    data = {"tournament": {"game": "vendetta", "table_size": 3, "zzzzzz": 1}, "entrant": []}
    with pytest.raises(ConfigProblems) as caught:
        parse_tournament(data, base=Path.cwd())
    line = next(p for p in caught.value.problems if "zzzzzz" in p)
    assert "did you mean" not in line and "expected one of" in line and "table_size" in line


@pytest.mark.slow
def test_the_demo_runs_without_node_and_gcc_and_says_so(tmp_path: Path) -> None:
    # PATH holds neither node nor gcc (nor anything else): the Python bots fill the tables.
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty)}
    assert shutil.which("node", path=env["PATH"]) is None and shutil.which("gcc", path=env["PATH"]) is None
    result = subprocess.run(
        [sys.executable, "-m", "tournaments.cli", "demo", "--folder", str(tmp_path / "runs"), "--workers", "1"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "node and gcc not found; the demo runs without those sample bots" in result.stderr
    assert "random-2" in result.stdout and "greedy" in result.stdout
    assert "24 of 24 games" in result.stdout
    # The next steps it prints name a tournament file that is there and a command that runs here.
    tournament_file = tmp_path / "runs" / "demo.toml"
    assert f"the tournament file: {tournament_file}" in result.stdout
    assert "python -m tournaments.cli report --db" in result.stdout
    assert [e.name for e in load_tournament(tournament_file).entrants] == ["greedy", "random", "random-2"]


def test_a_hint_names_famiglia_as_it_was_started(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    program = venv_bin / "famiglia"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(program), "demo"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # the quick start: the venv is not on PATH
    assert famiglia_command() == ".venv/bin/famiglia"
    monkeypatch.setenv("PATH", f"{venv_bin}:/usr/bin:/bin")  # an activated venv
    assert famiglia_command() == "famiglia"


@pytest.mark.parametrize("command", [["tournament", "run"], ["ladder", "serve"]])
def test_a_scheduler_given_without_the_dask_executor_is_refused_not_dropped(command: list[str], tmp_path: Path) -> None:
    if command[0] == "ladder":
        from tests.ladder.helpers import write_ladder

        file = write_ladder(tmp_path)
    else:
        file = _tournament_file(
            tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\nseed = 3\n'
        )
    done = runner.invoke(app, [*command, str(file), "--scheduler", "tcp://127.0.0.1:8786"])
    assert done.exit_code == 2, done.output
    assert "--scheduler tcp://127.0.0.1:8786: the executor is 'local'" in done.output
    assert "add --executor dask" in done.output and "Traceback" not in done.output
    assert not file.with_suffix(".sqlite").exists(), "nothing is played or stored"
