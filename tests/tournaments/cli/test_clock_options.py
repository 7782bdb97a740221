"""The clock options a careless user can get wrong: one line, exit 2, nothing started."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import TEST_BOTS
from tournaments.cli import app


def test_play_refuses_an_unknown_clock_in_one_line() -> None:
    passer = str(TEST_BOTS / "passer")
    done = CliRunner().invoke(app, ["play", "vendetta", passer, passer, passer, "--clock", "fast"])
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == ["famiglia: error: --clock 'fast': choose wall or cpu"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('clock = "fast"', "tournament.time.clock: 'fast' is not wall or cpu"),
        ("ponder = 3", "tournament.time.ponder: expected a bool, got 3"),
        ('ponder = "yes"', "tournament.time.ponder: expected a bool"),
    ],
)
def test_a_tournament_file_with_a_wrong_clock_or_ponder_is_refused_before_anything_starts(
    tmp_path: Path, line: str, message: str
) -> None:
    entrants = "".join(f'[[entrant]]\nname = "p{i}"\nbot = "{TEST_BOTS / "passer"}"\n' for i in range(3))
    toml = tmp_path / "t.toml"
    toml.write_text(
        f'[tournament]\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\n[tournament.time]\n{line}\n{entrants}'
    )
    done = CliRunner().invoke(app, ["tournament", "run", str(toml), "--workers", "1"])
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.output
    assert not (tmp_path / "t.sqlite").exists()
