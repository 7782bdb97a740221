"""Liar's dice (tests/referee/games/liars_dice.py) registered as a game plug-in, for the
viewer's tests of a game that brings no drawing of its own.

A distribution is written by hand into a folder, as pip lays one out: its
metadata and its ``famiglia.games`` entry point, naming the module the test
suite already imports. Putting the folder on sys.path registers the game.
"""

from __future__ import annotations

from pathlib import Path

GAME = "liars_dice"
ENTRY_POINT = "tests.referee.games.liars_dice:RULES"


def register(site: Path) -> Path:
    """Write the distribution into ``site``; put ``site`` on sys.path (or PYTHONPATH) to register it."""
    info = site / "liars_dice_plugin-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: liars-dice-plugin\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[famiglia.games]\n{GAME} = {ENTRY_POINT}\n", encoding="utf-8")
    return site
