"""protocol/schema.json is generated from the types and must be kept current."""

from __future__ import annotations

import json
import re

from referee.schema import SCHEMA_PATH, build_schema, entry_point, render


def test_the_committed_schema_means_what_the_types_say() -> None:
    # Compared as JSON values, not text: how a msgspec release lays out the file is not the contract.
    assert SCHEMA_PATH.exists(), "run `python -m referee.schema` to create protocol/schema.json"
    assert json.loads(SCHEMA_PATH.read_text(encoding="utf-8")) == json.loads(render()), (
        "protocol/schema.json is out of date: run `python -m referee.schema` and commit it"
    )


def test_descriptions_are_written_in_one_form_whatever_the_docstrings_indentation() -> None:
    # msgspec releases differ on a docstring's indentation in descriptions (0.23 changed it).
    described = re.findall(r'"description": "((?:[^"\\]|\\.)*)"', render())
    assert described, "the schema has no descriptions"
    assert not [text for text in described if "\\n " in text], "an indented description line"


def test_every_game_has_an_entry_point_for_each_direction() -> None:
    defs = build_schema()["$defs"]
    for game in ("vendetta", "sicilianos"):
        for direction in ("Referee", "Bot"):
            union = defs[entry_point(game, direction)]
            assert union["anyOf"] and all("$ref" in member for member in union["anyOf"])
    json.dumps(defs)  # plain JSON all the way down


def test_every_definition_has_a_readable_name_and_every_reference_resolves() -> None:
    schema = build_schema()
    defs = schema["$defs"]
    unreadable = [name for name in defs if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", name)]
    assert unreadable == [], unreadable  # no module paths, no msgspec generic names
    assert {"SicilianosAction", "VendettaRequest", "SicilianosRevealed", "VendettaRevealed"} <= set(defs)
    refs = set(re.findall(r'"\$ref": "#/\$defs/([^"]+)"', json.dumps(schema)))
    assert refs and refs <= set(defs), refs - set(defs)
