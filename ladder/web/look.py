"""How the pages put values into words and marks: times as people say them, a version's badges, the
board's rating bands.

The templates use these as Jinja filters and globals (``ladder.web.site``
registers them): ``ago`` ("3 hours ago"), ``exact`` (the time to the second,
for a tooltip), ``badges`` (a row's state and its health counts) and
``band_scale`` (one scale for every rating band of a board, so bands compare).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

__all__ = ["Badge", "BandScale", "ago", "badges", "band_scale", "exact"]


def _moment(text: str) -> datetime.datetime | None:
    try:
        moment = datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)


_UNITS = (("year", 365 * 86400), ("month", 30 * 86400), ("week", 7 * 86400), ("day", 86400), ("hour", 3600),
          ("minute", 60))  # fmt: skip


def ago(text: str | None, now: datetime.datetime | None = None) -> str:
    """An ISO 8601 moment in the words people use: "just now", "5 minutes ago", "3 hours ago", "2 days ago".

    A moment that cannot be read is shown as it is; one in the future (another machine's clock) is "just now".
    """
    if not text:
        return ""
    moment = _moment(text)
    if moment is None:
        return text
    seconds = ((now or datetime.datetime.now(datetime.UTC)) - moment).total_seconds()
    if seconds < 45:
        return "just now"
    if seconds < 90:
        return "a minute ago"
    for unit, size in _UNITS:
        if seconds >= size:
            count = int(seconds // size)
            if unit == "day" and count == 1:
                return "yesterday"
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "a minute ago"  # not reached: 90 s and more is at least a minute


def exact(text: str | None) -> str:
    """The moment to the second, in UTC: what a tooltip shows beside ``ago``'s words."""
    if not text:
        return ""
    moment = _moment(text)
    if moment is None:
        return text
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


class Badge(msgspec.Struct, frozen=True):
    label: str
    kind: str
    """The badge's look: "good", "info", "warn" or "bad"."""
    says: str
    """Its tooltip: what it means."""


_STATE_KINDS = {"active": "good", "suspended": "bad", "rejected": "bad", "checking": "info", "queued": "info"}


def _counts(health: object) -> Mapping[str, object]:
    if isinstance(health, Mapping):
        return health
    if isinstance(health, msgspec.Struct):
        return msgspec.structs.asdict(health)
    return {}


def badges(row: object) -> list[Badge]:
    """A board row's or a version's badges: its state (``active`` when the row carries none), then each
    of its health counts above zero, when the row carries them (a ``health`` mapping or struct of counts,
    or ``suspended``/``suspension`` words)."""
    state = getattr(row, "state", None)
    state = state if isinstance(state, str) else "active"
    said = getattr(row, "suspended", None) or getattr(row, "suspension", None)
    shown = [Badge(state, _STATE_KINDS.get(state, "info"), str(said) if said else f"this version is {state}")]
    for kind, count in _counts(getattr(row, "health", None)).items():
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            words = kind.replace("_", " ")
            shown.append(Badge(f"{count} {words}", "warn", f"{count} of its games ended by its own {words}"))
    return shown


class BandScale(msgspec.Struct, frozen=True):
    """One scale for the rating bands of a board, so that a wide band looks wider than a narrow one."""

    low: float
    high: float

    def at(self, value: float) -> float:
        """Where ``value`` lies on the scale, in percent of its width (clamped to 0..100)."""
        return round(min(100.0, max(0.0, (value - self.low) / (self.high - self.low) * 100)), 2)


def band_scale(rows: Sequence[Any]) -> BandScale:
    """The scale covering every row's interval (``low``, ``high``) and its rating."""
    values = [v for row in rows for v in (row.low, row.high, row.rating) if v is not None]  # unranked: none
    if not values:
        return BandScale(0.0, 1.0)
    low, high = min(values), max(values)
    pad = (high - low) * 0.03 or 1.0
    return BandScale(low - pad, high + pad)
