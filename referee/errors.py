"""The ways a bot can fail. Each is contained: the seat forfeits, the referee goes on."""

from __future__ import annotations

from typing import Literal

from protocol.untrusted import bounded

__all__ = [
    "BotCrashed",
    "BotError",
    "BotIllegalAction",
    "BotProtocolError",
    "BotResigned",
    "BotStalled",
    "BotTimedOut",
    "TerminationKind",
    "internal_error",
]

TerminationKind = Literal["timeout", "crash", "illegal", "protocol", "stall", "resigned"]


class BotError(Exception):
    """A bot misbehaved; ``kind`` names the termination it causes."""

    kind: TerminationKind = "crash"

    def __init__(self, reason: str) -> None:
        # Reasons quote what bots sent (excerpts, ids, stderr lines): whatever
        # built this one, what is recorded is bounded and printable.
        self.reason = bounded(reason)
        super().__init__(self.reason)


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


class BotResigned(BotError):
    """The seat gave the game up on purpose (a person at the human seat): a forfeit, not a fault."""

    kind = "resigned"


class BotIllegalAction(BotError):
    """The bot's action broke a rule of the game."""

    kind = "illegal"

    def __init__(self, reason: str, rule_id: str) -> None:
        super().__init__(reason)
        self.rule_id = rule_id


def internal_error(exc: BaseException) -> BotProtocolError:
    """The last line of defence: an unexpected exception while handling one bot's message.

    The message is what caused it, so the seat pays, with a reason that says
    the harness failed too (a bug to report, not a rule the bot broke).
    """
    return BotProtocolError(f"internal error handling this bot's message: {type(exc).__name__}: {exc}")
