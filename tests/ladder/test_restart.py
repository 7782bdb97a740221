"""A ladder server killed with SIGKILL mid-play restarts with nothing lost and nothing recorded twice."""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.ladder.conftest import register, start_server, stop, submit, wait_for

if TYPE_CHECKING:
    import subprocess

pytestmark = pytest.mark.slow


def game_states(db: Path) -> dict[int, str]:
    with sqlite3.connect(db) as connection:
        return dict(connection.execute("SELECT id, state FROM game").fetchall())


def seat_rows(db: Path) -> list[tuple[int, int, int]]:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT game, seat, rank FROM seat ORDER BY game, seat").fetchall()


def versions(db: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT id, state FROM version ORDER BY id").fetchall()


def serving_three(tmp_path: Path) -> tuple[Path, Path, subprocess.Popen[str]]:
    """A ladder of three entrants with two games at a time, served, each entrant's random bot submitted:
    (the ladder file, its store, the server's process)."""
    ladder, tokens = register(tmp_path, ["ann", "bob", "cat"], concurrency=2)
    process, url = start_server(ladder)
    try:
        for name in tokens:
            assert submit(url, tokens[name], "random_py").returncode == 0
    except BaseException:
        stop(process, signal.SIGKILL)
        raise
    return ladder, ladder.with_suffix(".sqlite"), process


def test_a_killed_server_keeps_every_finished_game_once_and_plays_the_interrupted_ones_again(tmp_path: Path) -> None:
    ladder, db, process = serving_three(tmp_path)
    try:
        wait_for(lambda: list(game_states(db).values()).count("done") >= 2, "two finished games")
        wait_for(lambda: "running" in game_states(db).values(), "a game in play")
    finally:
        assert stop(process, signal.SIGKILL) == -signal.SIGKILL
    before = game_states(db)
    finished_before = seat_rows(db)
    interrupted = [game for game, state in before.items() if state == "running"]
    assert interrupted and versions(db) == [(1, "active"), (2, "active"), (3, "active")]

    # The restart plays the interrupted games first (the oldest pending), then stops after as many.
    process, _ = start_server(ladder, "--stop-after", str(len(interrupted) + 2))
    assert process.wait(timeout=300) == 0
    after = game_states(db)
    # Games still in play at the stop are pending again, without a replay: none is left running.
    assert "running" not in after.values()
    assert all(after[game] == "done" for game in interrupted)
    assert all(after[game] == "done" for game, state in before.items() if state == "done")
    rows = seat_rows(db)
    assert set(finished_before) <= set(rows)
    assert len(rows) == 3 * list(after.values()).count("done")  # every finished game's three seats, once
    assert versions(db) == [(1, "active"), (2, "active"), (3, "active")]
    replays = sorted(p.name for p in (tmp_path / "ladder-data" / "replays").iterdir() if p.suffix == ".jsonl")
    assert len(replays) == list(after.values()).count("done")


def test_ctrl_c_with_games_in_play_leaves_them_pending_without_their_replays(tmp_path: Path) -> None:
    _, db, process = serving_three(tmp_path)
    try:
        wait_for(lambda: "running" in game_states(db).values(), "a game in play")
    finally:
        code = stop(process, signal.SIGINT)
    assert process.stdout is not None
    said = process.stdout.read()
    assert code == 130 and "Traceback" not in said, said
    after = game_states(db)
    assert after and "running" not in after.values(), after
    replays = [p.name for p in (tmp_path / "ladder-data" / "replays").iterdir() if p.suffix == ".jsonl"]
    assert len(replays) == list(after.values()).count("done")


def test_sigterm_stops_the_server_cleanly_with_games_in_play_pending_again(tmp_path: Path) -> None:
    # systemd's stop: SIGTERM to the server alone (its bots are its own to end), exit 0, nothing running.
    _, db, process = serving_three(tmp_path)
    try:
        wait_for(lambda: "running" in game_states(db).values(), "a game in play")
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=120)
    finally:
        stop(process, signal.SIGKILL)
    assert process.stdout is not None
    said = process.stdout.read()
    assert code == 0 and "SIGTERM: stopping" in said and "stopped after" in said, said
    assert "Traceback" not in said, said
    after = game_states(db)
    assert after and "running" not in after.values(), after
    replays = [p.name for p in (tmp_path / "ladder-data" / "replays").iterdir() if p.suffix == ".jsonl"]
    assert len(replays) == list(after.values()).count("done")


def test_a_server_started_with_sigint_ignored_still_stops_on_sigint(tmp_path: Path) -> None:
    # A script's `famiglia ladder serve ... &` inherits SIGINT ignored; the server listens for it anyway.
    ladder, _ = register(tmp_path, ["ann"])
    process, _ = start_server(ladder, sigint_ignored=True)
    try:
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=120)
    finally:
        stop(process, signal.SIGKILL)
    assert process.stdout is not None
    said = process.stdout.read()
    assert code == 130 and "stopped" in said and "Traceback" not in said, said
