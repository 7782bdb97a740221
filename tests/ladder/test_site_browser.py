"""Every page of the ladder in Chromium at a desktop's width and a phone's (1280 and 390 px): nothing wider
than the screen, no script error, and a screenshot of each in .artifacts/ladder-site/ for a person to look at.

The ladder is served by a real ``famiglia ladder serve`` over a store seeded with two days of games (no
referee needed: tests.ladder.helpers), a game with a replay, a version refused with its build's output,
an admin token and an invite code.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from ladder.build_logs import keep_build_log
from ladder.config import LadderPaths
from ladder.sessions import open_session
from ladder.store import LadderStore
from ladder.web.guard import COOKIE
from tests.ladder.conftest import famiglia, start_server, stop, wait_for
from tests.ladder.helpers import seed_history, seed_viewable_game, write_ladder
from tests.referee.test_build_output import GCC_LIKE
from tests.tournaments.browser import ARTIFACTS, needs_chromium

pytestmark = [needs_chromium, pytest.mark.browser, pytest.mark.slow]

SHOTS = ARTIFACTS / "ladder-site"
WIDTHS = (1280, 390)
OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"
WIDEST = (
    "() => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > innerWidth + 1)"
    ".slice(0, 5).map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className)"
)


class Site(msgspec.Struct, kw_only=True):
    url: str
    sessions: dict[str, str]
    """A login session of each entrant, as its browser's cookie holds it."""
    admin: str
    invite: str
    game: int


def refused_build(store: LadderStore, paths: LadderPaths) -> None:
    """fay's only version, refused by its build, with the build's output kept as the intake keeps it."""
    entrant = store.add_entrant("fay", "fay's token, never used")
    version = store.add_version(entrant, "f" * 64, (25.0, 25.0 / 3), per_hour=10)
    said = "build: fay: build failed (exit 2): bot.c:3:5: error: expected ';' before '}' token"
    output = "".join(f"bot.c:{i}:1: note: in expansion of macro 'STEP'\n" for i in range(40)) + GCC_LIKE
    keep_build_log(paths, version.id, output)
    store.decide(version.id, accepted=False, reason=said, report="")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("ladder-site")
    ladder = write_ladder(folder)
    paths = LadderPaths.beside(ladder)
    store = LadderStore(paths.db)
    try:
        seed_history(store)
        game = seed_viewable_game(store, paths.replays, ["ann", "bob", "cat"])
        refused_build(store, paths)
        sessions = {entrant.name: open_session(store, entrant.id) for entrant in store.entrants()}
        store.set_paused(True)  # the seeded versions have no bots to play: nothing is dealt
    finally:
        store.close()
    admin = famiglia("ladder", "admin-token", str(ladder))
    invite = famiglia("ladder", "invite", str(ladder))
    assert admin.returncode == 0 and invite.returncode == 0, admin.stderr + invite.stderr
    process, url = start_server(ladder)
    try:
        yield Site(
            url=url,
            sessions=sessions,
            admin=admin.stdout.strip().splitlines()[-1],
            invite=invite.stdout.strip().splitlines()[-1],
            game=game,
        )
    finally:
        stop(process)


