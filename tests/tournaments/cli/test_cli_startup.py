"""famiglia starts at once (issue 30): the command tree imports none of the heavy libraries behind the commands.

A check of what is imported, not of how long it takes: the times are in
bench/cli_startup.py. Each check runs in a fresh interpreter, since this test
process has imported everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "scipy", "openskill", "jinja2", "distributed", "dask", "choix", "threadpoolctl", "pydantic")
"""Libraries that cost tens of milliseconds each to import and that only some commands use.

pydantic is Typer's: it checks option values with it, so a command that runs
imports it, but asking for help must not (tournaments.cli.common.QuickHelp).
"""


def heavy_in(modules: list[str]) -> list[str]:
    return sorted({name for name in modules if name.split(".")[0] in HEAVY})


def test_importing_the_cli_and_building_its_command_tree_imports_no_heavy_library() -> None:
    program = (
        "import json, sys\n"
        "import tournaments.cli\n"
        "from typer.main import get_command\n"
        "command = get_command(tournaments.cli.app)\n"
        # Every command's options, as help and completion see them.
        "assert command.list_commands(None) and all(command.get_command(None, n) for n in command.list_commands(None))\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout)
    assert "tournaments.cli.play" in modules and "tournaments.cli.reports" in modules
    assert heavy_in(modules) == []


def imported_by(args: list[str]) -> list[str]:
    """The modules ``famiglia ARGS`` imports, as ``python -X importtime`` lists them; it must exit 0."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tournaments.cli", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: ")
    rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")]
    return [row[2].strip() for row in rows if len(row) == 3 and row[1].strip().isdigit()]


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["play", "--help"],
        ["check-bot", "--help"],
        ["tournament", "run", "--help"],
        ["replay", "view", "--help"],
        ["standings", "--help"],
        ["report", "--help"],
    ],
    ids=" ".join,
)
def test_asking_for_help_imports_no_heavy_library(args: list[str]) -> None:
    modules = imported_by(args)
    assert "tournaments.cli" in modules  # the listing is the real one
    assert heavy_in(modules) == []
