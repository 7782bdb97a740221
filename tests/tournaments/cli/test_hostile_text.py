"""Text from a bot is shown, never obeyed: every command that prints it, run in a real pseudo-terminal.

One hostile bot, written by the tests into a temporary folder, names itself in
bot.toml with an OSC title change, a clear-screen, Rich link markup, a device
status request, a bidi override and a C1 control. It sends the same text as a
log line on every request, and at its third request writes it to stderr and
exits, so its crash reason quotes it too. ``famiglia play`` (its table, its JSON,
a failed build's error line), ``replay show``, ``check-bot`` and the human seat
each run through the real ``famiglia`` entry point in a pseudo-terminal that
claims to be an xterm, so Rich emits what it would to a person's terminal
(styles, and OSC 8 hyperlinks for link markup). None of the raw sequences may
reach it; their visible escapes must.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import TEST_BOTS
from tournaments.cli import app

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.slow

FAMIGLIA = str(Path(sys.executable).parent / "famiglia")
PASSER = str(TEST_BOTS / "passer")

HOSTILE = "\x1b]0;PWNED\x07" + "\x1b[2J" + "[link=https://evil.example]x[/link]" + "\x1b[6n" + "\u202e" + "\x9b"
"""Retitle the window, clear the screen, a hyperlink in Rich markup, make the terminal
type its cursor position, reverse the rest of the line, a C1 control sequence introducer."""

RAW = {
    "OSC title": "\x1b]0;PWNED",
    "clear screen": "\x1b[2J",
    "device status request": "\x1b[6n",
    "bidi override": "\u202e",
    "C1 control": "\x9b",
    "bell": "\x07",
    "OSC 8 hyperlink": "\x1b]8;",
}
"""What a terminal would obey, by what it does: none of it may reach the terminal."""

VISIBLE = (r"\x1b]0;PWNED\x07", r"\x1b[2J", "[link=https://evil.example]x[/link]", r"\x1b[6n", r"\u202e", r"\x9b")
"""The same text as the escapes a person reads instead."""

BOT = f"""\
import json
import sys

HOSTILE = {HOSTILE!r}


def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()


asked = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        asked = 0
        send({{"type": "ready", "name": HOSTILE}})
    elif message["type"] == "request":
        asked += 1
        send({{"type": "log", "message": "log " + HOSTILE}})
        if asked == 3:
            sys.stderr.write(HOSTILE + "\\n")
            sys.stderr.flush()
            sys.exit(3)
        options = message.get("options")
        action = options[0] if options else {{"type": "place", "placements": []}}
        send({{"type": "action", "id": message["id"], "action": action}})
"""


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: every non-ASCII or control character as a ``\\uXXXX`` escape."""
    return '"' + "".join(c if " " <= c < "\x7f" and c not in '"\\' else f"\\u{ord(c):04x}" for c in text) + '"'


def write_bot(folder: Path, build: list[str] | None = None) -> Path:
    """The hostile bot in ``folder``; with ``build``, a bot.toml build command too."""
    folder.mkdir()
    (folder / "bot.py").write_text(BOT)
    manifest = f'name = {toml_string("evil" + HOSTILE)}\ncommand = "python3 bot.py"\n'
    if build is not None:
        manifest += f"build = [{', '.join(map(toml_string, build))}]\n"
    (folder / "bot.toml").write_text(manifest)
    return folder


def spawn(*args: str, cwd: Path) -> tuple[pexpect.spawn, io.StringIO]:
    """``famiglia ARGS`` in a pseudo-terminal that says it is a wide xterm; everything it prints is kept."""
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    env.update(TERM="xterm-256color", LINES="50")
    child = pexpect.spawn(
        FAMIGLIA, list(args), cwd=str(cwd), env=env, encoding="utf-8", timeout=60, dimensions=(50, 500)
    )
    seen = io.StringIO()
    child.logfile_read = seen
    return child, seen


def finish(child: pexpect.spawn, seen: io.StringIO) -> tuple[int, str]:
    """Wait for the end of the command: its exit code and all it printed."""
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, seen.getvalue()


def assert_shown_not_obeyed(output: str) -> None:
    obeyed = [what for what, raw in RAW.items() if raw in output]
    assert not obeyed, f"reached the terminal raw: {obeyed}\n{output!r}"
    missing = [escape for escape in VISIBLE if escape not in output]
    assert not missing, f"not shown: {missing}\n{output!r}"


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """One ``famiglia play`` of the hostile bot against two passers: the replay, the output, the exit code."""
    folder = tmp_path_factory.mktemp("hostile")
    bot = write_bot(folder / "evil")
    replay = folder / "match.jsonl"
    child, seen = spawn(
        "play", "vendetta", str(bot), PASSER, PASSER, "--sandbox", "none", "--seed", "1",
        "--variant", "round_limit=1", "--replay", str(replay), cwd=folder,
    )  # fmt: skip
    code, output = finish(child, seen)
    return replay, output, code


def test_play_shows_the_bots_name_and_its_crash_reason_with_stderr_as_escapes(played: tuple[Path, str, int]) -> None:
    _, output, code = played
    assert code == 0, output
    assert "crash" in output and "exited with code 3" in output  # the reason quotes its stderr
    assert_shown_not_obeyed(output)


