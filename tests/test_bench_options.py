"""The benchmarks of the referee refuse a bad option in one usage line, before measuring anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


# Both scripts take --seconds through bench/machine.py's positive_seconds.
@pytest.mark.parametrize(
    ("script", "option", "complaint"),
    [
        ("bench/referee.py", ["--seconds", "0"], "the time to measure must be more than 0 seconds"),
        ("bench/referee_loopback.py", ["--seconds", "nan"], "the time to measure must be more than 0 seconds"),
        ("bench/referee_loopback.py", ["--seconds", "ten"], "'ten' is not a number of seconds"),
        ("bench/referee.py", ["--players", "7"], "invalid choice: 7 (choose from 3, 4, 5)"),
    ],
)
def test_a_bad_option_is_one_usage_error(script: str, option: list[str], complaint: str) -> None:
    done = subprocess.run(
        [sys.executable, script, *option], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert complaint in done.stderr.splitlines()[-1] and "Traceback" not in done.stderr
