"""Shared test fixtures: paths to the test bots and a tournament file writer."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEST_BOTS = ROOT / "tests" / "bots"
SAMPLE_BOTS = ROOT / "sample_bots"


@pytest.fixture
def passer_bot() -> Path:
    return TEST_BOTS / "passer"


def processes_in(folder: Path) -> list[int]:
    """Pids of live (non-zombie) processes whose working folder is ``folder``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if Path(os.readlink(entry / "cwd")) != folder:
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(int(entry.name))
    return found


def wait_until_gone(folder: Path, seconds: float = 10.0) -> list[int]:
    """Wait for every process working in ``folder`` to exit; the pids still alive."""
    deadline = time.monotonic() + seconds
    while (alive := processes_in(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive
