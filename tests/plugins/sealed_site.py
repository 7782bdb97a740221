"""The example simultaneous game (examples/famiglia-sealed) registered as a plug-in without pip.

A distribution is written by hand into a folder, as pip lays one out: its
metadata and its ``famiglia.games`` entry point naming ``famiglia_sealed:RULES``.
Putting that folder and the example's own folder on sys.path (or PYTHONPATH, for
a ``famiglia`` subprocess) registers the game for one test.
"""

from __future__ import annotations

import sys
from pathlib import Path

GAME = "sealed"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "famiglia-sealed"
BOTS = EXAMPLE / "bots"


def register(site: Path) -> list[Path]:
    """Write the distribution into ``site``; the folders to put on the path to register the game."""
    info = site / "famiglia_sealed-0.1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: famiglia-sealed\nVersion: 0.1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[famiglia.games]\n{GAME} = famiglia_sealed:RULES\n", encoding="utf-8")
    return [site, EXAMPLE]


def forget() -> None:
    """Drop the imported example, so a later test without it on the path does not find it in sys.modules."""
    for name in [m for m in sys.modules if m == "famiglia_sealed" or m.startswith("famiglia_sealed.")]:
        del sys.modules[name]
