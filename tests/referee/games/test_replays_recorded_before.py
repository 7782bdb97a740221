"""Replays recorded by the engines before they shared the skeleton of base.py still
verify: the refactor changed no rule, no draw and no event on the wire.

The files in replays/ were written by the engines of commit 0caa71b: two by the
tests' replay factory (random play with a forfeit: Vendetta with the majority
variant, Sicilianos with the victim's steal pick), one by ``famiglia play`` with
three sample bots.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.replay import ResultRecord, read_replay, verify_replay

REPLAYS = sorted((Path(__file__).parent / "replays").glob("*.jsonl"))


def test_the_recorded_replays_are_there() -> None:
    assert [p.name for p in REPLAYS] == ["sicilianos_forfeit.jsonl", "vendetta_bots.jsonl", "vendetta_forfeit.jsonl"]


@pytest.mark.parametrize("path", REPLAYS, ids=lambda p: p.name)
def test_a_replay_recorded_before_verifies_to_its_recorded_result(path: Path) -> None:
    records = read_replay(path)
    recorded = records[-1]
    assert isinstance(recorded, ResultRecord)
    assert verify_replay(records) == recorded.result
