"""Tests for tournaments.config.capacity: what one referee process can hold, refused before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.sandbox.resources import UIDS_PER_REFEREE
from tests.conftest import TEST_BOTS
from tournaments.cli import app
from tournaments.config.capacity import FILES_FOR_WAITS, CapacityError, check_capacity

PLENTY = 10**6


def test_sandboxed_bots_as_root_fit_the_uid_block_of_one_referee() -> None:
    check_capacity(UIDS_PER_REFEREE // 4, 1, 4, "standard", root=True, open_files=PLENTY)
    with pytest.raises(CapacityError, match=r"8196 bots at once in one referee process.*8192 uids.*at most 2048 games"):
        check_capacity(UIDS_PER_REFEREE // 4 + 1, 1, 4, "standard", root=True, open_files=PLENTY)


def test_uids_do_not_bound_unsandboxed_bots_or_a_referee_that_is_not_root() -> None:
    check_capacity(4000, 1, 4, "none", root=True, open_files=PLENTY)
    check_capacity(4000, 1, 4, "strict", root=False, open_files=PLENTY)


def test_workers_share_the_concurrency() -> None:
    check_capacity(8000, 4, 4, "standard", root=True, open_files=PLENTY)  # 2000 games each
    with pytest.raises(CapacityError, match=r"per worker \(3 workers\)"):
        check_capacity(8000, 3, 4, "standard", root=True, open_files=PLENTY)  # 2667 each


def test_open_files_bound_every_level() -> None:
    # 100 games of 4: 400 bots x 3 descriptors + 100 replays + 64 of the referee's own.
    check_capacity(100, 1, 4, "none", root=False, open_files=1364)
    with pytest.raises(CapacityError, match=r"about 1364 open files.*limit of 1363.*ulimit -n"):
        check_capacity(100, 1, 4, "none", root=False, open_files=1363)
    # Contained: 4 descriptors a bot, and the cpu clock's kept run-delay files (at most FILES_FOR_WAITS).
    contained = 400 * 4 + 100 + 64 + FILES_FOR_WAITS
    check_capacity(100, 1, 4, "standard", root=False, open_files=contained)
    with pytest.raises(CapacityError, match=rf"about {contained} open files"):
        check_capacity(100, 1, 4, "standard", root=False, open_files=contained - 1)


@pytest.mark.parametrize(
    ("in_file", "option"), [("", ["--concurrency", "4096"]), ("concurrency = 4096\n", [])], ids=["option", "file"]
)
def test_the_tournament_command_refuses_in_one_line_before_making_its_database(
    tmp_path: Path, in_file: str, option: list[str]
) -> None:
    toml = tmp_path / "t.toml"
    bots = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{TEST_BOTS / "passer"}"\n' for i in range(5))
    toml.write_text('[tournament]\ngame = "vendetta"\ntable_size = 5\nrepetitions = 1\nseed = 3\n' + in_file + bots)
    result = CliRunner().invoke(app, ["tournament", "run", str(toml), "--workers", "1", *option])
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "concurrency 4096" in lines[0] and "lower concurrency" in lines[0], result.output
    assert not (tmp_path / "t.sqlite").exists()
