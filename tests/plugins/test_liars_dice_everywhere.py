"""A game famiglia was never told about is a full citizen: Liar's dice, registered as a plug-in.

The game (tests/referee/games/liars_dice.py) brings no screen, no check-bot
knowledge and no drawing: everything below runs on the hooks' defaults. A
sample bot that answers any request from its options passes check-bot; a person
plays it at the human seat; a tournament of it is played and reported with a
viewer page per game; and the contract suite passes it. (The page-built Sotto
of docs/writing-a-game.md goes through the same in tests/docs.)
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import msgspec
import pytest
import trio
from rich.console import Console
from typer.testing import CliRunner

from protocol.messages import TimeControl
from referee.contract import check_game
from referee.games import get_rules
from referee.games.base import SeededChance
from referee.match import MatchSpec, run_match
from referee.settings import Clock, RefereeSettings
from tests.conftest import ROOT, SAMPLE_BOTS
from tests.tournaments.hosting.checkbot.bot_checks import failing, run_check
from tests.tournaments.hosting.viewer.plugin_game import GAME, register
from tournaments.cli import app
from tournaments.hosting.checkbot.seats import RandomSeat
from tournaments.hosting.viewer.presentation import DEFAULT_BOARD
from tournaments.hosting.viewer.templating import package_text
from tournaments.human.seat import HumanSeat
from tournaments.store import Store

pytestmark = pytest.mark.slow


@pytest.fixture
def liars(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = register(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    # Worker processes find it as the user's shell would: through PYTHONPATH.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(ROOT)]))
    yield site


def test_the_contract_suite_passes_the_plugin(liars: Path) -> None:
    check_game(get_rules(GAME), seeds=(1,))


def test_check_bot_passes_a_bot_that_answers_from_the_options(liars: Path) -> None:
    report = run_check(SAMPLE_BOTS / "random_py", GAME)
    assert failing(report) == [], report.checks
    # Its decision kinds were found by seeded random play (the default hook): each was forced.
    assert "decision: bid" in [check.name for check in report.checks]


def test_a_person_plays_it_at_the_human_seat(liars: Path) -> None:
    out = io.StringIO()
    entries = iter(["x", "1"] + ["1"] * 200)
    seat = HumanSeat("you", Console(file=out, width=200, color_system=None), read=lambda prompt: next(entries))
    spec = MatchSpec(game=GAME, seed=5, variants={}, match="liars-human")
    settings = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=1000, move_ms=1000, bank_ms=0)))
    record = trio.run(run_match, spec, [seat, RandomSeat("a"), RandomSeat("b")], settings)
    assert record.result.terminations == []
    shown = out.getvalue()
    assert f"{GAME}: you are seat 0 of 3" in shown and "decision bid" in shown
    assert "not legal entry: 'x'" in shown and "game over" in shown


def test_a_tournament_of_it_is_played_and_reported_with_a_viewer_page_per_game(liars: Path, tmp_path: Path) -> None:
    toml = tmp_path / "liars.toml"
    toml.write_text(
        f'[tournament]\nname = "liars night"\ngame = "{GAME}"\ntable_size = 3\ngames_per_entrant = 3\nseed = 2\nreplays = "replays"\n'
        + "".join(f'[[entrant]]\nname = "r{i}"\nbot = "{SAMPLE_BOTS / "random_py"}"\n' for i in range(3)),
        encoding="utf-8",
    )
    runner = CliRunner()
    db = tmp_path / "liars.sqlite"
    run = runner.invoke(app, ["tournament", "run", str(toml), "--db", str(db), "--workers", "1"])
    assert run.exit_code == 0, run.output
    report = runner.invoke(app, ["report", "--db", str(db), "--out", str(tmp_path / "liars.html")])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "liars.html").read_text(encoding="utf-8")
    assert "liars night" in page and "r0" in page
    games = sorted(page for page in (tmp_path / "liars-games").glob("game-*.html") if ".seat-" not in page.name)
    done, total = Store(db).counts()
    assert len(games) == done == total > 0, sorted(p.name for p in (tmp_path / "liars-games").iterdir())
    # Each game's page and its seat pages, drawn with the generic tables (the game brings no board.js).
    for game in games:
        assert all(game.with_name(f"{game.stem}.seat-{s}.html").is_file() for s in range(3))
        assert game.stem in page  # linked from the report
    board = (tmp_path / "liars-games" / "assets" / f"board-{GAME}.js").read_text(encoding="utf-8")
    assert board == package_text(DEFAULT_BOARD)


def test_famiglia_schema_gives_a_plugins_messages_and_its_actions_validate_against_it(
    liars: Path, tmp_path: Path
) -> None:
    out = tmp_path / "liars.schema.json"
    done = CliRunner().invoke(app, ["schema", GAME, "--out", str(out)])
    assert done.exit_code == 0 and done.output.strip() == f"wrote {out}", done.output
    defs = json.loads(out.read_text())["$defs"]
    assert not [name for name in defs if "." in name], "every definition has a name a bot author can read"
    referee_side = defs["Liars_diceRefereeMessage"]["anyOf"]
    assert referee_side and all(member["$ref"].removeprefix("#/$defs/") in defs for member in referee_side)
    # Every legal action of a dealt game, as a bot would send it, is valid; a made-up one is not.
    rules = get_rules(GAME)
    decision = rules.new_game(2, rules.config({}), SeededChance(3)).decision()
    assert decision is not None and decision.options
    bot_side = {"$ref": "#/$defs/Liars_diceBotMessage", "$defs": defs}
    for option in decision.options:
        jsonschema.validate({"type": "action", "id": 1, "action": msgspec.to_builtins(option)}, bot_side)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"type": "action", "id": 1, "action": {"type": "no-such-move"}}, bot_side)


def test_famiglia_schema_of_a_game_not_installed_is_one_line() -> None:
    done = CliRunner().invoke(app, ["schema", "chess"])
    lines = done.output.strip().splitlines()
    assert done.exit_code == 2 and len(lines) == 1, done.output
    assert lines[0].startswith("famiglia: error: unknown game 'chess': choose one of vendetta, sicilianos")
