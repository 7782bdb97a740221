"""A small library for writing famiglia bots in Python.

Write a class with a ``decide`` method and hand it to ``serve``::

    from protocol.bot import serve

    class FirstOption:
        name = "first-option"

        def decide(self, request):
            return request.options[0]

    serve(FirstOption())

``serve`` reads the referee's lines from stdin, answers ``start`` with ``ready``
and every ``request`` with an ``action``, and returns when stdin closes. One
process may play several games in a row. Views, events and options arrive as
plain JSON values (dicts and lists); convert them with ``msgspec.convert`` to
an engine's types when you want them typed.
"""

from __future__ import annotations

import sys
from typing import Any, BinaryIO, Protocol

import msgspec

from protocol.messages import Action, End, Ready, Rejected, Request, Start

__all__ = ["Bot", "RefereeMessage", "serve"]

RefereeMessage = Start[Any] | Request[Any, Any, Any] | Rejected | End[Any]
_KNOWN = frozenset({"start", "request", "rejected", "end"})


class _Typed(msgspec.Struct):
    """Just the ``type`` of a message, to tell unknown messages from broken ones."""

    type: str


class Bot(Protocol):
    """What ``serve`` needs: a name and a decision. ``start``/``end``/``rejected`` are optional."""

    name: str

    def decide(self, request: Request[Any, Any, Any]) -> Any: ...


def serve(bot: Bot, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Play games over stdin/stdout until the referee closes stdin."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout.buffer
    decoder = msgspec.json.Decoder(RefereeMessage)
    peek = msgspec.json.Decoder(_Typed)
    encoder = msgspec.json.Encoder()

    def send(message: Any) -> None:
        sink.write(encoder.encode(message) + b"\n")
        sink.flush()

    for line in source:
        try:
            message = decoder.decode(line)
        except msgspec.ValidationError:
            # A message type from a later protocol version: skip it, as the
            # protocol asks. A known type with a bad shape is a real error.
            if peek.decode(line).type in _KNOWN:
                raise
            continue
        match message:
            case Start():
                hook = getattr(bot, "start", None)
                if hook is not None:
                    hook(message)
                send(Ready(name=bot.name))
            case Request():
                send(Action(id=message.id, action=bot.decide(message)))
            case Rejected():
                hook = getattr(bot, "rejected", None)
                if hook is not None:
                    hook(message)
            case End():
                hook = getattr(bot, "end", None)
                if hook is not None:
                    hook(message)
