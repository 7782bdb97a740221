"""The referee's end of a bot's pipes: bounded line reads and writes that skip a trip through Trio.

The referee's hot path is one request written and one answer read per decision,
so both ends have a fast path for Trio's pipe streams (``trio.lowlevel.FdStream``):
``write_now`` writes with one non-blocking ``os.write`` when the pipe has room
(the caller awaits ``send_all`` for the rest), and ``LineReader`` waits for the
pipe to be readable and reads it directly. Both skip the extra trip through
Trio's scheduler that ``send_all``/``receive_some`` make before every call;
the wait for the answer remains a checkpoint.

``LineReader`` never holds more than ``max_line`` bytes of an unfinished line:
a longer line is the wire contract's ``LineTooLong`` (protocol.codec), not a
memory problem for the referee. Framing and decoding stay in protocol.codec;
this module is about reading and writing the referee's side of a pipe.
"""

from __future__ import annotations

import errno
import math
import os
import select
from collections.abc import Callable
from typing import Protocol, cast

import trio

from protocol.codec import LineTooLong
from protocol.messages import DEFAULT_MAX_LINE

__all__ = ["ByteSource", "LineReader", "StreamClosed", "write_now"]


class StreamClosed(Exception):
    """The bot closed its output (or exited) before finishing a line."""


class ByteSource(Protocol):
    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray: ...


class _Pipe(Protocol):
    def fileno(self) -> int: ...


def write_now(stream: trio.abc.SendStream, data: bytes) -> bytes:
    """Write what a pipe takes of ``data`` at once, without waiting; return the rest (b"" when all went out).

    For a ``trio.lowlevel.FdStream`` this is one non-blocking ``os.write``; any
    other stream takes nothing this way (the whole of ``data`` is returned).
    The errors are ``send_all``'s: ``trio.ClosedResourceError`` after the
    stream was closed, ``trio.BrokenResourceError`` when the reader is gone.
    Never a checkpoint: the referee writes a request this way and awaits
    ``send_all`` only for a rest, which saves it a coroutine per decision
    over an ``async`` helper.
    """
    if type(stream) is not trio.lowlevel.FdStream:
        return data
    try:
        written = os.write(stream.fileno(), data)
    except BlockingIOError:
        return data
    except OSError as exc:
        if exc.errno == errno.EBADF:  # closed: the stream's fd is -1
            raise trio.ClosedResourceError("file was already closed") from None
        raise trio.BrokenResourceError from exc
    return data[written:] if written < len(data) else b""


