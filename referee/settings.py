"""The referee's settings: clocks, bounds and penalties, all with sane defaults."""

from __future__ import annotations

import os
from typing import Annotated, Literal

import msgspec

from protocol.messages import DEFAULT_MAX_LINE, IllegalActionPolicy, TimeControl

__all__ = [
    "DEFAULT_MARGIN_MS",
    "DEFAULT_SETTINGS",
    "BotLimits",
    "Clock",
    "ClockMode",
    "RefereeSettings",
    "ReplayLimits",
    "SandboxLevel",
]

SandboxLevel = Literal["none", "standard", "strict"]
"""How much a bot is contained; see docs/sandbox.md."""

# Variables a bot may inherit from the referee's environment; everything else
# (tokens, credentials, the referee's own configuration) stays out of reach.
_INHERITED_ENV = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "SYSTEMROOT", "PYTHONPATH", "VIRTUAL_ENV")


def _limit(least: int, most: int, unit: str, why: str | None = None) -> msgspec.Meta:
    """The range of a resource limit: 0 (no limit), or ``least`` (the smallest a bot can live with) to ``most``."""
    extra: dict[str, object] = {"least": least, "words": unit}
    if why is not None:
        extra["why"] = why
    return msgspec.Meta(ge=0, le=most, extra=extra)


class BotLimits(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Per-process resource limits for a bot, applied at the standard and strict levels.

    Each limit holds for every process of the bot (its children inherit it);
    the process count holds for all of them together. 0 means no limit.
    """

    memory_mb: Annotated[int, _limit(32, 16 << 20, "MiB", "below 32 MiB no interpreter starts")] = 2048
    """Memory per process in MiB: address space, or data for runtimes that reserve huge address ranges."""
    memory_kind: Literal["auto", "as", "data"] = "auto"
    """Which limit carries memory_mb: auto picks data for the JVM, Node, Go, .NET and GHC, else address space."""
    cpu_s: Annotated[int, _limit(1, 365 * 24 * 3600, "CPU seconds")] = 600
    """CPU seconds per process over its whole life (a warm process counts every game it plays)."""
    open_files: Annotated[int, _limit(16, 1 << 20, "descriptors", "below 16 a bot cannot open its own runtime")] = 256
    """Open file descriptors per process."""
    file_mb: Annotated[int, _limit(1, 16 << 20, "MiB")] = 64
    """The largest file a bot may write, in MiB."""
    processes: Annotated[int, _limit(1, 1 << 22, "processes")] = 128
    """Processes and threads of the bot together (RLIMIT_NPROC on its own uid, or inside its user namespace)."""
    tmp_mb: Annotated[int, _limit(1, 16 << 20, "MiB")] = 64
    """The size of the private /tmp of the strict level, in MiB (it is memory: a tmpfs)."""
    build_mb: Annotated[int, _limit(1, 16 << 20, "MiB")] = 1024
    """What a bot's build may leave in its folder in all (the bot's own files included), in MiB."""


class ReplayLimits(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What each seat may put in a game's replay: its log lines and the illegal actions it sent, at every level.

    Counted in bytes of the replay's JSON, as written: a control character a bot
    sends is six bytes there (``\\u0001``), so a count of lines and characters
    alone does not bound the file. What passes a bound is left out of the replay,
    which says so once (a ``cut`` record, ``referee.replay_budget``); the game goes on.
    """

    kb_per_decision: Annotated[int, msgspec.Meta(ge=1, le=16 << 10, extra={"words": "KiB"})] = 64
    """KiB of one seat's log lines and rejected actions for one request."""
    kb_per_game: Annotated[int, msgspec.Meta(ge=1, le=16 << 10, extra={"words": "KiB"})] = 1024
    """KiB of one seat's log lines and rejected actions in one game."""


DEFAULT_MARGIN_MS = 50
"""The harness's allowance on every deadline unless a tournament or ``--margin-ms`` sets another."""

ClockMode = Literal["wall", "cpu"]
"""What a decision is charged: see ``Clock.mode``."""


class Clock(msgspec.Struct, frozen=True, kw_only=True):
    """A seat's clock, whole: the limits the bots are told, what a decision is charged, and the
    referee's own allowances. One value from the command line or the tournament file to the match
    (``tournaments.hosting.settings.TimeSection`` declares what a host may set of it)."""

    time: TimeControl = TimeControl()
    """The limits every bot is told in its start message: startup, per decision, the bank."""
    mode: ClockMode = "cpu"
    """What a decision is charged, from the request's write to the answer's read: "cpu", the time the
    seat's bot could have used (its wall time less what its processes, and the referee, waited for a
    CPU, or the CPU its whole tree used, whichever is more: its computing and its sleeping, not a busy
    host's delays; referee.match.clock), where the host gives each bot a control group with CPU
    accounting (a seat without one is charged wall time); or "wall", the referee's wall clock."""
    backstop: float = 5.0
    """Under the cpu clock, a decision also ends when its wall time reaches this many times its
    budget: the bound for what the meters cannot see (a host that keeps no run delays, a referee
    that itself waits for a CPU while a seat sleeps)."""
    margin_ms: int = DEFAULT_MARGIN_MS
    """Added to every deadline, for the harness's own scheduling noise (bots are not told)."""
    game_wall_ms: int = 0
    """A limit on one whole game in milliseconds (0: none beyond the per-decision clocks)."""
    ponder: bool = False
    """Whether bots may run while they are not asked (think on the others' time). By default a
    bot's whole tree is frozen from its answer until it is next written to, where the host
    gives a cgroup freezer; with ponder, each bot's CPU is still bounded to one core."""


class RefereeSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How one match is refereed."""

    clock: Clock = Clock()
    """Every seat's clock: its limits, what a decision is charged, the harness's allowances."""
    max_line_bytes: int = DEFAULT_MAX_LINE
    """The longest line a bot may send; a longer one is a protocol error."""
    stderr_bytes: int = 64 * 1024
    """How much of each bot's stderr is kept per game (the last bytes)."""
    max_messages_per_decision: int = 100
    """Log lines a bot may send before answering one request; more is a flood."""
    replay: ReplayLimits = ReplayLimits()
    """What each seat may put in the replay, in bytes as written; past it the replay keeps a marker, not the text."""
    illegal_action: IllegalActionPolicy = "forfeit"
    """What an illegal action costs: the game, or only this turn."""
    grace_ms: int = 500
    """How long a bot gets to exit after its input closes, and again after SIGTERM."""
    stderr_flood_bytes: int = 16 << 20
    """What a bot may write to stderr in one game; more is a flood, a protocol error (0: no limit)."""
    sandbox: SandboxLevel = "standard"
    """none, standard (limits, no network, own uid, own PID namespace) or strict (bubblewrap)."""
    limits: BotLimits = BotLimits()
    """Resource limits per bot process at the standard and strict levels."""
    bot_uid_base: int = 0x70000000
    """When the referee is root, each bot runs as its own uid counted from here (0: keep root's uid)."""
    runtimes: tuple[str, ...] = ()
    """Folders of the host every bot and build sees read-only at the standard and strict levels (a toolchain)."""

    def bot_environment(self) -> dict[str, str]:
        env = {key: os.environ[key] for key in _INHERITED_ENV if key in os.environ}
        env["PYTHONUNBUFFERED"] = "1"
        env["FAMIGLIA_PROTOCOL"] = "1"
        return env


DEFAULT_SETTINGS = RefereeSettings()
"""The defaults, built once (a frozen value, safe to share)."""
