"""``famiglia ladder backup`` copies a serving ladder consistently, and the copy serves as the ladder did."""

from __future__ import annotations

import errno
import os
import signal
import sqlite3
import stat
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from ladder import backup
from tests.ladder.conftest import famiglia, register, start_server, stop, wait_for
from tests.ladder.test_restart import game_states, serving_three
from tournaments.cli import app


def finished_table_game(db: Path) -> int | None:
    """A game whose every seating is played: its page is open to anyone."""
    with sqlite3.connect(db) as connection:
        row = connection.execute(
            "SELECT MIN(id) FROM game WHERE table_id IN "
            "(SELECT table_id FROM game GROUP BY table_id HAVING SUM(state != 'done') = 0)"
        ).fetchone()
    return None if row is None else row[0]


def done_games(db: Path) -> set[int]:
    return {game for game, state in game_states(db).items() if state == "done"}


@pytest.mark.slow
def test_a_backup_taken_while_serving_holds_every_finished_game_and_serves_on(tmp_path: Path) -> None:
    (tmp_path / "live").mkdir()
    ladder, db, process = serving_three(tmp_path / "live")
    try:
        wait_for(lambda: finished_table_game(db) is not None, "a table played in all its seatings")
        made = famiglia("ladder", "backup", str(ladder), str(tmp_path / "copy"))
        after = done_games(db)
    finally:
        stop(process, signal.SIGKILL)
    assert made.returncode == 0, made.stdout + made.stderr
    copy = tmp_path / "copy" / ladder.name
    copied_db = copy.with_suffix(".sqlite")
    copied = done_games(copied_db)
    assert len(copied) >= 2 and copied <= after  # a snapshot: nothing the live store did not have
    assert stat.S_IMODE(copied_db.stat().st_mode) == 0o600
    replays = copy.with_name(copy.stem + "-data") / "replays"
    for game in copied:  # every finished game's replay came along
        assert (replays / f"game-{game:06d}.jsonl").is_file(), game
    with sqlite3.connect(copied_db) as connection:
        seats = connection.execute("SELECT COUNT(*) FROM seat").fetchone()[0]
    assert seats == 3 * len(copied)

    # Restore: serve the copy where it is; its games' pages read its own replays (the original's
    # are moved away here), and it plays on.
    (tmp_path / "live" / "ladder-data").rename(tmp_path / "live" / "moved-away")
    process, url = start_server(copy, "--stop-after", "1")
    try:
        shown = httpx.get(f"{url}/games/game-{finished_table_game(copied_db)}.html", timeout=60)
        assert shown.status_code == 200 and 'id="famiglia-replay"' in shown.text  # the viewer, with its game
        assert process.wait(timeout=300) == 0
    finally:
        stop(process, signal.SIGKILL)
    assert len(done_games(copied_db)) > len(copied)  # it played on (games in flight at the stop may finish too)
    assert done_games(db) == after  # the original is untouched by its copy's games


def test_a_backup_refuses_an_existing_folder_and_a_ladder_without_a_store(tmp_path: Path) -> None:
    ladder, _ = register(tmp_path, ["ann"])
    (tmp_path / "taken").mkdir()
    exists = famiglia("ladder", "backup", str(ladder), str(tmp_path / "taken"))
    assert exists.returncode == 2 and "exists already" in exists.stdout + exists.stderr
    nowhere = famiglia("ladder", "backup", str(ladder), str(tmp_path / "no" / "such" / "dest"))
    assert nowhere.returncode == 2 and "no such folder" in nowhere.stdout + nowhere.stderr
    bare = tmp_path / "bare.toml"
    bare.write_text(ladder.read_text())
    empty = famiglia("ladder", "backup", str(bare), str(tmp_path / "copy"))
    assert empty.returncode == 2 and "nothing to back up" in empty.stdout + empty.stderr
    assert not (tmp_path / "copy").exists()
    (tmp_path / "ladder-data").mkdir(exist_ok=True)
    within = famiglia("ladder", "backup", str(ladder), str(tmp_path / "ladder-data" / "copy"))
    assert within.returncode == 2 and "inside the ladder's data folder" in within.stdout + within.stderr
    assert not (tmp_path / "ladder-data" / "copy").exists()


def failing_copy(monkeypatch: pytest.MonkeyPatch, part: str) -> None:
    """The disk fills while the backup copies ``part``: the store, or a file of the data folder."""
    if part == "store":

        def full_store(db: Path, to: Path) -> dict[str, int]:
            to.write_bytes(b"half a store")
            raise sqlite3.OperationalError("database or disk is full")

        monkeypatch.setattr(backup, "_copy_store", full_store)
    else:

        def full_disk(source: str, target: str, follow_symlinks: bool = True) -> str:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), target)

        monkeypatch.setattr(backup.shutil, "copy2", full_disk)


@pytest.mark.parametrize("part", ["store", "data"])
def test_a_backup_that_fills_the_disk_keeps_nothing_and_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part: str
) -> None:
    ladder, _ = register(tmp_path, ["ann"])
    (tmp_path / "ladder-data").mkdir(exist_ok=True)
    (tmp_path / "ladder-data" / "a-replay.jsonl").write_text("{}\n")
    failing_copy(monkeypatch, part)
    dest = tmp_path / "copy"
    done = CliRunner().invoke(app, ["ladder", "backup", str(ladder), str(dest)])
    assert done.exit_code == 1, done.output
    (line,) = done.output.strip().splitlines()
    assert "the backup failed and nothing of it was kept" in line
    assert ("database or disk is full" if part == "store" else "No space left on device") in line
    assert not dest.exists()  # half a backup is never left to be restored by mistake
    assert (tmp_path / "ladder-data" / "a-replay.jsonl").read_text() == "{}\n"  # the ladder itself untouched
