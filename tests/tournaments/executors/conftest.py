"""Fixtures of the executors' tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def bot_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A bot cache of each test module's own, traversable by the bots' uids."""
    folder = tmp_path_factory.mktemp("bot-cache")
    os.chmod(folder.parent, 0o755)
    os.chmod(folder, 0o755)
    before = os.environ.get("FAMIGLIA_BOT_CACHE")
    os.environ["FAMIGLIA_BOT_CACHE"] = str(folder / "bots")
    yield folder / "bots"
    if before is None:
        os.environ.pop("FAMIGLIA_BOT_CACHE", None)
    else:
        os.environ["FAMIGLIA_BOT_CACHE"] = before
