"""A careless user at the command line: each mistake is one line on stderr, a non-zero exit, nothing harmed."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import TEST_BOTS
from tournaments.cli import app

runner = CliRunner()
PASSER = str(TEST_BOTS / "passer")

SEAT = {"name": "passer", "command": ["python3", "bot.py"]}
HEADER = {
    "type": "header", "format": 1, "match": "vendetta-1", "game": "vendetta",
    "variants": {"setup": "except-dealt", "control": "sole", "round_limit": "30"},
    "config": {"setup": "except-dealt", "control": "sole", "round_limit": 30},
    "seats": [SEAT] * 3, "seed": 7, "time": {"startup_ms": 10000, "move_ms": 1000, "bank_ms": 5000},
    "illegal_action": "forfeit", "started": "2026-11-27T04:21:42+00:00", "clock": "cpu",
}  # fmt: skip
ACTION = {
    "type": "action", "seat": 0, "request": 1, "decision": "place", "action": {"type": "place", "placements": []},
    "ms": 0.1, "events": [], "substituted": False,
}  # fmt: skip
RESULT = {
    "type": "result",
    "result": {
        "ranks": [2, 3, 1], "scores": [36, 34, 167], "winners": [], "forfeited": [], "ended_by": "round_limit",
        "stats": {"districts": [0, 0, 0], "mafiosi": [0, 0, 0]}, "terminations": [],
    },
    "seconds": 1.0,
}  # fmt: skip


def _one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("famiglia: error:"), output
    assert "Traceback" not in output
    return lines[0]


def _replay(path: Path, *records: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def _tournament_file(folder: Path) -> Path:
    path = folder / "t.toml"
    bots = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(3))
    path.write_text('[tournament]\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\nseed = 3\n' + bots)
    return path


@pytest.mark.parametrize(("command", "code"), [("verify", 1), ("show", 2), ("view", 2)])
def test_a_replay_whose_header_lists_too_few_seats_is_one_line_not_a_traceback(
    tmp_path: Path, command: str, code: int
) -> None:
    replay = _replay(tmp_path / "r.jsonl", {**HEADER, "seats": [SEAT]}, ACTION, RESULT)
    done = runner.invoke(app, ["replay", command, str(replay)])
    assert done.exit_code == code, done.output
    line = _one_error_line(done.output)
    assert "its header lists 1 seat, but vendetta is for 3 to 5 players" in line
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(("command", "code"), [("verify", 1), ("show", 2), ("view", 2)])
def test_a_replay_decision_naming_a_seat_the_header_lacks_is_one_line_not_a_traceback(
    tmp_path: Path, command: str, code: int
) -> None:
    replay = _replay(tmp_path / "r.jsonl", HEADER, {**ACTION, "seat": 7}, RESULT)
    done = runner.invoke(app, ["replay", command, str(replay)])
    assert done.exit_code == code, done.output
    assert "decision #1 names seat 7, but its header lists seats 0 to 2" in _one_error_line(done.output)


@pytest.mark.parametrize("command", ["verify", "show", "view"])
def test_a_replay_whose_simultaneous_mark_was_edited_into_text_is_one_line_naming_it(
    tmp_path: Path, command: str
) -> None:
    replay = _replay(tmp_path / "r.jsonl", HEADER, {**ACTION, "together": "yes"}, RESULT)
    done = runner.invoke(app, ["replay", command, str(replay)])
    assert done.exit_code != 0, done.output
    assert "Expected `bool`, got `str` - at `$.together`" in _one_error_line(done.output)


def test_a_replay_result_for_fewer_seats_than_its_header_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    replay = _replay(tmp_path / "r.jsonl", {**HEADER, "seats": [SEAT] * 4}, ACTION, RESULT)
    done = runner.invoke(app, ["replay", "show", str(replay)])
    assert done.exit_code == 2, done.output
    assert "its result ranks 3 seats, but its header lists 4" in _one_error_line(done.output)


@pytest.mark.parametrize("command", ["standings", "crosstable", "games", "report"])
def test_a_read_command_given_an_empty_file_as_db_leaves_it_untouched(tmp_path: Path, command: str) -> None:
    empty = tmp_path / "notes.txt"
    empty.touch(mode=0o644)
    done = runner.invoke(app, [command, "--db", str(empty)])
    assert done.exit_code == 2, done.output
    assert "an empty file, not a results database" in _one_error_line(done.output)
    assert empty.stat().st_size == 0 and empty.stat().st_mode & 0o777 == 0o644


def test_a_read_command_given_another_programs_sqlite_file_does_not_write_its_tables_into_it(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE mine (x)")
    connection.close()
    before = other.read_bytes()
    done = runner.invoke(app, ["standings", "--db", str(other)])
    assert done.exit_code == 2, done.output
    assert "not a famiglia results database" in _one_error_line(done.output)
    assert other.read_bytes() == before


def test_deals_from_another_programs_sqlite_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    toml = _tournament_file(tmp_path)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE mine (x)")
    connection.close()
    before = other.read_bytes()
    done = runner.invoke(app, ["tournament", "run", str(toml), "--deals-from", str(other)])
    assert done.exit_code == 2, done.output
    assert f"--deals-from {other}: not a famiglia results database" in _one_error_line(done.output)
    assert other.read_bytes() == before
    assert not toml.with_suffix(".sqlite").exists()


@pytest.mark.parametrize("key", ["--scheduler", "file"])
def test_a_scheduler_address_without_a_port_names_the_setting_and_the_form_it_needs(tmp_path: Path, key: str) -> None:
    toml = _tournament_file(tmp_path)
    if key == "file":
        toml.write_text(
            toml.read_text().replace(
                "seed = 3\n", 'seed = 3\n\n[tournament.executor]\nkind = "dask"\nscheduler = "garbage"\n'
            )
        )
        args = ["tournament", "run", str(toml)]
        named = f"{toml}: tournament.executor.scheduler: "
    else:
        args = ["tournament", "run", str(toml), "--executor", "dask", "--scheduler", "garbage"]
        named = "--scheduler garbage: "
    done = runner.invoke(app, args)
    assert done.exit_code == 2, done.output
    line = _one_error_line(done.output)
    assert named in line and 'expected an address like "tcp://HOST:8786"' in line
    assert not toml.with_suffix(".sqlite").exists()


@pytest.mark.parametrize(("key", "value"), [("bot", "5"), ("bot", '["python3", "bot.py"]'), ("name", "5")])
def test_an_entrant_key_of_the_wrong_type_is_not_called_missing(tmp_path: Path, key: str, value: str) -> None:
    toml = tmp_path / "t.toml"
    entrants = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(2))
    wrong = {"name": '"p2"', "bot": f'"{PASSER}"', key: value}
    toml.write_text(
        '[tournament]\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\nseed = 3\n'
        + entrants + f"\n[[entrant]]\nname = {wrong['name']}\nbot = {wrong['bot']}\n"
    )  # fmt: skip
    done = runner.invoke(app, ["tournament", "run", str(toml)])
    assert done.exit_code == 2, done.output
    line = _one_error_line(done.output)
    assert f".{key}: expected text in quotes" in line and "missing" not in line


def test_ctrl_c_while_famiglia_is_still_importing_is_one_line_exit_130_not_a_traceback() -> None:
    # Ctrl-C lands in the imports of the command tree (a second on a busy machine): made
    # certain here by an import hook that raises it where the SIGINT handler would.
    script = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'tournaments.cli.play':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "from tournaments.cli import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "--version"], capture_output=True, text=True, timeout=60, check=False,
        cwd=Path(__file__).resolve().parents[3],
    )  # fmt: skip
    assert done.returncode == 130, done.stderr
    assert done.stderr == "interrupted while starting: nothing was done\n"


def test_ctrl_c_while_typer_builds_the_commands_is_one_line_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tournaments.cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(tournaments.cli, "app", interrupted)
    with pytest.raises(SystemExit) as stopped:
        tournaments.cli.main()
    assert stopped.value.code == 130
    assert capsys.readouterr().err == "interrupted while starting: nothing was done\n"


def test_a_variant_given_twice_with_different_values_is_refused_not_resolved_in_silence() -> None:
    done = runner.invoke(
        app, ["play", "vendetta", PASSER, PASSER, PASSER, "--variant", "control=sole", "--variant", "control=majority"]
    )
    assert done.exit_code == 2, done.output
    line = _one_error_line(done.output)
    assert "--variant 'control=majority': control is already 'sole'" in line and "give each variant once" in line


@pytest.mark.parametrize("out", ["db", "wal", "default"])
def test_a_report_written_over_its_own_results_database_is_refused(tmp_path: Path, out: str) -> None:
    # A stand-in for a results database: the report must refuse before opening it.
    db = tmp_path / ("results.html" if out == "default" else "results.sqlite")
    db.write_bytes(b"results")
    page = {"db": db, "wal": db.with_name(db.name + "-wal"), "default": None}[out]
    done = runner.invoke(app, ["report", "--db", str(db), *(["--out", str(page)] if page is not None else [])])
    assert done.exit_code == 2, done.output
    assert "that is the results database itself" in _one_error_line(done.output)
    assert db.read_bytes() == b"results"


@pytest.mark.parametrize("value", ['"4"', "3.0", "true"])
def test_a_table_size_of_the_wrong_type_is_quoted_as_written_not_as_a_list(tmp_path: Path, value: str) -> None:
    toml = _tournament_file(tmp_path)
    toml.write_text(toml.read_text().replace("table_size = 3", f"table_size = {value}"))
    done = runner.invoke(app, ["tournament", "run", str(toml)])
    assert done.exit_code == 2, done.output
    line = next(line for line in done.output.splitlines() if "table_size" in line)
    assert "tournament.table_size: expected a whole number of players" in line and "list" not in line
    assert "Traceback" not in done.output


def test_an_endless_file_given_as_the_tournament_file_is_refused_not_read_into_memory() -> None:
    done = runner.invoke(app, ["tournament", "run", "/dev/zero"])
    assert done.exit_code == 2, done.output
    assert "/dev/zero: more than 16 MiB; a tournament file is a page of TOML" in _one_error_line(done.output)


@pytest.mark.parametrize(("key", "value"), [("alpha", "nan"), ("beta", "inf"), ("alpha", "-inf")])
def test_a_head_to_head_error_rate_that_is_not_finite_is_one_line_per_problem_not_a_traceback(
    tmp_path: Path, key: str, value: str
) -> None:
    toml = tmp_path / "t.toml"
    entrants = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(4))
    toml.write_text(
        '[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 3\nformat = "head-to-head"\na = "p0"\nb = "p1"\n'
        f"{key} = {value}\n" + entrants
    )
    done = runner.invoke(app, ["tournament", "run", str(toml)])
    assert done.exit_code == 2, done.output
    assert f"tournament.{key}: must be between 0 and 0.5, got {value}" in _one_error_line(done.output)


def test_a_replays_folder_named_like_the_results_database_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    toml = _tournament_file(tmp_path)
    toml.write_text(toml.read_text().replace("seed = 3\n", 'seed = 3\nreplays = "t.sqlite"\n'))
    done = runner.invoke(app, ["tournament", "run", str(toml)])
    assert done.exit_code == 2, done.output
    line = _one_error_line(done.output)
    assert "tournament.replays: " in line and "is where the results database goes" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.toml"]


@pytest.mark.parametrize("args", [["report", "--db", ""], ["report", "--db", "/"], ["replay", "view", ""]])
def test_an_empty_or_root_path_where_a_file_is_expected_is_one_line_not_a_traceback(args: list[str]) -> None:
    done = runner.invoke(app, args)
    assert done.exit_code == 2, done.output
    assert "is a folder; give" in _one_error_line(done.output)


def test_a_file_where_the_reports_viewer_pages_folder_goes_is_named_with_the_way_out(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    db.write_bytes(b"results")  # refused before the store is opened
    (tmp_path / "r-games").write_text("mine")
    done = runner.invoke(app, ["report", "--db", str(db)])
    assert done.exit_code == 2, done.output
    line = _one_error_line(done.output)
    assert f"its viewer pages go in {tmp_path / 'r-games'}, but" in line and "give --no-viewer" in line
    assert (tmp_path / "r-games").read_text() == "mine"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["tcp://127.0.0.1:99999"], "tcp://127.0.0.1:99999: the port must be 1 to 65535, got 99999"),
        (["tcp://127.0.0.1:8786", "--nworkers", "99999999999"], "--nworkers 99999999999: must be 1 to 1024 processes"),
    ],
)
def test_a_worker_start_that_cannot_work_is_one_line_before_any_dask_worker_starts(args: list[str], said: str) -> None:
    pytest.importorskip("distributed")
    done = runner.invoke(app, ["worker", "start", *args])
    assert done.exit_code == 2, done.output
    assert said in _one_error_line(done.output)


@pytest.mark.parametrize("command", [["replay", "show"], ["replay", "verify"], ["replay", "view"]])
def test_an_endless_file_given_as_a_replay_is_refused_past_the_bound(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /dev/zero has no end: every replay command read it whole into memory. The bound is 256 MiB;
    # here it is 1 MiB, so that the test reads no more than that of it.
    monkeypatch.setattr("referee.replay.MAX_REPLAY_BYTES", 1 << 20)
    monkeypatch.setattr("tournaments.hosting.viewer.reading.MAX_REPLAY_BYTES", 1 << 20)
    extra = ["--out", str(tmp_path / "zero.html")] if command[-1] == "view" else []
    result = runner.invoke(app, [*command, "/dev/zero", *extra])
    assert result.exit_code != 0
    assert (
        _one_error_line(result.output) == "famiglia: error: /dev/zero: over 1 MiB, more than any replay famiglia writes"
    )
