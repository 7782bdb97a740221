"""The tournament report in a real browser: a game's link opens its viewer, tables sort. About 4 s."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.tournaments.browser import ARTIFACTS, launch, needs_chromium
from tournaments.cli import app

pytestmark = [needs_chromium, pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PASSER = ROOT / "tests" / "bots" / "passer"
RANDOM = ROOT / "sample_bots" / "random_py"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


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
    assert page.locator('#board [data-testid="district-1-seat-0"]').count() == 1
    page.keyboard.press("End")
    assert page.locator('[data-testid="final-row"]').count() == 3
    assert errors == []
    page.close()
