"""The ladder's pages in Chromium: leaderboard, an entrant page with its matchup table, a game's replay link."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.ladder.conftest import Served, games_going_on, wait_for
from tests.tournaments.browser import ARTIFACTS, needs_chromium

pytestmark = [needs_chromium, pytest.mark.browser, pytest.mark.slow]


def watched(page: Any) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def test_the_leaderboard_lists_the_accepted_versions_and_links_their_pages(browser: Any, served: Served) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = watched(page)
    page.clock.install()  # the page's timers run when the test moves its clock: no 5 s waits
    page.goto(served.url + "/")
    names = page.locator("#standings tbody tr td.entrant").all_inner_texts()
    assert {"ann", "bob", "cat"} <= set(names)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ladder-leaderboard.png"), full_page=True)
    # Games go on: the table's game counts grow without a reload (it asks /api/standings every 5 s).
    total = (
        "() => [...document.querySelectorAll('#standings tbody tr td.games')]"
        ".reduce((sum, cell) => sum + parseInt(cell.textContent, 10), 0)"
    )
    before = page.evaluate(total)

    def refreshed() -> bool:
        page.clock.run_for(5000)  # the page's next refresh is due
        return bool(page.evaluate(total) > before)

    # Polled from here: the page's policy forbids the string evaluation wait_for_function would use.
    with games_going_on(served):
        wait_for(refreshed, "the leaderboard to refresh itself", deadline_s=120)
    page.locator("#standings a", has_text="bob").click()
    page.wait_for_url("**/entrants/bob")
    assert "active" in page.locator("#versions").inner_text()
    assert errors == []


def test_an_entrant_page_shows_its_matchups_and_opens_a_game_in_the_viewer(browser: Any, served: Served) -> None:
    with games_going_on(served):
        wait_for(
            lambda: any(g["viewable"] for g in httpx.get(f"{served.url}/api/games?entrant=ann", timeout=30).json()),
            "a game whose deal is played in every seating",
        )
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = watched(page)
    page.goto(served.url + "/entrants/ann")
    rows = page.locator("#matchups tbody tr")
    opponents = {rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())}
    assert {"bob", "cat"} <= opponents
    ahead, behind, games = map(int, re.findall(r"\d+", rows.first.locator("td").nth(1).inner_text()))  # "2 – 1 of 4"
    assert games >= 1 and ahead + behind <= games
    assert page.locator("#rating-chart polyline").count() == 1
    page.screenshot(path=str(ARTIFACTS / "ladder-entrant.png"), full_page=True)
    page.locator("#games a.replay").first.click()
    page.wait_for_url("**/games/game-*.html")
    assert "vendetta" in page.title()
    page.keyboard.press("End")
    assert errors == []
