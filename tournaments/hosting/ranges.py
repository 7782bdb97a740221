"""A setting's range and the words for a value outside it.

Each setting declares its range once, as ``msgspec.Meta`` on its field
(``tournaments.hosting.settings``, ``referee.settings.BotLimits``), with the
bounds below where a bound is shared (a week of milliseconds, the most games
at once). ``value_problem`` and ``field_problem`` read that declaration, so the
tournament file and the command line refuse the same values in the same
words. ``count_problem`` and ``seed_problem`` serve the values that are no
field of a section (a command line's count, a seed). Each returns the problem
in words that say what to do, without the name of the setting; the caller
puts the name in front (``tournament.time.move_ms: ...``, ``--move-ms 0: ...``).
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Literal

import msgspec

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_GAMES",
    "MAX_MS",
    "MAX_SEED",
    "MAX_WORKERS",
    "MIN_STARTUP_MS",
    "count_problem",
    "field_doc",
    "field_problem",
    "scheduler_problem",
    "seed_problem",
    "value_problem",
]

MIN_STARTUP_MS = 100
"""Below this no bot can start: an interpreter alone takes tens of milliseconds, a sandbox more."""
MAX_MS = 7 * 24 * 3600 * 1000
"""A week: any clock beyond it is a typo (and would not fit the replay's numbers for long)."""
MAX_GAMES = 1_000_000
"""The most games one store schedules; more would take hours to plan and weeks to play."""
MAX_SEED = 2**63 - 1
"""Deal seeds are 63 bits: they fit a signed SQLite INTEGER and a replay's numbers in every JSON reader."""
MAX_CONCURRENCY = 4096
"""Games at once: each starts 3 to 6 processes; more than this exhausts any machine's process table."""
MAX_WORKERS = 1024
"""Referee processes: one per core is the most that helps."""


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def count_problem(value: object, *, low: int, high: int, what: str) -> str | None:
    """What is wrong with a count that must lie in ``low..high``."""
    if not _whole(value):
        return f"expected a whole number, got {value!r}"
    assert isinstance(value, int)
    if not low <= value <= high:
        return f"must be {low} to {high} {what}, got {value}"
    return None


def seed_problem(value: object) -> str | None:
    """What is wrong with a seed: ``famiglia play --seed`` and a tournament file's ``seed`` share this rule."""
    if not _whole(value):
        return f"expected a whole number from 0 to {MAX_SEED}, got {value!r}"
    assert isinstance(value, int)
    if not 0 <= value <= MAX_SEED:
        return f"give a whole number from 0 to {MAX_SEED} (63 bits), got {value}"
    return None


def scheduler_problem(address: str) -> str | None:
    """What is wrong with a Dask scheduler's address: ``--scheduler`` and ``[tournament.executor] scheduler``.

    Only the form of a tcp:// or tls:// address (Dask's default when none is
    named) is checked here, before anything runs; whether a scheduler answers
    there is found out when the run reaches it.
    """
    scheme, named, location = address.strip().partition("://")
    if not named:
        scheme, location = "tcp", address.strip()
    if scheme not in ("tcp", "tls"):
        return None  # Dask's other transports: Dask reads them
    host, colon, port = location.rpartition(":")
    if not colon or not host or host.startswith("[") != host.endswith("]") or not port.isdigit():
        return f'expected an address like "tcp://HOST:8786" (a host and its port), got {address!r}'
    if not 1 <= int(port) <= 65535:
        return f"the port must be 1 to 65535, got {port}"
    return None


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


def _optional_of(annotation: Any) -> Any:
    """The type of ``X | None`` (a setting that may be left out), else ``annotation`` itself.

    ``games_per_entrant`` is ``Annotated[int, Meta(ge=1)] | None``: explained as
    the union, its count was "a Annotated" instead of a number in a range.
    """
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kinds = [kind for kind in typing.get_args(annotation) if kind is not type(None)]
        if len(kinds) == 1:
            return kinds[0]
    return annotation


def _explain(annotation: Any, meta: msgspec.Meta, value: object) -> str:
    """Why ``value`` does not fit, in words: what to give instead."""
    annotation = _optional_of(annotation)
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
        if meta.ge is not None and meta.le is not None:
            return f"must be {'an ' + words if words else 'a number'} from {meta.ge:g} to {meta.le:g}, got {shown}"
        # Bounds left open (alpha: between 0 and 0.5); nan and inf are outside them too
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
        if least is not None:  # below 0: the whole range, 0 (no limit) included
            return f"must be 0 (no limit) or {least} to {le} {words}, got {value}".replace("  ", " ")
        if why is not None:
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
