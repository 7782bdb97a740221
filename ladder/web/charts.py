"""The entrant page's rating chart, drawn on the server as SVG shapes.

A chart is a list of shapes (tag, attributes, text) that the page's template
writes out with autoescaping, as the tournament report draws its own: no
script draws it and nothing is fetched, so it shows without JavaScript and
under the pages' Content-Security-Policy.

The chart shows every version of the entrant that played: its mu after each
game as a line over time, with the band the board prints around it (mu ± 3
sigma, ``BAND_SIGMAS``; its lower edge is the board's rating). The active version is drawn last,
in colour and thicker; the others are grey and named at the end of their line.
The caption says in words what the active version's line did.
"""

from __future__ import annotations

import datetime
import math

import msgspec

from ladder.history import RatingStep, VersionRatings, sample_indices

__all__ = ["Chart", "LegendEntry", "Shape", "rating_chart"]

WIDTH, HEIGHT = 640, 300
_LEFT, _RIGHT, _TOP, _BOTTOM = 50, 36, 12, 58
"""Room around the plot: tick values left, version names right, dates and the axis' name below."""
MOST_POINTS = 240
"""Points drawn per version: a version with thousands of games is drawn from an even sample of them
(its first and last always kept), which the eye cannot tell apart at this size."""
BAND_SIGMAS = 3
"""The band's half-width in sigmas: the board's interval (``ladder.views.Standing.low`` and ``high``), so that
the chart's last band of the active version is the band the board shows, and its lower edge the rating."""
ACTIVE_COLOUR = "#0072B2"
OTHER_COLOUR = "#8a8a8a"

_STEPS_S = [
    60,
    5 * 60,
    15 * 60,
    30 * 60,
    3600,
    3 * 3600,
    6 * 3600,
    12 * 3600,
    86400,
    2 * 86400,
    7 * 86400,
    14 * 86400,
    28 * 86400,
    91 * 86400,
    182 * 86400,
    364 * 86400,
]
"""The spacings a time axis' ticks may take, so that they land on round times."""


class Shape(msgspec.Struct, frozen=True):
    tag: str
    attrs: dict[str, str]
    text: str = ""
    """A ``text`` element's words; any other shape's tooltip (an SVG ``<title>``)."""


class LegendEntry(msgspec.Struct, frozen=True):
    """One line of the key, written as HTML under the picture so that it wraps on a phone."""

    name: str
    colour: str
    kind: str
    """"line", "thin" or "band": how its swatch is drawn."""


class Chart(msgspec.Struct, frozen=True):
    title: str
    width: int
    height: int
    shapes: list[Shape]
    legend: list[LegendEntry]
    caption: str


def _n(value: float) -> str:
    return f"{value:.1f}"


def _moment(text: str) -> datetime.datetime | None:
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)


def _sample(steps: list[RatingStep]) -> list[RatingStep]:
    """The points drawn of a version's steps (already a sample of at most ``MOST_POINTS`` on the entrant page)."""
    return [steps[i] for i in sample_indices(len(steps), MOST_POINTS)]


def _value_ticks(low: float, high: float, count: int = 5) -> list[float]:
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]


