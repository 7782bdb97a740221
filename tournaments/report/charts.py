"""The report's pictures as inline SVG, described as plain shapes.

Each chart is a list of shapes (tag, attributes, text) that the report template
writes out with autoescaping, so a name from a tournament file is text in an
SVG ``<text>`` element and nothing else. Every colour has the entrant's name
beside it; the colours are there to follow a line, not to name it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from tournaments.hosting.ratings import SeatOffsets, Standing
from tournaments.report.figures import RatingHistory, ThinkingTimes

__all__ = [
    "ENTRANT_COLOURS",
    "SEAT_BAR",
    "Chart",
    "LegendEntry",
    "entrant_colour",
    "entrant_dash",
    "forest_plot",
    "rating_history_chart",
    "seat_advantage_chart",
    "terminations_chart",
    "thinking_time_chart",
]

ENTRANT_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#000000", "#882255", "#332288", "#117733")
"""One colour per entrant, in entrant order, each at least 3:1 against the white page (no pale
yellow or sky blue). Any two stay apart (CIELAB distance 13 or more) in normal vision and as
seen with protanopia, deuteranopia and tritanopia (Machado et al. 2009): the first five are
Okabe and Ito's, the last three Paul Tol's "muted" ones. Past eight entrants the colours
come round again with dashed lines (``entrant_dash``)."""

ENTRANT_DASHES = ("", "7 4", "2 3")

SEAT_BAR = "#9aa0a6"
"""Seats are not entrants: their bars are one neutral grey, never an entrant's colour."""
TERMINATION_COLOURS = {
    "timeout": "#E69F00",
    "crash": "#D55E00",
    "illegal": "#CC79A7",
    "protocol": "#0072B2",
    "stall": "#999999",
}


def entrant_colour(entrant: int) -> str:
    """The entrant's colour in every picture of the report."""
    return ENTRANT_COLOURS[entrant % len(ENTRANT_COLOURS)]


def entrant_dash(entrant: int) -> str:
    """The entrant's line pattern: solid for the first eight, then dashed, then dotted."""
    return ENTRANT_DASHES[(entrant // len(ENTRANT_COLOURS)) % len(ENTRANT_DASHES)]


class Shape(msgspec.Struct, frozen=True):
    tag: str
    attrs: dict[str, str]
    text: str = ""


class LegendEntry(msgspec.Struct, frozen=True):
    """One line of a chart's key, written as HTML under the picture so it wraps on a phone."""

    name: str
    colour: str
    dash: str = ""


class Chart(msgspec.Struct, frozen=True):
    title: str
    width: int
    height: int
    shapes: list[Shape]
    legend: list[LegendEntry] = []


def _fit(name: str, limit: int = 26) -> str:
    """A label that fits the space left of a chart; the tables hold the full name."""
    return name if len(name) <= limit else name[: limit - 1] + "\u2026"


def _n(value: float) -> str:
    return f"{value:.1f}"


def _text(x: float, y: float, text: str, anchor: str = "start", cls: str = "") -> Shape:
    attrs = {"x": _n(x), "y": _n(y), "text-anchor": anchor}
    if cls:
        attrs["class"] = cls
    return Shape("text", attrs, text)


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str = "#888", width: float = 1, dash: str = "") -> Shape:
    attrs = {"x1": _n(x1), "y1": _n(y1), "x2": _n(x2), "y2": _n(y2), "stroke": stroke, "stroke-width": _n(width)}
    if dash:
        attrs["stroke-dasharray"] = dash
    return Shape("line", attrs)


def _rect(x: float, y: float, w: float, h: float, fill: str, title: str = "") -> Shape:
    return Shape("rect", {"x": _n(x), "y": _n(y), "width": _n(max(w, 0)), "height": _n(max(h, 0)), "fill": fill,
                          "stroke": "#333", "stroke-width": "0.5"}, title)  # fmt: skip


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 1)]


def _axis(shapes: list[Shape], low: float, high: float, x0: float, x1: float, y0: float, y1: float, fmt: str) -> None:
    """Vertical grid lines with values under them, for a horizontal value axis."""
    for tick in _ticks(low, high):
        x = x0 + (tick - low) / (high - low) * (x1 - x0)
        shapes.append(_line(x, y0, x, y1, "#e2e2e2"))
        shapes.append(_text(x, y1 + 14, format(tick, fmt), "middle", "tick"))


