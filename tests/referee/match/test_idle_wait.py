"""The wait in the kernel for an answer when nothing else can run (referee.match.intake._idle_wait,
referee.pipe.LineReader.line_blocking): it returns what the usual wait would have, and never
keeps another task or a deadline waiting."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
import trio
import trio.testing

import referee.match.intake
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


async def test_with_nothing_else_to_run_the_referee_may_wait_up_to_the_next_deadline() -> None:
    with trio.move_on_after(0.5):
        idle = referee.match.intake._idle_wait()
        await trio.lowlevel.checkpoint()
    assert idle is not None
    seconds, wake_fd = idle
    assert 0.4 < seconds <= 0.5 and wake_fd >= 0  # up to the scope's deadline, Trio's next


async def test_without_a_deadline_it_looks_again_within_a_second() -> None:
    idle = referee.match.intake._idle_wait()
    assert idle is not None and idle[0] == 1.0


async def test_another_runnable_task_means_the_usual_wait() -> None:
    seen: list[tuple[float, int] | None] = []

    async def other() -> None:
        await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other)  # runnable now, not yet run
        seen.append(referee.match.intake._idle_wait())
    assert seen == [None]


def test_a_virtual_clock_means_the_usual_wait() -> None:
    # pytest-trio's autojump clock moves only when every task waits in the run loop:
    # a wait in the kernel would hold real time for virtual seconds.
    async def look() -> tuple[float, int] | None:
        return referee.match.intake._idle_wait()

    assert trio.run(look, clock=trio.testing.MockClock(autojump_threshold=0)) is None
