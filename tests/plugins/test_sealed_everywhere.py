"""The example simultaneous game goes everywhere a game goes: Sealed (examples/famiglia-sealed).

Its two bots pass check-bot; a person plays it at the human seat (in this
process, and in a terminal through ``famiglia play``) while the other seats
think at the same time; ``famiglia play`` writes a replay that ``famiglia
replay verify``, ``show`` and ``view`` read; a round robin of its example file is
played and reported with a viewer page per game. The game is registered for
each test by tests/plugins/conftest.py (``sealed``).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from rich.console import Console
from typer.testing import CliRunner

from protocol.messages import TimeControl
from referee.match import MatchSpec, run_match
from referee.replay import read_replay, verify_replay
from referee.settings import Clock, RefereeSettings
from tests.plugins.sealed_site import BOTS, EXAMPLE, GAME
from tests.plugins.test_sealed_referee import bidding
from tests.referee.fakes import ScriptedBot
from tests.tournaments.browser import needs_chromium
from tests.tournaments.hosting.checkbot.bot_checks import failing, run_check
from tests.tournaments.human.test_human_seat import OVER, PROMPT, pexpect, spawn
from tournaments.cli import app
from tournaments.hosting.checkbot.seats import RandomSeat
from tournaments.hosting.viewer import build_viewer_data, write_viewer
from tournaments.human.seat import HumanSeat
from tournaments.store import Store

pytestmark = pytest.mark.slow

FAMIGLIA = Path(sys.executable).with_name("famiglia")


@pytest.mark.parametrize("bot", ["random", "greedy"])
def test_check_bot_passes_each_example_bot(sealed: Path, tmp_path: Path, bot: str) -> None:
    folder = shutil.copytree(BOTS / bot, tmp_path / bot)
    report = run_check(folder, GAME)
    assert failing(report) == [], report.checks
    names = [check.name for check in report.checks]
    assert "decision: bid" in names and "5 players" in names


def test_a_person_bids_at_the_human_seat_while_the_others_are_asked_at_once(sealed: Path) -> None:
    out = io.StringIO()
    entries = iter(["x", "9", "1"] + ["1"] * 20)
    seat = HumanSeat("you", Console(file=out, width=200, color_system=None), read=lambda prompt: next(entries))
    spec = MatchSpec(game=GAME, seed=5, variants={"prizes": "3"}, match="sealed-human")
    settings = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=1000, move_ms=1000, bank_ms=0)))
    record = trio.run(run_match, spec, [RandomSeat("a"), seat, RandomSeat("b")], settings)
    assert record.result.terminations == [] and record.result.ended_by == "all_prizes"
    shown = out.getvalue()
    assert f"{GAME}: you are seat 1 of 3" in shown and "decision bid" in shown
    assert "not legal entry: 'x'" in shown and "not legal entry: '9'" in shown and "game over" in shown
    assert "bids_shown" in shown  # the round's bids, face up, once every seat has bid


def test_famiglia_play_seats_a_person_at_sealed_in_a_terminal(sealed: Path) -> None:
    # A generous start-up limit: a bot that failed to start on a loaded machine would end a two-seat game
    # before the person is asked anything.
    child = spawn(
        "play", GAME, str(BOTS / "greedy"), "human", "--seed", "4", "--variant", "prizes=3", "--startup-ms", "60000"
    )
    shown = io.StringIO()
    child.logfile_read = shown
    child.expect("you are seat 1 of 2")
    assert child.expect([PROMPT, pexpect.EOF]) == 0, shown.getvalue()
    child.sendline("1")
    prompts = 1
    while child.expect([PROMPT, OVER]) == 0:
        child.sendline("1")
        prompts += 1
    child.expect(pexpect.EOF)
    assert prompts == 3  # one bid a round, three prizes
    assert "rank" in child.before and "Traceback" not in child.before
    child.close()
    assert child.exitstatus == 0


def test_famiglia_play_writes_a_replay_that_verify_show_and_view_read(sealed: Path, tmp_path: Path) -> None:
    replay = tmp_path / "sealed.jsonl"
    bots = [str(BOTS / "greedy"), str(BOTS / "random"), str(BOTS / "greedy"), str(BOTS / "random")]
    played = subprocess.run(
        [str(FAMIGLIA), "play", GAME, *bots, "--seed", "5", "--replay", str(replay)],
        capture_output=True, text=True, timeout=300, env=os.environ, check=False,
    )  # fmt: skip
    assert played.returncode == 0, played.stdout + played.stderr
    assert "all_prizes" in played.stdout
    result = verify_replay(read_replay(replay))
    assert len(result.ranks) == 4 and min(result.ranks) == 1
    runner = CliRunner()
    verified = runner.invoke(app, ["replay", "verify", str(replay)])
    assert verified.exit_code == 0 and ": ok, match" in verified.output, verified.output
    show = runner.invoke(app, ["replay", "show", str(replay)])
    assert show.exit_code == 0 and "bids_shown round=0" in show.output, show.output
    # Every bid was one of a step's sealed answers, and each line of one says so.
    actions = [line for line in show.output.splitlines() if line.startswith("#")]
    assert actions and all("(simultaneous)" in line for line in actions), show.output
    steps = build_viewer_data(replay).views["all"][1:]
    assert steps and all(step["together"] for step in steps if step["action"] is not None)
    view = runner.invoke(app, ["replay", "view", str(replay)])
    assert view.exit_code == 0, view.output
    assert replay.with_suffix(".html").is_file()
    assert all(replay.with_name(f"sealed.seat-{seat}.html").is_file() for seat in range(4))


def test_the_example_round_robin_is_played_and_reported_with_a_viewer_page_per_game(
    sealed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = shutil.copytree(EXAMPLE, tmp_path / "sealed", ignore=shutil.ignore_patterns("__pycache__"))
    runner = CliRunner()
    db = tmp_path / "sealed.sqlite"
    monkeypatch.chdir(folder)
    run = runner.invoke(app, ["tournament", "run", "sealed.toml", "--db", str(db), "--workers", "1"])
    assert run.exit_code == 0, run.output
    done, total = Store(db).counts()
    assert done == total > 0
    report = runner.invoke(app, ["report", "--db", str(db), "--out", str(tmp_path / "sealed.html")])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "sealed.html").read_text(encoding="utf-8")
    assert "sealed night" in page and "greedy-too" in page
    games = sorted(p for p in (tmp_path / "sealed-games").glob("game-*.html") if ".seat-" not in p.name)
    assert len(games) == done


async def test_a_ladder_of_sealed_checks_submissions_and_plays_their_games(sealed: Path, tmp_path: Path) -> None:
    import httpx
    from hypercorn.config import Config
    from hypercorn.trio import serve

    from ladder.config import LadderPaths, load_ladder
    from ladder.loop import Ladder
    from ladder.store import new_token
    from ladder.web.app import make_app
    from tests.ladder.helpers import upload_of

    path = tmp_path / "ladder.toml"
    path.write_text(
        '[ladder]\nname = "sealed ladder"\ngame = "sealed"\ntable_sizes = [2]\nconcurrency = 2\n'
        "[ladder.time]\nstartup_ms = 20000\nmove_ms = 5000\nbank_ms = 20000\n"
        '[ladder.sandbox]\nlevel = "none"\n',
        encoding="utf-8",
    )
    ladder = Ladder(load_ladder(path), LadderPaths.beside(path))
    tokens = {name: new_token() for name in ("ann", "bob")}
    for name, token in tokens.items():
        ladder.store.add_entrant(name, token)
    web = Config()
    web.bind = ["127.0.0.1:0"]
    web.accesslog = web.errorlog = None
    store = ladder.store
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        binds = await nursery.start(serve, make_app(ladder), web)
        async with httpx.AsyncClient(base_url=binds[0]) as http:
            for name, bot in (("ann", "greedy"), ("bob", "random")):
                answer = await http.post(
                    "/api/submissions",
                    content=upload_of(BOTS / bot),
                    headers={"authorization": f"Bearer {tokens[name]}"},
                )
                assert answer.status_code == 202, answer.text
            with trio.move_on_after(240):  # generous: check-bot and games on a loaded machine
                while store.counts().get("done", 0) < 2:
                    await trio.sleep(0.1)
            states = [(v.entrant, v.state, v.reason) for v in store.versions()]
            assert store.counts().get("done", 0) >= 2, (store.counts(), states)
            game = store.games(limit=1)[0]
            assert game.replay is not None and verify_replay(read_replay(Path(game.replay))).ended_by == "all_prizes"
            # A game's page is public once every seating of its deal is played (before, it would tell the
            # deal to those who still play it): wait for a whole deal, then some game of it is served.
            served: list[int] = []
            with trio.move_on_after(240):
                while not served:
                    for done in store.games(limit=20):
                        if (await http.get(f"/games/game-{done.id}.html")).status_code == 200:
                            served.append(done.id)
                            break
                    else:
                        await trio.sleep(0.2)
            assert served, store.counts()
        nursery.cancel_scope.cancel()


def test_the_example_installs_with_pip_and_registers_itself(tmp_path: Path) -> None:
    # The other tests register the game by hand: this one checks the example's own pyproject.toml.
    source = shutil.copytree(
        EXAMPLE, tmp_path / "source", ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(site), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    found = subprocess.run(
        [sys.executable, "-c", "from referee.games import get_rules; r = get_rules('sealed'); print(r.name, r.max_players)"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(EXAMPLE.parents[1])])},
    )  # fmt: skip
    assert found.stdout.strip() == "sealed 5", found.stdout + found.stderr


@needs_chromium
@pytest.mark.browser
def test_the_viewer_says_a_bid_was_one_of_a_steps_simultaneous_answers(
    sealed: Path, tmp_path: Path, browser: Any
) -> None:
    replay = tmp_path / "sealed.jsonl"
    bots = [ScriptedBot(bidding()) for _ in range(3)]
    trio.run(lambda: run_match(MatchSpec(game=GAME, seed=3, variants={"prizes": "4"}), bots, replay_path=replay))
    page = browser.new_page()
    page.goto(write_viewer(replay, tmp_path / "sealed.html")[0].as_uri() + "#step=1")
    page.wait_for_function("document.body.dataset.step !== undefined")
    assert "simultaneous" in page.get_by_test_id("decision-together").inner_text()
