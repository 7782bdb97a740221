"""The options several commands share, each declared once and checked once.

The clock options (``play``, ``check-bot``), the sandbox options (``play``,
``check-bot``), the illegal-action policy (``play``) and the run's counts
(``tournament run``, ``demo``). Each option's help text and default come from
the setting it sets (``tournaments.hosting.settings``), and a value is checked
against that setting's range (``tournaments.hosting.ranges``), so a command line
and a tournament file refuse the same values in the same words.

A check raises ValueError naming the option (``--move-ms 0: ...``), which a
command turns into one line and exit 2 (``tournaments.cli.common.user_errors``).
Only Typer and the settings are imported here: this module is read at every
start of famiglia.
"""

from __future__ import annotations

import os
from typing import Annotated, cast, get_args

import typer

from protocol.messages import IllegalActionPolicy
from tournaments.hosting.ranges import (
    MAX_CONCURRENCY,
    MAX_WORKERS,
    count_problem,
    field_doc,
    field_problem,
)
from tournaments.hosting.settings import SandboxSection, TimeSection

__all__ = [
    "DEFAULT_SANDBOX",
    "DEFAULT_TIME",
    "BankMs",
    "Clock",
    "Concurrency",
    "GameWallMs",
    "Illegal",
    "MarginMs",
    "MoveMs",
    "Ponder",
    "Runtime",
    "Sandbox",
    "StartupMs",
    "Workers",
    "check_counts",
    "illegal_action_policy",
    "sandbox_section",
    "time_section",
]

DEFAULT_TIME = TimeSection()
"""The clock a command plays with when no option changes it: the settings' own defaults."""
DEFAULT_SANDBOX = SandboxSection().level
"""The sandbox level a command plays at when ``--sandbox`` is not given."""


def _clock_help(key: str) -> str:
    return field_doc(TimeSection, key)


MoveMs = Annotated[int, typer.Option(help=_clock_help("move_ms"))]
BankMs = Annotated[int, typer.Option(help=_clock_help("bank_ms"))]
StartupMs = Annotated[int, typer.Option(help=_clock_help("startup_ms"))]
MarginMs = Annotated[int, typer.Option(help=_clock_help("margin_ms"))]
GameWallMs = Annotated[int, typer.Option(help=_clock_help("game_wall_ms"))]
Clock = Annotated[str, typer.Option(help=_clock_help("clock"))]
Ponder = Annotated[bool, typer.Option("--ponder", help=_clock_help("ponder"))]

Illegal = Annotated[str, typer.Option(help="what an illegal action costs: forfeit or pass")]

Sandbox = Annotated[
    str, typer.Option(help="how bots are contained: none, standard or strict (bubblewrap); see docs/sandbox.md")
]
Runtime = Annotated[
    list[str],
    typer.Option(help="an absolute folder bots may read (a toolchain); repeat for several; docs/sandbox.md"),
]

Concurrency = Annotated[int | None, typer.Option(help="games at once in all (default: the file's)")]
Workers = Annotated[int | None, typer.Option(help="referee processes (default: one per core)")]


def time_section(
    *,
    move_ms: int,
    bank_ms: int,
    startup_ms: int,
    margin_ms: int = DEFAULT_TIME.margin_ms,
    game_wall_ms: int = DEFAULT_TIME.game_wall_ms,
    clock: str = DEFAULT_TIME.clock,
    ponder: bool = DEFAULT_TIME.ponder,
) -> TimeSection:
    """The clock options as the time section they set; ValueError naming the first option out of range."""
    if clock not in ("wall", "cpu"):
        raise ValueError(f"--clock {clock!r}: choose wall or cpu")
    clocks = {"move_ms": move_ms, "bank_ms": bank_ms, "startup_ms": startup_ms, "margin_ms": margin_ms,
              "game_wall_ms": game_wall_ms}  # fmt: skip
    for key, value in clocks.items():
        if (problem := field_problem(TimeSection, key, value)) is not None:
            raise ValueError(f"--{key.replace('_', '-')} {value}: {problem}")
    return TimeSection(**clocks, clock="cpu" if clock == "cpu" else "wall", ponder=ponder)


def sandbox_section(level: str, runtime: list[str]) -> SandboxSection:
    """The sandbox options as the section they set: each ``--runtime`` folder usable, the level one this
    machine can apply (SandboxUnavailable, a ValueError, says what is missing)."""
    # The sandbox's package, imported once a command runs: it is not needed for help.
    from referee.sandbox import require_level
    from referee.sandbox.runtimes import runtime_problem

    for folder in runtime:
        if (problem := runtime_problem(folder)) is not None:
            raise ValueError(f"--runtime {folder}: {problem}")
    return SandboxSection(level=require_level(level), runtimes=tuple(os.path.normpath(folder) for folder in runtime))


def illegal_action_policy(word: str) -> IllegalActionPolicy:
    """``--illegal`` as the policy it names; ValueError for another word."""
    choices: tuple[str, ...] = get_args(IllegalActionPolicy)  # the policies the wire type declares
    if word not in choices:
        raise ValueError(f"--illegal {word!r}: choose {' or '.join(choices)}")
    return cast(IllegalActionPolicy, word)


def check_counts(concurrency: int | None, workers: int | None) -> None:
    """``--concurrency`` and ``--workers`` (None: not given); ValueError for a count that cannot work.

    Narrower than the file's ``[tournament.executor]``: on the command line a
    count is given to be used, so ``--workers 0`` (the file's "one per core")
    is refused rather than read.
    """
    if concurrency is not None and (problem := count_problem(concurrency, low=1, high=MAX_CONCURRENCY, what="games")):
        raise ValueError(f"--concurrency {concurrency}: {problem}")
    if workers is not None and (problem := count_problem(workers, low=1, high=MAX_WORKERS, what="processes")):
        raise ValueError(f"--workers {workers}: {problem}")
