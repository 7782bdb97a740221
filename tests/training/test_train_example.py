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

from tests.conftest import ROOT, processes_in, wait_until_gone
from tests.tournaments.hosting.checkbot.bot_checks import failing, run_check

EXAMPLE = ROOT / "examples" / "train_vendetta"


ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _train(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(EXAMPLE / "train.py"), "--out", str(out), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=ENV, check=False)


def _bot_without_weights(tmp_path: Path) -> Path:
    bot = tmp_path / "trained"
    shutil.copytree(EXAMPLE / "bot", bot, ignore=shutil.ignore_patterns("weights.json", "__pycache__"))
    return bot


def _start_bot(bot: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "bot.py"], cwd=bot, capture_output=True, text=True, timeout=60, env=ENV, check=False
    )


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
    bot = _bot_without_weights(tmp_path)
    done = _start_bot(bot)
    assert done.returncode != 0
    missing = f"{bot / 'weights.json'} is missing: train the policy first (python examples/train_vendetta/train.py)"
    assert done.stderr.strip().splitlines() == [missing]


@pytest.mark.parametrize(
    ("content", "reason"),
    [("not json", "Expecting value"), ('{"other": 1}', "'weights'"), ('{"weights": [1, 2]}', "has 25 weights")],
)
def test_the_bot_with_weights_that_are_not_a_policy_says_so_in_one_line(
    tmp_path: Path, content: str, reason: str
) -> None:
    bot = _bot_without_weights(tmp_path)
    (bot / "weights.json").write_text(content, encoding="utf-8")
    done = _start_bot(bot)
    assert done.returncode != 0
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"{bot / 'weights.json'} is not a saved policy (") and reason in line
    assert line.endswith("train it again (python examples/train_vendetta/train.py)")


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--workers", "0"], "argument --workers: 0 is too few: give 1 or more"),
        (["--games", "many"], "argument --games: 'many' is not a whole number"),
        (["--population", "1"], "argument --population: 1 is too few: give 2 or more"),
    ],
)
def test_a_training_command_with_a_mistake_is_one_line(tmp_path: Path, option: list[str], message: str) -> None:
    done = _train(tmp_path / "weights.json", *option)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"train.py: {message} (--help lists the options)"]
    assert not (tmp_path / "weights.json").exists()


@pytest.mark.slow  # a training started, then killed
def test_a_training_killed_midway_leaves_no_process_and_the_last_policy_whole(tmp_path: Path) -> None:
    weights = tmp_path / "weights.json"
    weights.write_text('{"weights": [0.5]}\n', encoding="utf-8")
    trainer = subprocess.Popen(
        [sys.executable, str(EXAMPLE / "train.py"), "--out", str(weights), "--check-games", "8"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        env=ENV,
    )
    try:
        assert trainer.stdout is not None and trainer.stdout.readline().startswith(b"before training: ")
        assert len(processes_in(tmp_path)) == 3  # the trainer and its two game processes
    finally:
        trainer.kill()
        trainer.wait()
    assert wait_until_gone(tmp_path, seconds=120) == [], "game processes outlived their trainer"
    assert weights.read_text(encoding="utf-8") == '{"weights": [0.5]}\n'
