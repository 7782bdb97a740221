"""A bot shipped to Dask workers is packed once by the host: the package is checked against the run's pin."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import msgspec
import pytest

from referee.bots import load_bot
from referee.pinning import BotChangedDuringRun, bot_fingerprint
from tests.conftest import TEST_BOTS
from tournaments.hosting.executors.dask import ship_entrants


def test_a_folder_changed_since_the_run_pinned_it_is_not_shipped(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    shutil.copytree(TEST_BOTS / "passer", folder, ignore=shutil.ignore_patterns("__pycache__"))
    spec = load_bot(str(folder))
    spec = msgspec.structs.replace(spec, pin=bot_fingerprint(spec))
    shipped, packages = ship_entrants(SimpleNamespace(bots=[spec]))  # type: ignore[arg-type]
    assert [bot.package for bot in shipped] == [spec.pin.removeprefix("folder:")] and len(packages) == 1
    (folder / "bot.py").write_text("print('another bot')\n")
    with pytest.raises(BotChangedDuringRun, match="^entrant 'passer''s bot changed during this run"):
        ship_entrants(SimpleNamespace(bots=[spec]))  # type: ignore[arg-type]
