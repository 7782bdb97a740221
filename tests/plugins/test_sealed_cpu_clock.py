"""The cpu clock in a simultaneous step, with real sandboxed bots: each seat asked is timed on its own meters.

Two seats of one Sealed round run out of time in it at once, one sleeping and one
computing; each is stopped at its own budget by what it could have used (the
asking task's own look at its meters, ``MatchClock.look``), and the two quick
seats asked with them play on. The timed bot is the cpu clock tests' own
(tests/referee/test_cpu_clock.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from referee.match import MatchSpec
from referee.play import play_match
from tests.referee.test_cpu_clock import BOT, cpu_clock, timed

pytestmark = pytest.mark.slow


@pytest.fixture
def timed_bot(tmp_path: Path) -> Path:
    folder = tmp_path / "timed"
    folder.mkdir()
    (folder / "bot.py").write_text(BOT)
    (folder / "bot.toml").write_text('name = "timed"\ncommand = "python3 bot.py"\n')
    for path in (tmp_path, folder):
        os.chmod(path, 0o755)
    for path in folder.iterdir():
        os.chmod(path, 0o644)
    return folder


async def test_a_sleeper_and_a_burner_asked_at_once_each_time_out_at_their_own_budget(
    sealed: Path, timed_bot: Path
) -> None:
    sleeper = timed(timed_bot, sleep=3.0, at=2)
    burner = timed(timed_bot, burn=0.4, at=2)
    quick = timed(timed_bot)
    # A 50 x backstop: beside other work the burner may need several times its wall time to
    # compute its budget, and must still be stopped by what it used, not by the backstop.
    settings = cpu_clock(move_ms=100, backstop=50.0)
    spec = MatchSpec(game="sealed", seed=5, variants={"prizes": "3"})
    record = await play_match(spec, [quick, sleeper, quick, burner], settings)
    by_seat = {t.seat: t for t in record.result.terminations}
    assert sorted(by_seat) == [1, 3], record.result.terminations
    assert all(t.kind == "timeout" and "wall time" not in t.reason for t in by_seat.values()), by_seat
    assert "within 150 ms, not counting the " in by_seat[1].reason, by_seat[1].reason
    assert f"request {by_seat[3].request} within 150 ms" in by_seat[3].reason or (
        "more than 150 ms of CPU" in by_seat[3].reason
    ), by_seat[3].reason
    # Both were asked in the same round, and the two quick seats played every round.
    assert by_seat[1].request == by_seat[3].request - 2
    assert record.result.ended_by == "all_prizes" and record.timings[0].decisions == 3
