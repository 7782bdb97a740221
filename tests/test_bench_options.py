"""The benchmarks of the referee refuse a bad option in one usage line, before measuring anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


# referee.py, referee_loopback.py and busy.py take times through bench/machine.py's positive_seconds;
# fairness.py's counts go through its own bounded_count, busy.py's loops through bounded_loops.
@pytest.mark.parametrize(
    ("script", "option", "complaint"),
    [
        ("bench/referee.py", ["--seconds", "0"], "the time to measure must be more than 0 seconds"),
        ("bench/referee_loopback.py", ["--seconds", "nan"], "the time to measure must be more than 0 seconds"),
        ("bench/referee_loopback.py", ["--seconds", "ten"], "'ten' is not a number of seconds"),
        ("bench/referee.py", ["--players", "7"], "invalid choice: 7 (choose from 3, 4, 5)"),
        ("bench/fairness.py", ["--games", "0"], "'0': the number of deals must be from 1 to 10000"),
        ("bench/fairness.py", ["--spinners", "-4"], "'-4': the number of spinners must be from 1 to 127"),
        ("bench/fairness.py", ["--loops", "0"], "'0': the number of busy loops must be from 1 to 1024"),
        ("bench/fairness.py", ["--loops", "many"], "argument --loops: 'many' is not a whole number"),
        ("bench/fairness.py", ["--think-ms", "-10"], "'-10': the thinking time in ms must be from 1 to 1000"),
        (
            "bench/fairness.py",
            ["--level", "loose"],
            "invalid choice: 'loose' (choose from 'none', 'standard', 'strict')",
        ),
        ("bench/fairness.py", ["--scenario", "both"], "invalid choice: 'both' (choose from 'spin', 'load', 'all')"),
        ("bench/fairness.py", ["--clock", "sun"], "invalid choice: 'sun' (choose from 'wall', 'cpu')"),
        ("bench/concurrency.py", ["--clock", "sun"], "invalid choice: 'sun' (choose from 'wall', 'cpu')"),
        ("bench/output_cost.py", ["--when", "during"], "invalid choice: 'during' (choose from 'before', 'after')"),
        ("bench/busy.py", ["--seconds", "0"], "the time to measure must be more than 0 seconds"),
        ("bench/busy.py", ["--slice", "nan"], "the time to measure must be more than 0 seconds"),
        ("bench/busy.py", ["--loops", "99"], "'99': the number of busy loops must be from 0 to 64"),
        ("bench/busy.py", ["--loops", "some"], "argument --loops: 'some' is not a whole number"),
        ("bench/training.py", ["--seconds", "0"], "the time to measure must be more than 0 seconds"),
        ("bench/training.py", ["--slice", "nan"], "the time to measure must be more than 0 seconds"),
        ("bench/training.py", ["--players", "2"], "invalid choice: 2 (choose from 3, 4, 5)"),
    ],
)
def test_a_bad_option_is_one_usage_error(script: str, option: list[str], complaint: str) -> None:
    done = subprocess.run(
        [sys.executable, script, *option], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert complaint in done.stderr.splitlines()[-1] and "Traceback" not in done.stderr
