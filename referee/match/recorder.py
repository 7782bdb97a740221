"""Writing a replay as a game is played: the header, then each thing that happened, then the result.

``ReplayRecorder`` is the one writer of replay files (referee.replay holds their
format and their reading): the referee's match writes through it, and so does
anything else that plays a game and wants it on record, such as the game
contract suite and the tests' replay factory. It keeps the chance draws in
step: the draws an action or a forfeit caused follow its record, so a reader
meets them in the order they were made. ``NullRecorder`` is the same surface
writing nothing, for a match without a replay: the match calls its recorder
the same way either way. What a seat's log lines and rejected actions take of
the file is weighed as they are written (``referee.replay_budget``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import msgspec
import trio

from protocol.messages import Result
from referee.games.base import ChanceDraw
from referee.replay import (
    ActionRecord,
    ChanceRecord,
    ForfeitRecord,
    Header,
    LogRecord,
    RejectedRecord,
    ReplayWriter,
    ResultRecord,
    encode_raw,
    encode_record,
)
from referee.replay_budget import ReplayBudget
from referee.settings import DEFAULT_SETTINGS, ReplayLimits

__all__ = ["LOG_CHARS", "MatchRecorder", "NullRecorder", "ReplayRecorder"]

LOG_CHARS = 4096
"""The most of a bot's log line a replay keeps."""


_NOT_KEPT = encode_raw(None)
"""A rejected action's place when the seat's budget had no room for it (a ``cut`` record says so)."""


class MatchRecorder(Protocol):
    """What a match tells its record, in the order it happens."""

    def begin(self, header: Header) -> None: ...

    def action(
        self, seat: int, request: int, decision: str, action: Any, seconds: float, events: Sequence[Any], *,
        substituted: bool = False, together: bool = False,
    ) -> None: ...  # fmt: skip

    def rejected(
        self, seat: int, request: int, action: msgspec.Raw, rule: str, message: str, seconds: float
    ) -> None: ...

    def forfeit(self, seat: int, request: int, kind: str, reason: str, events: Sequence[Any]) -> None: ...

    def log(self, seat: int, request: int, message: str) -> None: ...

    def result(self, result: Result, seconds: float) -> None: ...

    def close(self) -> None: ...

    async def aclose(self) -> None: ...

    def abort(self) -> None: ...


class NullRecorder:
    """A record that keeps nothing: the match without a replay."""

    __slots__ = ()

    def begin(self, header: Header) -> None:
        pass

    def action(
        self, seat: int, request: int, decision: str, action: Any, seconds: float, events: Sequence[Any], *,
        substituted: bool = False, together: bool = False,
    ) -> None:  # fmt: skip
        pass

    def rejected(self, seat: int, request: int, action: msgspec.Raw, rule: str, message: str, seconds: float) -> None:
        pass

    def forfeit(self, seat: int, request: int, kind: str, reason: str, events: Sequence[Any]) -> None:
        pass

    def log(self, seat: int, request: int, message: str) -> None:
        pass

    def result(self, result: Result, seconds: float) -> None:
        pass

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass

    def abort(self) -> None:
        pass


class ReplayRecorder:
    """Writes a replay to ``path`` (``path.partial`` until ``close``); ``draws`` are the game's chance
    draws as they are made (``RecordingChance.draws``), written after what caused them.

    ``ReplayWriteFailed`` (an OSError) when the file cannot be written; after
    it nothing half written is left. ``limits`` bound what each seat's log
    lines and rejected actions take of the file (``referee.replay_budget``).
    """

    __slots__ = ("_budget", "_draws", "_limits", "_writer", "_written", "path")

    def __init__(self, path: Path, draws: list[ChanceDraw], limits: ReplayLimits = DEFAULT_SETTINGS.replay) -> None:
        self.path = path
        self._writer = ReplayWriter(path)
        self._draws = draws
        self._written = 0  # how many of the draws are on record
        self._limits = limits
        self._budget = ReplayBudget(limits, 0)  # sized by the header's seats in begin

    def begin(self, header: Header) -> None:
        self._budget = ReplayBudget(self._limits, len(header.seats))
        self._writer.write(header)
        self._flush_draws()

    def action(
        self, seat: int, request: int, decision: str, action: Any, seconds: float, events: Sequence[Any], *,
        substituted: bool = False, together: bool = False,
    ) -> None:  # fmt: skip
        """A decision: the action applied (as the bot sent it, or an action to encode), what it was charged."""
        self._writer.write(
            ActionRecord(
                seat=seat,
                request=request,
                decision=decision,
                action=action if isinstance(action, msgspec.Raw) else encode_raw(action),
                ms=round(seconds * 1000, 3),
                events=encode_raw(events),
                substituted=substituted,
                together=together,
            )
        )
        self._flush_draws()

    def rejected(self, seat: int, request: int, action: msgspec.Raw, rule: str, message: str, seconds: float) -> None:
        """An illegal action, as the bot sent it while the seat's budget has room for it; else without it."""
        record = RejectedRecord(
            seat=seat, request=request, action=action, rule=rule, message=message, ms=round(seconds * 1000, 3)
        )
        line = encode_record(record)
        kept, cut = self._budget.keep(seat, request, len(line) + 1)
        if kept:
            self._writer.write_encoded(line)
            return
        # That there was one, and the rule it broke, is the referee's to say: only the bot's bytes go.
        if cut is not None:
            self._writer.write(cut)
        record.action, record.message = _NOT_KEPT, message[:LOG_CHARS]
        self._writer.write(record)

    def forfeit(self, seat: int, request: int, kind: str, reason: str, events: Sequence[Any]) -> None:
        self._writer.write(
            ForfeitRecord(seat=seat, request=request, kind=kind, reason=reason, events=encode_raw(events))
        )
        self._flush_draws()

    def log(self, seat: int, request: int, message: str) -> None:
        line = encode_record(LogRecord(seat=seat, request=request, message=message[:LOG_CHARS]))
        kept, cut = self._budget.keep(seat, request, len(line) + 1)
        if kept:
            self._writer.write_encoded(line)
        elif cut is not None:
            self._writer.write(cut)

    def result(self, result: Result, seconds: float) -> None:
        self._writer.write(ResultRecord(result=result, seconds=round(seconds, 3)))

    def close(self) -> None:
        """Flush, fsync and move the file into place."""
        self._writer.finish()

    async def aclose(self) -> None:
        """``close`` in a worker thread: its fsync is milliseconds of disk wait that must not
        stall the other games' clocks on the Trio thread."""
        await trio.to_thread.run_sync(self.close)

    def abort(self) -> None:
        """Close without moving into place: the ``.partial`` file stays for inspection."""
        self._writer.abort()

    def _flush_draws(self) -> None:
        draws = self._draws
        if len(draws) > self._written:
            self._writer.write(ChanceRecord(draws=draws[self._written :]))
            self._written = len(draws)
