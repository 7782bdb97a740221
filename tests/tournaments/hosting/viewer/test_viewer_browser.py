"""The replay viewer in a real browser (headless Debian chromium): both games.

For each game: step through every decision with the keyboard and no console
error, check the drawn board against an independent re-run of the replay's
actions through the engine after every decision, read the final ranks and
scores at ``#end``, and follow one seat's view without any other seat's hidden
values in the page. About 10 s in all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from referee.games import get_rules
from referee.games.base import ScriptedChance
from referee.replay import ActionRecord, ChanceRecord, ForfeitRecord, Header, read_replay
from tests.tournaments.browser import ARTIFACTS, needs_chromium
from tests.tournaments.replay_factory import HOSTILE, sicilianos_replay, vendetta_replay
from tournaments.hosting.viewer import build_viewer_data, seat_page, write_viewer

pytestmark = [needs_chromium, pytest.mark.browser, pytest.mark.slow]

# Every figure the board labels, and how many cards (faces: cards with a value) each hand shows, in one call.
BOARD_FIGURES = """() => Object.fromEntries([...document.querySelectorAll('#board [data-testid]')].flatMap((e) => [
  [e.dataset.testid, e.textContent.trim()],
  [e.dataset.testid + ' cards', e.querySelectorAll('.s-card').length],
  [e.dataset.testid + ' faces', e.querySelectorAll('.s-card[data-value]').length]]))"""


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("viewer")
    pages = {}
    for game, make in (("vendetta", vendetta_replay), ("sicilianos", sicilianos_replay)):
        replay = make(folder / f"{game}.jsonl", forfeit_at=9)
        pages[game] = write_viewer(replay, folder / f"{game}.html")[0]
    return pages


def engine_positions(replay: Path) -> tuple[list[Any], list[Any]]:
    """Every position of the replay (seat 0's view) re-run through the engine, and the recorded events per step."""
    records = read_replay(replay)
    header = records[0]
    assert isinstance(header, Header)
    rules = get_rules(header.game)
    draws = [d for r in records if isinstance(r, ChanceRecord) for d in r.draws]
    state = rules.new_game(
        len(header.seats), msgspec.json.decode(header.config, type=rules.config_type), ScriptedChance(draws)
    )
    decode = msgspec.json.Decoder(rules.action_type)
    views, events = [msgspec.to_builtins(state.view(0))], [[]]
    for record in records:
        if isinstance(record, ActionRecord):
            state.apply(record.seat, decode.decode(record.action))
        elif isinstance(record, ForfeitRecord):
            state.forfeit(record.seat)
        else:
            continue
        views.append(msgspec.to_builtins(state.view(0)))
        events.append(msgspec.json.decode(record.events))
    return views, events


def open_page(browser: Any, url: str, errors: list[str], width: int = 1280, height: int = 800) -> Any:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: errors.append(f"a dialog opened: {dialog.message}"))
    page.goto(url)
    page.wait_for_function("document.body.dataset.step !== undefined")  # the data is unpacked, the board drawn
    return page


def expected_figures(game: str, view: dict[str, Any]) -> dict[str, str]:
    if game == "vendetta":
        figures = {}
        for s in range(view["n_players"]):
            figures.update({f"seat-{s}-hand": str(view["hands"][s]), f"seat-{s}-box": str(view["box"][s]),
                            f"seat-{s}-points": f"{view['points'][s]:,}",
                            f"seat-{s}-controlled": str(view["controlled"][s])})  # fmt: skip
            for d in range(13):
                figures[f"district-{d + 1}-seat-{s}"] = str(view["board"][d][s])
        return figures
    return {
        key: value
        for p in view["players"]
        for key, value in (
            (f"seat-{p['seat']}-clean", f"{p['clean']:,}"),
            (f"seat-{p['seat']}-dirty", f"{p['dirty']:,}"),
        )
    }