def forest_plot(standings: Sequence[Standing]) -> Chart | None:
    """Each entrant's rating with its 95% interval, best first."""
    if not standings:
        return None
    label, width, row = 190, 720, 24
    height = 40 + row * len(standings)
    low = min(s.lower for s in standings)
    high = max(s.upper for s in standings)
    pad = (high - low) * 0.05 or 10
    low, high = low - pad, high + pad
    x0, x1 = label + 10, width - 20

    def x(v: float) -> float:
        return x0 + (v - low) / (high - low) * (x1 - x0)

    shapes: list[Shape] = []
    _axis(shapes, low, high, x0, x1, 8, height - 24, "+z.0f")
    for i, s in enumerate(standings):
        y = 20 + i * row
        colour = entrant_colour(s.entrant)  # an entrant has the same colour in every picture
        shapes.append(_text(label, y + 4, _fit(f"{s.place}. {s.name}"), "end"))
        shapes.append(_line(x(s.lower), y, x(s.upper), y, "#333", 2))
        shapes.append(Shape("circle", {"cx": _n(x(s.rating)), "cy": _n(y), "r": "5", "fill": colour, "stroke": "#333"},
                            f"{s.name}: {s.rating:+z.0f} ({s.lower:+z.0f} .. {s.upper:+z.0f})"))  # fmt: skip
    return Chart("Ratings with their 95% intervals", width, height, shapes)


def rating_history_chart(history: RatingHistory) -> Chart | None:
    """One line per entrant: the live rating after each game."""
    if len(history.games) < 2 or not history.names:
        return None
    width, height = 720, 300
    x0, x1, y0, y1 = 64, width - 16, 10, height - 36
    flat = [v for values in history.values for v in values]
    low, high = min(flat), max(flat)
    if high - low < 1e-9:
        high = low + 1
    last = history.games[-1]
    shapes: list[Shape] = []
    for tick in _ticks(low, high):
        y = y1 - (tick - low) / (high - low) * (y1 - y0)
        shapes.append(_line(x0, y, x1, y, "#e2e2e2"))
        shapes.append(_text(x0 - 4, y + 4, f"{tick:z.0f}", "end", "tick"))
    for tick in _ticks(0, last):
        x = x0 + tick / last * (x1 - x0)
        shapes.append(_text(x, y1 + 16, f"{tick:.0f}", "middle", "tick"))
    shapes.append(_text((x0 + x1) / 2, height - 4, "games finished", "middle", "tick"))
    middle = (y0 + y1) / 2
    shapes.append(
        Shape("text", {"x": "14", "y": _n(middle), "text-anchor": "middle", "class": "tick", "data-axis": "y",
                       "transform": f"rotate(-90 14 {_n(middle)})"}, "live rating (mu - 3 sigma)")
    )  # fmt: skip
    legend = []
    for e, (name, values) in enumerate(zip(history.names, history.values, strict=True)):
        line = {"fill": "none", "stroke": entrant_colour(e), "stroke-width": "2"}
        if dash := entrant_dash(e):
            line["stroke-dasharray"] = dash
        points = " ".join(
            f"{_n(x0 + g / last * (x1 - x0))},{_n(y1 - (v - low) / (high - low) * (y1 - y0))}"
            for g, v in zip(history.games, values, strict=True)
        )
        shapes.append(Shape("polyline", {"points": points, **line}, name))
        legend.append(LegendEntry(name, entrant_colour(e), entrant_dash(e)))
    return Chart("Live rating (OpenSkill mu - 3 sigma) as games came in", width, height, shapes, legend)


def seat_advantage_chart(offsets: Sequence[SeatOffsets]) -> Chart | None:
    """Bars of the rating points each seat adds, per table size, with +-2 standard errors."""
    if not offsets:
        return None
    width, row = 720, 20
    height = 30 + sum(row * len(o.offsets) + 12 for o in offsets)
    values = [v + k * e for o in offsets for v, e in zip(o.offsets, o.stderr, strict=True) for k in (-2, 2)]
    bound = max(abs(v) for v in values) or 1
    x0, x1, label = 190, width - 20, 180
    mid = (x0 + x1) / 2
    shapes: list[Shape] = []
    _axis(shapes, -bound, bound, x0, x1, 4, height - 24, "+z.0f")
    shapes.append(_line(mid, 4, mid, height - 24, "#333"))
    y = 12
    for o in offsets:
        for seat, (value, err) in enumerate(zip(o.offsets, o.stderr, strict=True)):

            def x(v: float) -> float:
                return mid + v / bound * (x1 - x0) / 2

            shapes.append(_text(label, y + 11, f"{o.table_size} players, seat {seat}", "end"))
            shapes.append(_rect(min(mid, x(value)), y + 2, abs(x(value) - mid), row - 6, SEAT_BAR,
                                f"seat {seat}: {value:+z.0f}"))  # fmt: skip
            shapes.append(_line(x(value - 2 * err), y + row / 2, x(value + 2 * err), y + row / 2, "#333", 1.5))
            y += row
        y += 12
    return Chart("Seat advantage in rating points (bars) with ±2 standard errors", width, height, shapes)


