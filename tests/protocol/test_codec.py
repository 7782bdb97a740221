"""The line codec: framing, the line limit, and decoding that fails only one way."""

from __future__ import annotations

import json
import os
import threading
import time

import msgspec
import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

import protocol.codec
from protocol.codec import (
    BadMessage,
    LineTooLong,
    ProtocolViolation,
    decode_bot_message,
    encode_message,
    log_message,
)
from protocol.messages import Action, Log, Ready
from referee.pipe import LineReader, StreamClosed, write_now


class ChunkSource:
    """A byte stream that hands out scripted chunks, recording how much was asked."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)
        self.largest_request = 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        assert max_bytes is not None
        self.largest_request = max(self.largest_request, max_bytes)
        if not self.chunks:
            return b""
        chunk = self.chunks.pop(0)
        if len(chunk) > max_bytes:
            self.chunks.insert(0, chunk[max_bytes:])
            chunk = chunk[:max_bytes]
        return chunk


async def test_lines_split_across_chunks_are_joined() -> None:
    reader = LineReader(ChunkSource([b'{"type":"re', b'ady"}\n{"type":"log",', b'"message":"x"}\n']))
    assert await reader.readline() == b'{"type":"ready"}'
    assert await reader.readline() == b'{"type":"log","message":"x"}'
    with pytest.raises(StreamClosed):
        await reader.readline()


async def test_several_lines_in_one_chunk_come_out_one_by_one() -> None:
    reader = LineReader(ChunkSource([b"a\nb\nc\n"]))
    assert [await reader.readline() for _ in range(3)] == [b"a", b"b", b"c"]


async def test_a_line_over_the_limit_is_a_protocol_error_and_never_buffered_whole() -> None:
    endless = [b"x" * 4096] * 1000  # 4 MB without a newline
    source = ChunkSource(endless)
    reader = LineReader(source, max_line=10_000)
    with pytest.raises(LineTooLong):
        await reader.readline()
    assert len(reader._buffer) <= 10_001
    assert reader.bytes_read <= 10_001


async def test_a_line_exactly_at_the_limit_is_accepted() -> None:
    reader = LineReader(ChunkSource([b"y" * 100 + b"\n"]), max_line=100)
    assert await reader.readline() == b"y" * 100


async def test_eof_in_the_middle_of_a_line_says_so() -> None:
    reader = LineReader(ChunkSource([b'{"type":']))
    with pytest.raises(StreamClosed, match="middle of a line"):
        await reader.readline()


def test_bot_messages_decode_to_their_types() -> None:
    assert decode_bot_message(b'{"type":"ready","name":"x"}') == Ready(name="x")
    message = decode_bot_message(b'{"type":"action","id":4,"action":{"type":"place","placements":[]}}')
    assert isinstance(message, Action) and message.id == 4
    assert bytes(message.action) == b'{"type":"place","placements":[]}'
    assert decode_bot_message(b'{"type":"log","message":"hi"}') == Log(message="hi")


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        (b"not json", "not valid JSON"),
        (b'{"type":"ready"', "not valid JSON"),
        (b'{"type":"shout"}', "wrong message shape"),
        (b'{"type":"action","id":"four","action":{}}', "wrong message shape"),
        (b'{"type":"action","action":{}}', "wrong message shape"),
        (b"[1,2,3]", "wrong message shape"),
        (b"\xff\xfe garbage", "not UTF-8"),
    ],
)
def test_bad_lines_are_bad_messages_that_say_what_is_wrong(line: bytes, complaint: str) -> None:
    with pytest.raises(BadMessage, match=complaint):
        decode_bot_message(line)


def test_encode_message_is_one_line() -> None:
    data = encode_message(Log(message="a\nb"))
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert json.loads(data) == {"type": "log", "message": "a\nb"}


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_arbitrary_bytes_raise_only_protocol_violations(line: bytes) -> None:
    try:
        decode_bot_message(line)
    except ProtocolViolation:
        pass


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
message_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["ready", "action", "log", "start", "x"])},
    optional={"id": json_values, "action": json_values, "name": json_values, "message": json_values},
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(json_values, message_like))
def test_fuzz_arbitrary_json_decodes_or_raises_only_protocol_violations(value: object) -> None:
    line = msgspec.json.encode(value)
    try:
        decode_bot_message(line)
    except ProtocolViolation:
        pass


# --- line_within: the referee's short poll for a bot that answers at once ----


def _pipe_reader() -> tuple[LineReader, int]:
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    return LineReader(trio.lowlevel.FdStream(read_fd)), write_fd


def test_line_within_returns_a_line_written_while_it_polls() -> None:
    reader, write_fd = _pipe_reader()
    writer = threading.Timer(0.01, os.write, (write_fd, b'{"type":"log","message":"late"}\n'))
    began = time.perf_counter()
    writer.start()
    line = reader.line_within(5.0, time.perf_counter)
    writer.join()
    assert line == b'{"type":"log","message":"late"}'
    assert time.perf_counter() - began < 4.0  # taken when it came, not at the end of the bound
    os.close(write_fd)


def test_line_within_gives_up_after_its_bound_and_keeps_a_partial_line() -> None:
    reader, write_fd = _pipe_reader()
    os.write(write_fd, b'{"type":"act')
    began = time.perf_counter()
    assert reader.line_within(0.005, time.perf_counter) is None
    assert 0.005 <= time.perf_counter() - began < 1.0
    assert reader.partial
    os.write(write_fd, b'ion"}\n')
    assert reader.line_within(0.005, time.perf_counter) == b'{"type":"action"}'
    os.close(write_fd)


def test_line_within_a_closed_pipe_ends_at_its_bound_and_leaves_the_end_to_readline() -> None:
    reader, write_fd = _pipe_reader()
    os.close(write_fd)
    assert reader.line_within(0.002, time.perf_counter) is None

    async def read() -> None:
        with pytest.raises(StreamClosed):
            await reader.readline()

    trio.run(read)


def test_pending_line_takes_a_read_of_exactly_one_line_and_of_two_lines_alike() -> None:
    reader, write_fd = _pipe_reader()
    os.write(write_fd, b"one\n")
    assert reader.pending_line() == b"one"
    os.write(write_fd, b"two\nthree\n")
    assert [reader.pending_line(), reader.pending_line(), reader.pending_line()] == [b"two", b"three", None]
    assert reader.bytes_read == len(b"one\ntwo\nthree\n") and not reader.partial
    os.close(write_fd)


def _pipe_writer() -> tuple[trio.lowlevel.FdStream, int]:
    """A Trio stream on a pipe's write end (non-blocking, as the referee's), and the read end."""
    read_fd, write_fd = os.pipe()
    return trio.lowlevel.FdStream(write_fd), read_fd


def test_write_now_writes_a_line_the_pipe_has_room_for_and_leaves_nothing() -> None:
    async def main() -> None:
        stream, read_fd = _pipe_writer()
        assert write_now(stream, b"one line\n") == b""
        assert os.read(read_fd, 100) == b"one line\n"
        await stream.aclose()
        os.close(read_fd)

    trio.run(main)


def test_write_now_returns_what_a_full_pipe_did_not_take_without_waiting() -> None:
    async def main() -> None:
        stream, read_fd = _pipe_writer()
        data = bytes(range(256)) * 2048  # 512 KiB: more than a pipe holds
        began = time.perf_counter()
        rest = write_now(stream, data)
        assert time.perf_counter() - began < 1.0
        assert 0 < len(rest) < len(data) and data.endswith(rest)
        assert write_now(stream, rest) == rest  # full: nothing more goes in
        taken = len(data) - len(rest)
        assert len(os.read(read_fd, taken + 1)) <= taken  # what it wrote is what the reader gets
        await stream.aclose()
        os.close(read_fd)

    trio.run(main)


def test_write_now_on_a_closed_stream_or_to_a_gone_reader_raises_send_alls_errors() -> None:
    async def main() -> None:
        stream, read_fd = _pipe_writer()
        os.close(read_fd)
        with pytest.raises(trio.BrokenResourceError):
            write_now(stream, b"line\n")
        await stream.aclose()
        with pytest.raises(trio.ClosedResourceError):
            write_now(stream, b"line\n")

    trio.run(main)


def test_write_now_leaves_a_stream_that_is_not_a_pipe_to_send_all() -> None:
    send, _receive = trio.testing.memory_stream_pair()
    assert write_now(send, b"line\n") == b"line\n"


# --- a log line read for what is kept of it (log_message) ----------------------


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.booleans(), st.booleans(), st.integers(min_value=1, max_value=200))
def test_a_log_line_in_the_usual_shape_reads_as_its_full_decoding_cut_to_what_is_kept(
    message: str, ascii_only: bool, spaced: bool, keep: int
) -> None:
    separators = (", ", ": ") if spaced else (",", ":")
    line = json.dumps({"type": "log", "message": message}, ensure_ascii=ascii_only, separators=separators).encode()
    try:
        full = decode_bot_message(line)
    except ProtocolViolation:  # a lone surrogate: refused either way
        assert log_message(line, keep) is None
        return
    fast = log_message(line, keep)
    assert fast is not None and isinstance(full, Log)
    assert fast.message == full.message[:keep]


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=60), st.sampled_from([b'{"type":"log","message":"', b'{"type": "log", "message": "']))
def test_whatever_log_message_takes_the_full_decoder_takes_too(body: bytes, prefix: bytes) -> None:
    line = prefix + body + b'"}'
    fast = log_message(line, 10)
    if fast is None:
        return
    full = decode_bot_message(line)  # never a ProtocolViolation where the cheap read passed
    assert isinstance(full, Log) and fast.message == full.message[:10]


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"log","message":"a","type":"action"}',  # the string ends early: another shape
        b'{"type":"log","message":"a\x01b"}',  # a control character
        b'{"type":"log","message":"\xff"}',  # not UTF-8
        b'{"type":"log","message":"\\q"}',  # not an escape
        b'{"type":"log","message":"\\ud800"}',  # a lone surrogate
        b'{"type":"log","message":"a\\"}',  # the closing quote escaped
        b'{"message":"a","type":"log"}',  # fine, but not the usual shape: decoded in full
    ],
)
def test_a_line_out_of_the_usual_shape_or_broken_is_left_to_the_full_decoder(line: bytes) -> None:
    assert log_message(line, 100) is None


def test_a_long_line_of_brackets_in_a_log_costs_no_nesting_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1 MiB of brackets inside the message: the full decoder scans the nesting (numpy), the log read not.
    line = b'{"type":"log","message":"' + b"[" * ((1 << 20) - 30) + b'"}'

    def no_scan(line: bytes) -> int:
        raise AssertionError("the nesting of a log line's string was scanned")

    monkeypatch.setattr(protocol.codec, "nesting_depth", no_scan)
    read = log_message(line, 4096)
    assert read is not None and read.message == "[" * 4096
