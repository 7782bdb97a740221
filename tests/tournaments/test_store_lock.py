"""One run writes a store at a time (issue 29): a second run is refused at once, naming the first.

The lock is a flock on ``<db>.lock``: the kernel drops it with its process, so
a run killed with SIGKILL blocks nothing. Readers take no lock. The lock's own
tests stand with it on the floor (tests/tournaments/hosting/test_storage_lock.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import wait_until_gone
from tournaments.hosting.storage import hold_store, lock_path


def test_a_demo_refused_for_a_demo_still_running_keeps_its_results(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tournaments.cli import app

    db = tmp_path / "demo.sqlite"
    db.write_text("the running demo's results")
    with hold_store(db):
        refused = CliRunner().invoke(app, ["demo", "--folder", str(tmp_path), "--workers", "1"])
    assert refused.exit_code == 2, refused.output
    assert f"is being written by process {os.getpid()}" in refused.output
    assert db.read_text() == "the running demo's results", "the refused demo cleared the running one's results"


# --- two runs of one tournament, through the real command line ---------------

# A passer that, past its allowance of games, holds its first answer of the
# next game for as long as the file "hold" is in its folder: the first run is
# certainly still running (and holding the store) while the test looks.
GATE_BOT = """\
import json, os, sys, time

# Its state lives beside its folder, not in it: a bot folder that changes is a new version of its bot.
HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gate-state")
PASS = {"type": "place", "placements": []}


def started() -> int:
    with open(os.path.join(HERE, "starts")) as f:
        return len(f.read().splitlines())


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        with open(os.path.join(HERE, "starts"), "a") as f:
            f.write("game\\n")
        sys.stdout.write(json.dumps({"type": "ready", "name": "gate"}) + "\\n")
    elif message["type"] == "request":
        while started() > ALLOWED_STARTS and os.path.exists(os.path.join(HERE, "hold")):
            time.sleep(0.05)
        action = (message.get("options") or [PASS])[0]
        sys.stdout.write(json.dumps({"type": "action", "id": message["id"], "action": action}) + "\\n")
    sys.stdout.flush()
"""
GAMES_BEFORE_HOLD = 2
SEATS = 3


def famiglia() -> list[str]:
    """The installed ``famiglia`` script, as a user starts it (``python -m tournaments.cli`` if not installed)."""
    script = Path(sys.executable).parent / "famiglia"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "tournaments.cli"]


def gated_tournament(folder: Path) -> tuple[Path, Path]:
    """A 6-game tournament of three seats of the gate bot, one game at a time; (its file, the gate's folder).

    The gate counts its starts in, and waits while there is a ``hold`` file in, the folder ``gate-state`` beside it.
    """
    gate = folder / "gate"
    gate.mkdir()
    (folder / "gate-state").mkdir()
    (gate / "bot.toml").write_text('name = "gate"\ncommand = "python3 bot.py"\n')
    (gate / "bot.py").write_text(GATE_BOT.replace("ALLOWED_STARTS", str(GAMES_BEFORE_HOLD * SEATS)))
    (folder / "gate-state" / "starts").write_text("")
    entrants = "".join(f'[[entrant]]\nname = "g{i}"\nbot = "{gate}"\n' for i in range(SEATS))
    toml = folder / "t.toml"
    toml.write_text(
        '[tournament]\nname = "locked"\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\nconcurrency = 1\n'
        # No sandbox: the gate reads and writes files beside its folder. The long clock:
        # a held answer is a held game, not a timeout.
        'sandbox = "none"\n[tournament.time]\nmove_ms = 600000\n' + entrants
    )
    return toml, gate


def results(db: Path) -> dict[int, tuple[object, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        rows = connection.execute("SELECT game, seed, ended_by, record FROM result JOIN schedule USING (game)")
        return {row[0]: row[1:] for row in rows}


def recorded(db: Path) -> int:
    """How many games ``db`` holds; 0 while it is not there or has no tables yet."""
    try:
        return len(results(db)) if db.exists() else 0
    except sqlite3.OperationalError:
        return 0


def locked_by(path: Path, pid: int) -> bool:
    """Whether ``pid`` holds the lock at ``path``: its pid written there, and the kernel's lock held.

    Read before the lock is tried: a test that took a free lock, even for an
    instant, could make the run it waits for refuse to start.
    """
    try:
        if path.read_text() != f"{pid}\n":
            return False
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def lock_is_free(path: Path) -> bool:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # and with it the lock, if this took it


@pytest.mark.slow
def test_a_second_run_of_a_running_tournament_is_refused_at_once_and_resumes_after_a_kill(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tournaments.cli import app

    toml, gate = gated_tournament(tmp_path)
    (tmp_path / "gate-state" / "hold").write_text("")
    db = tmp_path / "t.sqlite"
    command = [*famiglia(), "tournament", "run", str(toml), "--db", str(db), "--workers", "1"]
    first_log = tmp_path / "first.stderr"
    with first_log.open("w") as log:
        first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 180  # generous: a loaded machine starts slowly, nothing depends on it
        while not (locked_by(lock_path(db), first.pid) and recorded(db) >= GAMES_BEFORE_HOLD):
            assert first.poll() is None, f"the first run ended: {first_log.read_text()}"
            assert time.monotonic() < deadline, "the first run never held the store with two games played"
            time.sleep(0.05)
        before = results(db)
        assert len(before) == GAMES_BEFORE_HOLD  # the third game is held by the gate

        second = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert second.returncode == 2, second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in second.stderr, second.stderr
        assert lines[0].startswith(f"famiglia: error: {db} is being written by process {first.pid} ("), lines[0]
        assert "tournament run" in lines[0] and str(toml) in lines[0]  # the first run's command line
        assert f"wait for that run to end, or stop it (kill {first.pid})" in lines[0]
        assert second.stdout == ""
        assert locked_by(lock_path(db), first.pid), "the refused run changed the lock"
        assert results(db) == before

        # Readers take no lock: they work while the run holds it. In this process: the lock is the
        # first run's, so a reader that took it would be refused here just as in a process of its own.
        standings = CliRunner().invoke(app, ["standings", "--db", str(db), "--format", "json"])
        assert standings.exit_code == 0, standings.output
        assert json.loads(standings.output)["games"] == GAMES_BEFORE_HOLD
        games = CliRunner().invoke(app, ["games", "--db", str(db), "--format", "json"])
        assert games.exit_code == 0 and len(json.loads(games.output)) == GAMES_BEFORE_HOLD, games.output
    finally:
        if first.poll() is None:
            os.kill(first.pid, signal.SIGKILL)
        first.wait()
    assert first.returncode == -signal.SIGKILL
    # Without a sandbox a bot may outlive a killed referee (docs/sandbox.md); let go,
    # the held bots find their referee gone and end.
    (tmp_path / "gate-state" / "hold").unlink()
    assert wait_until_gone(gate) == [], "the gate bots did not end after their referee"

    # The kernel dropped the lock with the process; its file (and pid) stay until the next run takes it.
    assert lock_path(db).exists() and lock_is_free(lock_path(db))
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{GAMES_BEFORE_HOLD} of 6 games already recorded" in resumed.stdout
    after = results(db)
    assert sorted(after) == list(range(6))
    assert all(after[game] == row for game, row in before.items()), "a game recorded before the kill changed"
    assert not lock_path(db).exists(), "a run that ends cleanly leaves no lock file"
