"""Shared test fixtures: paths to the test bots and a tournament file writer."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEST_BOTS = ROOT / "tests" / "bots"
SAMPLE_BOTS = ROOT / "sample_bots"


@pytest.fixture
def passer_bot() -> Path:
    return TEST_BOTS / "passer"


def live_processes() -> Iterator[tuple[int, Path, list[str]]]:
    """(pid, /proc entry, the stat fields after the command name) of every live (non-zombie) process."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            yield int(entry.name), entry, fields


def processes_in(folder: Path) -> list[int]:
    """Pids of live processes whose working folder is ``folder``."""
    found = []
    for pid, entry, _ in live_processes():
        try:
            if Path(os.readlink(entry / "cwd")) == folder:
                found.append(pid)
        except OSError:
            continue
    return found


def workers_of(parent: int) -> list[int]:
    """Pids of the live tournament worker processes (``tournaments.executors.processes``) whose parent is ``parent``."""
    found = []
    for pid, entry, fields in live_processes():
        try:
            if fields[1] == str(parent) and b"tournaments.executors.processes" in (entry / "cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


def wait_until_gone(folder: Path, seconds: float = 10.0) -> list[int]:
    """Wait for every process working in ``folder`` to exit; the pids still alive."""
    deadline = time.monotonic() + seconds
    while (alive := processes_in(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive
