"""Faults of the machine, not of a bot: one clear error, nothing half written."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from referee.match import MatchSpec, run_match
from referee.replay import ReplayWriteFailed, ReplayWriter
from tests.conftest import TEST_BOTS
from tests.referee.fakes import passer
from tournaments.cli import app
from tournaments.config.tournament import load_tournament
from tournaments.lifecycle.plan import build_schedule
from tournaments.store import Store, StoreError

runner = CliRunner()


class FullDisk:
    """A file object whose writes fail as on a full disk."""

    def write(self, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def close(self) -> None:
        pass


async def test_a_full_disk_while_writing_a_replay_is_one_error_and_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: Any
) -> None:
    original = ReplayWriter.__init__

    def full_after_open(self: ReplayWriter, path: Path) -> None:
        original(self, path)
        assert self._file is not None
        self._file.close()
        self._file = FullDisk()  # type: ignore[assignment]

    monkeypatch.setattr(ReplayWriter, "__init__", full_after_open)
    replay = tmp_path / "r.jsonl"
    with pytest.raises(ReplayWriteFailed, match="No space left on device"):
        await run_match(MatchSpec(game="vendetta", seed=1), [passer(), passer(), passer()], replay_path=replay)
    assert list(tmp_path.iterdir()) == []


def test_a_replay_path_that_is_not_a_regular_file_is_refused() -> None:
    with pytest.raises(ReplayWriteFailed, match="not a regular file"):
        ReplayWriter(Path("/dev/null"))


def test_replays_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    writer = ReplayWriter(tmp_path / "r.jsonl")
    assert stat.S_IMODE(os.stat(writer.partial).st_mode) == 0o600
    writer.abort()


def test_a_replay_folder_that_cannot_be_created_is_one_clear_cli_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    passer_bot = str(TEST_BOTS / "passer")
    result = runner.invoke(
        app, ["play", "vendetta", passer_bot, passer_bot, passer_bot, "--replay", str(blocker / "r.jsonl")]
    )
    # Refused before any bot starts (a user mistake: exit 2), naming the option and why.
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"famiglia: error: --replay {blocker / 'r.jsonl'}: "), result.output
    assert "is a file" in lines[0]


def test_a_read_only_database_is_a_store_error_and_records_nothing(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text('[tournament]\ngame = "vendetta"\ntable_size = 3\n'
                    + "".join(f'[[entrant]]\nname = "p{i}"\nbot = "{TEST_BOTS / "passer"}"\n' for i in range(3)))  # fmt: skip
    config = load_tournament(toml)
    store = Store(tmp_path / "r.sqlite")
    # Root ignores file modes, so make the connection itself refuse writes.
    store.db.execute("PRAGMA query_only=ON")
    with pytest.raises(StoreError, match="readonly"):
        store.begin(config, build_schedule(config))
    store.db.execute("PRAGMA query_only=OFF")
    assert store.tournament() is None and store.counts() == (0, 0)
