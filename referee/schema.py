"""Generate ``protocol/schema.json`` from the message types and each game's types.

It lives here, not in ``protocol/``, because it needs every game's types:
the wire contract imports nothing above it, and this module, which knows the
games, writes the contract's file into the protocol package.

Run ``python -m referee.schema`` after changing a message or a game's view,
action or event; a test fails while the committed file is out of date.

The schema has one entry point per game and direction in ``$defs``:
``<Game>RefereeMessage`` (what a bot reads) and ``<Game>BotMessage`` (what it
writes), e.g. ``VendettaRefereeMessage``. Every other definition has a name a
bot author can read: msgspec names a generic message after its type parameters
(``Action_referee.games.sicilianos.messages.Draw___...``) and a type whose name
two games share after its module path; both become ``<Game><Type>``
(``SicilianosAction``, ``VendettaRevealed``).
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import msgspec

import protocol
from protocol.messages import PROTOCOL_VERSION, Action, End, Log, Ready, Rejected, Request, Start
from referee.games import BUILT_IN_GAMES, get_rules

__all__ = ["SCHEMA_PATH", "build_schema", "entry_point", "render"]

SCHEMA_PATH = Path(protocol.__file__).with_name("schema.json")


def entry_point(game: str, direction: str) -> str:
    """The ``$defs`` name of a game's message union: direction is "Referee" or "Bot"."""
    return f"{game.capitalize()}{direction}Message"


_GENERIC = re.compile(r"(Action|End|Request|Start)_")


def readable_name(name: str, game_of: dict[str, str], only: str | None = None) -> str:
    """The ``$defs`` name a bot author reads for msgspec's generated ``name``.

    ``game_of`` tells which game a generic message's name belongs to. ``only``: the one game
    the schema is for, whose types a module path of any package names (a plug-in's).
    """
    generic = _GENERIC.match(name)
    if generic is not None:
        return f"{game_of[name].capitalize()}{generic.group(1)}"
    if "." in name:  # a module path: referee.games.<game>[.module].<Type>, or a plug-in's package
        parts = name.split(".")
        game = only if only is not None and parts[:2] != ["referee", "games"] else parts[2]
        return f"{game.capitalize()}{parts[-1]}"
    return name


def _renamed_refs(node: Any, names: dict[str, str]) -> Any:
    """``node`` with every ``$ref`` pointing at the readable name."""
    if isinstance(node, dict):
        return {
            key: (_REF + names[value.removeprefix(_REF)] if key == "$ref" else _renamed_refs(value, names))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_renamed_refs(item, names) for item in node]
    return node


_REF = "#/$defs/"


def _canonical(node: Any) -> Any:
    """``node`` with every description in one form, whichever msgspec release made it.

    msgspec 0.23 changed how a docstring's indentation reaches a description: the
    schema's text must not change with the release a machine happens to install.
    """
    if isinstance(node, dict):
        return {
            key: (inspect.cleandoc(value) if key == "description" and isinstance(value, str) else _canonical(value))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_canonical(item) for item in node]
    return node


def build_schema(games: tuple[str, ...] = BUILT_IN_GAMES) -> dict[str, Any]:
    """The protocol of ``games`` as one JSON Schema (draft 2020-12) document.

    By default the games famiglia ships, never an installed plug-in: protocol/schema.json is
    part of the repository. ``famiglia schema GAME`` gives one game, a plug-in's too.
    UnknownGame for a game that is not installed.
    """
    types: list[Any] = []
    unions: dict[str, list[Any]] = {}
    game_of: dict[str, str] = {}
    for game in games:
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
        _, own = msgspec.json.schema_components(referee_side + bot_side)
        game_of.update({name: game for name in own if _GENERIC.match(name)})
    schemas, generated = msgspec.json.schema_components(types, ref_template=_REF + "{name}")
    only = games[0] if len(games) == 1 else None
    names = {name: readable_name(name, game_of, only) for name in generated}
    if len(set(names.values())) != len(names):  # two types would share a name: fail loudly, here
        raise ValueError(f"schema names collide: {sorted(names.values())}")
    components = {names[name]: _canonical(_renamed_refs(body, names)) for name, body in generated.items()}
    refs = iter(_renamed_refs(list(schemas), names))
    for name, members in unions.items():
        components[name] = {"anyOf": [next(refs) for _ in members]}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://famiglia.invalid/protocol/" + ("schema.json" if only is None else f"{only}.schema.json"),
        "title": f"famiglia protocol {PROTOCOL_VERSION}",
        "description": (
            "Messages between the famiglia referee and a bot, one JSON object per line. "
            "Entry points: " + ", ".join(sorted(unions)) + "."
        ),
        "$defs": dict(sorted(components.items())),
    }


def render(games: tuple[str, ...] = BUILT_IN_GAMES) -> str:
    return json.dumps(build_schema(games), indent=1, sort_keys=False) + "\n"


def main() -> None:
    SCHEMA_PATH.write_text(render(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")


if __name__ == "__main__":
    main()
