"""The bounds beyond which a value is a typo, and the checks of folders, files and counts the command line shares.

A setting's own range is declared with the setting (``tournaments.settings``,
``referee.settings.BotLimits``). Each check here returns the problem in words
that say what to do, without the name of the setting; the caller puts the
name in front.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_GAMES",
    "MAX_MS",
    "MAX_SEED",
    "MAX_WORKERS",
    "MIN_STARTUP_MS",
    "count_problem",
    "file_target_problem",
    "folder_problem",
    "seed_problem",
]

MIN_STARTUP_MS = 100
"""Below this no bot can start: an interpreter alone takes tens of milliseconds, a sandbox more."""
MAX_MS = 7 * 24 * 3600 * 1000
"""A week: any clock beyond it is a typo (and would not fit the replay's numbers for long)."""
MAX_GAMES = 1_000_000
"""The most games one store schedules; more would take hours to plan and weeks to play."""
MAX_SEED = 2**63 - 1
"""Deal seeds are 63 bits: they fit a signed SQLite INTEGER and a replay's numbers in every JSON reader."""
MAX_CONCURRENCY = 4096
"""Games at once: each starts 3 to 6 processes; more than this exhausts any machine's process table."""
MAX_WORKERS = 1024
"""Referee processes: one per core is the most that helps."""


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def count_problem(value: object, *, low: int, high: int, what: str) -> str | None:
    """What is wrong with a count that must lie in ``low..high``."""
    if not _whole(value):
        return f"expected a whole number, got {value!r}"
    assert isinstance(value, int)
    if not low <= value <= high:
        return f"must be {low} to {high} {what}, got {value}"
    return None


def seed_problem(value: object) -> str | None:
    """What is wrong with a seed: ``famiglia play --seed`` and a tournament file's ``seed`` share this rule."""
    if not _whole(value):
        return f"expected a whole number from 0 to {MAX_SEED}, got {value!r}"
    assert isinstance(value, int)
    if not 0 <= value <= MAX_SEED:
        return f"give a whole number from 0 to {MAX_SEED} (63 bits), got {value}"
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
