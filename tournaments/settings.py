"""The settings a host gives, in sections: each setting declared once, with its default, unit, range and meaning.

A section is a msgspec Struct; each field carries its range as ``msgspec.Meta``
constraints and its unit in ``Meta.extra``, so the tournament file
(``tournaments.config``), the command line options of ``famiglia play`` and
``check-bot`` (their defaults and help text) and the problem lines a bad value
gets all come from the one declaration here. Every duration is in
milliseconds.

``value_problem`` decodes one value with msgspec and, when it does not fit,
says why in words that name the fix, without the setting's name: the caller
puts the name in front (``tournament.time.move_ms: ...``, ``--move-ms 0: ...``).
"""

from __future__ import annotations

import math
import types
import typing
from typing import Annotated, Any, Literal

import msgspec

from protocol.messages import TimeControl
from referee.settings import DEFAULT_SETTINGS, BotLimits, RefereeSettings, SandboxLevel
from tournaments.sanity import MAX_CONCURRENCY, MAX_MS, MAX_WORKERS, MIN_STARTUP_MS

__all__ = [
    "FORMAT_KEYS",
    "ExecutorSection",
    "FormatName",
    "FormatSection",
    "SandboxSection",
    "TimeSection",
    "field_doc",
    "field_problem",
    "referee_settings",
    "value_problem",
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
        DEFAULT_SETTINGS.margin_ms
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
        Literal["wall", "cpu"],
        msgspec.Meta(
            description="what a decision is charged: cpu (the CPU the bot's whole tree used; a busy host does "
            "not make bots lose on time) or wall (the referee's wall clock); PROTOCOL.md"
        ),
    ] = DEFAULT_SETTINGS.clock
    ponder: Annotated[
        bool,
        msgspec.Meta(description="let bots run while they are not asked (by default they are frozen); docs/sandbox.md"),
    ] = DEFAULT_SETTINGS.ponder

    def control(self) -> TimeControl:
        """The clock the bots are told about (the margin and the game's wall limit are the referee's own)."""
        return TimeControl(startup_ms=self.startup_ms, move_ms=self.move_ms, bank_ms=self.bank_ms)


class SandboxSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[tournament.sandbox]``: how bots are contained; docs/sandbox.md."""

    level: Annotated[
        SandboxLevel,
        msgspec.Meta(description="none, standard (limits, no network, own uid) or strict (bubblewrap)"),
    ] = DEFAULT_SETTINGS.sandbox
    limits: BotLimits = BotLimits()
    """Per bot process, at the standard and strict levels; each 0 means no limit."""
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


def referee_settings(
    time: TimeSection, sandbox: SandboxSection, illegal_action: Literal["forfeit", "pass"]
) -> RefereeSettings:
    """How one match is refereed under these sections: the one place the user's settings become the referee's."""
    return RefereeSettings(
        time=time.control(),
        illegal_action=illegal_action,
        sandbox=sandbox.level,
        limits=sandbox.limits,
        runtimes=sandbox.runtimes,
        margin_ms=time.margin_ms,
        game_wall_ms=time.game_wall_ms,
        clock=time.clock,
        ponder=time.ponder,
    )


def _annotation(section: type[msgspec.Struct], key: str) -> Any:
    return typing.get_type_hints(section, include_extras=True)[key]


def _meta(annotation: Any) -> msgspec.Meta:
    """The Meta of a field's type (``Annotated[int, Meta] | None`` included), or an empty one."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(candidate) is Annotated:
            for extra in candidate.__metadata__:
                if isinstance(extra, msgspec.Meta):
                    return extra
    return msgspec.Meta()


def field_doc(section: type[msgspec.Struct], key: str) -> str:
    """A field's one-line meaning (its Meta description), for help texts."""
    return _meta(_annotation(section, key)).description or ""


