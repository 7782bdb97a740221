"""Framing and decoding: UTF-8 JSON, one object per line, with a hard bound on a line's length.

A line longer than the bound is a ``LineTooLong`` protocol error; every decoding
failure is a ``ProtocolViolation``; nothing else escapes. Reading lines off a
pipe within that bound is the referee's job (referee.pipe); this module says
what a line may be and what it means.

Before a line is decoded it is checked for what the JSON decoder itself would
not survive or would pass through unchecked: nesting deeper than
``MAX_DEPTH`` (the decoder recurses once per level), bytes that are not UTF-8
anywhere in the line (the decoder checks only the strings it keeps), and
escaped lone surrogates. Each check costs a few hundred nanoseconds on a
normal answer: the exact depth scan runs only for a line holding more opening
brackets than the limit.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from protocol.messages import DEFAULT_MAX_LINE, BotMessage, Log
from protocol.untrusted import quote

__all__ = [
    "DEFAULT_MAX_LINE",
    "MAX_DEPTH",
    "BadMessage",
    "LineTooLong",
    "ProtocolViolation",
    "decode_bot_message",
    "encode_message",
    "log_message",
    "nesting_depth",
]


MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a line from a bot may have (the message object is level 1)."""


class ProtocolViolation(Exception):
    """A bot sent something that is not a valid protocol message."""


class LineTooLong(ProtocolViolation):
    """A line exceeded the length limit before its newline."""


class BadMessage(ProtocolViolation):
    """A line that is not valid JSON, not UTF-8, or not a message of the right shape."""


_encoder = msgspec.json.Encoder()
_bot_decoder = msgspec.json.Decoder(BotMessage)


def encode_message(message: Any) -> bytes:
    """One message as a complete line, newline included."""
    return _encoder.encode(message) + b"\n"


def decode_bot_message(line: bytes) -> BotMessage:
    """Decode one line from a bot; BadMessage says what is wrong with it."""
    # One pass keeps the bytes the checks need: opening brackets and backslashes.
    # Nesting can be no deeper than the count of opening brackets, so the exact
    # scan runs only for lines with more of them than the limit.
    special = line.translate(None, _NOT_SPECIAL)
    if len(special) > MAX_DEPTH and len(special) - special.count(b"\\") > MAX_DEPTH:
        depth = nesting_depth(line)
        if depth > MAX_DEPTH:
            raise BadMessage(f"nested {depth} levels deep; the limit is {MAX_DEPTH}: {quote(line)}")
    if not line.isascii():
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadMessage(f"not UTF-8 (byte {exc.start}): {quote(line)}") from None
    if b"\\" in special and _SURROGATE_ESCAPE.search(line) is not None:
        # Kept raw (an unknown field, the action) such an escape would reach the
        # replay, which every JSON reader must be able to read back.
        try:
            msgspec.json.decode(line)
        except msgspec.DecodeError as exc:
            raise BadMessage(f"not valid JSON (a lone surrogate escape?): {exc}: {quote(line)}") from None
    try:
        message: BotMessage = _bot_decoder.decode(line)
        return message
    except msgspec.ValidationError as exc:
        raise BadMessage(f"wrong message shape: {exc}") from None
    except msgspec.DecodeError as exc:
        raise BadMessage(f"not valid JSON: {exc}: {quote(line)}") from None
    except UnicodeDecodeError:  # pragma: no cover - the line was checked above
        raise BadMessage(f"not UTF-8: {quote(line)}") from None


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_NOT_SPECIAL = bytes(b for b in range(256) if b not in b"[{\\")


_LOG_PREFIXES = (b'{"type":"log","message":"', b'{"type": "log", "message": "')
_NOT_CONTROL = bytes(range(32, 256))
_string_decoder = msgspec.json.Decoder(str)


def log_message(line: bytes, keep: int) -> Log | None:
    """A log line as ``decode_bot_message`` would give it, its message cut to ``keep`` characters, for
    less than that costs; None when the line is not a log line in the usual shape.

    The usual shape is what encoders write: ``{"type":"log","message":"..."}``,
    with or without a space after each colon and comma. Its message is read as
    one JSON string, with none of the checks a whole message needs (the nesting
    scan of a line of brackets costs ten times its decoding). A message without
    a backslash is not even decoded past what is kept: it is checked whole in
    passes done in C (no quote, no control character, UTF-8) and only its first
    ``keep`` characters are taken. A line in any other shape, or failing a
    check, gets None: the caller decodes it in full, which names what is wrong.
    """
    prefix = next((prefix for prefix in _LOG_PREFIXES if line.startswith(prefix)), None)
    if prefix is None or not line.endswith(b'"}'):
        return None
    body = line[len(prefix) : -2]
    if b"\\" in body:  # escapes: the string decoder checks and reads them, in C
        try:
            return Log(message=_string_decoder.decode(b'"' + body + b'"')[:keep])
        except msgspec.DecodeError:
            return None
    if b'"' in body or body.translate(None, _NOT_CONTROL):
        return None
    if not body.isascii():
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    # At most 4 bytes a character: the cut may split the last one, which "ignore" drops.
    return Log(message=body[: keep * 4].decode("utf-8", "ignore")[:keep])


def nesting_depth(line: bytes) -> int:
    """How deep arrays and objects nest in ``line``, brackets inside strings not counted.

    For a line that is not valid JSON, at least the depth a decoder reaches
    before it finds the error. Linear in the line's length and done in C, so a
    hostile line costs about what decoding it would: escaped backslashes and
    quotes are dropped (a run of backslashes pairs up from its left, as in a
    decoder), then numpy marks what lies between quotes as string and sums
    the brackets outside them.
    """
    import numpy as np  # only for lines with many brackets: keep it off the import path

    data = np.frombuffer(line.replace(b"\\\\", b"").replace(b'\\"', b""), np.uint8)
    if not len(data):
        return 0
    outside = (np.cumsum(data == 34, dtype=np.int32) & 1) == 0  # an even number of quotes so far
    steps = ((data == 91) | (data == 123)).astype(np.int8) - ((data == 93) | (data == 125)).astype(np.int8)
    steps *= outside
    return max(0, int(np.cumsum(steps, dtype=np.int32).max()))
