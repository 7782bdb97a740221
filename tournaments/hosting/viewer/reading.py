"""Reading a replay for its pages: leniently, a line at a time, in memory bounded whatever the file holds.

A page is drawn from the engine's records (header, chance draws, actions) and
shows each seat's log lines and rejected actions beside them. A replay written
before its bytes were bounded (``referee.replay_budget``), or copied from
anywhere, may hold hundreds of MiB of a bot's text; a server that draws it for
every reader must not hold the file, nor every line of it, in memory. So:

- the file is read one line at a time, never whole; no line longer than
  ``MAX_RECORD_BYTES`` is taken as a record, and nothing past
  ``MAX_REPLAY_BYTES`` is read (a notice says where reading stopped);
- with ``notes_bytes``, each seat's log lines and rejected actions are kept up
  to that many bytes of the file, and from the first that does not fit on, the
  rest are counted (``LeftOut``), not even decoded: a line's kind and seat are
  read from its first bytes, which famiglia always writes in the same order
  (``{"type":"log","seat":N,``).

What reading stops at is a ``Problem``: the page shows every step before that
line and says why it stops there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import BinaryIO

import msgspec

from referee.replay import MAX_REPLAY_BYTES, REPLAY_FORMAT, Header, ReplayRecord

__all__ = ["MAX_RECORD_BYTES", "LeftOut", "NotAReplay", "Problem", "Reading", "read_lenient"]

MAX_RECORD_BYTES = 4 << 20
"""The longest line read as one record: famiglia writes none near it (an action a bot sent is at most 1 MiB)."""

_record_decoder = msgspec.json.Decoder(ReplayRecord)
_NOTE = re.compile(rb'\{"type":"(?:log|rejected)","seat":(\d{1,4}),')
"""The start of a log or rejected record as famiglia encodes it: its tag, then its seat."""


class NotAReplay(ValueError):
    """The file is not a famiglia replay at all (nothing to draw)."""


class Problem(msgspec.Struct, frozen=True):
    """Where a replay stops making sense, and why."""

    line: int
    message: str


class LeftOut(msgspec.Struct, kw_only=True):
    """What a page leaves out of one seat's output: its log lines and rejected actions past ``notes_bytes``."""

    seat: int
    lines: int = 0
    bytes: int = 0


class Reading(msgspec.Struct, kw_only=True):
    """A replay as its pages read it: the header, the records up to the first that makes no sense (with
    their line numbers), that line's problem, and what was left out of each seat's output."""

    header: Header
    records: list[tuple[int, ReplayRecord]]
    problem: Problem | None
    left_out: list[LeftOut]


def read_lenient(path: Path, *, notes_bytes: int | None = None) -> Reading:
    """Read ``path`` a line at a time; ``notes_bytes``: the most of each seat's log lines and
    rejected actions kept, in bytes of the file (None: all of them).

    NotAReplay when the file cannot be read or does not start with a replay header.
    """
    try:
        with path.open("rb") as file:
            return _read(path, file, notes_bytes)
    except OSError as exc:
        raise NotAReplay(f"{path}: cannot read: {exc.strerror}") from None


def _read(path: Path, file: BinaryIO, notes_bytes: int | None) -> Reading:
    number, read = 0, 0
    header: Header | None = None
    records: list[tuple[int, ReplayRecord]] = []
    kept: dict[int, int] = {}  # bytes of each seat's notes kept
    left_out: dict[int, LeftOut] = {}
    problem: Problem | None = None
    # Never a byte past the file's bound is read: one more than it says the file goes on.
    while raw := file.readline(min(MAX_RECORD_BYTES, MAX_REPLAY_BYTES - read) + 1):
        number += 1
        read += len(raw)
        if read > MAX_REPLAY_BYTES:
            if header is None:  # /dev/zero, an endless pipe: no replay at all
                raise NotAReplay(f"{path}: over {MAX_REPLAY_BYTES >> 20} MiB, more than any replay famiglia writes")
            problem = Problem(number, f"the file goes on past {MAX_REPLAY_BYTES >> 20} MiB, more than any replay "
                                      "famiglia writes; the rest is not read")  # fmt: skip
            break
        if len(raw) > MAX_RECORD_BYTES:
            problem = Problem(number, f"a line of over {MAX_RECORD_BYTES >> 20} MiB, longer than any record")
            break
        line = raw.strip()
        if not line:
            continue
        if header is None:
            header = _header(path, number, line)
            continue
        if notes_bytes is not None and (note := _NOTE.match(line)) is not None:
            seat = int(note[1])
            # From the first that does not fit on, all: what is left out is the end of the seat's output.
            if seat in left_out or kept.get(seat, 0) + len(raw) > notes_bytes:
                left = left_out.setdefault(seat, LeftOut(seat=seat))
                left.lines += 1
                left.bytes += len(raw)
                continue
            kept[seat] = kept.get(seat, 0) + len(raw)
        try:
            record = _record_decoder.decode(line)
        except msgspec.DecodeError as exc:
            problem = Problem(number, f"not a replay record ({exc}); the file may be cut short")
            break
        if isinstance(record, Header):
            problem = Problem(number, "a second header line")
            break
        records.append((number, record))
    if header is None:
        if problem is not None:
            raise NotAReplay(f"{path}: line {problem.line}: {problem.message}; is it a famiglia replay?")
        raise NotAReplay(f"{path}: empty file; give a replay written by `famiglia play --replay` or a tournament")
    return Reading(header=header, records=records, problem=problem, left_out=sorted(left_out.values(), key=_seat))


def _seat(left: LeftOut) -> int:
    return left.seat


def _header(path: Path, number: int, line: bytes) -> Header:
    try:
        header = _record_decoder.decode(line)
    except msgspec.DecodeError:
        header = None
    if not isinstance(header, Header):
        raise NotAReplay(f"{path}: line {number} is not a replay header; is it a famiglia replay?")
    if header.format != REPLAY_FORMAT:
        raise NotAReplay(f"{path}: replay format {header.format}, this famiglia reads {REPLAY_FORMAT}")
    return header
