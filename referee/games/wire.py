"""The two bases of a game's tagged wire Structs: its actions and its events.

Every action a bot sends and every event it is told about is a msgspec Struct
in a tagged union whose tag goes in the field ``"type"`` (the name a bot reads,
protocol/PROTOCOL.md). Declaring that once here, on a base class, gives every
subclass the same header: msgspec passes a base's ``tag_field``, ``frozen`` and
``gc`` settings on to its subclasses, so a game writes only its own tag:

    class Played(Event, tag="played"):
        seat: int

The bytes on the wire are those of a Struct declared with the whole header
(``frozen=True, gc=False, tag="played", tag_field="type"``): the tests of the
games' wire types and protocol/schema.json hold them to it.

Both are frozen (an event or action is a fact, shared between the referee, the
replay and the views without copying) and untracked by the garbage collector
(they hold no cycles, and games make many). ``dataclass_transform`` tells type
checkers what msgspec does at run time: a subclass is frozen too.
"""

from __future__ import annotations

from typing import dataclass_transform

import msgspec

__all__ = ["Action", "Event"]


@dataclass_transform(frozen_default=True)
class Action(msgspec.Struct, frozen=True, gc=False, tag_field="type"):
    """The base of a game's actions: subclass it with ``tag="..."``, the action's wire name."""


@dataclass_transform(frozen_default=True)
class Event(msgspec.Struct, frozen=True, gc=False, tag_field="type"):
    """The base of a game's events: subclass it with ``tag="..."``, the event's wire name."""