def looked_at(page: Any, name: str, width: int) -> None:
    """Nothing on the page is wider than the screen; its screenshot kept under ``name``."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
    overflow = page.evaluate(OVERFLOW)
    assert overflow <= 0, f"{name} at {width} px is {overflow} px too wide: {page.evaluate(WIDEST)}"


def browser_of(browser: Any, site: Site, width: int, entrant: str | None = None) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900})
    if entrant is not None:
        context.add_cookies([{"name": COOKIE, "value": site.sessions[entrant], "url": site.url}])
    return context.new_page()


def pages_of(site: Site) -> list[tuple[str, str, str | None, int]]:
    """(name, address, who reads it, the status it answers) of every HTML page."""
    game = site.game
    return [
        ("leaderboard", "/", None, 200),
        ("leaderboard-logged-in", "/", "ann", 200),
        ("entrant", "/entrants/ann", None, 200),
        ("entrant-own", "/entrants/ann", "ann", 200),
        ("entrant-refused", "/entrants/fay", "fay", 200),
        ("games", "/entrants/ann/games", None, 200),
        ("games-matchup", "/entrants/ann/games?version=1&opponent=bob", None, 200),
        ("version-refused", "/entrants/fay/versions/1", "fay", 200),
        ("version-accepted", "/entrants/ann/versions/2", "ann", 200),
        ("game", f"/games/game-{game}.html", None, 200),
        ("game-own", f"/games/game-{game}.html", "ann", 200),
        ("game-seat", f"/games/game-{game}.seat-0.html", "ann", 200),
        ("login", "/login", None, 200),
        ("register", "/register", None, 200),
        ("not-found", "/entrants/nobody", None, 404),
        ("bad-query", "/entrants/ann/games?version=x", None, 400),
        ("admin-login", "/admin/login", None, 200),
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_the_screen_without_a_script_error(browser: Any, site: Site, width: int) -> None:
    for name, address, who, status in pages_of(site):
        page = browser_of(browser, site, width, who)
        errors: list[str] = []
        page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
        page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
        answer = page.goto(site.url + address)
        assert answer is not None and answer.status == status, name
        looked_at(page, name, width)
        if status != 200:  # the browser reports the page's own status as a resource that failed: not an error here
            errors = [e for e in errors if not e.startswith("Failed to load resource: the server responded")]
        assert errors == [], name
        page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_forms_pages_fit_the_screen_too_registered_and_admin(browser: Any, site: Site, width: int) -> None:
    page = browser_of(browser, site, width)
    page.goto(site.url + "/register")
    page.fill("input[name=code]", site.invite)
    page.fill("input[name=name]", f"newcomer-{width}")
    page.click("form button")
    assert "shown only now" in page.inner_text("main")
    looked_at(page, "registered", width)
    page.goto(site.url + "/admin/login")
    page.fill("input[name=token]", site.admin)
    page.click("main form button")
    page.wait_for_url("**/admin")
    assert "paused" in page.inner_text("#ladder-state")
    looked_at(page, "admin", width)
    page.context.close()


def test_the_board_s_podium_band_and_times_are_what_a_reader_sees(browser: Any, site: Site) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Asia/Tokyo", locale="en-GB")
    page = context.new_page()
    page.clock.install()  # the board's refresh runs when the test moves the clock
    page.goto(site.url + "/")
    first = page.locator("#standings tbody tr").first
    assert "podium" in (first.get_attribute("class") or "")
    rank = first.locator(".rank")
    assert rank.get_attribute("title") == "first place"
    assert rank.evaluate("e => getComputedStyle(e).backgroundColor") != "rgba(0, 0, 0, 0)"  # gold, not bare
    fourth = page.locator("#standings tbody tr").nth(3)
    assert fourth.locator(".rank").evaluate("e => getComputedStyle(e).backgroundColor") == "rgba(0, 0, 0, 0)"
    when = page.locator("#standings tr[data-entrant=ann] time")
    utc = when.get_attribute("datetime") or ""
    tokyo = datetime.datetime.fromisoformat(utc).astimezone(datetime.timezone(datetime.timedelta(hours=9)))
    title = when.get_attribute("title") or ""
    assert when.inner_text() == "3 hours ago" and title.endswith(" UTC") and "(your time)" in title
    assert tokyo.strftime("%H:%M:%S") in title  # the reader's own zone, beside the server's UTC
    page.evaluate("() => { document.querySelector('#standings tbody').dataset.served = 'first'; }")

    # One refresh, then wait for it: moving the clock on every poll would put many fetches in flight.
    page.clock.run_for(5000)  # the board's next refresh from the server is due
    wait_for(
        lambda: bool(page.evaluate("() => !document.querySelector('#standings tbody').dataset.served")),
        "the board to refresh itself",
        deadline_s=120,
    )
    assert "(your time)" in (page.locator("#standings tr[data-entrant=ann] time").get_attribute("title") or "")
    # Measured inside one script: the board may refresh again (its clock also runs on its own), and a
    # locator resolved before a refresh would measure a row no longer in the page.
    band = "() => document.querySelector('#standings tr[data-entrant=ann] .band').getBoundingClientRect().width"
    assert page.evaluate(band) > 50
    page.set_viewport_size({"width": 390, "height": 900})
    left, right = page.evaluate(
        "() => { const r = document.querySelector('#standings tr[data-entrant=ann]').getBoundingClientRect();"
        " return [r.left, r.right]; }"
    )
    assert left >= 0 and right <= 390
    page.context.close()


def test_the_chart_and_the_viewer_s_way_back_work_in_the_browser(browser: Any, site: Site) -> None:
    page = browser_of(browser, site, 390, "ann")
    page.goto(site.url + "/entrants/ann")
    chart = page.locator("#rating-chart")
    box = chart.bounding_box()
    assert box is not None and box["width"] <= 390 and box["height"] > 150  # drawn, and within a phone's width
    assert page.locator("#rating-chart polyline").count() == 2
    page.locator("#matchups a[href*='version=1']").first.click()
    page.wait_for_url("**/entrants/ann/games?*")
    assert page.locator("table.games tbody tr").count() >= 1
    page.goto(site.url + f"/games/game-{site.game}.html")
    assert [t.strip() for t in page.locator("nav.views a").all_inner_texts()] == ["everything", "seat 0 ann"]
    page.locator("nav.site a", has_text="cat").click()
    page.wait_for_url("**/entrants/cat")
    page.context.close()
