"""Mutated real answers, and the referee's real read path to throw them at.

Shared by the quick fuzz test (tests/referee/test_fuzz_read_path.py) and the
long run (bench/fuzz.py). ``outcome(line)`` plays a short Vendetta match in
which seat 1, a bot behind a real pipe, answers its first request (id 2) with
``line``; whatever the bytes, the outcome must be one the referee names.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

import trio

from protocol.messages import TimeControl
from referee.match import MatchSpec, run_match
from referee.settings import Clock, RefereeSettings
from tests.referee.fakes import PipeBot, passer, pipe_passing

# Real lines bots send (from the sample bots and PROTOCOL.md), answering request 2.
CORPUS: list[bytes] = [
    b'{"type":"action","id":2,"action":{"type":"place","placements":[]}}',
    b'{"type":"action","id":2,"action":{"type":"place","placements":[{"district":8,"count":6}]}}',
    (
        b'{"type": "action", "id": 2, "action": {"type": "place", "placements": [{"district": 3, "count": 1}, '
        b'{"district": 11, "count": 2}]}}'
    ),
    b'{"type":"action","id":2,"action":{"type":"join","colour":"yellow","value":11,"note":5000}}',
    b'{"type":"action","id":2,"action":{"type":"steal","target":2,"colour":"red"}}',
    b'{"type":"action","id":2,"action":{"type":"as_renegade"}}',
    b'{"type":"log","message":"I expect district 8 to be revealed \\u00e9\\ud83d\\ude00"}',
    b'{"type":"ready","name":"mybot"}',
]

SETTINGS = RefereeSettings(
    clock=Clock(time=TimeControl(startup_ms=2000, move_ms=100, bank_ms=0), margin_ms=20), grace_ms=50
)
SPEC = MatchSpec(game="vendetta", seed=11, variants={"round_limit": "1"})
ALLOWED = ("valid action", "protocol", "illegal", "timeout")
"""Outcomes the referee may give: the action was valid, or the seat's named termination
(a timeout only when the bytes held no answer at all, a log line say)."""

_ANSWER = b'{"type":"action","id":2,"action":{"type":"place","placements":[]}}'


async def outcome(line: bytes) -> str:
    """What the referee made of ``line`` as seat 1's first answer: an entry of ALLOWED, or anything else."""

    def respond(message: dict[str, Any]) -> list[bytes | float]:
        if message["type"] == "request" and message["id"] == 2:
            # After a log or ready line the bot still owes its answer.
            follow = _ANSWER + b"\n" if line.startswith((b'{"type":"log"', b'{"type":"ready"')) else b""
            return [line + b"\n" + follow]
        return pipe_passing(message)

    async with trio.open_nursery() as nursery:
        bot = PipeBot(respond, nursery)
        try:
            record = await run_match(SPEC, [passer(), bot, passer()], SETTINGS)
        finally:
            nursery.cancel_scope.cancel()
            await bot.aclose()
    # The passers answer at once; on a machine loaded enough to miss the short
    # clock they may time out, which says nothing about seat 1's bytes.
    others = [t for t in record.result.terminations if t.seat != 1]
    assert all(t.kind == "timeout" for t in others), others
    terminations = [t for t in record.result.terminations if t.seat == 1]
    if not terminations:
        return "valid action"
    assert len(terminations[0].reason) <= 1000
    return terminations[0].kind


# --- mutations ---------------------------------------------------------------

BAD_UTF8 = [
    b"\xff",
    b"\xfe",
    b"\x80",
    b"\xc0\xaf",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xf4\x90\x80\x80",
    b"\xe2\x82",
]
NUMBERS = [b"NaN", b"-NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999", b"1e-999", b"0.5", b"-0", b"1E2",
           b"9" * 400, b"-" + b"9" * 5000, b"18446744073709551616", b"-9223372036854775809", b"00", b"0x10"]  # fmt: skip
SURROGATES = [b"\\ud800", b"\\udfff", b"\\udc00\\ud800", b"\\ud83d", b"\\u00", b"\\uZZZZ", b"\\"]
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_STRING_BODY = re.compile(rb'"([^"\\]*)"')


