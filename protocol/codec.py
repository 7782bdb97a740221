"""Framing: UTF-8 JSON, one object per line, with a hard bound on a line's length.

``LineReader`` never holds more than ``max_line`` bytes of an unfinished line:
a longer line is a ``LineTooLong`` protocol error, not a memory problem for the
referee. Every decoding failure is a ``ProtocolViolation``; nothing else escapes.

The referee's hot path is one request written and one answer read per decision,
so both ends have a fast path for Trio's pipe streams (``trio.lowlevel.FdStream``):
``send_line`` writes with one non-blocking ``os.write`` when the pipe has room
(falling back to ``send_all`` for the rest), and ``LineReader`` waits for the
pipe to be readable and reads it directly. Both skip the extra trip through
Trio's scheduler that ``send_all``/``receive_some`` make before every call;
the wait for the answer remains a checkpoint.
"""

from __future__ import annotations

import errno
import os
from typing import Any, Protocol, cast

import msgspec
import trio

from protocol.messages import BotMessage

__all__ = [
    "DEFAULT_MAX_LINE",
    "BadMessage",
    "LineReader",
    "LineTooLong",
    "ProtocolViolation",
    "StreamClosed",
    "decode_bot_message",
    "encode_message",
    "send_line",
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


class _Pipe(Protocol):
    def fileno(self) -> int: ...


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


async def send_line(stream: trio.abc.SendStream, data: bytes) -> None:
    """``stream.send_all(data)``, without a trip through the scheduler when a pipe takes it all at once.

    For a ``trio.lowlevel.FdStream`` the data goes out with one non-blocking
    write; only what the pipe could not take is handed to ``send_all`` (which
    waits for room). The errors are ``send_all``'s: ``trio.ClosedResourceError``
    after the stream was closed, ``trio.BrokenResourceError`` when the reader is
    gone. When the write completes at once this is not a checkpoint.
    """
    if type(stream) is trio.lowlevel.FdStream:
        try:
            written = os.write(stream.fileno(), data)
        except BlockingIOError:
            written = 0
        except OSError as exc:
            if exc.errno == errno.EBADF:  # closed: the stream's fd is -1
                raise trio.ClosedResourceError("file was already closed") from None
            raise trio.BrokenResourceError from exc
        if written == len(data):
            return
        data = data[written:]
    await stream.send_all(data)


def _excerpt(line: bytes, limit: int = 80) -> str:
    text = line[:limit].decode("utf-8", "backslashreplace")
    return repr(text) + ("..." if len(line) > limit else "")


class LineReader:
    """Reads newline-terminated lines from a byte stream, bounded by ``max_line``."""

    __slots__ = ("_buffer", "_pipe", "_scanned", "_source", "bytes_read", "max_line")

    def __init__(self, source: ByteSource, max_line: int = DEFAULT_MAX_LINE) -> None:
        self._source = source
        # A source with a non-blocking file descriptor (fileno(), -1 once closed:
        # Trio's FdStream, the referee's FIFO reader) is read directly: wait
        # until readable, then os.read.
        self._pipe: _Pipe | None = cast(_Pipe, source) if hasattr(source, "fileno") else None
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer already searched for a newline
        self.max_line = max_line
        self.bytes_read = 0

    async def readline(self) -> bytes:
        """The next line without its newline; StreamClosed at the end of the stream."""
        buffer = self._buffer
        while True:
            if buffer:
                newline = buffer.find(b"\n", self._scanned)
                if newline >= 0:
                    line = bytes(buffer[:newline])
                    del buffer[: newline + 1]
                    self._scanned = 0
                    if len(line) > self.max_line:
                        raise LineTooLong(f"line of {len(line)} bytes exceeds the limit of {self.max_line}")
                    return line
                self._scanned = len(buffer)
                if self._scanned > self.max_line:
                    raise LineTooLong(f"more than {self.max_line} bytes without a newline (the line limit)")
            # Never ask for more than would take the buffer past the limit + 1, so an
            # endless line costs at most max_line + 1 bytes of memory.
            size = min(65536, self.max_line + 1 - self._scanned)
            chunk = await (self._read_pipe(size) if self._pipe is not None else self._source.receive_some(size))
            if not chunk:
                raise StreamClosed(
                    "output closed" + (f" in the middle of a line ({len(buffer)} bytes)" if buffer else "")
                )
            self.bytes_read += len(chunk)
            if not buffer and chunk[-1] == 10 and chunk.find(b"\n") == len(chunk) - 1:
                # The usual case: the chunk is exactly one whole line (at most
                # max_line + 1 bytes with its newline, so within the limit).
                return chunk[:-1] if type(chunk) is bytes else bytes(chunk[:-1])
            buffer += chunk

    async def _read_pipe(self, size: int) -> bytes:
        """``receive_some`` for a pipe: wait until readable, then read."""
        pipe = self._pipe
        assert pipe is not None
        while True:
            # fileno() is -1 once the stream is closed; a close during the wait
            # wakes it with ClosedResourceError (notify_closing).
            fd = pipe.fileno()
            if fd < 0:
                raise trio.ClosedResourceError("file was already closed")
            await trio.lowlevel.wait_readable(fd)
            try:
                return os.read(pipe.fileno(), size)
            except BlockingIOError:
                continue
            except OSError as exc:
                if exc.errno == errno.EBADF:
                    raise trio.ClosedResourceError("file was already closed") from None
                raise trio.BrokenResourceError from exc
