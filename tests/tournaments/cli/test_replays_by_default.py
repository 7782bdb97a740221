"""Replays are kept unless the tournament file says ``replays = false``, and a run that keeps none says so.

A file without a ``replays`` key used to keep none, in silence, and ``famiglia report``
then had no game pages. Now its replays go beside the results database (as the demo's
do: ``club.sqlite``, ``club-replays/``), and turning them off is a key of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import TEST_BOTS
from tournaments.cli import app

runner = CliRunner()
PASSER = str(TEST_BOTS / "passer")


def tournament_file(folder: Path, extra: str = "") -> Path:
    """Three passers at one 3-player Vendetta table, one round a game: 6 short games."""
    path = folder / "club.toml"
    bots = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(3))
    path.write_text(
        '[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 3\nworkers = 1\n'
        + extra
        + '\n[tournament.variants]\nround_limit = "1"\n'
        + bots
    )
    return path


def replays_listed(db: Path) -> list[str | None]:
    done = runner.invoke(app, ["games", "--db", str(db), "--format", "json"])
    assert done.exit_code == 0, done.output
    return [game["replay"] for game in json.loads(done.output)]


def test_a_file_without_a_replays_key_keeps_them_beside_the_results_database(tmp_path: Path) -> None:
    toml = tournament_file(tmp_path)
    db = tmp_path / "results" / "club.sqlite"
    done = runner.invoke(app, ["tournament", "run", str(toml), "--db", str(db)])
    assert done.exit_code == 0, done.output
    assert "replays: off" not in done.output
    replays = replays_listed(db)
    assert len(replays) == 6
    folder = tmp_path / "results" / "club-replays"
    for replay in replays:
        assert replay is not None and Path(replay).is_file() and Path(replay).is_relative_to(folder)
    report = runner.invoke(app, ["report", "--db", str(db)])
    assert report.exit_code == 0, report.output
    assert len(list((tmp_path / "results" / "club-games").glob("game-*.html"))) == 6 * 4  # the page and each seat's


def test_replays_false_keeps_none_and_the_run_says_so_in_one_line(tmp_path: Path) -> None:
    toml = tournament_file(tmp_path, "replays = false\n")
    done = runner.invoke(app, ["tournament", "run", str(toml)])
    assert done.exit_code == 0, done.output
    (said,) = [line for line in done.output.splitlines() if "replays:" in line]
    assert said == (
        f"famiglia: note: {toml}: replays: off (replays = false in club.toml): the report will have no game pages, "
        "and no bot's stderr is kept (it goes beside the replay)"
    )
    assert replays_listed(tmp_path / "club.sqlite") == [None] * 6
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == []
    report = runner.invoke(app, ["report", "--db", str(tmp_path / "club.sqlite")])
    assert report.exit_code == 0, report.output
    (warning,) = [line for line in report.output.splitlines() if "warning" in line]
    assert warning == (
        "famiglia: warning: 6 of 6 games have no replay: kept none (their run had replays off); "
        "the report lists them without a replay or viewer page"
    )


@pytest.mark.parametrize(("value", "said"), [("5", "got 5"), ('""', "empty")])
def test_a_replays_value_that_is_no_folder_nor_false_is_one_line_naming_both_choices(
    tmp_path: Path, value: str, said: str
) -> None:
    toml = tournament_file(tmp_path, f"replays = {value}\n")
    done = runner.invoke(app, ["tournament", "run", str(toml)])
    assert done.exit_code == 2, done.output
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"famiglia: error: {toml}: tournament.replays: "), done.output
    assert said in lines[0] and "replays = false" in lines[0]
    assert not (tmp_path / "club.sqlite").exists()


def test_a_file_where_the_default_replays_folder_goes_is_named_with_the_ways_out(tmp_path: Path) -> None:
    toml = tournament_file(tmp_path)
    (tmp_path / "club-replays").write_text("mine")
    done = runner.invoke(app, ["tournament", "run", str(toml)])
    assert done.exit_code == 2, done.output
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert len(lines) == 1, done.output
    default = tmp_path / "club-replays"
    assert f"tournament.replays: not given, so replays go beside the results database in {default}" in lines[0]
    assert "replays = false" in lines[0]
    assert (tmp_path / "club-replays").read_text() == "mine"
