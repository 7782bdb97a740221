"""A person at the terminal: whole games driven by scripted keystrokes in a real pseudo-terminal.

Each test runs ``famiglia play`` under pexpect, answers every prompt, and on the
way types wrong entries (refused with the rule id, asked again), ``?`` and a
cancelled ``q``. The opponents are the passer test bot; Vendetta is cut to
three rounds so a game takes a few seconds.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, TEST_BOTS

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.slow

FAMIGLIA = str(Path(sys.executable).parent / "famiglia")
PASSER = str(TEST_BOTS / "passer")
PROMPT = r"\(e\.g\. [^)]*\)> "
OVER = r"game over"


def spawn(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    """``famiglia`` with ``args`` in a pseudo-terminal; ``env`` adds to (or overrides) the environment."""
    # A dumb terminal: Rich draws no colours or styles, so the text can be matched as it is.
    env = {**os.environ, **(env or {}), "TERM": "dumb", "COLUMNS": "200", "LINES": "60"}
    child = pexpect.spawn(
        FAMIGLIA, list(args), cwd=str(ROOT), encoding="utf-8", timeout=30, dimensions=(60, 200), env=env
    )
    return child


def play_out(child: pexpect.spawn, answer: str) -> int:
    """Answer every prompt with ``answer`` until the game ends; how many prompts there were."""
    prompts = 0
    while child.expect([PROMPT, OVER]) == 0:
        child.sendline(answer)
        prompts += 1
    child.expect(pexpect.EOF)
    return prompts


def test_vendetta_human_seat_plays_a_whole_game_with_wrong_entries() -> None:
    child = spawn("play", "vendetta", PASSER, "human", PASSER, "--seed", "5", "--variant", "round_limit=3")
    child.expect("you are seat 1 of 3")
    child.expect("district")  # the board is drawn
    child.expect(PROMPT)
    assert "7:3 11:2" in child.after  # the notation, with an example
    child.sendline("99:1")
    child.expect(r"not legal P1: district 99 does not exist")
    child.expect(PROMPT)
    child.sendline("3:1 4:1 5:1")
    child.expect(r"not legal P1: a turn allows at most 2 districts")
    child.expect(PROMPT)
    child.sendline("3:50")
    child.expect(r"not legal P3: you placed 50 mafiosi")
    child.expect(PROMPT)
    child.sendline("seven")
    child.expect(r"not legal P1: 'seven' is not district:count")
    child.expect(PROMPT)
    child.sendline("?")
    child.expect("Write each placement as district:count")
    child.expect(PROMPT)
    child.sendline("q")
    child.expect("Resign this game")
    child.sendline("no")
    child.expect(PROMPT)
    child.sendline("3:2")
    child.expect("since your last turn")
    child.expect(r"you \(seat 1\) placed 2 in district 3")
    prompts = play_out(child, "-")
    assert prompts >= 5
    output = child.before
    assert "rank" in output and "you" in output
    child.close()
    assert child.exitstatus == 0


def test_sicilianos_human_seat_plays_a_whole_game_with_wrong_entries() -> None:
    child = spawn("play", "sicilianos", "human", PASSER, PASSER, "--seed", "2")
    child.expect("you are seat 0 of 3")
    child.expect("your hand")
    child.expect(r"1\) draw the top card of the blue pile")
    child.expect(PROMPT)
    child.sendline("0")
    child.expect(r"not legal S3: '0' is not one of the \d+ options")
    child.expect(PROMPT)
    child.sendline("x")
    child.expect("not legal S3")
    child.expect(PROMPT)
    child.sendline("?")
    child.expect("Type the number shown before the option")
    child.expect(PROMPT)
    child.sendline("1")
    prompts = play_out(child, "1")
    assert prompts >= 5
    assert "rank" in child.before
    child.close()
    assert child.exitstatus == 0


def test_resigning_after_confirmation_forfeits_the_seat_as_resigned_not_crashed_and_the_game_goes_on() -> None:
    child = spawn("play", "vendetta", "human", PASSER, PASSER, "--seed", "5", "--variant", "round_limit=3")
    child.expect(PROMPT)
    child.sendline("q")
    child.expect("Resign this game")
    child.sendline("yes")
    child.expect(pexpect.EOF)
    # The termination's kind, then its reason, in the result table.
    assert "resigned: resigned at the terminal" in child.before and "crash" not in child.before
    child.close()
    assert child.exitstatus == 0


def test_ctrl_c_at_the_prompt_is_one_line_and_exit_130() -> None:
    child = spawn("play", "vendetta", "human", PASSER, PASSER, "--seed", "1")
    child.expect(PROMPT)
    child.sendintr()
    child.expect(pexpect.EOF)
    assert "interrupted: the match was stopped" in child.before
    assert "Traceback" not in child.before
    child.close()
    assert child.exitstatus == 130


def test_end_of_input_at_the_prompt_forfeits_the_seat_as_resigned_without_a_traceback() -> None:
    child = spawn("play", "sicilianos", "human", PASSER, PASSER, "--seed", "1")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert "resigned: resigned at the terminal: its input ended" in child.before and "crash" not in child.before
    assert "Traceback" not in child.before
    child.close()
    assert child.exitstatus == 0
