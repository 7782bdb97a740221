"""The ways a bot can fail. Each is contained: the seat forfeits, the referee goes on."""

from __future__ import annotations

from typing import Literal

__all__ = [
    "BotCrashed",
    "BotError",
    "BotIllegalAction",
    "BotProtocolError",
    "BotStalled",
    "BotTimedOut",
    "TerminationKind",
]

TerminationKind = Literal["timeout", "crash", "illegal", "protocol", "stall"]


class BotError(Exception):
    """A bot misbehaved; ``kind`` names the termination it causes."""

    kind: TerminationKind = "crash"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class BotTimedOut(BotError):
    """The bot did not answer within its time (decision limit plus bank)."""

    kind = "timeout"


class BotCrashed(BotError):
    """The bot exited, or could not be started, or stopped reading."""

    kind = "crash"


class BotStalled(BotError):
    """The bot closed its output but keeps running: it can never answer again."""

    kind = "stall"


class BotProtocolError(BotError):
    """The bot sent bad JSON, a wrong message, a wrong request id, or too much."""

    kind = "protocol"


class BotIllegalAction(BotError):
    """The bot's action broke a rule of the game."""

    kind = "illegal"

    def __init__(self, reason: str, rule_id: str) -> None:
        super().__init__(reason)
        self.rule_id = rule_id
