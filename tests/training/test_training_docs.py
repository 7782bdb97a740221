"""docs/training.md's Python blocks run as a reader would run them, each in a fresh interpreter."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from tests.conftest import ROOT
from tests.training.test_policy_bot import _lines

PAGE = ROOT / "docs" / "training.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)


def _run(code: str, cwd: Path, stdin: bytes = b"", timeout: float = 300) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, input=stdin, capture_output=True, timeout=timeout, env=env, check=False
    )


def test_the_page_holds_the_blocks_these_tests_run() -> None:
    blocks = _blocks()
    assert len(blocks) == 5
    assert "agent_iter" in blocks[0] and "REINFORCE" in blocks[1] and "serve_policy" in blocks[2]
    assert "OpponentsEnv" in blocks[3] and "sample_states" in blocks[4]


def test_the_first_environment_runs(tmp_path: Path) -> None:
    done = _run(_blocks()[0], tmp_path)
    assert done.returncode == 0, done.stderr.decode()


@pytest.mark.slow  # some 10 s: 200 games of training
def test_the_example_trains_then_plays_its_weights_as_a_bot(tmp_path: Path) -> None:
    blocks = _blocks()
    trained = _run(blocks[1], tmp_path)
    assert trained.returncode == 0, trained.stderr.decode()
    assert re.fullmatch(rb"player_0 won \d+ of 200 games; a random player wins about a third\n", trained.stdout)
    assert (tmp_path / "weights.npy").is_file()
    lines, asked = _lines("sicilianos", 3, 5, 40)
    played = _run(blocks[2], tmp_path, stdin=lines)
    assert played.returncode == 0, played.stderr.decode()
    answers = [msgspec.json.decode(line) for line in played.stdout.splitlines()]
    assert answers[0] == {"type": "ready", "name": "linear"}
    assert [answer["id"] for answer in answers[1:]] == asked


@pytest.mark.slow
def test_the_real_bots_example_runs() -> None:
    if shutil.which("gcc") is None or shutil.which("node") is None:
        pytest.skip("the example's opponents need gcc and node")
    done = _run(_blocks()[3], ROOT)
    assert done.returncode == 0, done.stderr.decode()
    assert re.fullmatch(rb"-?[\d.]+ \[\d, \d, \d, \d\]\n", done.stdout), done.stdout


def test_the_forward_model_example_searches(tmp_path: Path) -> None:
    done = _run(_blocks()[4], tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    rows = done.stdout.decode().splitlines()
    assert len(rows) > 1 and all(re.fullmatch(r"Draw\(colour='\w+'\) [\d.]+", row) for row in rows), rows
