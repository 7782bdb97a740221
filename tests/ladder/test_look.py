"""The pages' words for times and states: "3 hours ago" with the exact time beside it, badges, bands."""

from __future__ import annotations

import datetime

import msgspec
import pytest

from ladder.health import Health
from ladder.views import Standing
from ladder.web.look import ago, badges, band_scale, exact

NOW = datetime.datetime(2026, 12, 6, 15, 0, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("before", "said"),
    [
        (datetime.timedelta(seconds=10), "just now"),
        (datetime.timedelta(seconds=70), "a minute ago"),
        (datetime.timedelta(minutes=5, seconds=20), "5 minutes ago"),
        (datetime.timedelta(hours=1, minutes=1), "1 hour ago"),
        (datetime.timedelta(hours=3, minutes=59), "3 hours ago"),
        (datetime.timedelta(hours=30), "yesterday"),
        (datetime.timedelta(days=3), "3 days ago"),
        (datetime.timedelta(days=15), "2 weeks ago"),
        (datetime.timedelta(days=70), "2 months ago"),
        (datetime.timedelta(days=800), "2 years ago"),
        (-datetime.timedelta(minutes=5), "just now"),  # another machine's clock a little ahead
    ],
)
def test_a_moment_is_said_in_local_words(before: datetime.timedelta, said: str) -> None:
    assert ago((NOW - before).isoformat(timespec="seconds"), NOW) == said


def test_the_exact_moment_is_given_to_the_second_in_utc_and_bad_text_is_shown_as_it_is() -> None:
    assert exact("2026-12-06T14:03:09+00:00") == "2026-12-06 14:03:09 UTC"
    assert exact("2026-12-06T15:03:09+01:00") == "2026-12-06 14:03:09 UTC"
    assert ago("not a time", NOW) == "not a time" and exact("not a time") == "not a time"
    assert ago(None, NOW) == "" and exact("") == ""


def standing() -> Standing:
    return Standing(
        rank=1,
        entrant="ann",
        state="active",
        version=2,
        rating=3.0,
        mu=20.0,
        low=10.0,
        high=30.0,
        games=9,
        health=Health(),
        last_submission="",
    )


class WithHealth(msgspec.Struct, frozen=True):
    """A row as the views may carry it once versions count their failures (issue 40)."""

    state: str
    health: dict[str, int]
    suspended: str | None = None


class Counts(msgspec.Struct, frozen=True):
    timeouts: int
    crashes: int
    illegal_actions: int


class WithCountsStruct(msgspec.Struct, frozen=True):
    health: Counts


def test_a_row_without_health_shows_its_state_and_one_with_health_a_badge_per_failure_kind() -> None:
    (only,) = badges(standing())
    assert (only.label, only.kind) == ("active", "good")
    suspended = badges(
        WithHealth(state="suspended", health={"timeout": 4, "crash": 0}, suspended="4 of its last 5 games timed out")
    )
    assert [(b.label, b.kind) for b in suspended] == [("suspended", "bad"), ("4 timeout", "warn")]
    assert suspended[0].says == "4 of its last 5 games timed out"
    counted = badges(WithCountsStruct(health=Counts(timeouts=0, crashes=2, illegal_actions=1)))
    assert [b.label for b in counted] == ["active", "2 crashes", "1 illegal actions"]


def test_one_band_scale_covers_every_row_s_rating_and_interval() -> None:
    rows = [
        msgspec.structs.replace(standing(), rating=-3.0, low=0.5, high=14.5),
        msgspec.structs.replace(standing(), rating=37.0, low=42.0, high=63.0),
    ]
    scale = band_scale(rows)
    assert 0 < scale.at(-3.0) < 3 and 97 < scale.at(63.0) < 100
    assert scale.at(42.0) < scale.at(63.0)
    assert scale.at(-1000) == 0 and scale.at(1000) == 100
    assert band_scale([]).at(0.5) == 50
