"""Replays: one JSON-lines file per match, enough to re-run it without the seed.

The first line is the header (game, configuration, seats); then, in the order
they happened, the chance draws, every action with its latency and the events it
caused, rejected actions, forfeits, bot log lines (and, where a seat's output
passed what the replay keeps of it, a ``cut`` record saying so); last, the result. ``verify``
re-simulates the game from the recorded draws and actions and names the first
place where anything differs.

A replay is written to ``NAME.partial`` and renamed when the match ends, so a
file without that suffix is always complete.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, BinaryIO, Literal

import msgspec

from protocol.messages import Outcome, Result, TimeControl
from referee.games import get_rules
from referee.games.base import ChanceDraw, ChanceMismatch, IllegalAction, ScriptedChance
from referee.private import create_private, make_private_dirs

__all__ = [
    "MAX_REPLAY_BYTES",
    "REPLAY_FORMAT",
    "ActionRecord",
    "ChanceRecord",
    "CutRecord",
    "ForfeitRecord",
    "Header",
    "LogRecord",
    "ReplayError",
    "ReplayMismatch",
    "ReplayRecord",
    "ReplayWriteFailed",
    "ReplayWriter",
    "ResultRecord",
    "SeatInfo",
    "encode_record",
    "read_header",
    "read_replay",
    "replay_mismatch",
    "tournament_match_id",
    "verify_replay",
]

REPLAY_FORMAT = 1


class ReplayError(ValueError):
    """A replay file that cannot be read."""


class ReplayMismatch(Exception):
    """Re-simulating a replay gave something other than what it records."""


class SeatInfo(msgspec.Struct, frozen=True, kw_only=True):
    """Who sat in a seat."""

    name: str
    command: list[str]


class Header(msgspec.Struct, tag="header", tag_field="type", kw_only=True):
    """The first line: what was played, by whom, under which clock."""

    format: int
    match: str
    game: str
    variants: dict[str, str]
    config: msgspec.Raw
    seats: list[SeatInfo]
    seed: int
    time: TimeControl
    illegal_action: str
    started: str
    clock: str = "wall"
    """What each decision's ``ms`` is: the referee's wall clock ("wall"), or the time the seat could
    have used ("cpu": its wall time less its waits for a CPU, or its tree's CPU time, the more; a
    seat without CPU accounting is charged wall time; referee.settings.Clock)."""


class ChanceRecord(msgspec.Struct, tag="chance", tag_field="type", kw_only=True):
    """Chance draws, in the order the engine made them."""

    draws: list[ChanceDraw]


class ActionRecord(msgspec.Struct, tag="action", tag_field="type", kw_only=True):
    """One decision: the action applied and what it caused.

    ``substituted`` marks an action the referee played for the seat (the pass
    after an illegal action under the "pass" policy). ``together`` marks an
    answer to a step of simultaneous moves: that step's answers follow one
    another in seat order, and the events of the whole step are the last one's.
    """

    seat: int
    request: int
    decision: str
    action: msgspec.Raw
    ms: float
    """What the decision was charged, in the header's ``clock``."""
    events: msgspec.Raw
    substituted: bool = False
    together: bool = False


class RejectedRecord(msgspec.Struct, tag="rejected", tag_field="type", kw_only=True):
    """An illegal action, as the bot sent it, and the rule it broke."""

    seat: int
    request: int
    action: msgspec.Raw
    rule: str
    message: str
    ms: float


class ForfeitRecord(msgspec.Struct, tag="forfeit", tag_field="type", kw_only=True):
    """A seat stopped playing: why, and the events its forfeit caused."""

    seat: int
    request: int
    kind: str
    reason: str
    events: msgspec.Raw


class LogRecord(msgspec.Struct, tag="log", tag_field="type", kw_only=True):
    """A line a bot sent for the record."""

    seat: int
    request: int
    message: str


class CutRecord(msgspec.Struct, tag="cut", tag_field="type", kw_only=True):
    """From here a seat's log lines and rejected actions are not kept: they passed a bound of the replay's.

    ``bound`` is "decision" (the rest of request ``request``'s) or "game" (the
    rest of the game's), ``limit`` that bound in bytes of the replay
    (``referee.settings.ReplayLimits``). Written by the referee, never by a bot: a
    log line that reads like it is still a log line.
    """

    seat: int
    request: int
    bound: Literal["decision", "game"]
    limit: int


