"""Running check-bot for real in a test: a bot folder checked with short clocks, and what failed.

Shared by the check-bot tests and the plug-in tests (tests/plugins); not a test
module itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from protocol.messages import TimeControl
from referee.bots import load_bot
from referee.build import build_bot
from referee.settings import Clock, RefereeSettings
from tournaments.hosting.checkbot.games import check_bot
from tournaments.hosting.checkbot.report import CheckReport, CheckResult

__all__ = ["CLOCK", "bot_folder", "check_named", "failing", "run_check"]

CLOCK = TimeControl(startup_ms=3000, move_ms=300, bank_ms=500)
"""Short enough that a timeout costs under a second, long enough for a loaded machine."""


def run_check(folder: Path, game: str = "vendetta", time: TimeControl = CLOCK, **settings: Any) -> CheckReport:
    """Check the bot in ``folder`` at ``game`` with the clock ``time``: ``settings`` are other RefereeSettings
    fields (a whole ``clock`` replaces ``time``)."""
    # As root, the default sandbox runs the bot as a uid of its own, which must
    # read its folder: pytest's tmp_path is closed to other users.
    folder.chmod(0o755)
    spec = build_bot(load_bot(str(folder)))
    return trio.run(check_bot, spec, game, RefereeSettings(**{"clock": Clock(time=time), **settings}))


def failing(report: CheckReport) -> list[str]:
    """The names of the failed checks, in the report's order."""
    return [result.name for result in report.checks if result.status == "fail"]


def check_named(report: CheckReport, name: str) -> CheckResult:
    return next(result for result in report.checks if result.name == name)


def bot_folder(folder: Path, source: str, name: str) -> Path:
    """A Python bot of ``source`` in ``folder``, as bot.py with its bot.toml."""
    (folder / "bot.py").write_text(source)
    (folder / "bot.toml").write_text(f'name = "{name}"\ncommand = "python bot.py"\n')
    folder.chmod(0o755)
    return folder
