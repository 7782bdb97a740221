"""The tournament report in a real browser: a game's link opens its viewer, tables sort, the
pictures read at desktop and phone widths. About 6 s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.tournaments.browser import ARTIFACTS, needs_chromium
from tests.tournaments.report.test_html_report import HOSTILE, sample
from tournaments.cli import app
from tournaments.report.figures import RatingHistory
from tournaments.report.page import render_report

pytestmark = [needs_chromium, pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
PASSER = ROOT / "tests" / "bots" / "passer"
RANDOM = ROOT / "sample_bots" / "random_py"
BOXES = "(nodes) => nodes.map((n) => { const r = n.getBoundingClientRect(); return { x: r.x, width: r.width }; })"


def test_report_links_each_game_to_its_viewer_and_sorts_tables(browser: Any, tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    entrants = "".join(
        f'[[entrant]]\nname = "{name}"\nbot = "{bot}"\n'
        for name, bot in (("<i>p0</i>", PASSER), ("p1", PASSER), ("rand", RANDOM))
    )
    toml.write_text('[tournament]\nname = "tiny"\ngame = "vendetta"\ntable_size = 3\nreplays = "replays"\n' + entrants)
    db = tmp_path / "t.sqlite"
    runner = CliRunner()
    ran = runner.invoke(app, ["tournament", "run", str(toml), "--db", str(db), "--workers", "1"])
    assert ran.exit_code == 0, ran.output
    made = runner.invoke(app, ["report", "--db", str(db)])
    assert made.exit_code == 0, made.output
    errors: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto((tmp_path / "t.html").as_uri())
    assert page.locator("svg").count() >= 4  # forest plot, history, seat advantage, thinking time
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-1280x800.png"), full_page=True)

    # Sort the standings by entrant name, then by rating (numbers, not text).
    names = lambda: page.locator("#standings tbody tr td:nth-child(2)").all_inner_texts()
    page.locator("#standings th button", has_text="entrant").click()
    assert names() == sorted(names(), key=str.lower)
    page.locator("#standings th button", has_text="entrant").click()
    assert names() == sorted(names(), key=str.lower, reverse=True)
    page.locator("#standings th button", has_text="rating").click()
    ratings = [float(x) for x in page.locator("#standings tbody tr td:nth-child(3)").all_inner_texts()]
    assert ratings == sorted(ratings) and len(ratings) == 3
    page.locator("#games th button", has_text="game").first.click()
    page.locator("#games th button", has_text="game").first.click()
    games = [int(x) for x in page.locator("#games tbody tr td:nth-child(1)").all_inner_texts()]
    assert games == sorted(games, reverse=True)

    # Follow game 0's link: its viewer page opens and draws the board.
    page.locator('[data-testid="watch-0"]').click()
    page.wait_for_load_state()
    assert page.url.endswith("t-games/game-000000.html")
    # The page loads the player, its styles and the board from the folder every game shares.
    page.wait_for_selector('#board [data-testid="district-1-seat-0"]')
    shared = page.evaluate(
        "[...document.querySelectorAll('script[src], link[rel=stylesheet]')].map((e) => e.getAttribute('src') || e.getAttribute('href'))"
    )
    assert sorted(shared) == ["assets/board-vendetta.js", "assets/viewer.css", "assets/viewer.js"]
    page.keyboard.press("End")
    assert page.locator('[data-testid="final-row"]').count() == 3
    assert errors == []
    page.close()


def test_report_pictures_name_their_axes_and_keep_every_entrant_in_sight_on_a_phone(
    browser: Any, tmp_path: Path
) -> None:
    standings, cross, rows = sample()
    names = [f"{HOSTILE}-{i}" if i == 1 else f"greedy-{i}" for i in range(10)]
    history = RatingHistory(names=names, games=[0, 1, 2], values=[[0.0, i, 2.0 * i] for i in range(10)])
    out = tmp_path / "r.html"
    out.write_text(render_report(standings, cross, rows, generated="now", history=history))
    errors: list[str] = []
    for width, height in ((1280, 800), (390, 844)):
        page = browser.new_page(viewport={"width": width, "height": height})
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(out.as_uri())
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
        # Each entrant of the live ratings' key is on screen, however narrow the screen.
        key = page.locator("ul.legend li")
        assert key.count() == 10 and key.nth(1).inner_text() == names[1]
        assert all(box["x"] >= 0 and box["x"] + box["width"] <= width for box in key.evaluate_all(BOXES))
        # The y axis says what it measures, inside the picture, left of its figures.
        label = page.locator("svg text[data-axis=y]")
        assert label.text_content() == "live rating (mu - 3 sigma)"
        picture = page.locator("figure.chart > svg:has(text[data-axis=y])").bounding_box()
        box = label.bounding_box()
        assert picture is not None and box is not None and box["x"] >= picture["x"] and box["height"] > box["width"]
        ticks = page.locator("figure.chart > svg:has(text[data-axis=y])").locator("text.tick[text-anchor=end]")
        assert all(box["x"] + box["width"] <= tick["x"] for tick in ticks.evaluate_all(BOXES))
        page.screenshot(path=str(ARTIFACTS / f"report-pictures-{width}.png"), full_page=True)
        page.close()
    assert errors == []
