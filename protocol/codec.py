"""Framing: UTF-8 JSON, one object per line, with a hard bound on a line's length.

``LineReader`` never holds more than ``max_line`` bytes of an unfinished line:
a longer line is a ``LineTooLong`` protocol error, not a memory problem for the
referee. Every decoding failure is a ``ProtocolViolation``; nothing else escapes.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from protocol.messages import BotMessage

__all__ = [
    "DEFAULT_MAX_LINE",
    "BadMessage",
    "LineTooLong",
    "LineReader",
    "ProtocolViolation",
    "StreamClosed",
    "decode_bot_message",
    "encode_message",
]

DEFAULT_MAX_LINE = 1 << 20  # 1 MiB


class ProtocolViolation(Exception):
    """A bot sent something that is not a valid protocol message."""


class LineTooLong(ProtocolViolation):
    """A line exceeded the length limit before its newline."""


class BadMessage(ProtocolViolation):
    """A line that is not valid JSON, not UTF-8, or not a message of the right shape."""


class StreamClosed(Exception):
    """The bot closed its output (or exited) before finishing a line."""


class ByteSource(Protocol):
    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray: ...


_encoder = msgspec.json.Encoder()
_bot_decoder = msgspec.json.Decoder(BotMessage)


def encode_message(message: Any) -> bytes:
    """One message as a complete line, newline included."""
    return _encoder.encode(message) + b"\n"


def decode_bot_message(line: bytes) -> BotMessage:
    """Decode one line from a bot; BadMessage says what is wrong with it."""
    try:
        message: BotMessage = _bot_decoder.decode(line)
        return message
    except msgspec.ValidationError as exc:
        raise BadMessage(f"wrong message shape: {exc}") from None
    except msgspec.DecodeError as exc:
        raise BadMessage(f"not valid JSON: {exc}: {_excerpt(line)}") from None
    except UnicodeDecodeError:  # pragma: no cover - msgspec reports this as DecodeError
        raise BadMessage(f"not UTF-8: {_excerpt(line)}") from None


def _excerpt(line: bytes, limit: int = 80) -> str:
    text = line[:limit].decode("utf-8", "backslashreplace")
    return repr(text) + ("..." if len(line) > limit else "")


class LineReader:
    """Reads newline-terminated lines from a byte stream, bounded by ``max_line``."""

    __slots__ = ("_source", "_buffer", "_scanned", "max_line", "bytes_read")

    def __init__(self, source: ByteSource, max_line: int = DEFAULT_MAX_LINE) -> None:
        self._source = source
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer already searched for a newline
        self.max_line = max_line
        self.bytes_read = 0

    async def readline(self) -> bytes:
        """The next line without its newline; StreamClosed at the end of the stream."""
        while True:
            newline = self._buffer.find(b"\n", self._scanned)
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                self._scanned = 0
                if len(line) > self.max_line:
                    raise LineTooLong(f"line of {len(line)} bytes exceeds the limit of {self.max_line}")
                return line
            self._scanned = len(self._buffer)
            if self._scanned > self.max_line:
                raise LineTooLong(
                    f"more than {self.max_line} bytes without a newline (the line limit)"
                )
            # Never ask for more than would take the buffer past the limit + 1, so an
            # endless line costs at most max_line + 1 bytes of memory.
            chunk = await self._source.receive_some(min(65536, self.max_line + 1 - self._scanned))
            if not chunk:
                raise StreamClosed(
                    "output closed" + (f" in the middle of a line ({len(self._buffer)} bytes)" if self._buffer else "")
                )
            self.bytes_read += len(chunk)
            self._buffer += chunk
