"""PROTOCOL.md's example bot works as printed, and real traffic matches schema.json."""

from __future__ import annotations

import json
import re
import shutil
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from referee.bots import BotSpec
from referee.channel import ChannelBase
from referee.match import MatchSpec, run_match
from referee.process import BotProcess, open_bot
from referee.schema import SCHEMA_PATH, entry_point
from referee.settings import RefereeSettings

DOC = Path(__file__).resolve().parents[2] / "protocol" / "PROTOCOL.md"


class Tap(ChannelBase):
    """A BotChannel that records every line the referee and the bot exchange."""

    def __init__(self, bot: BotProcess) -> None:
        self.bot = bot
        self.to_bot: list[dict[str, Any]] = []
        self.from_bot: list[dict[str, Any]] = []

    @property
    def name(self) -> str:
        return self.bot.name

    async def send(self, data: bytes) -> None:
        self.to_bot.append(json.loads(data))
        await self.bot.send(data)

    async def readline(self) -> bytes:
        line = await self.bot.readline()
        self.from_bot.append(json.loads(line))
        return line

    async def kill(self) -> None:
        await self.bot.kill()

    def stderr_text(self) -> str:
        return self.bot.stderr_text()


async def play_tapped(game: str, specs: list[BotSpec], seed: int) -> list[Tap]:
    settings = RefereeSettings()
    async with AsyncExitStack() as stack:
        taps = [Tap(await stack.enter_async_context(open_bot(spec, settings))) for spec in specs]
        record = await run_match(MatchSpec(game=game, seed=seed), taps, settings)
    assert record.result.terminations == []
    return taps


def validator(game: str, direction: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    root = {"$defs": schema["$defs"], "$ref": f"#/$defs/{entry_point(game, direction)}"}
    return jsonschema.Draft202012Validator(root)


def assert_traffic_matches_schema(game: str, taps: list[Tap]) -> int:
    to_bot, from_bot = validator(game, "Referee"), validator(game, "Bot")
    checked = 0
    for tap in taps:
        for message in tap.to_bot:
            to_bot.validate(message)
            checked += 1
        for message in tap.from_bot:
            from_bot.validate(message)
            checked += 1
    return checked


def test_the_schema_rejects_what_the_referee_would_reject() -> None:
    from_bot = validator("vendetta", "Bot")
    assert from_bot.is_valid({"type": "action", "id": 3, "action": {"type": "place", "placements": []}})
    assert not from_bot.is_valid({"type": "action", "id": "3", "action": {"type": "place", "placements": []}})
    assert not from_bot.is_valid({"type": "action", "id": 3, "action": {"type": "fold"}})


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
async def test_the_twenty_line_bot_in_protocol_md_plays_a_whole_game_and_its_traffic_fits_the_schema(
    tmp_path: Path,
) -> None:
    (code,) = re.findall(r"```js\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(code.strip().splitlines()) <= 20
    (tmp_path / "bot.js").write_text(code)
    spec = BotSpec(name="doc-bot", command=["node", "bot.js"], cwd=str(tmp_path))
    taps = await play_tapped("vendetta", [spec, spec, spec], seed=5)
    assert [m["type"] for m in taps[0].from_bot][:2] == ["ready", "action"]
    assert assert_traffic_matches_schema("vendetta", taps) > 30
