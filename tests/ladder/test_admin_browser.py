"""The admin page in Chromium: the host logs in with the admin token and pauses the ladder, without JavaScript's help."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.ladder.conftest import famiglia, register, start_server, stop
from tests.tournaments.browser import ARTIFACTS, needs_chromium

pytestmark = [needs_chromium, pytest.mark.browser, pytest.mark.slow]


def test_the_host_logs_in_pauses_the_ladder_and_the_page_says_paused(browser: Any, tmp_path: Path) -> None:
    ladder, _ = register(tmp_path, ["ann", "bob"])
    made = famiglia("ladder", "admin-token", str(ladder))
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip().splitlines()[-1]
    process, url = start_server(ladder)
    try:
        # The forms must work as plain HTML: any Origin or CSRF slip would show as a 403 page here.
        context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 800})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url + "/admin")
        page.wait_for_url("**/admin/login")
        page.fill("input[name=token]", token)
        page.click("button")
        page.wait_for_url("**/admin")
        assert "running" in page.locator("#ladder-state").inner_text()
        page.locator("#ladder-state button", has_text="Pause").click()
        page.wait_for_url("**/admin")
        assert page.locator("#said").inner_text().startswith("paused")
        assert "paused" in page.locator("#ladder-state").inner_text()
        assert page.locator("#ladder-state button").inner_text() == "Resume"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "ladder-admin.png"), full_page=True)
        page.goto(url + "/")
        assert page.locator("#paused").is_visible()  # the leaderboard tells everyone
        assert errors == []
    finally:
        stop(process)
