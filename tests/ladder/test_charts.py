"""The entrant page's rating chart: every version, the active one emphasized, axes with dates, the band, and
a caption that says which way the rating went."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from ladder.history import RatingStep, VersionRatings
from ladder.store import LadderStore
from ladder.views import standings
from ladder.web.charts import ACTIVE_COLOUR, BAND_SIGMAS, MOST_POINTS, OTHER_COLOUR, Shape, rating_chart
from tests.ladder.helpers import accepted_version, play_recorded

START = datetime.datetime(2026, 12, 1, 9, 0, tzinfo=datetime.UTC)


def steps(
    mus: list[float], *, first_game: int = 1, hours: float = 1.0, start: datetime.datetime = START
) -> list[RatingStep]:
    return [
        RatingStep(
            game=first_game + i,
            finished=(start + datetime.timedelta(hours=i * hours)).isoformat(),
            mu=mu,
            sigma=8.0 - i * 0.1,
        )
        for i, mu in enumerate(mus)
    ]


def lines(shapes: list[Shape]) -> dict[str, Shape]:
    return {s.attrs["data-version"]: s for s in shapes if s.tag == "polyline"}


def test_a_falling_rating_is_said_to_fall_from_its_first_value_to_its_last() -> None:
    # The caption read "from 5.12 to 20.74" (its minimum and maximum) for a rating that fell.
    chart = rating_chart([VersionRatings(number=1, state="active", steps=steps([20.74, 14.0, 9.5, 5.12]))])
    assert chart is not None
    assert "fell from 20.74 to 5.12 over 4 games" in chart.caption
    assert "narrowed from ±24.00 to ±23.10" in chart.caption  # the board's band, ±3σ
    rising = rating_chart([VersionRatings(number=1, state="active", steps=steps([5.12, 20.74]))])
    assert rising is not None and "rose from 5.12 to 20.74 over 2 games" in rising.caption


def test_every_version_is_drawn_and_the_active_one_over_the_others_in_colour() -> None:
    old = VersionRatings(number=1, state="retired", steps=steps([25, 27, 30]))
    later = START + datetime.timedelta(hours=5)
    rejected_never_played = VersionRatings(number=2, state="rejected", steps=[])
    active = VersionRatings(number=3, state="active", steps=steps([25, 22], first_game=9, start=later))
    chart = rating_chart([old, rejected_never_played, active])
    assert chart is not None
    drawn = lines(chart.shapes)
    assert set(drawn) == {"1", "3"}
    assert drawn["3"].attrs["stroke"] == ACTIVE_COLOUR and drawn["1"].attrs["stroke"] == OTHER_COLOUR
    assert float(drawn["3"].attrs["stroke-width"]) > float(drawn["1"].attrs["stroke-width"])
    polylines = [s for s in chart.shapes if s.tag == "polyline"]
    assert polylines[-1].attrs["data-version"] == "3"  # drawn last: on top
    labels = [s.text for s in chart.shapes if s.tag == "text" and "version" in s.attrs.get("class", "")]
    assert labels == ["v1", "v3"]
    assert "Version 3 (active)" in chart.caption and "Earlier versions in grey: v1." in chart.caption
    # Later in time is further right: the active version's line starts right of where v1's ends.
    v1_end = float(drawn["1"].attrs["points"].split()[-1].split(",")[0])
    v3_start = float(drawn["3"].attrs["points"].split()[0].split(",")[0])
    assert v3_start > v1_end


def test_the_axes_carry_dates_and_values_and_the_band_spans_the_board_s_sigmas() -> None:
    chart = rating_chart([VersionRatings(number=1, state="active", steps=steps([25, 26, 27, 28], hours=24))])
    assert chart is not None
    texts = [s.text for s in chart.shapes if s.tag == "text"]
    assert {"02 Dec", "03 Dec", "04 Dec"} <= set(texts)
    assert "time (UTC), from 01 Dec 2026" in texts and "mu" in texts
    values = [float(t) for t in texts if t.lstrip("-").replace(".", "").isdigit()]
    ticks = sorted(values)
    step = ticks[1] - ticks[0]
    low, high = 25 - 3 * 8.0, 28 + 3 * 7.7  # the band's ends: ±3σ around the first and the last mu
    assert min(values) <= low + step and max(values) >= high - step  # the value axis' ticks cover the band
    (band,) = [s for s in chart.shapes if s.tag == "polygon"]
    assert len(band.attrs["points"].split()) == 8  # the band's top over four games, then its bottom back


def test_one_game_draws_its_band_as_a_bar_and_many_games_are_sampled() -> None:
    one = rating_chart([VersionRatings(number=1, state="active", steps=steps([27.0]))])
    assert one is not None
    assert [s.attrs["class"] for s in one.shapes if s.tag == "line" and s.attrs.get("class") == "band"] == ["band"]
    assert "stayed at 27.00 over 1 game" in one.caption
    many = rating_chart(
        [VersionRatings(number=1, state="active", steps=steps([25 + i % 7 for i in range(5000)], hours=0.01))]
    )
    assert many is not None
    points = lines(many.shapes)["1"].attrs["points"].split()
    assert len(points) == MOST_POINTS
    assert "over 5000 games" in many.caption  # sampled for drawing, counted in full


def test_games_recorded_without_sigma_have_no_band_and_no_game_no_chart() -> None:
    known = steps([25, 26])
    unknown = [
        RatingStep(game=s.game + 10, finished=s.finished, mu=s.mu, sigma=None)
        for s in steps([24, 23], start=START - datetime.timedelta(days=1))
    ]
    chart = rating_chart([VersionRatings(number=1, state="active", steps=unknown + known)])
    assert chart is not None
    (band,) = [s for s in chart.shapes if s.tag == "polygon"]
    assert len(band.attrs["points"].split()) == 4  # over the two games that know their sigma only
    assert rating_chart([]) is None
    assert rating_chart([VersionRatings(number=1, state="rejected", steps=[])]) is None


def test_the_chart_s_band_is_the_board_s_interval(tmp_path: Path) -> None:
    # The chart's band must be the one the board prints beside the rating: if the board's rule
    # changes (ladder.views.standings), this fails until the chart's BAND_SIGMAS follows it.
    store = LadderStore(tmp_path / "ladder.sqlite")
    ids = [accepted_version(store, name, name[0] * 64) for name in ("ann", "bob", "cat")]
    play_recorded(store, ids, [1, 2, 3])
    for row in standings(store):
        assert row.version is not None and row.mu is not None and row.low is not None and row.high is not None
        version = next(v for v in store.versions(entrant=row.entrant) if v.number == row.version)
        assert row.low == pytest.approx(version.mu - BAND_SIGMAS * version.sigma, abs=0.01)
        assert row.high == pytest.approx(version.mu + BAND_SIGMAS * version.sigma, abs=0.01)
