"""check-bot's probes: the folder snapshot and its changes, and the bot's processes read from /proc."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tournaments.hosting.checkbot import probes
from tournaments.hosting.checkbot.probes import bot_processes, changed_files, folder_snapshot, ignoring_sigterm


def test_a_write_a_new_file_and_a_removal_are_the_changes_and_bytecode_caches_are_not(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("print()")
    (tmp_path / "old.txt").write_text("x")
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "state.bin").write_bytes(b"1")
    before = folder_snapshot(tmp_path)
    assert before is not None and set(before) == {"bot.py", "old.txt", "deep/er/state.bin"}
    (tmp_path / "deep" / "er" / "state.bin").write_bytes(b"12")
    (tmp_path / "new.txt").write_text("y")
    (tmp_path / "old.txt").unlink()
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"cache")
    after = folder_snapshot(tmp_path)
    assert after is not None
    assert changed_files(before, after) == ["deep/er/state.bin", "new.txt", "old.txt"]
    assert changed_files(after, after) == []


def test_a_link_is_watched_as_itself_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("a")
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "link").symlink_to(outside)
    before = folder_snapshot(tmp_path / "bot")
    outside.write_text("a longer text")  # what the link points at changes, the link does not
    assert before is not None and before == folder_snapshot(tmp_path / "bot")


def test_a_folder_with_too_many_files_is_not_watched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probes, "WATCHED_FILES", 3)
    for i in range(4):
        (tmp_path / f"f{i}").write_text("")
    assert folder_snapshot(tmp_path) is None
    assert folder_snapshot(tmp_path / "missing") is None


IGNORES_SIGTERM = (
    "import signal, sys; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); sys.stdin.read()"
)


@pytest.fixture
def stubborn(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A process in ``tmp_path`` leading a session of its own, ignoring SIGTERM once it says ready."""
    process = subprocess.Popen(
        [sys.executable, "-c", IGNORES_SIGTERM],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    yield process
    process.kill()
    process.wait()


def test_a_process_of_the_bots_session_that_ignores_sigterm_is_named(
    stubborn: subprocess.Popen[str], tmp_path: Path
) -> None:
    assert bot_processes(tmp_path, stubborn.pid) == [stubborn.pid]
    [named] = ignoring_sigterm(tmp_path, stubborn.pid)
    assert named.startswith(f"{stubborn.pid} (") and "-c import signal" in named  # the command, cut to 60 characters


def test_a_process_in_the_folder_but_of_another_session_is_not_the_bots(
    stubborn: subprocess.Popen[str], tmp_path: Path
) -> None:
    # Like the person's shell sitting in the bot's folder: same folder, not the bot's session.
    assert bot_processes(tmp_path, os.getpid()) == []
    assert ignoring_sigterm(tmp_path, os.getpid()) == []