def _time_ticks(start: float, end: float, count: int = 5) -> tuple[list[float], int]:
    """Round moments (epoch seconds, UTC) between ``start`` and ``end``, and their spacing."""
    step = next((s for s in _STEPS_S if (end - start) / s <= count), _STEPS_S[-1])
    first = math.ceil(start / step) * step
    return [first + i * step for i in range(int((end - first) // step) + 1)], step


def _time_label(moment: float, step: int) -> str:
    when = datetime.datetime.fromtimestamp(moment, datetime.UTC)
    if step < 86400:
        return when.strftime("%H:%M") if (when.hour, when.minute) != (0, 0) else when.strftime("%d %b")
    return when.strftime("%d %b")


def _trend(first: float, last: float) -> str:
    if abs(last - first) < 0.005:
        return f"stayed at {last:.2f}"
    return f"{'rose' if last > first else 'fell'} from {first:.2f} to {last:.2f}"


def _caption(shown: VersionRatings, others: list[int]) -> str:
    steps = shown.steps
    games = f"{shown.games} game{'s' if shown.games != 1 else ''}"
    said = f"Version {shown.number} ({shown.state}): mu {_trend(steps[0].mu, steps[-1].mu)} over {games}"
    sigmas = [s.sigma for s in steps if s.sigma is not None]
    if sigmas:
        change = "widened" if sigmas[-1] > sigmas[0] else "narrowed"
        said += f"; its band {change} from ±{BAND_SIGMAS * sigmas[0]:.2f} to ±{BAND_SIGMAS * sigmas[-1]:.2f}"
    said += f" (last game {steps[-1].finished.replace('T', ' ').replace('+00:00', ' UTC')})."
    if others:
        said += " Earlier versions in grey: " + ", ".join(f"v{n}" for n in others) + "."
    return said


def rating_chart(histories: list[VersionRatings]) -> Chart | None:
    """The chart of every version that played (``ladder.history.rating_histories``); None before any game.

    The emphasized version is the active one, else the newest that played.
    """
    timed = [
        (version, [(m, s) for s in _sample(version.steps) if (m := _moment(s.finished)) is not None])
        for version in histories
    ]
    timed = [(version, points) for version, points in timed if points]
    if not timed:
        return None
    emphasized_at = next((i for i, (v, _) in enumerate(timed) if v.state == "active"), len(timed) - 1)
    shown = timed[emphasized_at][0]
    moments = [m.timestamp() for _, points in timed for m, _ in points]
    start, end = min(moments), max(moments)
    if end - start < 60:  # a single game, or a few within a minute: a minute's width around them
        start, end = start - 30, end + 30
    values = [
        v
        for _, points in timed
        for _, s in points
        for v in ((s.mu,) if s.sigma is None else (s.mu - BAND_SIGMAS * s.sigma, s.mu + BAND_SIGMAS * s.sigma))
    ]
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or 1.0
    low, high = low - pad, high + pad
    x0, x1, y0, y1 = _LEFT, WIDTH - _RIGHT, _TOP, HEIGHT - _BOTTOM

    def x(moment: datetime.datetime) -> float:
        return x0 + (moment.timestamp() - start) / (end - start) * (x1 - x0)

    def y(value: float) -> float:
        return y1 - (value - low) / (high - low) * (y1 - y0)

    shapes: list[Shape] = []
    for tick in _value_ticks(low, high):
        shapes.append(Shape("line", {"x1": _n(x0), "y1": _n(y(tick)), "x2": _n(x1), "y2": _n(y(tick)),
                                     "stroke": "#e4e4e4"}))  # fmt: skip
        shapes.append(Shape("text", {"x": _n(x0 - 5), "y": _n(y(tick) + 4), "text-anchor": "end",
                                     "class": "tick"}, f"{tick:g}"))  # fmt: skip
    ticks, step = _time_ticks(start, end)
    for tick in ticks:
        at = x0 + (tick - start) / (end - start) * (x1 - x0)
        shapes.append(Shape("line", {"x1": _n(at), "y1": _n(y1), "x2": _n(at), "y2": _n(y1 + 4), "stroke": "#888"}))
        shapes.append(Shape("text", {"x": _n(at), "y": _n(y1 + 19), "text-anchor": "middle", "class": "tick"},
                            _time_label(tick, step)))  # fmt: skip
    shapes.append(Shape("line", {"x1": _n(x0), "y1": _n(y1), "x2": _n(x1), "y2": _n(y1), "stroke": "#888"}))
    shapes.append(Shape("line", {"x1": _n(x0), "y1": _n(y0), "x2": _n(x0), "y2": _n(y1), "stroke": "#888"}))
    first_day = datetime.datetime.fromtimestamp(start, datetime.UTC).strftime("%d %b %Y")
    shapes.append(Shape("text", {"x": _n((x0 + x1) / 2), "y": _n(HEIGHT - 5), "text-anchor": "middle",
                                 "class": "axis"}, f"time (UTC), from {first_day}"))  # fmt: skip
    shapes.append(Shape("text", {"x": "12", "y": _n((y0 + y1) / 2), "text-anchor": "middle", "class": "axis",
                                 "transform": f"rotate(-90 12 {_n((y0 + y1) / 2)})"}, "mu"))  # fmt: skip
    others = [version for i, (version, _) in enumerate(timed) if i != emphasized_at]
    # The emphasized version last, so that its line lies over the others'.
    for i, (version, points) in sorted(enumerate(timed), key=lambda item: item[0] == emphasized_at):
        emphasized = i == emphasized_at
        colour = ACTIVE_COLOUR if emphasized else OTHER_COLOUR
        for run in _known_sigma_runs(points):
            upper = [f"{_n(x(m))},{_n(y(s.mu + BAND_SIGMAS * s.sigma))}" for m, s in run if s.sigma is not None]
            lower = [
                f"{_n(x(m))},{_n(y(s.mu - BAND_SIGMAS * s.sigma))}" for m, s in reversed(run) if s.sigma is not None
            ]
            if len(run) == 1:  # one game: a bar across its band, not a polygon of no width
                m, s = run[0]
                assert s.sigma is not None
                shapes.append(Shape("line", {"x1": _n(x(m)), "y1": _n(y(s.mu + BAND_SIGMAS * s.sigma)), "x2": _n(x(m)),
                                             "y2": _n(y(s.mu - BAND_SIGMAS * s.sigma)), "stroke": colour, "stroke-opacity": "0.35",
                                             "stroke-width": "6", "class": "band"}))  # fmt: skip
                continue
            shapes.append(Shape("polygon", {"points": " ".join(upper + lower), "fill": colour,
                                            "fill-opacity": "0.2" if emphasized else "0.1", "class": "band"}))  # fmt: skip
        line = " ".join(f"{_n(x(m))},{_n(y(s.mu))}" for m, s in points)
        tip = f"version {version.number} ({version.state}): mu {_trend(points[0][1].mu, points[-1][1].mu)}"
        shapes.append(Shape("polyline", {"points": line, "fill": "none", "stroke": colour,
                                         "stroke-width": "2.5" if emphasized else "1.5",
                                         "data-version": str(version.number)}, tip))  # fmt: skip
        last_moment, last = points[-1]
        shapes.append(Shape("circle", {"cx": _n(x(last_moment)), "cy": _n(y(last.mu)), "r": "3.5" if emphasized else "2.5",
                                       "fill": colour}, f"v{version.number} after game {last.game}: mu {last.mu:.2f}"))  # fmt: skip
        shapes.append(Shape("text", {"x": _n(min(x(last_moment) + 6, WIDTH - 2)), "y": _n(y(last.mu) + 4),
                                     "class": "version" + (" active" if emphasized else "")}, f"v{version.number}"))  # fmt: skip
    legend = [LegendEntry(f"version {shown.number} ({shown.state})", ACTIVE_COLOUR, "line")]
    if others:
        legend.append(LegendEntry("earlier versions", OTHER_COLOUR, "thin"))
    band = f"mu ± {BAND_SIGMAS}σ, the board's band: its lower edge is the rating"
    legend.append(LegendEntry(band, ACTIVE_COLOUR, "band"))
    title = f"mu of each version after each game, with its ±{BAND_SIGMAS}σ band"
    return Chart(title, WIDTH, HEIGHT, shapes, legend, _caption(shown, [v.number for v in others]))


def _known_sigma_runs(
    points: list[tuple[datetime.datetime, RatingStep]],
) -> list[list[tuple[datetime.datetime, RatingStep]]]:
    """The stretches of a version's points whose sigma is known (games recorded before sigma was kept have none)."""
    runs: list[list[tuple[datetime.datetime, RatingStep]]] = [[]]
    for point in points:
        if point[1].sigma is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append(point)
    return [run for run in runs if run]
