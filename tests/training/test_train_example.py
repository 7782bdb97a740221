"""examples/train_vendetta: a tiny training run saves a policy, and the policy entered as a bot passes check-bot.

The full run (some minutes) and its 200-game tournament are measured by
examples/train_vendetta/measure.py and recorded in docs/training.md.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.tournaments.hosting.checkbot.bot_checks import failing, run_check

EXAMPLE = ROOT / "examples" / "train_vendetta"


def _train(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, str(EXAMPLE / "train.py"), "--out", str(out), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, check=False)


@pytest.mark.slow  # some 10 s: a few dozen games of training, then check-bot's games
def test_a_tiny_training_run_saves_a_policy_that_check_bot_passes(tmp_path: Path) -> None:
    bot = tmp_path / "trained"
    shutil.copytree(EXAMPLE / "bot", bot, ignore=shutil.ignore_patterns("weights.json", "__pycache__"))
    tiny = ("--iterations", "2", "--population", "4", "--games", "3", "--check-games", "8", "--workers", "1")
    done = _train(bot / "weights.json", *tiny)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"before training: won \d+\.\d% of 8 games .*", lines[0]), lines
    assert re.fullmatch(r"after training: won \d+\.\d% of 8 games .*", lines[-2]), lines
    saved = json.loads((bot / "weights.json").read_text(encoding="utf-8"))
    assert len(saved["weights"]) == 25 and saved["check_games"] == 8
    assert any(saved["weights"]), "the training moved the weights from where they started"
    tmp_path.chmod(0o755)
    report = run_check(bot, "vendetta")
    assert failing(report) == [], [r for r in report.checks if r.status == "fail"]
    assert report.passed and report.thinking.decisions > 50


def test_the_bot_without_weights_says_to_train_first(tmp_path: Path) -> None:
    bot = tmp_path / "trained"
    shutil.copytree(EXAMPLE / "bot", bot, ignore=shutil.ignore_patterns("weights.json", "__pycache__"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "bot.py"], cwd=bot, capture_output=True, text=True, timeout=60, env=env, check=False
    )
    assert done.returncode != 0
    missing = f"{bot / 'weights.json'} is missing: train the policy first (python examples/train_vendetta/train.py)"
    assert done.stderr.strip().splitlines() == [missing]
