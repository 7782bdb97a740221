"""A tournament file's value is applied as given, refused in one line, or its change is said: never ignored in silence.

Through ``famiglia tournament run`` (and ``play`` for the seed), as a host meets them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import TEST_BOTS
from tournaments.cli import app
from tournaments.config.notes import config_notes
from tournaments.config.tournament import parse_tournament
from tournaments.lifecycle.opening import open_tournament
from tournaments.lifecycle.plan import build_schedule
from tournaments.store import Store

runner = CliRunner()
PASSER = str(TEST_BOTS / "passer")


def tournament_file(folder: Path, body: str, entrants: int = 4, name: str = "t.toml") -> Path:
    path = folder / name
    bots = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(entrants))
    path.write_text('[tournament]\ngame = "vendetta"\n' + body + bots)
    return path


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("famiglia: error:")]


@pytest.mark.parametrize(
    ("body", "key", "user"),
    [
        ('table_size = 3\nhero = "p0"\n', "hero", "gauntlet"),
        ('format = "head-to-head"\na = "p0"\nb = "p1"\ntable_size = 3\nrepetitions = 2\n', "repetitions", "round-robin"),
        ('format = "gauntlet"\nhero = "p0"\ntable_size = 3\nrepetitions = 2\n', "repetitions", "round-robin"),
        ("table_size = 3\n[tournament.format]\nmax_games = 40\n", "max_games", "head-to-head"),
        ('format = "gauntlet"\nhero = "p0"\ntable_size = 3\nelo1 = 30\n', "elo1", "head-to-head"),
    ],
    ids=["hero in a round-robin", "repetitions in a head-to-head", "repetitions in a gauntlet",
         "max_games in a round-robin", "elo1 in a gauntlet"],
)  # fmt: skip
def test_a_format_key_the_format_does_not_use_is_refused_naming_the_format_that_does(
    tmp_path: Path, body: str, key: str, user: str
) -> None:
    result = runner.invoke(app, ["tournament", "run", str(tournament_file(tmp_path, body))])
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result.output)
    assert f"does not use {key}" in line and f'"{user}", which uses it' in line
    assert not (tmp_path / "t.sqlite").exists()


def test_the_seed_play_refuses_is_refused_by_a_tournament_file_in_the_same_words(tmp_path: Path) -> None:
    file_result = runner.invoke(
        app, ["tournament", "run", str(tournament_file(tmp_path, "table_size = 3\nseed = -1\n"))]
    )
    play_result = runner.invoke(app, ["play", "vendetta", PASSER, PASSER, PASSER, "--seed", "-1"])
    assert file_result.exit_code == play_result.exit_code == 2
    (in_file,) = error_lines(file_result.output)
    (in_play,) = error_lines(play_result.output)
    assert in_file.endswith(in_play.removeprefix("famiglia: error: --seed -1: "))
    assert "tournament.seed: give a whole number from 0 to 9223372036854775807" in in_file


def test_a_binary_tournament_file_is_one_line_naming_it_with_exit_2(tmp_path: Path) -> None:
    binary = tmp_path / "club.toml"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe\x00\x00")
    result = runner.invoke(app, ["tournament", "run", str(binary)])
    assert result.exit_code == 2
    assert (
        result.output.strip()
        == f"famiglia: error: {binary}: not UTF-8 text (byte 8); give the tournament file (TOML), saved as UTF-8"
    )


def test_a_rounded_games_per_entrant_is_said_before_anything_runs(tmp_path: Path) -> None:
    toml = tournament_file(tmp_path, "table_size = 3\ngames_per_entrant = 7\n")
    # The --db is a folder: refused after the file is read, so nothing is played.
    result = runner.invoke(app, ["tournament", "run", str(toml), "--db", str(tmp_path)])
    assert result.exit_code == 2
    assert "famiglia: note: " in result.output
    assert "games_per_entrant = 7 gives each entrant 18 games at tables of 3" in result.output
    assert "give games_per_entrant = 18 to say so" in result.output


def _config(tmp_path: Path, body: str, entrants: int = 4) -> object:
    path = tournament_file(tmp_path, body, entrants)
    return parse_tournament(tomllib.loads(path.read_text()), base=tmp_path)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('format = "gauntlet"\nhero = "p0"\ntable_size = 4\ngames_per_entrant = 5\n', "gives p0 8 games"),
        ('format = "head-to-head"\na = "p0"\nb = "p1"\ntable_size = 3\nmax_games = 40\n', "max_games = 40 schedules 36"),
        ('table_size = 3\nsandbox = "none"\n[tournament.limits]\nmemory_mb = 64\n', "not applied at sandbox level none"),
        ("table_size = 3\nconcurrency = 2\nworkers = 3\n", "concurrency = 2 becomes 3"),
        ('table_size = 3\n[tournament.executor]\nscheduler = "tcp://h:8786"\n', "executor.kind is local"),
    ],
    ids=["gauntlet count", "head-to-head budget", "limits without a sandbox", "concurrency below the workers",
         "a scheduler for the local executor"],
)  # fmt: skip
def test_each_value_changed_or_not_applied_gets_a_note(tmp_path: Path, body: str, said: str) -> None:
    from tournaments.config.tournament import TournamentConfig

    config = _config(tmp_path, body)
    assert isinstance(config, TournamentConfig)
    (note,) = config_notes(config)
    assert said in note


def test_a_value_applied_as_given_gets_no_note(tmp_path: Path) -> None:
    from tournaments.config.tournament import TournamentConfig

    config = _config(tmp_path, "table_size = 3\ngames_per_entrant = 18\n")
    assert isinstance(config, TournamentConfig) and config_notes(config) == []


def test_a_head_to_head_note_gives_the_count_the_schedule_holds(tmp_path: Path) -> None:
    from tournaments.config.tournament import TournamentConfig

    config = _config(tmp_path, 'format = "head-to-head"\na = "p0"\nb = "p1"\ntable_size = 3\nmax_games = 40\n')
    assert isinstance(config, TournamentConfig)
    assert len(build_schedule(config, b"k")) == 36


def test_deals_from_a_store_of_another_tournament_is_refused(tmp_path: Path) -> None:
    from tournaments.config.tournament import TournamentConfig

    theirs = _config(tmp_path, "table_size = 3\nseed = 1\n")
    assert isinstance(theirs, TournamentConfig)
    other = Store(tmp_path / "other.sqlite")
    open_tournament(other, theirs)  # scheduled, nothing played: its deal key is what counts
    other.close()
    mine = tournament_file(tmp_path, "table_size = 3\nseed = 2\n", name="mine.toml")
    result = runner.invoke(app, ["tournament", "run", str(mine), "--deals-from", str(tmp_path / "other.sqlite")])
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result.output)
    assert "holds another tournament" in line and "seed (2 here, 1 there)" in line
    assert not (tmp_path / "mine.sqlite").exists()


def test_a_bot_given_as_a_toml_file_not_named_bot_toml_is_refused_naming_it(tmp_path: Path) -> None:
    # The folder's bot.toml used to be read instead, and its errors named that file.
    (tmp_path / "bot.toml").write_text('name = "x"\ncommand = "python3 bot.py"\n')
    other = tmp_path / "mine.toml"
    other.write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe")
    result = runner.invoke(app, ["play", "vendetta", str(other), PASSER, PASSER])
    assert result.exit_code == 2
    (line,) = error_lines(result.output)
    assert line.startswith(f"famiglia: error: {other}: ") and "rename it bot.toml" in line
