"""What a bot reads is byte for byte what it read before the referee's speed work.

Four real bot processes (no sandbox, so each can keep a copy of its input in its
own folder) play one seeded Vendetta game. Every line each received is checked
two ways: against requests rebuilt from the engine alone and encoded the plain
way (one ``Request`` encoded whole, the full view in every request), and, for
the whole stream of every seat, against the digest recorded from the referee of
commit 0caa71b (before issue 15's changes to the hot path).
"""

from __future__ import annotations

import hashlib
import json
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import msgspec

from protocol.codec import encode_message
from protocol.messages import Request
from referee.bots import BotSpec
from referee.games import get_rules
from referee.games.base import SeededChance
from referee.match import MatchSpec, run_match
from referee.process import open_bot
from referee.settings import RefereeSettings

SEED = 20261123

RECORDER = """\
import json, sys
copy = open("received.bin", "wb")
for line in sys.stdin.buffer:
    copy.write(line)
    copy.flush()
    message = json.loads(line)
    if message["type"] == "start":
        sys.stdout.write('{"type":"ready","name":"recorder"}\\n')
    elif message["type"] == "request":
        answer = {"type": "action", "id": message["id"], "action": {"type": "place", "placements": []}}
        sys.stdout.write(json.dumps(answer) + "\\n")
    sys.stdout.flush()
"""

# sha256 of everything each seat received in this game (start, requests, end),
# recorded by this test against the referee of commit 0caa71b.
DIGESTS_BEFORE = {
    0: "92aa24380ba72b566c6f4b1ed41d8393a2ac7597de9be6dbfdfcd454551b68e7",
    1: "8434837b0097d719a232e63bb630b6d35ce310f9ac85cfdcdf126a2060e3d3da",
    2: "c21c65a7fabbc77067dcc975ef4a11ff53fa5e1fca6f09f12287370b0250e00b",
    3: "cee3c90df1b83930462fa75cdb6a865142879014bdd58036305d3cc72af4f93c",
}


def expected_requests(seed: int, players: int, settings: RefereeSettings) -> dict[int, list[bytes]]:
    """Every request of the game as the plain encoding gives it, per seat, for bots that always pass."""
    rules = get_rules("vendetta")
    config = rules.config({})
    state = rules.new_game(players, config, SeededChance(seed))
    action = msgspec.json.Decoder(rules.action_type).decode(b'{"type":"place","placements":[]}')
    events: list[msgspec.Struct] = []
    seen = [0] * players
    lines: dict[int, list[bytes]] = {seat: [] for seat in range(players)}
    request_id = 0
    while (decision := state.decision()) is not None:
        seat = decision.seat
        request_id += 1
        request: Request[object, object, object] = Request(
            id=request_id,
            decision=decision.kind,
            view=state.view(seat),
            events=state.events_for(seat, events[seen[seat] :]),
            options=decision.options,
            constraints=decision.constraints,
            time_ms=settings.clock.time.move_ms,
            bank_ms=settings.clock.time.bank_ms,
        )
        seen[seat] = len(events)
        lines[seat].append(encode_message(request))
        events += state.apply(seat, action)
    return lines


async def test_every_request_a_bot_reads_is_the_plain_encoding_of_its_full_view(tmp_path: Path) -> None:
    settings = RefereeSettings(sandbox="none")
    specs = []
    for seat in range(4):
        folder = tmp_path / f"seat{seat}"
        folder.mkdir()
        (folder / "bot.py").write_text(RECORDER)
        specs.append(BotSpec(name=f"recorder{seat}", command=[sys.executable, "bot.py"], cwd=str(folder)))
    async with AsyncExitStack() as stack:
        bots = [await stack.enter_async_context(open_bot(spec, settings)) for spec in specs]
        record = await run_match(MatchSpec(game="vendetta", seed=SEED, match="bytes"), bots, settings)
    assert record.result.terminations == []
    assert all(timing.bank_left_ms == settings.clock.time.bank_ms for timing in record.timings)  # so bank_ms is known

    expected = expected_requests(SEED, 4, settings)
    for seat in range(4):
        received = (tmp_path / f"seat{seat}" / "received.bin").read_bytes()
        lines = received.splitlines(keepends=True)
        assert json.loads(lines[0])["type"] == "start" and json.loads(lines[-1])["type"] == "end"
        requests = [line for line in lines if line.startswith(b'{"type":"request"')]
        assert len(requests) == len(expected[seat]) > 50
        for got, want in zip(requests, expected[seat], strict=True):
            assert got == want
        assert hashlib.sha256(received).hexdigest() == DIGESTS_BEFORE[seat], f"seat {seat}"