def test_replay_show_shows_names_log_lines_and_reasons_as_escapes(played: tuple[Path, str, int]) -> None:
    replay, _, _ = played
    child, seen = spawn("replay", "show", str(replay), cwd=replay.parent)
    code, output = finish(child, seen)
    assert code == 0, output
    assert r"log seat 0: log \x1b]0;PWNED" in output
    assert "FORFEITS (crash)" in output
    assert_shown_not_obeyed(output)


def test_play_json_escapes_the_c1_controls_and_bidi_overrides_json_leaves_raw(tmp_path: Path) -> None:
    bot = write_bot(tmp_path / "evil")
    child, seen = spawn(
        "play", "vendetta", str(bot), PASSER, PASSER, "--sandbox", "none", "--seed", "1",
        "--variant", "round_limit=1", "--json", cwd=tmp_path,
    )  # fmt: skip
    code, output = finish(child, seen)
    assert code == 0, output
    obeyed = [what for what, raw in RAW.items() if raw in output]
    assert not obeyed, f"reached the terminal raw: {obeyed}\n{output!r}"
    # JSON's own escapes: a script decoding the output still reads the bot's name as it is.
    assert r"\u001b]0;PWNED\u0007" in output and r"\u202e" in output and r"\u009b" in output


def test_play_json_output_still_decodes_to_the_bots_own_name(tmp_path: Path) -> None:
    bot = write_bot(tmp_path / "evil")
    args = ["play", "vendetta", str(bot), PASSER, PASSER, "--sandbox", "none", "--seed", "1",
            "--variant", "round_limit=1", "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "\u202e" not in result.output and "\x9b" not in result.output
    assert json.loads(result.output)["names"][0] == "evil" + HOSTILE


def test_a_failed_builds_output_is_shown_in_the_error_line_not_obeyed(tmp_path: Path) -> None:
    build = [sys.executable, "-c", f"import sys; sys.stderr.write({HOSTILE!r}); sys.exit(1)"]
    bot = write_bot(tmp_path / "evil", build=build)
    child, seen = spawn("play", "vendetta", str(bot), PASSER, PASSER, "--sandbox", "none", cwd=tmp_path)
    code, output = finish(child, seen)
    assert code == 2, output
    assert "famiglia: error:" in output and "build failed" in output
    assert_shown_not_obeyed(output)


def test_check_bot_shows_the_bots_name_and_what_it_did_as_escapes(tmp_path: Path) -> None:
    bot = write_bot(tmp_path / "evil")
    child, seen = spawn("check-bot", str(bot), "--sandbox", "none", cwd=tmp_path)
    code, output = finish(child, seen)
    assert code == 1, output  # the crash fails a check
    assert "some checks failed" in output and "exited with code 3" in output
    assert_shown_not_obeyed(output)


def test_the_human_seat_shows_the_bots_name_on_every_screen_without_obeying_it(tmp_path: Path) -> None:
    bot = write_bot(tmp_path / "evil")
    child, seen = spawn(
        "play", "vendetta", str(bot), "human", PASSER, "--sandbox", "none", "--seed", "1",
        "--variant", "round_limit=1", cwd=tmp_path,
    )  # fmt: skip
    prompts = 0
    # Each prompt ends "(e.g. 7:3)> "; the rule "game over" ends the game.
    while child.expect([r"\(e\.g\. [^)]*\)> ", "game over"]) == 0:
        child.sendline("-")
        prompts += 1
    code, output = finish(child, seen)
    assert code == 0, output
    assert prompts >= 2
    assert r"(seat 0) placed nothing" in output  # an event names the bot
    assert r"(seat 0) forfeited" in output
    assert_shown_not_obeyed(output)


def test_shown_text_prints_markup_and_emoji_codes_as_they_were_written(capsys: pytest.CaptureFixture[str]) -> None:
    from tournaments.cli.common import console
    from tournaments.hosting.markup import shown

    text = ":skull: [link=https://evil.example]x[/link] [bold]b[/] a\\[red] and a last backslash\\"
    console.print(f"[green]seat[/] {shown(text)}", highlight=False)
    assert capsys.readouterr().out == f"seat {text}\n"
    # Backslashes at the end show as written, before plain text or before the caller's tag.
    for ending in ("\\", "\\\\", "\\\\\\"):
        console.print(f"[dim]{shown('x' + ending)}[/] {shown('y' + ending)}", highlight=False)
        assert capsys.readouterr().out == f"x{ending} y{ending}\n"


def test_printed_json_escapes_every_non_printable_character_and_decodes_the_same(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tournaments.cli.common import print_json

    value = {"name": "a\x1b\x9b\u202e\U000e0001\x7f b ☃", "list": ["\u2066", 1]}
    print_json(json.dumps(value))
    out = capsys.readouterr().out
    assert out.replace("\n", "").isprintable()
    assert r"\u009b" in out and r"\udb40\udc01" in out  # a code point past the BMP as its surrogate pair
    assert "☃" in out  # printable text stays as it is
    assert json.loads(out) == value
