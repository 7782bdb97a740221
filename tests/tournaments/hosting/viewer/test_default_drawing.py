"""The viewer's generic drawing: a game that brings no viewer module and no board.js
(Liar's dice, registered as a plug-in) still gets its pages, its views and events
drawn as tables, per seat as for the built-in games, with every text as text.
And a public action (a Vendetta placement) shows on another seat's page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from referee.games import get_rules
from tests.tournaments.browser import needs_chromium
from tests.tournaments.hosting.viewer.plugin_game import GAME, register
from tests.tournaments.replay_factory import HOSTILE, vendetta_replay, write_replay
from tournaments.hosting.viewer import build_viewer_data, seat_page, write_viewer
from tournaments.hosting.viewer.presentation import default_snapshot, presentation_for

NAMES = ["alpha", HOSTILE, "charlie"]


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = register(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    return site


def _liars_replay(folder: Path) -> Path:
    return write_replay(folder / "liars.jsonl", GAME, {}, NAMES, seed=3, forfeit_at=4)


def test_a_game_without_a_drawing_gets_the_default_presentation(plugin: Path) -> None:
    presentation = presentation_for(get_rules(GAME))
    assert presentation.snapshot is default_snapshot
    assert not presentation.own_board and not presentation.own_snapshot and not presentation.public_actions
    assert "window.FamigliaBoard" in presentation.board_script
    # The built-in games keep their own, and Vendetta's actions are public.
    vendetta = presentation_for(get_rules("vendetta"))
    assert vendetta.own_board and vendetta.own_snapshot and vendetta.public_actions
    assert not presentation_for(get_rules("sicilianos")).public_actions


def test_a_game_whose_viewer_package_names_another_package_is_drawn_from_there() -> None:
    # GameRules.viewer_package is the hook: rules defined outside their game's package
    # (here, in this test) still find the game's own viewer parts.
    class Elsewhere(type(get_rules("sicilianos"))):  # type: ignore[misc]
        def viewer_package(self) -> str:
            return "referee.games.sicilianos"

    assert Elsewhere().viewer_package() == "referee.games.sicilianos"
    presentation = presentation_for(Elsewhere())
    assert presentation.own_board and presentation.own_snapshot

    # Without the override, this module's package has no viewer parts: the defaults.
    class Here(type(get_rules("sicilianos"))):  # type: ignore[misc]
        pass

    assert Here().viewer_package() in (__package__, __name__)
    assert not presentation_for(Here()).own_board


def test_the_default_snapshot_holds_each_seats_view_and_a_seat_page_only_its_own(plugin: Path, tmp_path: Path) -> None:
    data = build_viewer_data(_liars_replay(tmp_path))
    assert data.problem is None and data.final is not None
    for step in data.views["all"]:
        assert sorted(step["state"]["views"]) == ["0", "1", "2"]
    for seat in range(3):
        for step in data.views[str(seat)]:
            assert list(step["state"]["views"]) == [str(seat)]
            view = step["state"]["views"][str(seat)]
            assert all(dice == [] for other, dice in enumerate(view["dice_shown"]) if other != seat)
            assert all(e["seat"] == seat for e in step["events"] if e["type"] == "rolled")
            if step["seat"] not in (None, seat) and step["forfeit"] is None:
                assert step["action"] is None  # a bid is not declared public by the game


@needs_chromium
@pytest.mark.browser
@pytest.mark.slow
class TestInTheBrowser:
    def _open(self, browser: Any, url: str, errors: list[str]) -> Any:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("dialog", lambda dialog: errors.append(f"a dialog opened: {dialog.message}"))
        page.goto(url)
        page.wait_for_function("document.body.dataset.step !== undefined")
        return page

    def test_every_step_is_drawn_as_tables_of_the_views_and_events(
        self, browser: Any, plugin: Path, tmp_path: Path
    ) -> None:
        out = write_viewer(_liars_replay(tmp_path), tmp_path / "liars.html")[0]
        errors: list[str] = []
        page = self._open(browser, out.as_uri() + "#step=0", errors)
        data = page.evaluate("window.famigliaReplay")
        for index, step in enumerate(data["steps"]):
            if index:
                page.keyboard.press("ArrowRight")
            assert page.evaluate("document.body.dataset.step") == str(index)
            for seat in range(3):
                view = step["state"]["views"][str(seat)]
                section = page.locator(f'[data-testid="generic-view-{seat}"]')
                # Each field of the view is a row of its table, named and filled.
                counts = section.locator('tr[data-field="counts"] > td').first.inner_text()
                assert counts == ", ".join(str(c) for c in view["counts"]), f"step {index} seat {seat}"
                assert section.locator('tr[data-field="round"] > td').first.inner_text() == str(view["round"])
            rows = page.locator('[data-testid="generic-events"] > tbody > tr')
            assert rows.count() == len(step["events"]), f"step {index}"
            for i, event in enumerate(step["events"]):
                assert rows.nth(i).locator("td").first.inner_text() == event["type"]
        assert page.locator("#final-table").count() == 1
        # A name with markup in it is shown as text and runs nothing.
        assert HOSTILE.split(" ")[0] in page.locator("header").inner_text()
        assert page.locator("img").count() == 0
        assert errors == []
        page.close()

    def test_a_seat_page_draws_only_that_seats_view(self, browser: Any, plugin: Path, tmp_path: Path) -> None:
        out = write_viewer(_liars_replay(tmp_path), tmp_path / "liars.html")[0]
        errors: list[str] = []
        page = self._open(browser, seat_page(out, 1).as_uri() + "#end", errors)
        assert page.locator('[data-testid="generic-view-1"]').count() == 1
        assert page.locator('[data-testid="generic-view-0"], [data-testid="generic-view-2"]').count() == 0
        data = page.evaluate("window.famigliaReplay")
        assert all(list(step["state"]["views"]) == ["1"] for step in data["steps"])
        assert errors == []
        page.close()

    def test_a_public_vendetta_placement_shows_on_another_seats_page(self, browser: Any, tmp_path: Path) -> None:
        out = write_viewer(vendetta_replay(tmp_path / "vendetta.jsonl"), tmp_path / "vendetta.html")[0]
        errors: list[str] = []
        page = self._open(browser, seat_page(out, 0).as_uri() + "#step=0", errors)
        data = page.evaluate("window.famigliaReplay")
        other = next(i for i, step in enumerate(data["steps"]) if step["seat"] not in (None, 0))
        page.goto(seat_page(out, 0).as_uri() + f"#step={other}")
        page.wait_for_function(f"document.body.dataset.step === '{other}'")
        assert page.locator('[data-testid="decision-action"]').inner_text().startswith("places")
        assert page.locator('[data-testid="decision-action-hidden"]').count() == 0
        assert errors == []
        page.close()


def test_a_page_data_of_the_default_drawing_is_plain_json(plugin: Path, tmp_path: Path) -> None:
    data = build_viewer_data(_liars_replay(tmp_path))
    json.dumps(msgspec.to_builtins(data))  # nothing but JSON values in what the page packs
