"""The example plug-in game (examples/famiglia-sotto) installed by pip into a folder of its own.

For tests that need Sotto registered without installing it into the virtualenv
(where every other test would see it): put the folder on ``sys.path`` in the
test's process, or on ``PYTHONPATH`` for a ``famiglia`` subprocess. The same
install as tests/referee/games/test_plugins.py does: the source copied first,
so the build leaves nothing in the checkout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "famiglia-sotto"
EXAMPLE_BOT = EXAMPLE / "bot"


def install_sotto(work: Path) -> Path:
    """Install the example under ``work``; the folder to put on the path (it holds the dist-info too)."""
    source = work / "source"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = work / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(target), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return target


def forget_sotto() -> None:
    """Drop the imported example, so a later test without it on the path does not find it in sys.modules."""
    for name in [m for m in sys.modules if m == "famiglia_sotto" or m.startswith("famiglia_sotto.")]:
        del sys.modules[name]
