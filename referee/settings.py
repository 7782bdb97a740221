"""The referee's settings: clocks, bounds and penalties, all with sane defaults."""

from __future__ import annotations

import os
from typing import Literal

import msgspec

from protocol.codec import DEFAULT_MAX_LINE
from protocol.messages import TimeControl

__all__ = ["RefereeSettings"]

# Variables a bot may inherit from the referee's environment; everything else
# (tokens, credentials, the referee's own configuration) stays out of reach.
_INHERITED_ENV = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "SYSTEMROOT", "PYTHONPATH", "VIRTUAL_ENV")


class RefereeSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How one match is refereed."""

    time: TimeControl = TimeControl()
    margin_ms: int = 50
    """Added to every deadline, for the harness's own scheduling noise."""
    max_line_bytes: int = DEFAULT_MAX_LINE
    """The longest line a bot may send; a longer one is a protocol error."""
    stderr_bytes: int = 64 * 1024
    """How much of each bot's stderr is kept per game (the last bytes)."""
    max_messages_per_decision: int = 100
    """Log lines a bot may send before answering one request; more is a flood."""
    illegal_action: Literal["forfeit", "pass"] = "forfeit"
    """What an illegal action costs: the game, or only this turn."""
    grace_ms: int = 500
    """How long a bot gets to exit after its input closes, and again after SIGTERM."""
    game_wall_s: float = 0.0
    """A limit on one whole game in seconds (0: none beyond the per-decision clocks)."""

    def bot_environment(self) -> dict[str, str]:
        env = {key: os.environ[key] for key in _INHERITED_ENV if key in os.environ}
        env["PYTHONUNBUFFERED"] = "1"
        env["FAMIGLIA_PROTOCOL"] = "1"
        return env