def terminations_chart(terminations: dict[str, dict[str, int]]) -> Chart | None:
    """Stacked bars: how each entrant's games ended early, by kind."""
    named = [(name, counts) for name, counts in terminations.items()]
    most = max((sum(c.values()) for _, c in named), default=0)
    if most == 0:
        return None
    kinds = sorted({k for _, c in named for k in c})
    width, row, label = 720, 22, 190
    height = 50 + row * len(named)
    x0, x1 = label + 10, width - 20
    shapes: list[Shape] = []
    _axis(shapes, 0, most, x0, x1, 4, height - 44, "g")
    for i, (name, counts) in enumerate(named):
        y = 8 + i * row
        shapes.append(_text(label, y + 12, _fit(name), "end"))
        x = float(x0)
        for kind in kinds:
            count = counts.get(kind, 0)
            if count:
                w = count / most * (x1 - x0)
                shapes.append(_rect(x, y, w, row - 6, TERMINATION_COLOURS.get(kind, "#777"), f"{name}: {kind} {count}"))
                x += w
        shapes.append(
            _text(x + 4, y + 12, ", ".join(f"{k} {counts[k]}" for k in kinds if counts.get(k)), "start", "tick")
        )
    lx = float(x0)
    for kind in kinds:
        shapes.append(_rect(lx, height - 16, 12, 10, TERMINATION_COLOURS.get(kind, "#777")))
        shapes.append(_text(lx + 16, height - 7, kind))
        lx += 30 + 8 * len(kind)
    return Chart("Terminations per entrant", width, height, shapes)


def _quantile(sorted_values: list[float], q: float) -> float:
    position = (len(sorted_values) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def thinking_time_chart(times: ThinkingTimes) -> Chart | None:
    """Box plots on a log scale: each entrant's mean thinking time per decision, one value per game."""
    rows = [
        (e, name, sorted(values))
        for e, (name, values) in enumerate(zip(times.names, times.per_game, strict=True))
        if values
    ]
    if not rows:
        return None
    width, row, label = 720, 26, 190
    height = 44 + row * len(rows)
    x0, x1 = label + 10, width - 20
    low = math.log10(max(min(v[0] for _, _, v in rows), 0.01))
    high = math.log10(max(max(v[-1] for _, _, v in rows), 0.02))
    if high - low < 0.5:
        low, high = low - 0.25, high + 0.25

    def x(v: float) -> float:
        return x0 + (math.log10(max(v, 0.01)) - low) / (high - low) * (x1 - x0)

    shapes: list[Shape] = []
    for exponent in range(math.floor(low), math.ceil(high) + 1):
        if low <= exponent <= high:
            shapes.append(_line(x(10**exponent), 4, x(10**exponent), height - 24, "#e2e2e2"))
            shapes.append(_text(x(10**exponent), height - 10, f"{10**exponent:g} ms", "middle", "tick"))
    for i, (entrant, name, values) in enumerate(rows):
        y = 14 + i * row
        colour = entrant_colour(entrant)
        q1, median, q3 = (_quantile(values, q) for q in (0.25, 0.5, 0.75))
        shapes.append(_text(label, y + 4, _fit(name), "end"))
        shapes.append(_line(x(values[0]), y, x(values[-1]), y, "#333"))
        shapes.append(_rect(x(q1), y - 7, x(q3) - x(q1), 14, colour,
                            f"{name}: median {median:.2f} ms, quartiles {q1:.2f} .. {q3:.2f}, range {values[0]:.2f} .. {values[-1]:.2f}, {len(values)} games"))  # fmt: skip
        # White under black: the median shows on a dark box as well as on a light one.
        shapes.append(_line(x(median), y - 7, x(median), y + 7, "#fff", 4))
        shapes.append(_line(x(median), y - 7, x(median), y + 7, "#000", 2))
    return Chart(
        "Thinking time per decision (ms, log scale): range, quartiles and median over games", width, height, shapes
    )
