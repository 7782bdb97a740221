"""protocol.bot.serve: the Python bot helper answers, and skips what it does not know."""

from __future__ import annotations

import io
import json
from typing import Any

import msgspec
import pytest

from protocol.bot import serve


class FirstOption:
    name = "first"

    def decide(self, request: Any) -> Any:
        return request.options[0]


def run(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    source = io.BytesIO(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    sink = io.BytesIO()
    serve(FirstOption(), source, sink)
    return [json.loads(line) for line in sink.getvalue().splitlines()]


START = {"type": "start", "protocol": 1, "game": "x", "match": "m", "seat": 0, "players": 3, "names": ["a", "b", "c"],
         "variants": {}, "config": {}, "time": {"startup_ms": 1, "move_ms": 1, "bank_ms": 1}}  # fmt: skip
REQUEST = {"type": "request", "id": 9, "decision": "d", "view": {}, "events": [], "options": [{"type": "roll"}]}


def test_serve_answers_start_with_ready_and_a_request_with_its_id() -> None:
    answers = run([START, REQUEST])
    assert answers == [{"type": "ready", "name": "first"}, {"type": "action", "id": 9, "action": {"type": "roll"}}]


def test_serve_skips_message_types_from_later_protocol_versions() -> None:
    answers = run([START, {"type": "ping", "nonce": 3}, REQUEST])
    assert [a["type"] for a in answers] == ["ready", "action"]


def test_serve_still_fails_loudly_on_a_known_message_with_a_broken_shape() -> None:
    with pytest.raises(msgspec.ValidationError):
        run([START, {"type": "request", "id": "nine"}])
