"""docs/writing-a-game.md is enough to write a game: a package built from its code blocks alone plays
through every command the page names.

The blocks whose info string names a file (```` ```python file=famiglia_sotto/__init__.py ````)
are put one after another into that file; the package is installed by pip into a
folder of its own, as the page tells a user (only these tests put it on their path).
On it run: the contract suite, ``famiglia play``, ``replay verify``, ``replay view``
(drawn by Chromium with the viewer's default tables), a small tournament and its
report, ``check-bot``, and a person at the human seat in a pseudo-terminal. The
blocks are also the example package under examples/, line for line, so the page
and the example cannot drift apart.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.tournaments.browser import needs_chromium

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "writing-a-game.md"
EXAMPLE = REPO / "examples" / "famiglia-sotto"
FAMIGLIA = str(Path(sys.executable).with_name("famiglia"))
GAME = "sotto"

_BLOCK = re.compile(r"^```(\w+) file=(\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def doc_files() -> dict[str, str]:
    """Every file the page's marked blocks make, its blocks joined in order."""
    files: dict[str, list[str]] = {}
    for _, name, body in _BLOCK.findall(DOC.read_text(encoding="utf-8")):
        files.setdefault(name, []).append(body)
    return {name: "\n\n".join(blocks) for name, blocks in files.items()}


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_the_pages_code_is_the_example_package_line_for_line() -> None:
    files = doc_files()
    assert set(files) == {"famiglia_sotto/__init__.py", "pyproject.toml", "bot/bot.toml", "bot/bot.py", "sotto.toml"}
    for name, text in files.items():
        assert _lines(text) == _lines((EXAMPLE / name).read_text(encoding="utf-8")), f"{name} differs from the page"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package written from the page's blocks (no file of the example copied)."""
    source = tmp_path_factory.mktemp("from-the-doc") / "famiglia-sotto"
    for name, text in doc_files().items():
        path = source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return source


@pytest.fixture(scope="module")
def site(package: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package installed by pip, as section 5 says, into a folder of its own."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(target), str(package)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return target


@pytest.fixture
def registered(site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [m for m in sys.modules if m == "famiglia_sotto" or m.startswith("famiglia_sotto.")]:
        del sys.modules[name]


def famiglia(site: Path, cwd: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [FAMIGLIA, *args], cwd=cwd, check=False, capture_output=True, text=True, env=env, timeout=timeout
    )
    assert "Traceback" not in run.stderr + run.stdout, run.stderr
    return run


@pytest.mark.slow
def test_the_game_from_the_page_keeps_the_contract(registered: Path) -> None:
    from referee.contract import check_game
    from referee.games import get_rules

    rules = get_rules(GAME)
    assert type(rules).__module__ == "famiglia_sotto" and str(registered) in str(sys.modules["famiglia_sotto"].__file__)
    check_game(rules, seeds=(1,))


@pytest.fixture(scope="module")
def played(package: Path, site: Path) -> Path:
    """One match of three bot processes, as section 6 plays it; its replay."""
    run = famiglia(site, package, "play", GAME, "bot", "bot", "bot", "--seed", "5", "--replay", "sotto.jsonl")
    assert run.returncode == 0, run.stdout + run.stderr
    return package / "sotto.jsonl"


@pytest.mark.slow
def test_the_game_from_the_page_plays_verifies_and_is_viewed(package: Path, site: Path, played: Path) -> None:
    verify = famiglia(site, package, "replay", "verify", played.name)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    view = famiglia(site, package, "replay", "view", played.name)
    assert view.returncode == 0, view.stdout + view.stderr
    assert (package / "sotto.html").is_file() and (package / "sotto.seat-2.html").is_file()


@pytest.mark.slow
def test_the_pages_tournament_runs_and_is_reported(package: Path, site: Path) -> None:
    run = famiglia(site, package, "tournament", "run", "sotto.toml", "--workers", "1")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "north" in run.stdout and "south" in run.stdout
    report = famiglia(site, package, "report", "--db", "sotto.sqlite", "--out", "sotto-report.html", "--jobs", "1")
    assert report.returncode == 0, report.stdout + report.stderr
    page = (package / "sotto-report.html").read_text(encoding="utf-8")
    assert "sotto-report-games/" in page  # every game linked to its viewer pages
    assert list((package / "sotto-report-games").glob("game-*.html"))


@pytest.mark.slow
def test_check_bot_passes_the_pages_bot(package: Path, site: Path) -> None:
    run = famiglia(site, package, "check-bot", "bot", "--game", GAME, "--json", timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert '"passed": true' in run.stdout.replace('"passed":true', '"passed": true')


@pytest.mark.slow
def test_a_person_plays_the_pages_game_at_the_terminal(package: Path, site: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "TERM": "dumb", "COLUMNS": "200", "LINES": "60"}
    child = pexpect.spawn(
        FAMIGLIA, ["play", GAME, "human", "bot", "bot", "--seed", "4"],
        cwd=str(package), encoding="utf-8", timeout=60, dimensions=(60, 200), env=env,
    )  # fmt: skip
    child.expect("you are seat 0 of 3")
    prompts = 0
    while child.expect([r"\(e\.g\. [^)]*\)> ", "game over"]) == 0:
        child.sendline("1")
        prompts += 1
    child.expect(pexpect.EOF)
    assert prompts == 3  # one card a trick, three tricks
    assert "Traceback" not in child.before
    child.close()
    assert child.exitstatus == 0


@pytest.mark.slow
@pytest.mark.browser
@needs_chromium
def test_the_pages_game_is_drawn_in_chromium_with_the_default_tables(played: Path, site: Path, browser: Any) -> None:
    famiglia(site, played.parent, "replay", "view", played.name)
    errors: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto((played.parent / "sotto.html").as_uri() + "#step=0")
    page.wait_for_function("document.body.dataset.step !== undefined")
    steps = page.evaluate("window.famigliaReplay.steps.length")
    for step in range(1, steps):
        page.keyboard.press("ArrowRight")
        assert page.evaluate("document.body.dataset.step") == str(step)
        assert page.locator('[data-testid="generic-view-0"] tr[data-field="tricks"]').count() == 1
    assert page.locator("#final-table").count() == 1
    assert errors == []


@pytest.mark.slow
def test_the_pages_single_check_calls_run_as_written(registered: Path) -> None:
    # The block of section 4 that calls checks one at a time, run as a reader would paste it.
    blocks = re.findall(r"^```python\n(.*?)^```$", DOC.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    [calls] = [block for block in blocks if "check_views_leak_nothing(RULES, 3)" in block]
    exec(compile(calls, "writing-a-game.md, section 4", "exec"), {})  # noqa: S102 - the page's own code


def test_the_placeholder_the_page_tells_a_drawing_to_clear_is_the_viewers() -> None:
    # A board.js that appends to root instead of replacing its children leaves this sentence above the board.
    template = (REPO / "tournaments" / "hosting" / "viewer" / "templates" / "viewer.html.j2").read_text(
        encoding="utf-8"
    )
    placeholder = re.search(r'<section id="board"[^>]*><p[^>]*>(.*?)</p>', template)
    assert placeholder is not None
    assert f'("{placeholder.group(1)}")' in " ".join(DOC.read_text(encoding="utf-8").split())