@pytest.mark.parametrize("game", ["vendetta", "sicilianos"])
def test_viewer_steps_through_every_decision_and_draws_the_engine_state(
    browser: Any, games: dict[str, Path], game: str
) -> None:
    replay = games[game].with_suffix(".jsonl")
    views, events = engine_positions(replay)
    errors: list[str] = []
    page = open_page(browser, games[game].as_uri() + "#step=0", errors)
    scorings = 0
    fixed = "() => ['decision', 'events-panel', 'slider', 'play', 'board'].map((id) => JSON.stringify(document.getElementById(id).getBoundingClientRect()))"
    places = page.evaluate(fixed)
    for step in range(len(views)):
        if step:
            page.keyboard.press("ArrowRight")
            assert page.evaluate(fixed) == places, f"step {step}: the panels or the controls moved"
        assert page.evaluate("document.body.dataset.step") == str(step)
        drawn = page.evaluate(BOARD_FIGURES)
        expected = expected_figures(game, views[step])
        assert {key: drawn.get(key) for key in expected} == expected, f"step {step}"
        for event in events[step]:
            if event["type"] == "scored":  # the round's scoring as the replay recorded it
                scorings += 1
                for s, points in enumerate(event["points"]):
                    assert drawn[f"seat-{s}-points"] == f"{points:,}"
                    assert drawn[f"seat-{s}-controlled"] == str(event["controlled"][s])
        if game == "sicilianos":  # a hand's size in the board is the engine's
            for p in views[step]["players"]:
                assert drawn[f"seat-{p['seat']}-hand cards"] == p["hand_size"], f"step {step} seat {p['seat']}"
    if game == "vendetta":
        assert scorings >= 1
    page.keyboard.press("ArrowRight")  # past the end: stays at the end
    assert page.evaluate("document.body.dataset.step") == str(len(views) - 1)
    page.keyboard.press("Home")
    assert page.evaluate("document.body.dataset.step") == "0"
    page.keyboard.press("End")
    assert page.evaluate("location.hash") == "#end"
    assert errors == []
    page.close()


