"""Values that cannot work, caught before anything runs: one problem line each, or None.

Shared by the tournament file (``tournaments.config``) and the command line
options, so ``time.startup_ms = 0`` and ``--startup-ms 0`` are refused alike,
for the same reason. Each check returns the problem in words that say what
to do, without the name of the setting; the caller puts the name in front.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_GAMES",
    "MAX_MS",
    "MAX_WORKERS",
    "MIN_STARTUP_MS",
    "count_problem",
    "file_target_problem",
    "folder_problem",
    "limit_problem",
    "time_problem",
]

MIN_STARTUP_MS = 100
"""Below this no bot can start: an interpreter alone takes tens of milliseconds, a sandbox more."""
MAX_MS = 7 * 24 * 3600 * 1000
"""A week: any clock beyond it is a typo (and would not fit the replay's numbers for long)."""
MAX_GAMES = 1_000_000
"""The most games one store schedules; more would take hours to plan and weeks to play."""
MAX_CONCURRENCY = 4096
"""Games at once: each starts 3 to 6 processes; more than this exhausts any machine's process table."""
MAX_WORKERS = 1024
"""Referee processes: one per core is the most that helps."""

# Each limit: the smallest value a bot can live with (0 always means no limit) and the largest that is not a typo.
_LIMIT_RANGES: dict[str, tuple[int, int, str]] = {
    "memory_mb": (32, 16 << 20, "MiB; below 32 no interpreter starts"),
    "cpu_s": (1, 365 * 24 * 3600, "CPU seconds"),
    "open_files": (16, 1 << 20, "descriptors; below 16 a bot cannot open its own runtime"),
    "file_mb": (1, 16 << 20, "MiB"),
    "processes": (1, 1 << 22, "processes"),
    "tmp_mb": (1, 16 << 20, "MiB"),
}


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def time_problem(key: str, value: object) -> str | None:
    """What is wrong with a clock setting (``move_ms``, ``bank_ms``, ``startup_ms``, ``margin_ms``, ``game_wall_ms``)."""
    if not _whole(value):
        return f"expected a whole number of milliseconds, {'1' if key == 'move_ms' else '0'} or more, got {value!r}"
    assert isinstance(value, int)
    if value > MAX_MS:
        return f"{value} ms is more than a week; give milliseconds (at most {MAX_MS})"
    if key == "startup_ms" and value < MIN_STARTUP_MS:
        return (
            f"{value} ms is too short for any bot to start (an interpreter alone takes tens of ms); "
            f"give at least {MIN_STARTUP_MS}"
        )
    if key == "move_ms" and value < 1:
        return f"must be at least 1 ms, got {value}"
    if key == "game_wall_ms" and 0 < value < MIN_STARTUP_MS:
        return f"{value} ms ends every game before its bots start; give 0 (no limit) or at least {MIN_STARTUP_MS}"
    if value < 0:
        return f"must be 0 or more milliseconds, got {value}"
    return None


def limit_problem(key: str, value: object) -> str | None:
    """What is wrong with a per-bot resource limit (0: no limit)."""
    if not _whole(value):
        return f"expected a whole number, 0 or more (0: no limit), got {value!r}"
    assert isinstance(value, int)
    low, high, unit = _LIMIT_RANGES[key]
    if value < 0:
        return f"must be 0 (no limit) or more, got {value}"
    if 0 < value < low or value > high:
        return f"{value} cannot work: give 0 (no limit) or {low} to {high} ({unit})"
    return None


def count_problem(value: object, *, low: int, high: int, what: str) -> str | None:
    """What is wrong with a count that must lie in ``low..high``."""
    if not _whole(value):
        return f"expected a whole number, got {value!r}"
    assert isinstance(value, int)
    if not low <= value <= high:
        return f"must be {low} to {high} {what}, got {value}"
    return None


def folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot be used (or made) as a folder to write in, or None."""
    here = folder
    while not here.exists():
        if here == here.parent:
            break
        here = here.parent
    if here == folder and not folder.is_dir():
        return f"{folder} is a file, not a folder"
    if not here.is_dir():
        return f"{here} is a file, so {folder} cannot be a folder"
    if not os.access(here, os.W_OK | os.X_OK) or _pseudo(here):
        return f"cannot write in {here}" + ("" if here == folder else f" to make {folder}")
    return None


def file_target_problem(path: Path) -> str | None:
    """Why a file cannot be written at ``path`` (its missing folders may be made), or None."""
    if str(path) in ("", "."):
        return "give a file name"
    if path.is_dir():
        return f"{path} is a folder; give a file name in it"
    return folder_problem(path.parent)


def _pseudo(folder: Path) -> bool:
    """Folders of the kernel's own file systems (/proc, /sys), where nothing can be created."""
    resolved = folder.resolve()
    return resolved.parts[1:2] in (("proc",), ("sys",))
