"""Whether a value naming a folder or a file can be written there: the replays folder, ``--db``, ``--out``.

Each check returns the problem in words that say what to do, without the
name of the setting or option; the caller puts the name in front.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["file_target_problem", "folder_problem"]


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
