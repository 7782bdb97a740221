"""What ``famiglia check-bot`` found, as ``--json`` prints it and the ladder keeps it.

``CheckReport`` holds one ``CheckResult`` per check and two figures measured
over every game of the check: the bot's thinking time per decision
(``Thinking``) and its start-up time (``StartupTime``). Plain msgspec values
and the arithmetic of the figures, nothing more: the CLI and the ladder read a
report without importing the referee.
"""

from __future__ import annotations

import math
import statistics
from typing import Literal

import msgspec

from tournaments.hosting.ranges import MIN_STARTUP_MS

__all__ = [
    "CheckReport",
    "CheckResult",
    "StartupTime",
    "Status",
    "Thinking",
    "needed_startup_ms",
    "startup_over",
    "thinking_over",
]

Status = Literal["pass", "fail", "skip"]


class CheckResult(msgspec.Struct, kw_only=True):
    """One check: its name, pass/fail/skip, and on a failure what happened and how to fix it."""

    name: str
    status: Status = "pass"
    detail: str = ""
    """What the bot did (on a failure), or a note (on a pass or a skip)."""
    wanted: str = ""
    """What the protocol wants."""
    fix: str = ""
    """How to fix it, naming the PROTOCOL.md section."""


class Thinking(msgspec.Struct, frozen=True, kw_only=True):
    """The bot's time per decision over every game of the check, in ms."""

    decisions: int
    median_ms: float
    p95_ms: float
    max_ms: float


class StartupTime(msgspec.Struct, frozen=True, kw_only=True):
    """How long the bot took to start: from a fresh process's start to its first ready line, in ms."""

    processes: int
    """Fresh processes that said ready (0: none did)."""
    limit_ms: int
    """The startup_ms the bot was checked with."""
    slowest_ms: float
    needed_ms: int
    """The startup_ms to give it: twice its slowest start-up (a loaded machine is slower), in whole 100 ms."""


class CheckReport(msgspec.Struct, kw_only=True):
    """Everything ``famiglia check-bot`` found, as ``--json`` prints it."""

    bot: str
    game: str
    passed: bool
    checks: list[CheckResult]
    thinking: Thinking
    startup: StartupTime
    games: int
    seconds: float


def needed_startup_ms(startups: list[float]) -> int:
    """The startup limit a bot with these start-up times needs: twice the slowest, rounded up to 100 ms."""
    slowest = max(startups, default=0.0)
    return max(MIN_STARTUP_MS, math.ceil(2 * slowest / 100) * 100)


def startup_over(startups: list[float], limit_ms: int) -> StartupTime:
    """The start-up figure of fresh processes that took ``startups`` ms each, checked against ``limit_ms``."""
    return StartupTime(
        processes=len(startups),
        limit_ms=limit_ms,
        slowest_ms=round(max(startups, default=0.0), 1),
        needed_ms=needed_startup_ms(startups),
    )


def thinking_over(times: list[float]) -> Thinking:
    """The thinking figure of decisions that took ``times`` ms each (all zero when there were none)."""
    if not times:
        return Thinking(decisions=0, median_ms=0.0, p95_ms=0.0, max_ms=0.0)
    return Thinking(
        decisions=len(times),
        median_ms=round(statistics.median(times), 2),
        p95_ms=round(_percentile(times, 0.95), 2),
        max_ms=round(max(times), 2),
    )


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