class LineReader:
    """Reads newline-terminated lines from a byte stream, bounded by ``max_line``."""

    __slots__ = (
        "_block", "_block_fds", "_buffer", "_pipe", "_poll", "_poll_fd", "_scanned", "_source", "bytes_read", "max_line",
    )  # fmt: skip

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
        self._poll: select.poll | None = None  # for pending_line: is the pipe readable now?
        self._poll_fd = -1
        self._block: select.poll | None = None  # for line_blocking: the pipe and the caller's wake-up descriptor
        self._block_fds = (-1, -1)

    async def readline(self) -> bytes:
        """The next line without its newline; StreamClosed at the end of the stream."""
        buffer = self._buffer
        while True:
            if buffer and (line := self._buffered_line()) is not None:
                return line
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

    def _buffered_line(self) -> bytes | None:
        """The next whole line in the buffer, taken out of it; None when its newline has not come yet.

        LineTooLong once the line, finished or not, is past the limit.
        """
        buffer = self._buffer
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
        return None

    def pending_line(self) -> bytes | None:
        """The next line if all of it has already arrived, without waiting; else None.

        Reads what the pipe holds now (one ``poll`` with no timeout, then
        ``os.read``), never blocking; for a source without a file descriptor
        only what is buffered counts. A line over the limit is ``LineTooLong``
        as in ``readline``; the end of the stream is left for ``readline`` to report.
        """
        buffer = self._buffer
        while True:
            if buffer and (line := self._buffered_line()) is not None:
                return line
            chunk = self._read_now(min(65536, self.max_line + 1 - self._scanned))
            if not chunk:
                return None
            self.bytes_read += len(chunk)
            if not buffer and chunk[-1] == 10 and chunk.find(b"\n") == len(chunk) - 1:
                return chunk[:-1]  # exactly one whole line, as in readline
            buffer += chunk

    def line_within(self, seconds: float, clock: Callable[[], float]) -> bytes | None:
        """``pending_line``, asked again and again until a line is there or ``seconds`` have passed on ``clock``.

        A busy wait, for a caller that expects the line within microseconds: a
        bot that answers at once is read by its next look at the pipe, where a
        wait through Trio's run loop (register, sleep, collect, reschedule)
        would cost more CPU than the few looks. Between looks the thread yields
        the core to any other runnable process (the bot itself, on a busy
        machine). Never sleeps; ``seconds`` bounds how long the thread is held.
        """
        line = self.pending_line()
        if line is not None or self._pipe is None:
            return line
        limit = clock() + seconds
        while clock() < limit:
            # On a machine with more runnable processes than cores, the bot may be
            # waiting for this very core: let it run rather than poll in its way.
            os.sched_yield()
            if (line := self.pending_line()) is not None:
                return line
        return None

    def line_blocking(self, seconds: float, wake_fd: int) -> bytes | None:
        """Block in the kernel until the pipe or ``wake_fd`` is readable or ``seconds`` pass; then the
        line, if the pipe now holds all of it and ``wake_fd`` is quiet; else None (what was read of a
        line is kept for ``readline``). Returns at once when the pipe already holds something.

        For a caller that has nothing else to do until the line comes: one
        ``poll`` system call instead of a trip through an event loop. ``wake_fd``
        is the event loop's own descriptor (readable when anything else it
        waits for has happened), so the caller is woken for that too; it then
        gets None and waits through its loop. A line only begun, the end of the
        stream and errors are also None: ``readline`` deals with them.
        """
        pipe = self._pipe
        if pipe is None or (fd := pipe.fileno()) < 0 or self._buffer:
            return None  # a line begun is finished by readline
        if self._block_fds != (fd, wake_fd):
            self._block = select.poll()
            self._block.register(fd, select.POLLIN)
            self._block.register(wake_fd, select.POLLIN)
            self._block_fds = (fd, wake_fd)
        assert self._block is not None
        # poll takes milliseconds; rounded up, so the caller's next deadline has passed if it times out.
        ready = self._block.poll(math.ceil(seconds * 1000))
        if len(ready) != 1 or ready[0][0] != fd:
            return None  # the time is up, or the event loop has something to do (maybe both fds)
        # The pipe is readable: read it without asking poll again.
        try:
            chunk = os.read(fd, min(65536, self.max_line + 1 - self._scanned))
        except OSError:  # nothing after all, or broken: readline reports what is wrong
            return None
        if not chunk:
            return None  # the end of the stream, for readline to report
        self.bytes_read += len(chunk)
        if chunk[-1] == 10 and chunk.find(b"\n") == len(chunk) - 1:
            return chunk[:-1]  # exactly one whole line, as in readline
        self._buffer += chunk
        return self._buffered_line()

    def quiet(self) -> bool:
        """Nothing buffered and nothing in the pipe now (one ``poll``, no read): the usual
        state between an answer and the next request, checked before each request."""
        return not self._buffer and self._ready_fd() < 0

    @property
    def partial(self) -> bool:
        """Whether the start of a line has arrived without its end (after ``pending_line`` returned None)."""
        return bool(self._buffer)

    def _read_now(self, size: int) -> bytes:
        """What the pipe holds now, up to ``size`` bytes; b"" when it holds nothing (or is closed)."""
        fd = self._ready_fd()
        if fd < 0:
            return b""
        try:
            return os.read(fd, size)
        except OSError:  # nothing after all, or broken: readline reports what is wrong
            return b""

    def _ready_fd(self) -> int:
        """The pipe's descriptor if it has something to read now (one ``poll``), else -1 (also with no pipe, or a closed one)."""
        pipe = self._pipe
        if pipe is None or (fd := pipe.fileno()) < 0:
            return -1
        if fd != self._poll_fd:
            # A new descriptor (the pipe was replaced, or this is the first look): poll it from now on.
            self._poll = select.poll()
            self._poll.register(fd, select.POLLIN)
            self._poll_fd = fd
        assert self._poll is not None
        return fd if self._poll.poll(0) else -1

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
