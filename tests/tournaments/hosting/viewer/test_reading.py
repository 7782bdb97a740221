"""A replay is read for its pages a line at a time, within bounds, whatever the file holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tournaments.replay_factory import vendetta_replay
from tournaments.hosting.viewer import reading
from tournaments.hosting.viewer.build import build_viewer_data
from tournaments.hosting.viewer.reading import NotAReplay, read_lenient


def with_line_after_first_action(path: Path, line: bytes) -> tuple[Path, int]:
    """``path`` with ``line`` put after its first action; the number of the line put in."""
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(i for i, text in enumerate(lines) if text.startswith(b'{"type":"action"')) + 1
    path.write_bytes(b"".join([*lines[:at], line, *lines[at:]]))
    return path, at + 1


def test_a_line_longer_than_any_record_ends_the_page_there_with_the_steps_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "MAX_RECORD_BYTES", 64 << 10)
    replay, number = with_line_after_first_action(vendetta_replay(tmp_path / "r.jsonl"), b"[" * (100 << 10) + b"\n")
    data = build_viewer_data(replay)
    assert data.problem is not None and data.problem.line == number
    assert "longer than any record" in data.problem.message
    assert len(data.views["all"]) == 2  # the start and the first decision


def test_a_file_going_on_past_the_bound_is_read_up_to_it_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay = vendetta_replay(tmp_path / "r.jsonl")
    lines = replay.read_bytes().splitlines(keepends=True)
    monkeypatch.setattr(reading, "MAX_REPLAY_BYTES", sum(map(len, lines[:10])))
    found = read_lenient(replay)
    assert found.problem is not None and found.problem.line == 11
    assert "goes on past" in found.problem.message and len(found.records) == 9


def test_log_lines_past_a_seats_bound_are_counted_without_being_decoded(tmp_path: Path) -> None:
    # Lines that would stop any decoder: past the bound they are counted, not read.
    broken = b'{"type":"log","seat":1,"request":2,"message":"\\u00' + b"\x01" * 1000 + b"\n"
    replay = vendetta_replay(tmp_path / "r.jsonl")
    filler = b'{"type":"log","seat":1,"request":2,"message":"' + b"x" * 2000 + b'"}\n'
    replay, _ = with_line_after_first_action(replay, filler * 3 + broken * 500)
    found = read_lenient(replay, notes_bytes=4096)
    assert found.problem is None
    (left,) = found.left_out
    assert left.seat == 1 and left.lines >= 500 and left.bytes >= 500 * len(broken)
    # Read in full, the same file stops at the first broken line.
    assert read_lenient(replay).problem is not None


def test_an_endless_file_is_not_a_replay_and_is_read_no_further_than_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "MAX_REPLAY_BYTES", 1 << 20)
    with pytest.raises(NotAReplay, match="/dev/zero: over 1 MiB, more than any replay famiglia writes"):
        read_lenient(Path("/dev/zero"))
