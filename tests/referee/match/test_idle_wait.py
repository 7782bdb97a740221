"""The wait in the kernel for an answer when nothing else can run (referee.pipe.LineReader.line_blocking;
when it may be used: tests/referee/match/test_trio_peek.py): it returns what the usual wait would have, and never
keeps another task or a deadline waiting."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
import trio
import trio.testing

from protocol.codec import LineTooLong
from referee.pipe import LineReader


class RawPipe:
    """The read end of a pipe as LineReader reads a bot's stdout: a non-blocking descriptor."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self.fd = fd

    def fileno(self) -> int:
        return self.fd

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.wait_readable(self.fd)
        return os.read(self.fd, max_bytes or 65536)


@pytest.fixture
def pipe() -> Iterator[tuple[LineReader, int]]:
    """A reader of a pipe and the pipe's write end."""
    read_fd, write_fd = os.pipe()
    yield LineReader(RawPipe(read_fd), max_line=64), write_fd
    os.close(write_fd)
    os.close(read_fd)


@pytest.fixture
def wake() -> Iterator[tuple[int, int]]:
    """A stand-in for Trio's epoll descriptor: (read end, write end) of a pipe."""
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    os.close(read_fd)
    os.close(write_fd)


def test_a_whole_line_in_the_pipe_is_returned_at_once(pipe: tuple[LineReader, int], wake: tuple[int, int]) -> None:
    reader, write_fd = pipe
    os.write(write_fd, b'{"type":"ready"}\n')
    began = time.perf_counter()
    assert reader.line_blocking(5.0, wake[0]) == b'{"type":"ready"}'
    assert time.perf_counter() - began < 1.0


def test_it_ends_when_the_time_is_up(pipe: tuple[LineReader, int], wake: tuple[int, int]) -> None:
    reader, _ = pipe
    began = time.perf_counter()
    assert reader.line_blocking(0.02, wake[0]) is None
    assert time.perf_counter() - began >= 0.02


def test_anything_else_for_the_event_loop_ends_it_even_with_the_line_there(
    pipe: tuple[LineReader, int], wake: tuple[int, int]
) -> None:
    reader, write_fd = pipe
    os.write(wake[1], b"x")
    assert reader.line_blocking(5.0, wake[0]) is None  # the loop's turn first
    os.write(write_fd, b"line\n")
    assert reader.line_blocking(5.0, wake[0]) is None  # both ready: still the loop's turn
    os.read(wake[0], 16)
    assert reader.line_blocking(5.0, wake[0]) == b"line"


def test_a_line_begun_is_kept_for_readline(pipe: tuple[LineReader, int], wake: tuple[int, int]) -> None:
    reader, write_fd = pipe
    os.write(write_fd, b'{"type":')
    assert reader.line_blocking(5.0, wake[0]) is None
    assert reader.partial
    os.write(write_fd, b'"ready"}\n')
    assert reader.line_blocking(5.0, wake[0]) is None  # a line begun is readline's to finish
    assert reader.pending_line() == b'{"type":"ready"}'


def test_the_end_of_the_stream_is_left_to_readline(wake: tuple[int, int]) -> None:
    read_fd, write_fd = os.pipe()
    os.close(write_fd)
    try:
        assert LineReader(RawPipe(read_fd)).line_blocking(5.0, wake[0]) is None
    finally:
        os.close(read_fd)


def test_a_line_over_the_limit_is_still_an_error(pipe: tuple[LineReader, int], wake: tuple[int, int]) -> None:
    reader, write_fd = pipe
    os.write(write_fd, b"x" * 100 + b"\n")
    with pytest.raises(LineTooLong):
        reader.line_blocking(5.0, wake[0])