def _at(rng: random.Random, data: bytes) -> int:
    return rng.randrange(len(data) + 1)


def flip(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if out:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def replace_byte(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    i = rng.randrange(len(data))
    return data[:i] + bytes([rng.randrange(256)]) + data[i + 1 :]


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: _at(rng, data)]


def bad_utf8(rng: random.Random, data: bytes) -> bytes:
    i = _at(rng, data)
    return data[:i] + rng.choice(BAD_UTF8) + data[i:]


def bad_utf8_in_string(rng: random.Random, data: bytes) -> bytes:
    strings = list(_STRING_BODY.finditer(data))
    if not strings:
        return bad_utf8(rng, data)
    match = rng.choice(strings)
    i = rng.randint(match.start(1), match.end(1))
    return data[:i] + rng.choice(BAD_UTF8) + data[i:]


def surrogate(rng: random.Random, data: bytes) -> bytes:
    strings = list(_STRING_BODY.finditer(data))
    if not strings:
        return data
    match = rng.choice(strings)
    i = rng.randint(match.start(1), match.end(1))
    return data[:i] + rng.choice(SURROGATES) + data[i:]


def _nest(rng: random.Random, value: bytes) -> bytes:
    depth = rng.choice([rng.randint(60, 70), rng.randint(1, 200), 1000, 5000, 100_000])
    if rng.random() < 0.5:
        return b"[" * depth + value + b"]" * depth
    return b'{"k":' * depth + value + b"}" * depth


def deep(rng: random.Random, data: bytes) -> bytes:
    """Nest at some level: the whole line, the action, inside the action, a new field."""
    where = rng.randrange(4)
    if where == 0:
        return _nest(rng, data)
    if where == 1 and b'"action":' in data:
        head, _, tail = data.partition(b'"action":')
        return head + b'"action":' + _nest(rng, tail[:-1]) + b"}"
    if where == 2 and b"[" in data:
        i = data.index(b"[") + 1
        return data[:i] + _nest(rng, b"1") + (b"," if data[i : i + 1] != b"]" else b"") + data[i:]
    if data.startswith(b"{"):
        return b'{"x":' + _nest(rng, b"0") + b"," + data[1:]
    return _nest(rng, data)


def number(rng: random.Random, data: bytes) -> bytes:
    numbers = list(_NUMBER.finditer(data))
    if not numbers:
        return data
    match = rng.choice(numbers)
    return data[: match.start()] + rng.choice(NUMBERS) + data[match.end() :]


def duplicate_key(rng: random.Random, data: bytes) -> bytes:
    if not data.startswith(b"{"):
        return data
    key = rng.choice([b'"id":3', b'"id":2', b'"type":"log"', b'"type":"action"', b'"action":{"type":"pass"}',
                      b'"action":null', b'"message":"x"', b'"type":"ready"'])  # fmt: skip
    return b"{" + key + b"," + data[1:] if rng.random() < 0.5 else data[:-1] + b"," + key + b"}"


def splice(rng: random.Random, data: bytes) -> bytes:
    other = rng.choice(CORPUS)
    return data[: _at(rng, data)] + other[_at(rng, other) :]


def control(rng: random.Random, data: bytes) -> bytes:
    i = _at(rng, data)
    return data[:i] + bytes([rng.choice([0, 1, 9, 13, 27, 127, 0x85])]) + data[i:]


MUTATIONS: list[Callable[[random.Random, bytes], bytes]] = [
    flip, replace_byte, truncate, bad_utf8, bad_utf8_in_string, surrogate, deep, number, duplicate_key, splice,
    control,
]  # fmt: skip


def mutate(rng: random.Random) -> tuple[str, bytes]:
    """A corpus line with one to three mutations: (the mutations' names, the line), without newlines."""
    data = rng.choice(CORPUS)
    names = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        mutation = rng.choice(MUTATIONS)
        names.append(mutation.__name__)
        data = mutation(rng, data)
    return "+".join(names), data.replace(b"\n", b" ")[: 1 << 20]


def check_corpus() -> None:
    """Every corpus line is valid JSON (the mutations start from real answers)."""
    for line in CORPUS:
        json.loads(line)
