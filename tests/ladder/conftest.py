"""A real ``famiglia ladder serve`` for the end-to-end and browser tests, started once per session."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from tests.ladder.helpers import BROKEN_BOT, SAMPLE_BOTS, write_ladder

ENTRANTS = {"ann": "random_py", "bob": "greedy_py", "cat": "c_bot", "dan": "broken"}
"""Who submits what: three sample bots, and one that fails check-bot."""
_SERVING = re.compile(r"on (http://127\.0\.0\.1:\d+)")


class Served(msgspec.Struct, kw_only=True):
    url: str
    ladder: Path
    tokens: dict[str, str]
    process: Any


def famiglia(*args: str) -> subprocess.CompletedProcess[str]:
    """A ``famiglia`` command, run in this process: its exit code and what it printed.

    Registering and uploading are how these tests set a ladder up, not what they test (their
    own tests: test_ladder_cli, test_upload); in this process they cost no interpreter start-up
    each. The server stays a process of its own.
    """
    from typer.testing import CliRunner

    from tournaments.cli import app

    done = CliRunner().invoke(app, list(args))
    return subprocess.CompletedProcess(["famiglia", *args], done.exit_code, done.stdout, done.stderr)


def start_server(ladder: Path, *extra: str, sigint_ignored: bool = False) -> tuple[subprocess.Popen[str], str]:
    """``famiglia ladder serve`` on a free port; the process and its address once it listens.

    ``sigint_ignored``: start it as a script's ``serve &`` does, with SIGINT ignored from the start.
    """
    command = [sys.executable, "-m", "tournaments.cli", "ladder", "serve", str(ladder), "--port", "0", *extra]
    if sigint_ignored:
        # The shell's empty trap is SIG_IGN, which exec keeps: what a non-interactive `&` gives.
        command = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *command]
    process = subprocess.Popen(
        command, cwd=ladder.parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    return process, _listening(process)


def _listening(process: subprocess.Popen[str]) -> str:
    """The address the server says it serves on; what it said before that (a version that cannot start
    here, say) is passed over, and shown if it never says it."""
    assert process.stdout is not None
    said = []
    while line := process.stdout.readline():  # blocks until the server says a line, or exits
        found = _SERVING.search(line)
        if found is not None:
            return found.group(1)
        said.append(line)
    process.kill()
    raise AssertionError(f"the server did not start: {''.join(said)}")


def stop(process: subprocess.Popen[str], sig: int = signal.SIGINT) -> int:
    """Stop the server (and whatever it started: its own session) and reap it."""
    if process.poll() is None:
        os.killpg(process.pid, sig)
    try:
        return process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        return process.wait(timeout=60)


def wait_for(
    condition: Callable[[], bool], what: str, deadline_s: float = 240.0, explain: Callable[[], object] = lambda: ""
) -> None:
    """Poll ``condition`` until it holds; a generous deadline, for a loaded machine. ``explain``: what to
    show when it never does (the state that would say why)."""
    end = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}: {explain()}")
        time.sleep(0.2)


def versions_of(url: str, names: list[str]) -> dict[str, object]:
    """Each entrant's versions as the API shows them to anyone: why a wait never ended."""
    return {name: httpx.get(f"{url}/api/entrants/{name}", timeout=30).json()["versions"] for name in names}


def register(folder: Path, names: list[str], **ladder: Any) -> tuple[Path, dict[str, str]]:
    path = write_ladder(folder, **ladder)
    tokens = {}
    for name in names:
        done = famiglia("ladder", "add-entrant", str(path), name)
        assert done.returncode == 0, done.stderr
        tokens[name] = done.stdout.strip().splitlines()[-1]
    return path, tokens


def submit(url: str, token: str, bot: str) -> subprocess.CompletedProcess[str]:
    folder = BROKEN_BOT if bot == "broken" else SAMPLE_BOTS / bot
    return famiglia("ladder", "submit", str(folder), "--server", url, "--token", token)


def standings(url: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = httpx.get(f"{url}/api/standings", timeout=30).json()
    return rows


def ranked(url: str) -> list[dict[str, Any]]:
    """The leaderboard's rows of entrants with a version playing (every entrant has a row)."""
    return [row for row in standings(url) if row["rank"] is not None]


def rejected(url: str, token: str) -> bool:
    answer = httpx.get(f"{url}/api/entrants/dan/versions/1/report", headers={"authorization": f"Bearer {token}"})
    return bool(answer.json()["state"] == "rejected")


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A ladder with four entrants, each having submitted its bot, played until every accepted version has games."""
    folder = tmp_path_factory.mktemp("served-ladder")
    ladder, tokens = register(folder, list(ENTRANTS))
    process, url = start_server(ladder)
    try:
        for name, bot in ENTRANTS.items():
            done = submit(url, tokens[name], bot)
            assert done.returncode == 0, done.stdout + done.stderr
        wait_for(
            lambda: len(rows := ranked(url)) == 3 and all(row["games"] >= 3 for row in rows),
            "three accepted versions with three games each",
            explain=lambda: versions_of(url, list(ENTRANTS)),
        )
        wait_for(lambda: rejected(url, tokens["dan"]), "the broken bot's verdict")
        # Paused from here: the server lives as long as this xdist worker, and a ladder plays without
        # end, so it would play some 5,000 games (half the suite's CPU) for tests that need a handful.
        # A test that needs games going on says so with games_going_on.
        pause(ladder)
        yield Served(url=url, ladder=ladder, tokens=tokens, process=process)
    finally:
        stop(process)


def pause(ladder: Path) -> None:
    done = famiglia("ladder", "pause", str(ladder))
    assert done.returncode == 0, done.stdout + done.stderr


@contextmanager
def games_going_on(served: Served) -> Iterator[None]:
    """The served ladder deals games while the block runs (it is paused otherwise)."""
    done = famiglia("ladder", "resume", str(served.ladder))
    assert done.returncode == 0, done.stdout + done.stderr
    try:
        yield
    finally:
        pause(served.ladder)
