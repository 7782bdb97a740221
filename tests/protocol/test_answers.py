"""Which answers the referee accepts, exactly as PROTOCOL.md ("What an answer may look like") says.

Each case plays a real match through the referee's own decoder: seat 0 answers its
first Sicilianos ``turn`` request (roll, or a war with a card and a note) with a
changed copy of a listed war option, then plays on with first options.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from referee.match import MatchSpec, run_match
from tests.referee.fakes import Response, ScriptedBot, action, ready


def _war_option(message: dict[str, Any]) -> dict[str, Any]:
    return next(o for o in message["options"] if o["type"] == "war")


def _raw(request_id: int, action_json: str) -> bytes:
    return f'{{"type":"action","id":{request_id},"action":{action_json}}}\n'.encode()


def _answering_first_turn(change: Callable[[dict[str, Any]], bytes]) -> ScriptedBot:
    done = False

    def respond(message: dict[str, Any]) -> list[Response]:
        nonlocal done
        if message["type"] == "start":
            return [ready()]
        if message["type"] != "request":
            return []
        if message["decision"] == "turn" and not done:
            done = True
            return [change(message)]
        return [action(message["id"], message["options"][0])]

    return ScriptedBot(respond, name="changer")


def _first_options() -> ScriptedBot:
    def respond(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "start":
            return [ready()]
        if message["type"] == "request":
            return [action(message["id"], message["options"][0])]
        return []

    return ScriptedBot(respond, name="first")


def _with(**fields: Any) -> Callable[[dict[str, Any]], bytes]:
    return lambda m: action(m["id"], {**_war_option(m), **fields})


def _note_as(text: str) -> Callable[[dict[str, Any]], bytes]:
    def change(m: dict[str, Any]) -> bytes:
        war = _war_option(m)
        return _raw(m["id"], f'{{"type":"war","colour":"{war["colour"]}","value":{war["value"]},"note":{text}}}')

    return change


def _reordered(m: dict[str, Any]) -> bytes:
    war = _war_option(m)
    return _raw(m["id"], json.dumps({k: war[k] for k in reversed(list(war))}, indent=None, separators=(" , ", " : ")))


CASES: list[tuple[str, Callable[[dict[str, Any]], bytes], str | None]] = [
    ("an extra field is ignored", _with(comment="all in"), None),
    ("fields in another order, with spaces", _reordered, None),
    ("5000.0 for an integer is a protocol error", _note_as("5000.0"), "protocol"),
    ("5e3 for an integer is a protocol error", _note_as("5e3"), "protocol"),
    ('"5000" for an integer is a protocol error', _note_as('"5000"'), "protocol"),
    ("a name in capitals is a protocol error", _with(colour="Blue"), "protocol"),
    (
        "a missing field is a protocol error",
        lambda m: action(m["id"], {"type": "war", "colour": "blue", "value": 1}),
        "protocol",
    ),
    ("a well-formed action that is not an option is illegal", _with(note=5001), "illegal"),
]


@pytest.mark.parametrize(("change", "termination"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_an_answer_is_accepted_or_refused_as_protocol_md_says(
    change: Callable[[dict[str, Any]], bytes], termination: str | None
) -> None:
    bots = [_answering_first_turn(change), _first_options(), _first_options()]
    record = await run_match(MatchSpec(game="sicilianos", seed=3), bots)
    kinds = [(t.seat, t.kind) for t in record.result.terminations]
    assert kinds == ([] if termination is None else [(0, termination)]), record.result.terminations


async def test_a_vendetta_place_without_placements_places_nothing() -> None:
    def respond(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "start":
            return [ready()]
        if message["type"] == "request":
            return [_raw(message["id"], '{"type":"place"}')]
        return []

    bots = [ScriptedBot(respond, name=f"bare{i}") for i in range(3)]
    record = await run_match(MatchSpec(game="vendetta", seed=3), bots)
    assert record.result.terminations == []
