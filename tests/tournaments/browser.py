"""Headless Debian chromium through Playwright, for the browser tests.

The tests skip, saying why, only when chromium is not installed (CI installs
it); Playwright itself is in the test extra and never downloads a browser here.
One chromium serves every browser test of a test process (``browser``): a
launch costs about a second of CPU, and the suite's browser tests come from
seven modules. Each test gets it with no page or context open.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / ".artifacts"
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium; .ci/run does it)"
)


def launch() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """The test process's headless chromium, started by the first browser test it runs."""
    yield from launch()


@pytest.fixture
def browser(chromium: Any) -> Iterator[Any]:
    """The test process's chromium, every context a test opened (and its pages with it) closed after it."""
    yield chromium
    for context in chromium.contexts:
        context.close()
