"""A person at a plug-in game: the human seat draws Sotto with the generic screen every game inherits.

Sotto (examples/famiglia-sotto) brings no screen of its own. The seat shows
the view field by field and the options by number, refuses an entry that is
not one of them and asks again, and plays the game to its end: first in this
process with scripted input, then as ``famiglia play sotto human ...`` in a
real pseudo-terminal. The example is installed into a folder of its own
(tests/referee/games/sotto_site.py).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import trio
from rich.console import Console

from protocol.messages import TimeControl
from referee.match import MatchSpec, run_match
from referee.settings import Clock, RefereeSettings
from tests.referee.games.sotto_site import forget_sotto, install_sotto
from tests.tournaments.human.test_human_seat import OVER, PASSER, PROMPT, pexpect, spawn
from tournaments.hosting.checkbot.seats import RandomSeat
from tournaments.human.seat import HumanSeat

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sotto_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_sotto(tmp_path_factory.mktemp("sotto"))


@pytest.fixture
def sotto(sotto_site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(sotto_site))
    yield
    forget_sotto()


def scripted(entries: list[str]) -> tuple[list[str], Callable[[str], str]]:
    """A ``read`` that types ``entries`` one per prompt (then the end of input); and the prompts it was shown."""
    prompts: list[str] = []
    left = list(entries)

    def read(prompt: str) -> str:
        prompts.append(prompt)
        if not left:
            raise EOFError
        return left.pop(0)

    return prompts, read


def test_the_human_seat_plays_sotto_by_option_numbers_refusing_a_wrong_entry(sotto: None) -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    prompts, read = scripted(["0", "?", "two", "1", "1", "1"])
    seat = HumanSeat("you", console, read=read)
    spec = MatchSpec(game="sotto", seed=3, variants={}, match="sotto-human")
    settings = RefereeSettings(clock=Clock(time=TimeControl(startup_ms=1000, move_ms=1000, bank_ms=0)))
    record = trio.run(run_match, spec, [seat, RandomSeat("a"), RandomSeat("b")], settings)
    assert record.result.terminations == [] and record.result.ended_by == "all_tricks"
    shown = out.getvalue()
    assert "sotto: you are seat 0 of 3" in shown
    assert "sotto: decision play" in shown and "hand: [" in shown  # the view, field by field
    assert ' 1) {"type":"play","card":' in shown  # the options, by number
    assert "not legal entry: '0' is not one of the 3 options" in shown
    assert "Type the number shown before the option" in shown and "q to resign" in shown
    assert "not legal entry: 'two'" in shown
    assert "since your last turn" in shown and "game over" in shown
    assert len(prompts) == 6 and all(prompt.endswith("(e.g. 1)> ") for prompt in prompts)


def test_famiglia_play_seats_a_person_at_a_plugin_game_in_a_terminal(sotto_site: Path) -> None:
    environment = {"PYTHONPATH": os.pathsep.join(filter(None, [str(sotto_site), os.environ.get("PYTHONPATH")]))}
    child = spawn("play", "sotto", "human", PASSER, PASSER, "--seed", "4", env=environment)
    child.expect("you are seat 0 of 3")
    child.expect("hand: ")
    child.expect(r"1\) \{\"type\":\"play\",\"card\":\d+\}")
    child.expect(PROMPT)
    child.sendline("9")
    child.expect(r"not legal entry: '9' is not one of the 3 options")
    child.expect(PROMPT)
    child.sendline("?")
    child.expect("Type the number shown before the option")
    child.expect(PROMPT)
    child.sendline("1")
    prompts = 1
    while child.expect([PROMPT, OVER]) == 0:
        child.sendline("1")
        prompts += 1
    child.expect(pexpect.EOF)
    assert prompts == 3  # one card a trick, three tricks
    assert "rank" in child.before and "Traceback" not in child.before
    child.close()
    assert child.exitstatus == 0