def field_problem(section: type[msgspec.Struct], key: str, value: object) -> str | None:
    """What is wrong with ``value`` for field ``key`` of ``section``, or None."""
    return value_problem(_annotation(section, key), value)[1]


def value_problem(annotation: Any, value: object) -> tuple[Any, str | None]:
    """``value`` decoded as ``annotation`` (msgspec, strict), and what is wrong with it (None: nothing)."""
    meta = _meta(annotation)
    try:
        decoded = msgspec.convert(value, annotation, strict=True)
    except msgspec.ValidationError:
        return None, _explain(annotation, meta, value)
    least = (meta.extra or {}).get("least")
    if least is not None and 0 < decoded < least:
        return None, _explain(annotation, meta, value)
    return decoded, None


def _choices(annotation: Any) -> tuple[str, ...]:
    for candidate in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(candidate) is Annotated:
            candidate = typing.get_args(candidate)[0]
        if typing.get_origin(candidate) is Literal:
            return typing.get_args(candidate)
    return ()


def _explain(annotation: Any, meta: msgspec.Meta, value: object) -> str:
    """Why ``value`` does not fit, in words: what to give instead."""
    choices = _choices(annotation)
    if choices:
        words = " or ".join([", ".join(map(str, choices[:-1])), str(choices[-1])] if len(choices) > 1 else choices)
        return f"{value!r} is not {words}"
    extra = meta.extra or {}
    unit, words = extra.get("unit", ""), extra.get("words", "")
    least, why = extra.get("least"), extra.get("why")
    number = typing.get_args(annotation)[0] if typing.get_origin(annotation) is Annotated else annotation
    union = typing.get_origin(number) in (typing.Union, types.UnionType)
    kinds = [kind for kind in (typing.get_args(number) if union else (number,)) if kind is not type(None)]
    if not any(kind in (int, float) for kind in kinds):  # text and the like: no range to explain
        wanted = "text in quotes" if str in kinds else " or ".join(f"a {getattr(k, '__name__', k)}" for k in kinds)
        return f"expected {wanted}, got {value!r}"
    if number is float or float in typing.get_args(annotation):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"expected a number, got {value!r}"
        shown = f"{value:g}"
        if not math.isfinite(value) or meta.ge is not None and meta.le is not None:
            return f"must be {'an ' + words if words else 'a number'} from {meta.ge:g} to {meta.le:g}, got {shown}"
        return f"must be between {meta.gt:g} and {meta.lt:g}, got {shown}"
    if isinstance(value, bool) or not isinstance(value, int):
        if number is not int and meta.ge is None:
            return f"expected {getattr(number, '__name__', 'a value')}, got {value!r}"
        of = f" of {words}" if words else ""
        at_least = "" if meta.ge is None else f", {meta.ge} or more" + (" (0: no limit)" if least is not None else "")
        return f"expected a whole number{of}{at_least}, got {value!r}"
    ge, le = meta.ge if meta.ge is not None else 0, meta.le
    if le is not None and value > le:
        if extra.get("most"):
            return f"{value} {unit} is more than {extra['most']}; give {words} (at most {le})"
        if least is not None:
            return f"{value} cannot work: give 0 (no limit) or {least} to {le} ({words})"
        return f"must be {ge} to {le} {words}, got {value}".replace("  ", " ")
    if value < ge:
        if why is not None and least is None:
            return f"{value} {unit} is too short {why}; give at least {ge}"
        if ge == 0:
            return f"must be 0 or more {words}, got {value}".replace("  ", " ")
        if le is not None and not unit:
            return f"must be {ge} to {le} {words}, got {value}".replace("  ", " ")
        if not unit:
            return f"must be {ge} or more {words}, got {value}".replace("  ", " ")
        return f"must be at least {ge} {unit}, got {value}"
    assert least is not None  # the only other way a whole number in range is refused
    reason = f" {why};" if why else ""
    return f"{value} cannot work:{reason} give 0 (no limit) or {least} to {le} {words}".rstrip()
