"""check-bot's games on a game it was never told about: the example plug-in Sotto, through the game's default hooks.

Sotto brings no hook of its own, so these games run on the defaults: its
variants from its declaration, its one decision kind found by seeded random
play, random opponents answering from the options, and fixes that point at
the section of PROTOCOL.md every game shares. The example is installed into a
folder of its own (tests/referee/games/sotto_site.py) and put on the path.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.referee.games.sotto_site import EXAMPLE_BOT, forget_sotto, install_sotto
from tests.tournaments.hosting.checkbot.bot_checks import failing, run_check

pytestmark = pytest.mark.slow

SECTION = '(PROTOCOL.md, section "What an answer may look like")'

# Answers with a card it does not hold once its hand is bigger than ``{limit}``, else with the first option.
CARELESS = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({{"type": "ready"}}), flush=True)
    elif message["type"] == "request":
        action = message["options"][0]
        if len(message["view"]["hand"]) > {limit}:
            action = {{"type": "play", "card": 99}}
        print(json.dumps({{"type": "action", "id": message["id"], "action": action}}), flush=True)
"""


@pytest.fixture(scope="module")
def sotto_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_sotto(tmp_path_factory.mktemp("sotto"))


@pytest.fixture
def sotto(sotto_site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(sotto_site))
    yield
    forget_sotto()


def careless_bot(folder: Path, limit: int) -> Path:
    (folder / "bot.py").write_text(CARELESS.format(limit=limit))
    (folder / "bot.toml").write_text('name = "careless"\ncommand = "python3 bot.py"\n')
    return folder


def test_the_sotto_example_bot_passes_every_check_of_its_game(sotto: None) -> None:
    report = run_check(EXAMPLE_BOT, "sotto")
    assert report.passed and all(result.status == "pass" for result in report.checks), report.checks
    names = [result.name for result in report.checks]
    # Every table size, then the variant set left over (hand=1, hand=5 for 2 sizes), and the one decision kind.
    assert [name for name in names if "players" in name] == ["3 players", "4 players", "3 players, hand=5"]
    assert [name for name in names if name.startswith("decision: ")] == ["decision: play"]


def test_a_sotto_bot_playing_a_card_it_does_not_hold_fails_with_the_shared_sections_fix(
    sotto: None, tmp_path: Path
) -> None:
    report = run_check(careless_bot(tmp_path, limit=0), "sotto")
    assert not report.passed
    assert failing(report)[0] == "whole game"
    for name in ("whole game", "decision: play"):
        result = next(r for r in report.checks if r.name == name)
        assert result.detail.startswith("illegal: ") and "card 99 is not in your hand" in result.detail, result.detail
        assert "one of the request's options" in result.fix and result.fix.endswith(SECTION)
    assert next(r for r in report.checks if r.name == "decision: play").wanted == "answer it with a legal action"


def test_a_sotto_bot_that_breaks_only_with_five_cards_fails_only_the_game_of_that_variant(
    sotto: None, tmp_path: Path
) -> None:
    report = run_check(careless_bot(tmp_path, limit=4), "sotto")
    assert failing(report) == ["3 players, hand=5"], report.checks
    result = next(r for r in report.checks if r.name == "3 players, hand=5")
    assert "hand=5" in result.detail and result.wanted == "play every table size and every variant"
