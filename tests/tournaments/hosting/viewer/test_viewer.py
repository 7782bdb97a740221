"""The replay viewer's pages without a browser: what they hold, what they leave out, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.tournaments.replay_factory import HOSTILE, records, sicilianos_replay, vendetta_replay
from tournaments.cli import app
from tournaments.hosting.viewer import build_viewer_data, seat_page, write_viewer
from tournaments.hosting.viewer.templating import script_json, unpack_json

runner = CliRunner()


def embedded(page: Path) -> dict[str, object]:
    html = page.read_text()
    found = re.search(r'<script type="application/gzip-base64" id="famiglia-replay">(.*?)</script>', html, re.DOTALL)
    assert found is not None
    data: dict[str, object] = unpack_json(found.group(1))
    return data


def everything_in(page: Path) -> str:
    """The page's markup and its data unpacked: what a reader of the file can get at."""
    return page.read_text() + json.dumps(embedded(page), ensure_ascii=False)


def test_script_json_cannot_close_its_script_element_or_open_a_comment() -> None:
    text = str(script_json({"name": HOSTILE}))
    assert "</" not in text and "<!--" not in text and "<" not in text and "\u2028" not in text
    assert json.loads(text) == {"name": HOSTILE}


@pytest.mark.parametrize("make", [vendetta_replay, sicilianos_replay])
def test_text_from_bots_stays_escaped_in_every_page(tmp_path: Path, make: object) -> None:
    replay = make(tmp_path / "g.jsonl", forfeit_at=9)  # type: ignore[operator]
    for page in write_viewer(replay, tmp_path / "g.html"):
        html = page.read_text()
        assert HOSTILE not in html and "<b>bravo</b>" not in html
        assert HOSTILE in everything_in(page)  # in the packed data, which the page's script draws as text
        assert html.count("<script") == 3  # the data, the board, the player: nothing from a bot
        assert "&lt;b&gt;bravo&lt;/b&gt;" in html  # the seat name, shown as text in the view links


def test_a_seat_page_holds_only_that_seats_hand_log_lines_and_actions(tmp_path: Path) -> None:
    replay = sicilianos_replay(tmp_path / "s.jsonl", forfeit_at=9)
    out = tmp_path / "s.html"
    write_viewer(replay, out)
    everything = embedded(out)
    steps = everything["steps"]
    assert isinstance(steps, list)
    assert sorted(steps[-1]["state"]["hands"]) == ["0", "1", "2", "3"]  # the all-seeing page has every hand
    mine = embedded(seat_page(out, 2))
    html = everything_in(seat_page(out, 2))
    assert all(list(step["state"]["hands"]) == ["2"] for step in mine["steps"])  # type: ignore[union-attr]
    assert "seat 2 thinks" in html and "seat 0 thinks" not in html and "seat 3 thinks" not in html
    assert "no answer in time" not in html  # seat 1's forfeit reason is its own; seat 2 sees the kind
    assert any(step["forfeit"] == {"kind": "timeout"} for step in mine["steps"])  # type: ignore[union-attr]


def test_vendetta_hidden_cards_are_only_in_the_all_seeing_page(tmp_path: Path) -> None:
    replay = vendetta_replay(tmp_path / "v.jsonl")
    out = tmp_path / "v.html"
    write_viewer(replay, out)
    assert all("hidden" in step["state"] for step in embedded(out)["steps"])  # type: ignore[union-attr]
    for seat in range(3):
        assert all("hidden" not in step["state"] for step in embedded(seat_page(out, seat))["steps"])  # type: ignore[union-attr]


def test_a_whole_replay_has_no_problem_and_one_step_per_decision(tmp_path: Path) -> None:
    replay = vendetta_replay(tmp_path / "v.jsonl", forfeit_at=9)
    data = build_viewer_data(replay)
    decisions = [r for r in records(replay) if r["type"] in ("action", "forfeit")]
    assert data.problem is None and data.final is not None
    assert len(data.views["all"]) == len(decisions) + 1
    assert not any(step["together"] for step in data.views["all"])  # Vendetta asks one seat at a time


def test_a_truncated_replay_keeps_the_steps_before_the_cut_and_names_the_line(tmp_path: Path) -> None:
    replay = sicilianos_replay(tmp_path / "s.jsonl")
    lines = replay.read_bytes().splitlines(keepends=True)
    replay.write_bytes(b"".join(lines[:40]) + lines[40][:30])
    data = build_viewer_data(replay)
    assert data.problem is not None and data.problem.line == 41 and "cut short" in data.problem.message
    assert len(data.views["all"]) > 5 and data.final is None


def test_a_replay_without_its_result_line_says_the_match_did_not_finish(tmp_path: Path) -> None:
    replay = vendetta_replay(tmp_path / "v.jsonl")
    lines = replay.read_bytes().splitlines(keepends=True)
    replay.write_bytes(b"".join(lines[:-1]))
    data = build_viewer_data(replay)
    assert data.problem is not None and "without a result" in data.problem.message


