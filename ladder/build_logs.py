"""Each version's build output, kept for its owner: what a failed build said, all of it (bounded).

The reason on an entrant's page is one line (a failed build's first error);
the output it came from is kept here, one file per version under the ladder's
data folder (``LADDER-data/builds/version-ID.txt``, 0600 like the uploads):
its first and last 32 KiB when it was longer (``referee.build.OUTPUT_ENDS``).
No file means no build ran: the bot has no build command, it was refused
before building, or it was checked before the ladder kept build output.
A version checked again (after a restart) has its file written again.
"""

from __future__ import annotations

from pathlib import Path

from ladder.config import LadderPaths
from referee.private import make_private_dirs, write_private

__all__ = ["build_log", "keep_build_log"]


def _path(paths: LadderPaths, version_id: int) -> Path:
    return paths.data / "builds" / f"version-{version_id}.txt"


def keep_build_log(paths: LadderPaths, version_id: int, output: str | None) -> None:
    """Keep ``output`` as version ``version_id``'s build output; None (no build ran) keeps none.

    A disk that refuses the file costs the entrant this help, never the verdict or the ladder: the
    error is not raised (the version's page then says no output is kept).
    """
    path = _path(paths, version_id)
    try:
        if output is None:
            path.unlink(missing_ok=True)
            return
        make_private_dirs(path.parent)
        write_private(path, output.encode("utf-8", "replace"))
    except OSError:
        pass


def build_log(paths: LadderPaths, version_id: int) -> str | None:
    """Version ``version_id``'s kept build output; None when none is kept (or none can be read)."""
    try:
        return _path(paths, version_id).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
