"""The HTML report: every section from the report values, text escaped, links relative to the page."""

from __future__ import annotations

import math
from html.parser import HTMLParser
from pathlib import Path

import msgspec

from tournaments.hosting.ratings import LosMatrix, SeatOffsets, Standing
from tournaments.hosting.sprt import Decision, SprtStatus
from tournaments.hosting.viewer.templating import package_text
from tournaments.report.charts import ENTRANT_COLOURS, SEAT_BAR, rating_history_chart, seat_advantage_chart
from tournaments.report.figures import RatingHistory, ThinkingTimes
from tournaments.report.page import MAX_GAME_ROWS, GameLinks, render_report
from tournaments.report.standings import Crosstable, GameRow, Standings

HOSTILE = '<script>alert("x")</script>'
VOID = {"meta", "br", "img", "link", "input", "hr"}


class _Checker(HTMLParser):
    """Collects the text and checks that every opened tag is closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.text: list[str] = []
        self.tags: list[str] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.hrefs += [value or "" for name, value in attrs if name == "href"]
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, (tag, self.open)
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> _Checker:
    checker = _Checker()
    checker.feed(page)
    checker.close()
    assert checker.open == []
    return checker


def sample(games: int = 2, replay_folder: str = "/data/t/replays") -> tuple[Standings, Crosstable, list[GameRow]]:
    names = ["alpha", HOSTILE, "gamma"]
    standings = Standings(
        tournament="club <night>",
        game="vendetta",
        games=games,
        scheduled=6,
        standings=[
            Standing(
                place=i + 1,
                entrant=i,
                name=name,
                rating=100.0 - 80 * i,
                stderr=20.0,
                lower=60.0 - 80 * i,
                upper=140.0 - 80 * i,
                games=games,
                wins=2 - i if i < 2 else 0,
                average_rank=1.0 + i,
                seat_games=[1, 1, 0],
            )
            for i, name in enumerate(names)
        ],
        seat_offsets=[SeatOffsets(table_size=3, games=games, offsets=[12.0, -3.0, -9.0], stderr=[5.0, 5.0, 5.0])],
        terminations={"alpha": {}, HOSTILE: {"crash": 1}, "gamma": {}},
        superiority=LosMatrix(entrants=[0, 1], values=[[0.5, 0.93], [0.07, 0.5]]),
    )
    cross = Crosstable(names=names, ahead=[[0, 2, 2], [0, 0, 1], [0, 1, 0]], met=[[0, 2, 2], [2, 0, 2], [2, 2, 0]])
    rows = [
        GameRow(game=g, seed=40 + g, seconds=0.5, ended_by="victory", seats=names, ranks=[1, 3, 2],
                scores=[800, 0, 5], terminations=["", "crash", ""], replay=f"{replay_folder}/game-{g:06d}.jsonl")
        for g in range(games)
    ]  # fmt: skip
    return standings, cross, rows


def test_the_page_has_every_section_and_is_well_formed() -> None:
    page = render_report(*sample(), generated="2026-11-22 04:00 UTC")
    parsed = parse(page)
    text = " ".join(parsed.text)
    for heading in ("Standings", "Seat advantage", "Likelihood of superiority", "Crosstable", "Games (2)"):
        assert heading in text
    assert "+100" in text and "+60 .. +140" in text and "crash 1" in text and "2/2" in text and "0.93" in text
    assert "club <night> (vendetta)" in text  # the name as the host wrote it, shown as text
    assert parsed.tags.count("table") == 5 and parsed.tags.count("script") == 1  # the table sorter only
    assert parsed.tags.count("svg") == 3  # ratings forest plot, seat advantage, terminations


def test_names_from_the_tournament_file_are_shown_never_run() -> None:
    page = render_report(*sample(), generated="now")
    assert HOSTILE not in page and "&lt;script&gt;" in page
    assert parse(page).tags.count("script") == 1  # the table sorter, nothing from a name
    assert page.count("<script>") == 1 and page.split("<script>")[1].split("</script>")[0] == package_text("sort.js")


def test_replay_links_are_relative_to_the_page(tmp_path: Path) -> None:
    standings, cross, rows = sample(replay_folder=str(tmp_path / "replays"))
    page = render_report(standings, cross, rows, generated="now", page_path=tmp_path / "t.html")
    assert parse(page).hrefs == ["replays/game-000000.jsonl", "replays/game-000001.jsonl"]


def test_a_huge_tournament_lists_the_first_games_and_says_how_many_it_left_out() -> None:
    standings, cross, rows = sample(games=1)
    rows = rows * (MAX_GAME_ROWS + 5)
    page = render_report(standings, cross, rows, generated="now")
    assert f"The first {MAX_GAME_ROWS} of {MAX_GAME_ROWS + 5} games" in page
    assert page.count("<tr><td") == MAX_GAME_ROWS + 3 + 1 + 2 + 3  # games, standings, seats, superiority, crosstable


def test_before_any_game_the_page_says_so() -> None:
    _, cross, _ = sample()
    empty = Standings(tournament="t", game="vendetta", games=0, scheduled=6, standings=[], seat_offsets=[],
                      terminations={}, superiority=None)  # fmt: skip
    text = " ".join(parse(render_report(empty, cross, [], generated="now")).text)
    assert "No finished game yet." in text and "Games (0)" in text


def test_a_head_to_head_shows_its_verdict_or_that_the_budget_ran_out() -> None:
    standings, cross, rows = sample()

    def status(decision: Decision, exhausted: bool) -> Standings:
        h2h = SprtStatus(
            pairs=12,
            wins=5,
            draws=4,
            losses=3,
            score=0.58,
            elo=56.0,
            elo_lower=-20.0,
            elo_upper=130.0,
            llr=3.1,
            lower_bound=-2.94,
            upper_bound=2.94,
            decision=decision,
            exhausted=exhausted,
        )
        fields = {f: getattr(standings, f) for f in standings.__struct_fields__}
        return Standings(**{**fields, "head_to_head": h2h, "head_to_head_entrants": ["greedy", "random"]})

    decided = " ".join(parse(render_report(status("A stronger", False), cross, rows, generated="now")).text)
    assert "greedy stronger than random after 12 pairs of games: score 0.580 (5 wins, 4 draws, 3 losses)" in decided
    assert "Elo difference +56 (-20 .. +130)" in decided
    budget = " ".join(parse(render_report(status("continue", True), cross, rows, generated="now")).text)
    assert "no verdict: the game budget ran out after 12 pairs" in budget


def test_each_game_links_to_its_viewer_page_when_it_has_one() -> None:
    standings, cross, rows = sample()
    links = {0: GameLinks(viewer="t-games/game-000000.html", replay="replays/game-000000.jsonl"),
             1: GameLinks(note="replay missing")}  # fmt: skip
    parsed = parse(render_report(standings, cross, rows, generated="now", links=links))
    assert parsed.hrefs == ["t-games/game-000000.html", "replays/game-000000.jsonl"]
    assert "replay missing" in parsed.text


def test_rating_history_and_thinking_time_pictures_name_every_entrant_as_text() -> None:
    standings, cross, rows = sample()
    names = [row.name for row in standings.standings]
    history = RatingHistory(names=names, games=[0, 1, 2], values=[[0.0, 1.0, 2.0], [0.0, -1.0, -2.0], [0.0, 0.5, 0.2]])
    times = ThinkingTimes(names=names, per_game=[[1.0, 2.0, 40.0], [0.3], []])
    page = render_report(standings, cross, rows, generated="now", history=history, times=times)
    parsed = parse(page)
    assert parsed.tags.count("figure") == 5 and parsed.tags.count("polyline") == 3
    assert parsed.tags.count("li") == 3  # the live ratings' key, one entry per entrant, as HTML
    assert HOSTILE not in page
    text = " ".join(parsed.text)
    assert "Ratings as games came in" in text and "Thinking time" in text
    assert "alpha: median 2.00 ms, quartiles 1.50 .. 21.00, range 1.00 .. 40.00, 3 games" in text


def _linear(channel: float) -> float:
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def _rgb(colour: str) -> tuple[float, float, float]:
    r, g, b = (_linear(int(colour[i : i + 2], 16) / 255) for i in (1, 3, 5))
    return r, g, b


def _contrast_on_white(colour: str) -> float:
    r, g, b = _rgb(colour)
    return 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05)


# Machado, Oliveira and Fernandes (2009), full severity: linear RGB as seen with protanopia,
# deuteranopia and tritanopia.
_VISIONS = (
    ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
    ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602), (0.004733, 0.691367, 0.303900)),
)


def _lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    r, g, b = (min(max(c, 0.0), 1.0) for c in rgb)
    xyz = (
        (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
        0.2126 * r + 0.7152 * g + 0.0722 * b,
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
    )
    fx, fy, fz = (t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def _closest_in_any_vision(a: str, b: str) -> float:
    distances = []
    for matrix in _VISIONS:
        seen = []
        for colour in (a, b):
            red, green, blue = (sum(m * c for m, c in zip(row, _rgb(colour), strict=True)) for row in matrix)
            seen.append(_lab((float(red), float(green), float(blue))))
        distances.append(math.dist(*seen))
    return min(distances)


def test_entrant_colours_read_on_white_and_stay_apart_in_every_common_colour_vision() -> None:
    assert all(_contrast_on_white(colour) >= 3.0 for colour in ENTRANT_COLOURS)  # no pale yellow on white
    for i, a in enumerate(ENTRANT_COLOURS):
        for b in ENTRANT_COLOURS[:i]:
            assert _closest_in_any_vision(a, b) >= 13, (a, b)


def test_entrants_past_the_palette_get_dashed_lines_so_no_two_lines_look_alike() -> None:
    names = [f"bot-{i}" for i in range(20)]
    history = RatingHistory(names=names, games=[0, 1], values=[[0.0, float(i)] for i in range(20)])
    chart = rating_history_chart(history)
    assert chart is not None
    looks = [(s.attrs["stroke"], s.attrs.get("stroke-dasharray", "")) for s in chart.shapes if s.tag == "polyline"]
    assert len(looks) == 20 == len(set(looks))
    assert [(e.colour, e.dash) for e in chart.legend] == looks and [e.name for e in chart.legend] == names


def test_the_live_rating_chart_names_both_its_axes() -> None:
    history = RatingHistory(names=["a", "b"], games=[0, 1, 2], values=[[0.0, 1.0, 2.0], [0.0, -1.0, -2.0]])
    chart = rating_history_chart(history)
    assert chart is not None
    texts = {s.text: s.attrs for s in chart.shapes if s.tag == "text"}
    assert "games finished" in texts
    assert texts["live rating (mu - 3 sigma)"]["transform"].startswith("rotate(-90")


def test_seat_bars_are_never_drawn_in_an_entrants_colour() -> None:
    standings, _, _ = sample()
    chart = seat_advantage_chart(standings.seat_offsets)
    assert chart is not None
    fills = {s.attrs["fill"] for s in chart.shapes if s.tag == "rect"}
    assert fills == {SEAT_BAR} and not fills & set(ENTRANT_COLOURS)


def test_a_rating_that_rounds_to_zero_reads_plus_zero_never_minus_zero() -> None:
    standings, cross, rows = sample()
    near_zero = [msgspec.structs.replace(s, rating=-0.2, lower=-0.4, upper=-0.1) for s in standings.standings]
    page = render_report(msgspec.structs.replace(standings, standings=near_zero), cross, rows, generated="now")
    cells = " ".join(parse(page).text)
    assert "+0 .. +0" in cells and "-0" not in cells
