"""What a seat may put in its game's replay, weighed in the bytes the replay holds.

A bot chooses the text of its log lines and the bytes of the actions it sends,
and the replay keeps them as JSON, where a control character takes six bytes
(``\\u0001``): a hundred log lines of 4,096 such characters are 2.4 MB for one
decision. Counting lines (``max_messages_per_decision``) and characters
(``LOG_CHARS``) bounds neither a decision's bytes nor a game's, and a replay past
``MAX_REPLAY_BYTES`` can no longer be read back. So:

- ``ReplayBudget`` weighs each log line and rejected action of a seat, encoded
  as the replay will hold it, against what the seat may still put in for the
  request (``ReplayLimits.kb_per_decision``) and for the game (``kb_per_game``).
  What does not fit is left out, and so is the rest of that request's (or that
  game's) output: one ``CutRecord`` says from where, so a reader knows the
  record is incomplete and why. The game itself goes on: a cut costs nothing but text.
- All the seats together take at most ``SEATS_SHARE`` of a replay, whatever the
  settings and the table size: at a table so large that ``kb_per_game`` per seat
  would pass it, each seat gets its part of the share instead (``seat_game_bytes``).
- An action is recorded as the bot sent it when that is short
  (``ACTION_AS_SENT_BYTES``), else as the engine decoded it, encoded again
  (``recorded_action``): the bytes a bot pads a legal action with (spaces,
  fields the game does not read) stay out of the replay.

Everything else in a replay is the engine's (events, chance draws, the actions
it accepted), the referee's (a forfeit's reason, at most ``MAX_REASON_CHARS``,
a rejected action's rule and message, the cut records) or the header: bounded
by the game's length and the table, not by what a bot sends.
"""

from __future__ import annotations

from typing import Any

import msgspec

from referee.replay import MAX_REPLAY_BYTES, CutRecord, encode_raw
from referee.settings import ReplayLimits

__all__ = [
    "ACTION_AS_SENT_BYTES",
    "SEATS_SHARE",
    "ReplayBudget",
    "describe_cut",
    "recorded_action",
    "seat_game_bytes",
]

SEATS_SHARE = MAX_REPLAY_BYTES // 2
"""The most all seats' log lines and rejected actions take of one replay; the rest is room for the
game's own records, which for the longest game shipped are a few MiB."""

ACTION_AS_SENT_BYTES = 1024
"""An action sent in more bytes than this is recorded as the engine read it (encoded again), not as sent."""


def seat_game_bytes(limits: ReplayLimits, seats: int) -> int:
    """What one seat may put in the replay of a game at a table of ``seats``, in bytes."""
    return min(limits.kb_per_game << 10, SEATS_SHARE // max(seats, 1))


def recorded_action(raw: msgspec.Raw, action: Any) -> msgspec.Raw:
    """The bytes the replay keeps of an action the engine accepted: ``raw`` as the bot sent it,
    unless that is longer than ``ACTION_AS_SENT_BYTES``; then ``action`` (its decoded value) encoded again."""
    return raw if len(raw) <= ACTION_AS_SENT_BYTES else encode_raw(action)


class ReplayBudget:
    """Each seat's room in the replay for the current request and for the rest of the game."""

    __slots__ = ("_cut_request", "_game_cut", "_left", "_request", "_used", "decision_bytes", "game_bytes")

    def __init__(self, limits: ReplayLimits, seats: int) -> None:
        self.game_bytes = seat_game_bytes(limits, seats)
        self.decision_bytes = min(limits.kb_per_decision << 10, self.game_bytes)
        self._left = [self.game_bytes] * seats  # what each seat may still put in this game
        self._request = [-1] * seats  # the request each seat's ``_used`` counts for
        self._used = [0] * seats  # bytes kept of that request's output
        self._cut_request = [-1] * seats  # the request whose output was cut (and said so)
        self._game_cut = [False] * seats  # the rest of the game's output is cut (and said so)

    def keep(self, seat: int, request: int, size: int) -> tuple[bool, CutRecord | None]:
        """Whether ``size`` more bytes of ``seat``'s output for ``request`` are kept; and, when they are
        not, the record that says so if it is the first of that request's (or the game's) to be cut.

        A cut lasts: once a line did not fit, nothing more of that request (or of
        that game) is kept, so the record's "from here" stays true even when a
        shorter line would still have fitted.
        """
        if self._game_cut[seat]:
            return False, None
        if request != self._request[seat]:
            self._request[seat] = request
            self._used[seat] = 0
        if self._cut_request[seat] == request:
            return False, None
        used = self._used[seat] + size
        if used > self.decision_bytes:
            self._cut_request[seat] = request
            return False, CutRecord(seat=seat, request=request, bound="decision", limit=self.decision_bytes)
        if size > self._left[seat]:
            self._game_cut[seat] = True
            return False, CutRecord(seat=seat, request=request, bound="game", limit=self.game_bytes)
        self._used[seat] = used
        self._left[seat] -= size
        return True, None


def describe_cut(cut: CutRecord) -> str:
    """What a cut record means, in a sentence for people (``famiglia replay show``, the viewer)."""
    size = f"{cut.limit >> 10} KiB" if cut.limit % 1024 == 0 else f"{cut.limit} bytes"
    what = f"seat {cut.seat}'s log lines and rejected actions"
    if cut.bound == "decision":
        return f"{what} for request {cut.request} past {size} are not kept (the replay's bound per decision)"
    return f"{what} from request {cut.request} on are not kept: they passed {size}, the replay's bound per game"