class ResultRecord(msgspec.Struct, tag="result", tag_field="type", kw_only=True):
    """The last line: the result."""

    result: Result
    seconds: float = 0.0


ReplayRecord = (
    Header | ChanceRecord | ActionRecord | RejectedRecord | ForfeitRecord | LogRecord | CutRecord | ResultRecord
)

_encoder = msgspec.json.Encoder()
_record_decoder = msgspec.json.Decoder(ReplayRecord)


def encode_raw(value: Any) -> msgspec.Raw:
    return msgspec.Raw(_encoder.encode(value))


def encode_record(record: ReplayRecord) -> bytes:
    """A record as its line of the replay holds it, without the newline."""
    return _encoder.encode(record)


class ReplayWriteFailed(OSError):
    """A replay could not be written (disk full, folder not writable, ...)."""


class ReplayWriter:
    """Appends records to ``path.partial``; ``finish`` moves it into place.

    The file is readable by its owner only (``referee.private``): a replay holds
    the whole deal, and a sandboxed bot running as another user must not read
    its own game's. Neither name is ever overwritten: a replay that exists
    belongs to another match, and only that match may write it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.partial = path.with_name(path.name + ".partial")
        if path.exists() and not path.is_file():
            raise ReplayWriteFailed(f"replay {path}: exists and is not a regular file; choose another path")
        if path.exists() or path.is_symlink():
            raise ReplayWriteFailed(f"replay {path} already exists; choose another path or remove it")
        try:
            make_private_dirs(path.parent)
            fd = create_private(self.partial)
        except FileExistsError:
            raise ReplayWriteFailed(
                f"{self.partial} already exists (left by a match that stopped?); remove it or choose another path"
            ) from None
        except OSError as exc:
            raise ReplayWriteFailed(f"cannot write replay {self.partial}: {exc.strerror}") from None
        self._file: BinaryIO | None = os.fdopen(fd, "wb")

    def write(self, record: ReplayRecord) -> None:
        self.write_encoded(_encoder.encode(record))

    def write_encoded(self, record: bytes) -> None:
        """One record already encoded (``encode_record``): a caller that weighs it first encodes it once."""
        if self._file is not None:
            try:
                self._file.write(record + b"\n")
            except OSError as exc:
                self._fail(exc)

    def finish(self) -> None:
        if self._file is None:
            return
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
            _move_into_place(self.partial, self.path)
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        """Nothing half written: drop the partial file and say why."""
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None
        self.partial.unlink(missing_ok=True)
        raise ReplayWriteFailed(f"cannot write replay {self.path}: {exc.strerror or exc}") from None

    def abort(self) -> None:
        """Close without renaming: the ``.partial`` file stays for inspection."""
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                self.partial.unlink(missing_ok=True)
            self._file = None


def _move_into_place(partial: Path, path: Path) -> None:
    """Rename ``partial`` to ``path`` unless something is there already (FileExistsError)."""
    try:
        os.link(partial, path)
    except FileExistsError:
        raise
    except OSError:
        # A file system without hard links: a plain rename, after checking.
        if path.exists() or path.is_symlink():
            raise FileExistsError(17, "already exists", str(path)) from None
        os.rename(partial, path)
        return
    partial.unlink()


def tournament_match_id(tournament: str, game: int) -> str:
    """The match id of game ``game`` of the tournament whose id is ``tournament``.

    It is the replay header's ``match``, so a replay says which game of which
    tournament it is. Tournament ids are random per store (tournaments.store);
    the id holds no seed, and bots are sent it in ``start``.
    """
    return f"{tournament}#{game}"


def read_header(path: Path) -> Header:
    """The header (first line) of a replay file; ReplayError if there is none."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(1 << 20)
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        record = _record_decoder.decode(first)
    except msgspec.DecodeError:
        record = None
    if not isinstance(record, Header):
        raise ReplayError(f"{path}: does not start with a header line; is it a famiglia replay?")
    return record


