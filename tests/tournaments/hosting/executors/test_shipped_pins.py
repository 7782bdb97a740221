"""A bot shipped to Dask workers is packed by the host: the package is checked against the run's pin."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import msgspec
import pytest

from referee.bot_folder import pack_folder
from referee.bots import BotSpec, load_bot
from referee.pinning import BotChangedDuringRun, bot_fingerprint
from tests.conftest import TEST_BOTS
from tournaments.hosting.executors.bot_packages import package_of


def test_a_folder_changed_since_the_run_pinned_it_is_not_shipped(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    shutil.copytree(TEST_BOTS / "passer", folder, ignore=shutil.ignore_patterns("__pycache__"))
    spec = load_bot(str(folder))
    spec = msgspec.structs.replace(spec, pin=bot_fingerprint(spec))
    packed = package_of(spec, None)
    assert packed is not None and packed[0] == spec.pin.removeprefix("folder:")
    (folder / "bot.py").write_text("print('another bot')\n")
    with pytest.raises(BotChangedDuringRun, match="^entrant 'passer''s bot changed during this run"):
        package_of(spec, None)


def test_an_archive_the_competition_keeps_is_shipped_as_it_is_and_a_command_line_not_at_all(tmp_path: Path) -> None:
    digest, data = pack_folder(TEST_BOTS / "passer")
    archive = tmp_path / f"{digest}.tar"
    archive.write_bytes(data)
    spec = load_bot(str(TEST_BOTS / "passer"))
    assert (
        package_of(spec, archive) == (hashlib.sha256(data).hexdigest(), data)
        and digest == hashlib.sha256(data).hexdigest()
    )
    command = BotSpec(name="cat", command=["cat"], cwd=str(tmp_path))
    assert package_of(command, None) is None
