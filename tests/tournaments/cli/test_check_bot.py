"""``famiglia check-bot`` (tournaments.cli.check_bot): its exit codes, its JSON, and one line per user mistake.

The checks run for real (real processes), with a short clock.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import SAMPLE_BOTS, TEST_BOTS
from tournaments.cli import app

pytestmark = pytest.mark.slow

runner = CliRunner()


def test_cli_exit_codes_and_json() -> None:
    passed = runner.invoke(app, ["check-bot", str(SAMPLE_BOTS / "random_py"), "--json", "--move-ms", "300"])
    assert passed.exit_code == 0, passed.output
    report = json.loads(passed.output)
    assert report["passed"] is True and report["thinking"]["decisions"] > 0
    failed = runner.invoke(app, ["check-bot", str(TEST_BOTS / "hostile" / "wrong_id"), "--move-ms", "300"])
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


def test_a_failing_build_is_a_failed_check_with_exit_1(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_text(
        'name = "broken"\ncommand = "./bot"\nbuild = "sh -c \'echo no compiler >&2; exit 3\'"\n'
    )
    result = runner.invoke(app, ["check-bot", str(tmp_path), "--json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert [(c["name"], c["status"]) for c in report["checks"]] == [("build", "fail")]
    assert "no compiler" in report["checks"][0]["detail"]
