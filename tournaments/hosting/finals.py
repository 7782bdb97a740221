"""A final evaluation's contract: what a competition hands the tournament wing to play, and what comes back.

A ladder's season ends with a final: a fixed schedule among frozen versions,
played, rated and published as a tournament is. The ladder may not import the
tournament wing (it stands on this floor alone), and the wing must not know
the ladder; so the plan and its result are declared here, below both, and the
wing's runner is handed to whoever needs it by the composition root
(``tournaments.cli`` calls ``use_final_runner`` when it builds the command tree).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from protocol.messages import IllegalActionPolicy
from referee.bots import BotSpec

if TYPE_CHECKING:
    # Only named: the command tree registers the runner at every start of famiglia, which must not
    # pay for the fit's numerical libraries (tests/tournaments/cli/test_cli_startup.py).
    from tournaments.hosting.ratings import Standing

__all__ = ["FinalPlan", "FinalResult", "FinalRunner", "NoFinalRunner", "final_runner", "use_final_runner"]


class FinalPlan(msgspec.Struct, frozen=True, kw_only=True):
    """Everything that decides a final's games, and where its results and pages go."""

    name: str
    game: str
    variants: dict[str, str]
    table_sizes: list[int]
    games_per_entrant: int
    """Games each finalist plays (over all table sizes), on balanced tables in every seating of each deal."""
    illegal_action: IllegalActionPolicy
    time: dict[str, object]
    """The bots' clock, as ``[tournament.time]`` takes it (milliseconds)."""
    sandbox: dict[str, object]
    """The containment, as ``[tournament.sandbox]`` takes it."""
    concurrency: int
    entrants: list[tuple[str, BotSpec]]
    """Each finalist's name and its frozen version's ready bot, in the order the schedule numbers them."""
    db: Path
    """The final's results store: a tournament store, so a restart plays only the games it lacks."""
    report: Path
    """The report page; its viewer pages go beside it."""


class FinalResult(msgspec.Struct, frozen=True, kw_only=True):
    """A finished final: its standings (fitted, with intervals), its games, and the page that shows them."""

    standings: list[Standing]
    games: int
    scheduled: int
    report: Path


FinalRunner = Callable[[FinalPlan], Awaitable[FinalResult]]
"""Plays what the plan's store lacks (resumable), then writes the report and fits the standings."""


class NoFinalRunner(RuntimeError):
    """Nothing registered a runner: this process was not started through ``famiglia``."""


_runner: list[FinalRunner] = []


def use_final_runner(runner: FinalRunner) -> None:
    """Make ``runner`` the one every final is played with (the composition root calls this once)."""
    _runner[:] = [runner]


def final_runner() -> FinalRunner:
    """The registered runner; NoFinalRunner when there is none."""
    if not _runner:
        raise NoFinalRunner("no final runner is registered: start the ladder with `famiglia ladder serve`")
    return _runner[0]