def test_an_edited_action_stops_the_page_at_its_line(tmp_path: Path) -> None:
    replay = vendetta_replay(tmp_path / "v.jsonl")
    lines = replay.read_bytes().split(b"\n")  # bytes: a log line holds U+2028, which str.splitlines splits at
    index = next(i for i, line in enumerate(lines) if b'"type":"action"' in line and i > 8)
    record = json.loads(lines[index])
    record["seat"] = (record["seat"] + 1) % 3  # someone else acting out of turn
    lines[index] = json.dumps(record).encode()
    replay.write_bytes(b"\n".join(lines))
    data = build_viewer_data(replay)
    assert data.problem is not None and data.problem.line == index + 1
    assert "the engine has seat" in data.problem.message
    page = write_viewer(replay, tmp_path / "v.html")[0].read_text()
    assert f"stops making sense at line {index + 1}" in page


def test_edited_events_are_flagged_at_their_line(tmp_path: Path) -> None:
    replay = vendetta_replay(tmp_path / "v.jsonl")
    lines = replay.read_bytes().split(b"\n")
    index = next(i for i, line in enumerate(lines) if b'"type":"revealed"' in line)
    lines[index] = re.sub(
        rb'"district":(\d+)', lambda m: b'"district":%d' % (int(m.group(1)) % 13 + 1), lines[index], count=1
    )
    replay.write_bytes(b"\n".join(lines))
    data = build_viewer_data(replay)
    assert (
        data.problem is not None and data.problem.line == index + 1 and "events recorded differ" in data.problem.message
    )


def test_a_forfeit_of_a_seat_that_does_not_exist_stops_the_page_at_its_line(tmp_path: Path) -> None:
    replay = vendetta_replay(tmp_path / "v.jsonl")
    lines = replay.read_bytes().split(b"\n")
    forfeit = b'{"type":"forfeit","seat":9,"request":1,"kind":"crash","reason":"x","events":[]}'
    replay.write_bytes(b"\n".join([*lines[:6], forfeit, *lines[6:]]))
    data = build_viewer_data(replay)
    assert data.problem is not None and data.problem.line == 7 and "ForfeitRecord" in data.problem.message
    assert "stops making sense at line 7" in write_viewer(replay, tmp_path / "v.html")[0].read_text()


def test_a_replay_of_a_game_famiglia_does_not_ship_gives_a_page_that_says_so(tmp_path: Path) -> None:
    replay = vendetta_replay(tmp_path / "v.jsonl")
    lines = replay.read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b'"game":"vendetta"', b'"game":"chess"')
    replay.write_bytes(b"\n".join(lines))
    page = write_viewer(replay, tmp_path / "v.html")[0].read_text()
    assert "stops making sense at line 1: the header cannot start a game: unknown game &#39;chess&#39;" in page


@pytest.mark.parametrize("content", [b"", b"hello\n", b'{"type":"action","seat":0}\n', b"\xff\xfe\n"])
def test_replay_view_on_a_file_that_is_not_a_replay_exits_2_with_one_line(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)
    result = runner.invoke(app, ["replay", "view", str(bad)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("famiglia: error: ") and "Traceback" not in result.output
    assert not (tmp_path / "bad.html").exists()


def test_replay_view_writes_the_page_and_one_per_seat(tmp_path: Path) -> None:
    replay = vendetta_replay(tmp_path / "v.jsonl")
    result = runner.invoke(app, ["replay", "view", str(replay), "--out", str(tmp_path / "web" / "game.html")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "web").iterdir()) == [
        "game.html", "game.seat-0.html", "game.seat-1.html", "game.seat-2.html",
    ]  # fmt: skip
    # Pages hold the whole deal, as the replay does: the host's alone.
    assert {oct(p.stat().st_mode & 0o777) for p in (tmp_path / "web").iterdir()} == {"0o600"}
    assert oct((tmp_path / "web").stat().st_mode & 0o777) == "0o700"
    same = runner.invoke(app, ["replay", "view", str(replay), "--out", str(replay)])
    assert same.exit_code == 2 and "that is the replay itself" in same.output
    missing = runner.invoke(app, ["replay", "view", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and len(missing.output.strip().splitlines()) == 1


def test_replay_verify_of_a_game_not_installed_here_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    # A replay of a plug-in game verified where the plug-in is not installed.
    replay = vendetta_replay(tmp_path / "game.jsonl")
    lines = replay.read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b'"game":"vendetta"', b'"game":"sotto"')
    replay.write_bytes(b"\n".join(lines))
    result = runner.invoke(app, ["replay", "verify", str(replay)])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert "unknown game 'sotto'" in line and "install the game's package" in line
