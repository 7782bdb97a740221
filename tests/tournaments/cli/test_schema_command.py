"""famiglia schema GAME: a careless user's --out and game get one line each."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tournaments.cli import app

runner = CliRunner()


def one_line(args: list[str]) -> str:
    done = runner.invoke(app, args)
    lines = done.output.strip().splitlines()
    assert done.exit_code == 2 and len(lines) == 1 and lines[0].startswith("famiglia: error: "), done.output
    return lines[0]


def test_an_out_file_in_a_folder_that_does_not_exist_names_the_folder(tmp_path: Path) -> None:
    line = one_line(["schema", "vendetta", "--out", str(tmp_path / "missing" / "v.json")])
    assert f"there is no folder {tmp_path / 'missing'}" in line and ".tmp" not in line


def test_an_out_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    assert "is a folder" in one_line(["schema", "vendetta", "--out", str(tmp_path)])


def test_a_game_name_is_matched_as_written() -> None:
    assert "unknown game 'VENDETTA'" in one_line(["schema", "VENDETTA"])


def test_a_shipped_games_schema_is_the_one_protocol_ships_for_it() -> None:
    done = runner.invoke(app, ["schema", "vendetta"])
    assert done.exit_code == 0, done.output
    defs = json.loads(done.output)["$defs"]
    assert {"VendettaRefereeMessage", "VendettaBotMessage"} <= set(defs)
    shipped = json.loads((Path(__file__).parents[3] / "protocol" / "schema.json").read_text())["$defs"]
    assert defs["VendettaAction"] == shipped["VendettaAction"]