def replay_mismatch(path: Path, tournament: str, game: int) -> str | None:
    """Why the replay at ``path`` is not game ``game`` of tournament ``tournament``; None if it is.

    The one check every report makes before it links a replay to a game: a
    replay folder shared by several tournaments, a file copied over another or
    a replay written before replays named their tournament all fail it.
    """
    try:
        header = read_header(path)
    except ReplayError as exc:
        return str(exc)
    expected = tournament_match_id(tournament, game)
    if header.match == expected:
        return None
    return f"{path} is match {header.match!r}, not this game ({expected!r}); not linked"


MAX_REPLAY_BYTES = 256 << 20
"""The most of a file read as a replay: a long game's is a few MiB; /dev/zero or an endless pipe has no end."""


def read_replay(path: Path) -> list[ReplayRecord]:
    """Every record of a replay file; ReplayError names the bad line."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_REPLAY_BYTES + 1)
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > MAX_REPLAY_BYTES:
        raise ReplayError(f"{path}: over {MAX_REPLAY_BYTES >> 20} MiB, more than any replay famiglia writes")
    records: list[ReplayRecord] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(_record_decoder.decode(line))
        except msgspec.DecodeError as exc:
            raise ReplayError(f"{path}:{number}: not a replay record: {exc}") from None
    if not records or not isinstance(records[0], Header):
        raise ReplayError(f"{path}: does not start with a header line; is it a famiglia replay?")
    if records[0].format != REPLAY_FORMAT:
        raise ReplayError(f"{path}: replay format {records[0].format}, this famiglia reads {REPLAY_FORMAT}")
    return records


def verify_replay(records: list[ReplayRecord]) -> Result:
    """Re-run a replay through the engine; the result, or ReplayMismatch at the first difference."""
    header = records[0]
    assert isinstance(header, Header)
    rules = get_rules(header.game)
    try:
        config = msgspec.json.decode(header.config, type=rules.config_type)
    except msgspec.DecodeError as exc:
        raise ReplayMismatch(f"header: the configuration does not decode: {exc}") from None
    draws = [draw for record in records if isinstance(record, ChanceRecord) for draw in record.draws]
    chance = ScriptedChance(draws)
    action_decoder = msgspec.json.Decoder(rules.action_type)
    try:
        state = rules.new_game(len(header.seats), config, chance)
        for number, record in enumerate(records[1:], start=2):
            where = f"line {number}"
            match record:
                case ActionRecord(seat=seat, action=raw_action, events=raw_events):
                    decision = state.decision()
                    if decision is None or decision.seat != seat:
                        expected = "the game is over" if decision is None else f"seat {decision.seat} to decide"
                        raise ReplayMismatch(f"{where}: the replay has seat {seat} acting, the engine has {expected}")
                    action = action_decoder.decode(raw_action)
                    try:
                        events = state.apply(seat, action)
                    except IllegalAction as exc:
                        raise ReplayMismatch(f"{where}: seat {seat}'s action is illegal on re-run: {exc}") from None
                    _same_events(where, events, raw_events)
                case ForfeitRecord(seat=seat, events=raw_events):
                    _same_events(where, state.forfeit(seat), raw_events)
                case ResultRecord(result=recorded):
                    if not state.is_over():
                        raise ReplayMismatch(f"{where}: the replay ends the game, the engine has it still running")
                    outcome = state.outcome()
                    for field in Outcome.__struct_fields__:  # what the engine decides, not the referee's terminations
                        mine, theirs = getattr(outcome, field), getattr(recorded, field)
                        if mine != theirs:
                            raise ReplayMismatch(f"{where}: result {field}: replay {theirs}, re-run {mine}")
                    if not chance.exhausted:
                        raise ReplayMismatch(f"{where}: the replay holds chance draws the game never used")
                    return recorded
                case _:
                    pass
    except ChanceMismatch as exc:
        raise ReplayMismatch(f"chance: {exc}") from None
    raise ReplayMismatch("the replay has no result line (the match did not finish)")


def _same_events(where: str, events: list[Any], raw: msgspec.Raw) -> None:
    mine = _encoder.encode(events)
    if mine != bytes(raw):
        recorded = msgspec.json.decode(raw)
        rerun = msgspec.json.decode(mine)
        for index, (a, b) in enumerate(zip(recorded, rerun, strict=False)):
            if a != b:
                raise ReplayMismatch(f"{where}: event {index}: replay {a}, re-run {b}")
        raise ReplayMismatch(f"{where}: replay has {len(recorded)} events, re-run {len(rerun)}")
