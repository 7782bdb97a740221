"""The seat contract (referee.channel): every seat implementation passes the conformance kit."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from referee.bots import BotSpec
from referee.channel import BotChannel, ChannelBase, DeadBot, InProcessSeat, adopt, check_channel
from referee.errors import BotCrashed
from referee.process import open_bot
from referee.sandbox import require_level
from referee.settings import RefereeSettings
from tests.referee.fakes import ScriptedBot, passing

TINY_BOT = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({"type": "ready", "name": "tiny"}), flush=True)
    elif message["type"] == "request":
        print(json.dumps({"type": "log", "message": "thinking"}), flush=True)
        print(json.dumps({"type": "action", "id": message["id"], "action": message["options"][0]}), flush=True)
"""


class Echo(InProcessSeat):
    """An in-process seat that says ready and answers each request with its first option."""

    async def respond(self, message: dict[str, Any]) -> dict[str, Any] | None:
        if message["type"] == "start":
            return {"type": "ready", "name": self.name}
        if message["type"] == "request":
            return {"type": "action", "id": message["id"], "action": message["options"][0]}
        return None


async def test_a_bot_process_keeps_the_contract(tmp_path: Path) -> None:
    settings = RefereeSettings(sandbox=require_level("none"))
    spec = BotSpec(name="tiny", command=[sys.executable, "-c", TINY_BOT], cwd=str(tmp_path))
    await check_channel(lambda: open_bot(spec, settings))


async def test_a_bot_that_could_not_start_keeps_the_contract_of_a_dead_seat() -> None:
    @asynccontextmanager
    async def dead() -> AsyncIterator[BotChannel]:
        yield DeadBot("gone", BotCrashed("could not start"))

    await check_channel(dead)


async def test_a_seat_played_in_the_referees_process_keeps_the_contract() -> None:
    @asynccontextmanager
    async def echo() -> AsyncIterator[BotChannel]:
        yield Echo("echo")

    await check_channel(echo)


class FiveCalls:
    """A seat written against the five calls alone, with a stray ``meter`` and ``untimed`` of its own."""

    untimed = True
    meter = staticmethod(lambda: 0)

    def __init__(self) -> None:
        self.inner = ScriptedBot(passing)

    @property
    def name(self) -> str:
        return self.inner.name

    async def send(self, data: bytes) -> None:
        await self.inner.send(data)

    async def readline(self) -> bytes:
        return await self.inner.readline()

    async def kill(self) -> None:
        await self.inner.kill()

    def stderr_text(self) -> str:
        return self.inner.stderr_text()


async def test_a_channel_with_only_the_five_calls_is_adopted_with_the_declared_defaults() -> None:
    @asynccontextmanager
    async def five_calls() -> AsyncIterator[BotChannel]:
        yield FiveCalls()

    await check_channel(five_calls)
    # What it offers beyond the five calls is declared by subclassing ChannelBase, never
    # looked up by name: its own untimed and meter are not read.
    channel = adopt(FiveCalls())
    assert (channel.reader, channel.untimed, channel.meter, channel.sandbox) == (None, False, None, "")
    assert channel.poll_schedule is None and not channel.restless and not channel.can_hold


def test_a_seat_of_the_contracts_own_kind_is_not_wrapped() -> None:
    seat = Echo("echo")
    assert adopt(seat) is seat and isinstance(seat, ChannelBase)


async def test_the_kit_names_a_seat_that_does_not_answer_start_with_ready() -> None:
    class Silent(Echo):
        async def respond(self, message: dict[str, Any]) -> dict[str, Any] | None:
            return {"type": "log", "message": "hello"} if message["type"] == "start" else None

    @asynccontextmanager
    async def silent() -> AsyncIterator[BotChannel]:
        yield Silent("silent")

    with pytest.raises(AssertionError, match="ready"):
        await check_channel(silent, seconds=0.2)


async def test_the_kit_names_a_dead_seat_whose_readline_does_not_fail() -> None:
    class HalfDead(Echo):
        async def send(self, data: bytes) -> None:
            raise BotCrashed("gone")

        async def readline(self) -> bytes:
            return b'{"type":"ready"}'

    @asynccontextmanager
    async def half_dead() -> AsyncIterator[BotChannel]:
        yield HalfDead("half")

    with pytest.raises(AssertionError, match="readline"):
        await check_channel(half_dead)
