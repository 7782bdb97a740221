"""check-bot's report: the figures it states (start-up needed, thinking percentiles) and its JSON."""

from __future__ import annotations

import msgspec
import pytest

from tournaments.hosting.checkbot.report import (
    CheckReport,
    CheckResult,
    needed_startup_ms,
    startup_over,
    thinking_over,
)
from tournaments.hosting.ranges import MIN_STARTUP_MS


@pytest.mark.parametrize(
    ("startups", "needed"),
    [([], MIN_STARTUP_MS), ([10.0], MIN_STARTUP_MS), ([600.0, 120.0], 1200), ([601.0], 1300), ([2449.9], 4900)],
)
def test_the_startup_a_bot_needs_is_twice_its_slowest_in_whole_100_ms(startups: list[float], needed: int) -> None:
    assert needed_startup_ms(startups) == needed


def test_startup_states_the_slowest_of_the_fresh_processes_and_the_limit_it_was_checked_with() -> None:
    figure = startup_over([310.04, 1020.06], limit_ms=1000)
    assert (figure.processes, figure.limit_ms, figure.slowest_ms, figure.needed_ms) == (2, 1000, 1020.1, 2100)
    assert startup_over([], limit_ms=1000).processes == 0


def test_thinking_states_median_p95_and_max_and_zero_without_decisions() -> None:
    times = [float(ms) for ms in range(1, 101)]  # 1 .. 100 ms
    figure = thinking_over(times)
    assert (figure.decisions, figure.median_ms, figure.p95_ms, figure.max_ms) == (100, 50.5, 95.0, 100.0)
    assert thinking_over([]) == thinking_over([]) and thinking_over([]).decisions == 0


def test_a_report_survives_its_json_as_the_ladder_keeps_it() -> None:
    report = CheckReport(
        bot="b",
        game="vendetta",
        passed=False,
        checks=[CheckResult(name="time", status="fail", detail="slow", wanted="fast", fix="think less")],
        thinking=thinking_over([1.0, 2.0]),
        startup=startup_over([50.0], 1000),
        games=3,
        seconds=1.5,
    )
    assert msgspec.json.decode(msgspec.json.encode(report), type=CheckReport) == report
