"""Every message of the famiglia protocol, one tagged msgspec Struct each.

Messages are JSON objects, one per line; the ``type`` field names the message.
The game-specific parts (a seat's view, the events, an action) are type
parameters, so the same Structs describe every game: the referee encodes them as
they are, and ``protocol/schema.json`` is generated from their parametrised
forms (``Request[VendettaView, VendettaEvent, VendettaAction]``...).

New fields get defaults and go at the end, so older bots keep working.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

import msgspec

__all__ = [
    "DEFAULT_MAX_LINE",
    "PROTOCOL_VERSION",
    "Action",
    "BotMessage",
    "End",
    "IllegalActionPolicy",
    "Log",
    "Outcome",
    "Ready",
    "Rejected",
    "Request",
    "Result",
    "Start",
    "Termination",
    "TimeControl",
]

DEFAULT_MAX_LINE = 1 << 20
"""The longest line a bot may send, in bytes, unless the host sets another (1 MiB). Here, in a
module without Trio, so that the command line's settings can name it without importing Trio."""

PROTOCOL_VERSION = 1

IllegalActionPolicy = Literal["forfeit", "pass"]
"""What an illegal action costs a seat: its game ("forfeit"), or that turn, played as a pass ("pass")."""

ViewT = TypeVar("ViewT")
EventT = TypeVar("EventT")
ActionT = TypeVar("ActionT")
ConfigT = TypeVar("ConfigT")


class TimeControl(msgspec.Struct, frozen=True, kw_only=True):
    """The clock a bot plays under, in milliseconds of the referee's clock."""

    startup_ms: int = 10_000
    """From process start until the ready line."""
    move_ms: int = 1_000
    """Per decision, before the bank is touched."""
    bank_ms: int = 5_000
    """Overage bank for the whole game: time over move_ms is taken from here."""


class Termination(msgspec.Struct, frozen=True, kw_only=True):
    """Why a seat stopped playing before the end: the kind and a readable reason."""

    seat: int
    kind: Literal["timeout", "crash", "illegal", "protocol", "stall", "resigned"]
    reason: str
    request: int = 0
    """The request id it failed on (0 for the handshake)."""


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """How a game ended, as its engine ranks it: one entry per seat in every list.

    ``ranks`` are 1-based and shared on ties (1, 1, 3, 4). ``scores`` are the
    game's points (Vendetta) or final score (Sicilianos). ``stats`` carries other
    per-seat figures worth showing, e.g. ``{"districts": [...]}``. ``ended_by``
    names why the game stopped: "victory", "round_limit", "godfather", ...

    Declared here, on the wire contract's floor, so that ``Result`` can extend
    it: the engines (referee.games.base) return it, the referee sends it on.
    """

    ranks: list[int]
    scores: list[int]
    winners: list[int]
    forfeited: list[int]
    ended_by: str
    stats: dict[str, list[int]] = {}


class Result(Outcome, frozen=True, kw_only=True):
    """The final result of a match, one entry per seat in each list."""

    # The engine's ``Outcome`` and, added here, why seats stopped playing before the end.

    terminations: list[Termination] = []


# --- referee -> bot ---------------------------------------------------------


class Start(msgspec.Struct, Generic[ConfigT], tag="start", tag_field="type", kw_only=True):
    """A game begins: which game, which seat this bot has, and the clock."""

    protocol: int
    game: str
    match: str
    seat: int
    players: int
    names: list[str]
    variants: dict[str, str]
    config: ConfigT
    time: TimeControl


class Request(msgspec.Struct, Generic[ViewT, EventT, ActionT], tag="request", tag_field="type", kw_only=True):
    """The referee needs a decision from this bot now.

    ``view`` is everything the seat may know (a stateless bot needs nothing
    else); ``events`` are what happened since this bot's previous request.
    ``options`` lists every legal action when they are few: answer with one of
    them unchanged. ``constraints`` describes a large decision instead.
    """

    id: int
    decision: str
    view: ViewT
    events: list[EventT]
    options: list[ActionT] | None = None
    constraints: Any = None
    time_ms: int = 0
    """This decision's own allowance before the bank is used."""
    bank_ms: int = 0
    """What is left in the overage bank."""


class Rejected(msgspec.Struct, tag="rejected", tag_field="type", kw_only=True):
    """The bot's last action broke a rule; what it costs is in ``penalty``."""

    id: int
    rule: str
    message: str
    penalty: IllegalActionPolicy


class End(msgspec.Struct, Generic[EventT], tag="end", tag_field="type", kw_only=True):
    """The game is over for this bot. Another ``start`` may follow on the same process."""

    match: str
    seat: int
    result: Result
    events: list[EventT] = []


# --- bot -> referee ---------------------------------------------------------


class Ready(msgspec.Struct, tag="ready", tag_field="type", kw_only=True):
    """The bot has read ``start`` and is ready to play."""

    name: str = ""


class Action(msgspec.Struct, Generic[ActionT], tag="action", tag_field="type", kw_only=True):
    """The bot's answer to request ``id``."""

    id: int
    action: ActionT


class Log(msgspec.Struct, tag="log", tag_field="type", kw_only=True):
    """A line for the replay (the bot's reasoning, say); it does not answer anything."""

    message: str


# What the referee decodes from a bot: the action stays raw JSON until the game's
# own decoder reads it, so one decoder serves every game.
BotMessage = Ready | Action[msgspec.Raw] | Log
