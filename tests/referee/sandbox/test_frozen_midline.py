"""A seat frozen between its requests in the middle of writing a line (issue 42's reported bug).

The referee freezes a seat's tree as soon as it has read its answer (a cgroup
freezer, or SIGSTOP where the host has none: referee.sandbox.sigfreeze). A bot
that writes a log line after its answer is then stopped with half of it
written: the half in the pipe, the rest unwritten, or its ``write`` itself
stopped with a pipe too full to take the rest. Measured with the bot below,
in Vendetta games of 110 decisions, with lines of 100 bytes and of 300 KB
(its write blocked when frozen), by either freezer: every line begun in the
game came whole at the seat's next request, none lost. The line begun after
the seat's last answer was: the game ended while it was frozen, so it was
never in that game's replay, and a warm process read it as the first line of
its next game (another entrant's game, maybe), where anything but a log would
have ended that seat's game as unasked output. Now the game's end reads that
line to its end within the grace the End message already has, and a process
that still has a line begun when its game is over is not reused.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from protocol.messages import TimeControl
from referee.bots import BotSpec, load_bot
from referee.match import MatchSpec, run_match
from referee.sandbox import launch as launch_module
from referee.sandbox import require_level
from referee.sandbox.cgroup_host import cgroup_support
from referee.seats import open_pool
from referee.settings import Clock, RefereeSettings
from tests.conftest import TEST_BOTS

pytestmark = pytest.mark.slow

HALVES = r"""
import json, os, sys, time
size = int(sys.argv[1])
count = 0
for raw in sys.stdin.buffer:
    message = json.loads(raw)
    if message["type"] == "start":
        reply = {"type": "ready", "name": "halves"}
    elif message["type"] == "request":
        action = message["options"][0] if message.get("options") else {"type": "place", "placements": []}
        reply = {"type": "action", "id": message["id"], "action": action}
    else:
        continue
    count += 1
    log = json.dumps({"type": "log", "message": f"line {count} " + "x" * size}).encode() + b"\n"
    half = len(log) // 2
    # The answer and the first half of a log line in one write: the referee reads the answer and
    # freezes the tree with the half in the pipe (or, past the pipe's 64 KiB, still in this write).
    sys.stdout.buffer.write(json.dumps(reply).encode() + b"\n" + log[:half])
    sys.stdout.buffer.flush()
    time.sleep(0.02)
    sys.stdout.buffer.write(log[half:])
    sys.stdout.buffer.flush()
"""
LOG_CHARS = 4096
"""What the replay keeps of a log line (referee.match.recorder)."""


@pytest.fixture
def folder() -> Iterator[Path]:
    made = Path(tempfile.mkdtemp(prefix="famiglia-midline-", dir="/tmp"))
    made.chmod(0o755)
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def seat_logs(replay: Path, seat: int) -> list[str]:
    records = [json.loads(line) for line in replay.read_text().splitlines()]
    return [r["message"] for r in records if r.get("seat") == seat and isinstance(r.get("message"), str)]


def answers(replay: Path, seat: int) -> int:
    """The seat's replies in the game: its ready and every action."""
    records = [json.loads(line) for line in replay.read_text().splitlines()]
    return 1 + sum(1 for r in records if r.get("seat") == seat and "action" in r and "decision" in r)


@pytest.mark.parametrize("size", [100, 300_000])
@pytest.mark.parametrize("freezer", ["cgroup", "signal"])
async def test_a_line_a_frozen_seat_was_writing_comes_whole_and_in_its_own_game(
    freezer: str, size: int, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_level("standard")
    if freezer == "signal":  # a host with no control group to give: SIGSTOP to the tree
        monkeypatch.setattr(launch_module, "_tree_group", lambda kind, limits: None)
    elif not cgroup_support().freezer:
        pytest.skip("this host gives famiglia no cgroup freezer")
    # A grace far beyond a thawed bot's few milliseconds: the game's end waits only until the line is whole.
    settings = RefereeSettings(sandbox="standard", grace_ms=10_000, clock=Clock(time=TimeControl(move_ms=5000)))
    passer = load_bot(str(TEST_BOTS / "passer"))
    halves = BotSpec(name="halves", command=[sys.executable, "-c", HALVES, str(size)], cwd=str(folder))
    first = 1
    async with open_pool(settings) as pool:
        for game in range(2):
            seats = [await pool.acquire(passer), await pool.acquire(halves), await pool.acquire(passer)]
            if game == 1 and not pool.was_reused(seats[1]):
                first = 1  # a fresh process counts from 1 again
            replay = folder / f"game-{game}.jsonl"
            record = await run_match(MatchSpec(game="vendetta", seed=game), seats, settings, replay_path=replay)
            for seat, spec in zip(seats, [passer, halves, passer], strict=True):
                pool.release(seat, spec)
            assert record.result.terminations == []
            replies = answers(replay, 1)
            # One log line per reply, each whole and in order, the one after the last answer included.
            wanted = [(f"line {n} " + "x" * size)[:LOG_CHARS] for n in range(first, first + replies)]
            got = seat_logs(replay, 1)
            assert [line[:20] for line in got] == [line[:20] for line in wanted]
            assert got == wanted
            first += replies


UNFINISHED_AFTER_END = r"""
import json, sys
for raw in sys.stdin.buffer:
    message = json.loads(raw)
    if message["type"] == "start":
        sys.stdout.write(json.dumps({"type": "ready", "name": "unfinished"}) + "\n")
    elif message["type"] == "request":
        action = message["options"][0] if message.get("options") else {"type": "place", "placements": []}
        sys.stdout.write(json.dumps({"type": "action", "id": message["id"], "action": action}) + "\n")
    elif message["type"] == "end":
        sys.stdout.write('{"type": "log", "message": "never finished')  # and no more, ever
    sys.stdout.flush()
"""


async def test_a_process_that_leaves_a_line_begun_after_its_game_is_not_reused(folder: Path) -> None:
    # Its next game would read that half as the start of its first line: "ready" glued to it is no
    # message at all, and the seat would lose a game it never misplayed.
    settings = RefereeSettings(sandbox=require_level("standard"), grace_ms=200)
    passer = load_bot(str(TEST_BOTS / "passer"))
    unfinished = BotSpec(name="unfinished", command=[sys.executable, "-c", UNFINISHED_AFTER_END], cwd=str(folder))
    async with open_pool(settings) as pool:
        processes = []
        for game in range(2):
            seats = [await pool.acquire(passer), await pool.acquire(unfinished), await pool.acquire(passer)]
            processes.append(seats[1].process.pid)
            record = await run_match(MatchSpec(game="vendetta", seed=game), seats, settings)
            for seat, spec in zip(seats, [passer, unfinished, passer], strict=True):
                pool.release(seat, spec)
            assert record.result.terminations == [], record.result.terminations
            # The half line may come after the game's end was looked at (a loaded machine): once it is
            # there, the pool's next look, at the next acquire, must still refuse the process.
            reader = seats[1].reader  # type: ignore[attr-defined]
            with trio.fail_after(120):
                while reader.pending_line() is not None or not reader.partial:
                    await trio.sleep(0.01)
    assert processes[0] != processes[1]  # a fresh process for the second game
