"""Generate ``protocol/schema.json`` from the message types and each game's types.

Run ``python -m protocol.schema`` after changing a message or a game's view,
action or event; a test fails while the committed file is out of date.

The schema has one entry point per game and direction in ``$defs``:
``<Game>RefereeMessage`` (what a bot reads) and ``<Game>BotMessage`` (what it
writes), e.g. ``VendettaRefereeMessage``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from protocol.messages import PROTOCOL_VERSION, Action, End, Log, Ready, Rejected, Request, Start
from referee.games import GAME_NAMES, get_rules

__all__ = ["SCHEMA_PATH", "build_schema", "entry_point"]

SCHEMA_PATH = Path(__file__).with_name("schema.json")


def entry_point(game: str, direction: str) -> str:
    """The ``$defs`` name of a game's message union: direction is "Referee" or "Bot"."""
    return f"{game.capitalize()}{direction}Message"


def build_schema() -> dict[str, Any]:
    """The whole protocol as one JSON Schema (draft 2020-12) document."""
    types: list[Any] = []
    unions: dict[str, list[Any]] = {}
    for game in GAME_NAMES:
        rules = get_rules(game)
        referee_side = [
            Start[rules.config_type],  # type: ignore[name-defined]
            Request[rules.view_type, rules.event_type, rules.action_type],  # type: ignore[name-defined]
            Rejected,
            End[rules.event_type],  # type: ignore[name-defined]
        ]
        bot_side = [Ready, Action[rules.action_type], Log]  # type: ignore[name-defined]
        unions[entry_point(game, "Referee")] = referee_side
        unions[entry_point(game, "Bot")] = bot_side
        types.extend(referee_side + bot_side)
    schemas, components = msgspec.json.schema_components(types, ref_template="#/$defs/{name}")
    refs = iter(schemas)
    for name, members in unions.items():
        components[name] = {"anyOf": [next(refs) for _ in members]}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://famiglia.invalid/protocol/schema.json",
        "title": f"famiglia protocol {PROTOCOL_VERSION}",
        "description": (
            "Messages between the famiglia referee and a bot, one JSON object per line. "
            "Entry points: " + ", ".join(sorted(unions)) + "."
        ),
        "$defs": dict(sorted(components.items())),
    }


def render() -> str:
    return json.dumps(build_schema(), indent=1, sort_keys=False) + "\n"


def main() -> None:
    SCHEMA_PATH.write_text(render(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")


if __name__ == "__main__":
    main()