@pytest.mark.parametrize("game", ["vendetta", "sicilianos"])
def test_viewer_at_end_shows_final_ranks_and_scores_as_text(browser: Any, games: dict[str, Path], game: str) -> None:
    replay = games[game].with_suffix(".jsonl")
    result = msgspec.json.decode(replay.read_bytes().splitlines()[-1])["result"]
    errors: list[str] = []
    page = open_page(browser, games[game].as_uri() + "#end", errors)
    rows = page.locator('[data-testid="final-row"]')
    assert rows.count() == len(result["ranks"])
    for i in range(rows.count()):
        row = rows.nth(i)
        seat = int(row.get_attribute("data-seat"))
        assert row.locator('[data-testid="final-rank"]').inner_text() == str(result["ranks"][seat])
        # With the thousands separators the boards use.
        assert row.locator('[data-testid="final-score"]').inner_text() == f"{result['scores'][seat]:,}"
    assert "Final result" in page.locator("#final").inner_text()
    # A bot's log line and a forfeit reason with markup in them are shown as text, never run.
    assert page.locator("img").count() == 0
    page.goto(games[game].as_uri() + "#step=1")
    assert HOSTILE.strip().split(" ")[0] in page.locator('[data-testid="logs"]').inner_text()
    # Play from the start at the fastest speed: it runs to the end and stops there.
    page.goto(games[game].as_uri() + "#step=0")
    page.select_option("#speed", "80")
    page.keyboard.press("Space")
    assert page.locator("#play").inner_text() == "pause"
    page.wait_for_function(
        "document.body.dataset.step === String(window.famigliaReplay.steps.length - 1)",
        timeout=90_000,  # 50 steps at 80 ms, on a machine other work may be slowing down
    )
    page.wait_for_function("document.getElementById('play').textContent === 'play'")
    assert page.evaluate("location.hash") == "#end"
    # The view links keep the position: seat 0's page opens at the same step.
    page.goto(games[game].as_uri() + "#step=5")
    page.locator("a[data-view-link]", has_text="seat 0").click()
    page.wait_for_function("document.body.dataset.step === '5'")
    assert page.url.endswith(".seat-0.html#step=5")
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(games[game].as_uri() + "#step=12")
    page.screenshot(path=str(ARTIFACTS / f"viewer-{game}-1280x800.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(ARTIFACTS / f"viewer-{game}-390x844.png"))
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scrolling on a phone
    assert errors == []
    page.close()


@pytest.mark.parametrize("game", ["vendetta", "sicilianos"])
def test_seat_view_page_holds_no_hidden_value_of_another_seat(browser: Any, games: dict[str, Path], game: str) -> None:
    seat = 0
    url = seat_page(games[game], seat).as_uri()
    errors: list[str] = []
    page = open_page(browser, url + "#step=0", errors)
    data = page.evaluate("window.famigliaReplay")
    html = page.content() + json.dumps(data)
    assert data["view"] == seat
    # Other seats' log lines are not in the page at all, nor their actions where they are private.
    assert "seat 1 thinks" not in html and "seat 2 thinks" not in html
    others = [step for step in data["steps"] if step["seat"] not in (None, seat) and step["forfeit"] is None]
    if game == "vendetta":  # the unrevealed protection cards and the raid are hidden from every seat
        assert all("hidden" not in step["state"] for step in data["steps"])
        # A placement is public (H5): the seat's page shows it, as the events do.
        assert all(step["action"] is not None and step["action"]["type"] == "place" for step in others)
    else:
        assert all(step["action"] is None for step in others)
    if game == "sicilianos":
        assert all(list(step["state"]["hands"]) == [str(seat)] for step in data["steps"])
        assert all(
            event.get("value") is None
            for step in data["steps"]
            for event in step["events"]
            if event["type"] in ("drew", "war_started", "joined", "played") and event["seat"] != seat
        )
    last = len(data["steps"]) - 1
    for step in range(last + 1):
        if step:
            page.keyboard.press("ArrowRight")
        drawn = page.evaluate(BOARD_FIGURES)
        if game == "vendetta":
            assert "hidden-cards" not in drawn and "district-1-seat-0" in drawn
        else:  # every card of another seat's hand is drawn face down; its own hand face up
            for other in range(len(data["seats"])):
                faces = drawn[f"seat-{other}-hand faces"]
                if other != seat:
                    assert faces == 0, f"step {step}: seat {other}'s card values shown to seat {seat}"
                else:
                    assert faces == drawn[f"seat-{other}-hand cards"]
    assert errors == []
    page.close()


def test_truncated_replay_page_says_where_it_stops(browser: Any, tmp_path: Path) -> None:
    replay = sicilianos_replay(tmp_path / "cut.jsonl")
    lines = replay.read_bytes().splitlines(keepends=True)
    replay.write_bytes(b"".join(lines[:30]) + lines[30][:25])
    page_path = write_viewer(replay, tmp_path / "cut.html")[0]
    errors: list[str] = []
    page = open_page(browser, page_path.as_uri() + "#end", errors)
    assert "stops making sense at line 31" in page.locator("#problem").inner_text()
    assert page.locator('#board [data-testid="seat-0-clean"]').count() == 1  # the board is drawn, not blank
    assert "No result" in page.locator("#final").inner_text()
    assert errors == []
    page.close()


# Every mark of every district, and whether any of it is cut off (by its line or by the card's notes box).
CLIPPED_MARKS = """() => [...document.querySelectorAll('#board .v-notes')].flatMap((notes) => {
  const box = notes.getBoundingClientRect();
  return [...notes.children].map((m) => { const r = m.getBoundingClientRect();
    return { text: m.textContent, cut: m.scrollWidth > m.clientWidth || r.bottom > box.bottom + 0.5 || r.top < box.top - 0.5 }; });
})"""


@pytest.mark.parametrize("width", [1280, 390])
def test_vendetta_district_shows_every_mark_of_a_busy_step_uncut(
    browser: Any, games: dict[str, Path], width: int
) -> None:
    data = build_viewer_data(games["vendetta"].with_suffix(".jsonl"))
    # A step where one district had a placement, its protection card turned, a vendetta and a payment.
    busy = next(
        i
        for i, step in enumerate(data.views["all"])
        if {"placed", "revealed", "eliminated", "paid"} <= {e["type"] for e in step["events"]}
    )
    errors: list[str] = []
    page = open_page(browser, games["vendetta"].as_uri() + f"#step={busy}", errors, width, 844)
    district = next(e["district"] for e in data.views["all"][busy]["events"] if e["type"] == "paid")
    notes = page.locator(f'[data-testid="district-{district}-notes"]').inner_text()
    assert "vendetta: seat" in notes and "paid: seat" in notes
    # The turned card is the district's badge, highlighted at the step it came up, and the board says what it means.
    assert "now" in (page.locator(f'[data-testid="district-{district}-turned"]').get_attribute("class") or "")
    assert "protection card came up this round" in page.locator('[data-testid="board-key"]').inner_text()
    for step in range(len(data.views["all"])):
        page.evaluate(f"location.hash = '#step={step}'")
        page.wait_for_function(f"document.body.dataset.step === '{step}'")
        assert [m for m in page.evaluate(CLIPPED_MARKS) if m["cut"]] == [], f"step {step}"
    assert errors == []
    page.close()


def test_sicilianos_counts_read_in_good_english_and_fit_a_phone_at_every_step(
    browser: Any, games: dict[str, Path]
) -> None:
    errors: list[str] = []
    page = open_page(browser, games["sicilianos"].as_uri() + "#step=0", errors, 390, 844)
    last = int(page.evaluate("window.famigliaReplay.steps.length")) - 1
    for step in range(last + 1):
        if step:
            page.keyboard.press("ArrowRight")
        board = page.locator("#board").inner_text()
        assert re.search(r"(?<![\d,])1 (cards|businesses)\b", board) is None, f"step {step}: {board}"
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, f"step {step} scrolls sideways"
    singular = page.evaluate("[...document.querySelectorAll('[data-testid$=-businesses]')].map((e) => e.textContent)")
    assert all(not text.startswith("1 ") or text == "1 business" for text in singular)
    assert errors == []
    page.close()
