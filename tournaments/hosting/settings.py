"""The settings a host gives, in sections: each setting declared once, with its default, unit, range and meaning.

A section is a msgspec Struct; each field carries its range as ``msgspec.Meta``
constraints and its unit in ``Meta.extra``, so the tournament file
(``tournaments.config.tournament``), the command line options of ``famiglia play``
and ``check-bot`` (their defaults and help text, ``tournaments.cli.options``) and
the problem lines a bad value gets (``tournaments.hosting.ranges``) all come from
the one declaration here. Every duration is in milliseconds.
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

import msgspec

from protocol.messages import IllegalActionPolicy, TimeControl
from referee.settings import DEFAULT_SETTINGS, BotLimits, Clock, ClockMode, RefereeSettings, ReplayLimits, SandboxLevel
from tournaments.hosting.ranges import MAX_CONCURRENCY, MAX_MS, MAX_WORKERS, MIN_STARTUP_MS

__all__ = [
    "FORMAT_KEYS",
    "ExecutorSection",
    "FormatName",
    "FormatSection",
    "RunCounts",
    "SandboxSection",
    "TimeSection",
    "cpus_available",
    "referee_settings",
]

_CLOCK = TimeControl()  # the bots' clock defaults are the wire type's own (protocol.messages)


def _ms(doc: str, *, ge: int = 0, least: int | None = None, why: str | None = None) -> msgspec.Meta:
    """The rule of a duration: whole milliseconds from ``ge`` to a week (0, or ``least`` and up, when given)."""
    extra: dict[str, Any] = {"unit": "ms", "words": "milliseconds", "most": "a week"}
    if least is not None:
        extra["least"] = least
    if why is not None:
        extra["why"] = why
    return msgspec.Meta(ge=ge, le=MAX_MS, description=doc, extra=extra)


class TimeSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[tournament.time]`` and the clock options of ``famiglia play``: every duration in milliseconds."""

    move_ms: Annotated[int, _ms("time per decision, ms", ge=1)] = _CLOCK.move_ms
    bank_ms: Annotated[int, _ms("overage bank per game, ms")] = _CLOCK.bank_ms
    startup_ms: Annotated[
        int,
        _ms(
            "time to answer start with ready, ms",
            ge=MIN_STARTUP_MS,
            why="for any bot to start (an interpreter alone takes tens of ms)",
        ),
    ] = _CLOCK.startup_ms
    margin_ms: Annotated[int, _ms("added to every deadline for the harness's own delays, ms (bots are not told)")] = (
        DEFAULT_SETTINGS.clock.margin_ms
    )
    game_wall_ms: Annotated[
        int,
        _ms(
            "a limit on the whole game, ms (0: none beyond the per-decision clocks)",
            least=MIN_STARTUP_MS,
            why="it ends every game before its bots start",
        ),
    ] = 0
    clock: Annotated[
        ClockMode,
        msgspec.Meta(
            description="what a decision is charged: cpu (the time the bot's whole tree could have used, "
            "sleep included: a busy host does not make bots lose on time) or wall (the referee's wall clock); "
            "PROTOCOL.md"
        ),
    ] = DEFAULT_SETTINGS.clock.mode
    ponder: Annotated[
        bool,
        msgspec.Meta(description="let bots run while they are not asked (by default they are frozen); docs/sandbox.md"),
    ] = DEFAULT_SETTINGS.clock.ponder

    def control(self) -> TimeControl:
        """The clock the bots are told about (the margin and the game's wall limit are the referee's own)."""
        return TimeControl(startup_ms=self.startup_ms, move_ms=self.move_ms, bank_ms=self.bank_ms)

    def referee_clock(self) -> Clock:
        """The seats' clock as the referee runs it: the one value that goes whole to every match."""
        return Clock(
            time=self.control(),
            mode=self.clock,
            margin_ms=self.margin_ms,
            game_wall_ms=self.game_wall_ms,
            ponder=self.ponder,
        )


class SandboxSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[tournament.sandbox]``: how bots are contained; docs/sandbox.md."""

    level: Annotated[
        SandboxLevel,
        msgspec.Meta(description="none, standard (limits, no network, own uid) or strict (bubblewrap)"),
    ] = DEFAULT_SETTINGS.sandbox
    limits: BotLimits = BotLimits()
    """Per bot process, at the standard and strict levels; each 0 means no limit."""
    replay: ReplayLimits = ReplayLimits()
    """What each seat may put in a game's replay (log lines, rejected actions), at every level; docs/sandbox.md."""
    runtimes: tuple[str, ...] = ()
    """Absolute folders of this machine every bot and build sees read-only (a toolchain); docs/sandbox.md."""


FormatName = Literal["round-robin", "gauntlet", "head-to-head"]


class FormatSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[tournament.format]``: who meets whom, at which tables, how many games."""

    kind: Annotated[FormatName, msgspec.Meta(description="round-robin, gauntlet or head-to-head")] = "round-robin"
    table_sizes: list[int] = []
    """How many bots sit at each table; one list entry per table size played."""
    games_per_entrant: Annotated[int, msgspec.Meta(ge=1, extra={"words": "games"})] | None = None
    """Games each entrant plays, on balanced tables (instead of every possible table)."""
    repetitions: Annotated[int, msgspec.Meta(ge=1, extra={"words": "round-robins"})] = 1
    """Whole round-robins, every possible table each time."""
    hero: str | None = None
    """Gauntlet: the entrant every game is played by."""
    a: str | None = None
    """Head-to-head: the first of the two entrants compared."""
    b: str | None = None
    """Head-to-head: the second of the two entrants compared."""
    elo0: Annotated[float, msgspec.Meta(ge=-2000, le=2000, extra={"words": "Elo difference"})] = 0.0
    """Head-to-head: the Elo difference of the null hypothesis."""
    elo1: Annotated[float, msgspec.Meta(ge=-2000, le=2000, extra={"words": "Elo difference"})] = 50.0
    """Head-to-head: the Elo difference of the alternative; above elo0."""
    alpha: Annotated[float, msgspec.Meta(gt=0, lt=0.5)] = 0.05
    """Head-to-head: the chance of a false "a is stronger"."""
    beta: Annotated[float, msgspec.Meta(gt=0, lt=0.5)] = 0.05
    """Head-to-head: the chance of a false "a is not stronger"."""
    max_games: Annotated[int, msgspec.Meta(ge=1, extra={"words": "games"})] = 1000
    """Head-to-head: the most games before the test stops undecided."""


# The keys of [tournament.format] each kind reads. A key another kind reads is
# refused in a file of this kind, with what this kind does instead: a setting
# that is silently ignored looks to its host as if it had been applied.
FORMAT_KEYS: dict[str, tuple[frozenset[str], str]] = {
    "round-robin": (
        frozenset({"kind", "table_sizes", "games_per_entrant", "repetitions"}),
        "it plays every entrant equally often, by games_per_entrant or repetitions",
    ),
    "gauntlet": (
        frozenset({"kind", "table_sizes", "games_per_entrant", "hero"}),
        "it plays hero against the field, by games_per_entrant or one table per set of opponents",
    ),
    "head-to-head": (
        frozenset({"kind", "table_sizes", "a", "b", "elo0", "elo1", "alpha", "beta", "max_games"}),
        "it plays a and b on duplicate deals until its test decides, at most max_games",
    ),
}


class ExecutorSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[tournament.executor]``: who plays the games and how many at once; docs/distributed.md."""

    kind: Annotated[Literal["local", "dask"], msgspec.Meta(description="local or dask")] = "local"
    scheduler: str | None = None
    """The Dask scheduler's address, tcp://HOST:8786 (--scheduler wins)."""
    concurrency: Annotated[int, msgspec.Meta(ge=1, le=MAX_CONCURRENCY, extra={"words": "games at once"})] = 4
    """Games at once, in total (spread over the workers)."""
    workers: Annotated[
        int, msgspec.Meta(ge=0, le=MAX_WORKERS, extra={"words": "worker processes (0: one per core)"})
    ] = 0
    """Worker processes on this machine (0: one per core)."""
    reuse_processes: bool = True
    """Keep bot processes warm between games."""

    def counts(self, *, concurrency: int | None = None, workers: int | None = None) -> RunCounts:
        """The games at once and the worker processes of a run: the command line's where given, else these.

        The one rule every caller follows (the run, its capacity check, the
        command line): ``workers = 0`` is one per core, and unless the command
        line says otherwise each worker gets a game at least, since fewer would
        leave a worker idle (``tournaments.config.notes`` says so to the host).
        """
        workers = workers if workers is not None else (self.workers or cpus_available())
        concurrency = concurrency if concurrency is not None else max(self.concurrency, workers)
        return RunCounts(concurrency=concurrency, workers=workers)


class RunCounts(msgspec.Struct, frozen=True, kw_only=True):
    """How many games a run plays at once, spread over how many worker processes (``ExecutorSection.counts``)."""

    concurrency: int
    workers: int


def cpus_available() -> int:
    """The CPUs this process may run on (its affinity, which a container or taskset narrows): a run's
    worker processes, and the processes that write a report's pages, when the host names no number."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def referee_settings(
    time: TimeSection, sandbox: SandboxSection, illegal_action: IllegalActionPolicy
) -> RefereeSettings:
    """How one match is refereed under these sections: the one place the user's settings become the referee's."""
    return RefereeSettings(
        clock=time.referee_clock(),
        illegal_action=illegal_action,
        sandbox=sandbox.level,
        limits=sandbox.limits,
        replay=sandbox.replay,
        runtimes=sandbox.runtimes,
    )
