"""The hand-written harnesses the referee is measured against: what a host would write by hand around famiglia's engine.

Both play the same deals with the same bot program as the referee, through
their own warm ``subprocess.Popen`` processes (no sandbox, no control groups,
in the harness's own session), with a blocking write and a blocking
``readline`` per decision, and nothing else: no clocks, records, checks or
error handling.

- ``HandWritten`` (the baseline of issue 15) uses the ``json`` module both
  ways, engine values turned into plain data with ``msgspec.to_builtins``.
- ``HandWrittenMsgspec`` (issue 30) is the strongest version of it this
  engine allows: the protocol's own msgspec Structs encoded by one reused
  ``msgspec.json.Encoder`` into one reused buffer (``encode_into``), the
  seat's view as the referee takes it (``transient_view``), one ``os.write``
  per request, and the answer decoded by a typed ``msgspec.json.Decoder`` of
  ``Action[<the game's action type>]`` straight into the engine's action.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import msgspec

from protocol.messages import PROTOCOL_VERSION, Action, End, Ready, Request, Start, TimeControl
from referee.bots import BotSpec
from referee.games import get_rules
from referee.games.base import SeededChance
from referee.match import result_of


class HandWritten:
    """The ``json`` harness: what a host would write in an afternoon around famiglia's engine.

    Its own warm bot processes (subprocess.Popen of the same bot command, no sandbox),
    blocking writes and readline, the json module both ways (engine values turned into
    plain dicts with msgspec.to_builtins, which any harness on this engine needs), the
    action converted back to the engine's type, no clocks, no records, no error handling.
    """

    label = "json"

    def __init__(self, bot: BotSpec, players: int) -> None:
        self.rules = get_rules("vendetta")
        self.config = self.rules.config({})
        self.processes = [
            subprocess.Popen(bot.command, cwd=bot.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            for _ in range(players)
        ]
        self.names = [bot.name] * players

    def send(self, seat: int, message: dict[str, object]) -> None:
        stdin = self.processes[seat].stdin
        assert stdin is not None
        stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        stdin.flush()

    def receive(self, seat: int) -> dict[str, object]:
        stdout = self.processes[seat].stdout
        assert stdout is not None
        answer: dict[str, object] = json.loads(stdout.readline())
        return answer

    def play(self, seed: int) -> int:
        """One game on the deal of `seed`; the number of decisions."""
        n = len(self.processes)
        config = msgspec.to_builtins(self.config)
        for seat in range(n):
            self.send(
                seat,
                {
                    "type": "start",
                    "protocol": PROTOCOL_VERSION,
                    "game": "vendetta",
                    "match": f"hand-{seed}",
                    "seat": seat,
                    "players": n,
                    "names": self.names,
                    "variants": {},
                    "config": config,
                    "time": msgspec.to_builtins(TimeControl()),
                },
            )
            self.receive(seat)  # ready
        state = self.rules.new_game(n, self.config, SeededChance(seed))
        events: list[msgspec.Struct] = []
        seen = [0] * n
        request_id = 0
        while (decision := state.decision()) is not None:
            seat = decision.seat
            request_id += 1
            self.send(
                seat,
                {
                    "type": "request",
                    "id": request_id,
                    "decision": decision.kind,
                    "view": msgspec.to_builtins(state.view(seat)),
                    "events": msgspec.to_builtins(state.events_for(seat, events[seen[seat] :])),
                    "options": msgspec.to_builtins(decision.options),
                    "constraints": msgspec.to_builtins(decision.constraints),
                    "time_ms": 1000,
                    "bank_ms": 0,
                },
            )
            seen[seat] = len(events)
            answer = self.receive(seat)
            events += state.apply(seat, msgspec.convert(answer["action"], self.rules.action_type))
        result = msgspec.to_builtins(result_of(state.outcome()))
        for seat in range(n):
            self.send(seat, {"type": "end", "match": f"hand-{seed}", "seat": seat, "result": result, "events": []})
        return request_id

    def close(self) -> None:
        for process in self.processes:
            assert process.stdin is not None
            process.stdin.close()
            process.wait()


class HandWrittenMsgspec:
    """The ``msgspec`` harness: the same loop with the fastest encoding and decoding this engine allows.

    The protocol's Structs encoded by one ``msgspec.json.Encoder`` into one
    reused buffer, written with one blocking ``os.write``; the seat's view as
    ``transient_view`` gives it (no copy); the answer read with a blocking
    ``readline`` and decoded by a typed Decoder straight into the engine's
    action type. No clocks, records, checks or error handling.
    """

    label = "msgspec"

    def __init__(self, bot: BotSpec, players: int) -> None:
        self.rules = get_rules("vendetta")
        self.config = self.rules.config({})
        self.processes = [
            subprocess.Popen(bot.command, cwd=bot.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            for _ in range(players)
        ]
        self.names = [bot.name] * players
        self.encoder = msgspec.json.Encoder()
        self.buffer = bytearray()
        self.ready = msgspec.json.Decoder(Ready)
        self.answer: msgspec.json.Decoder[Action[Any]] = msgspec.json.Decoder(Action[self.rules.action_type])  # type: ignore[name-defined]
        self.writes = [p.stdin.fileno() for p in self.processes]  # type: ignore[union-attr]
        self.reads = [p.stdout for p in self.processes]

    def send(self, seat: int, message: object) -> None:
        buffer = self.buffer
        self.encoder.encode_into(message, buffer)
        buffer.extend(b"\n")
        fd = self.writes[seat]
        view = memoryview(buffer)
        while view:  # a blocking write: a long line may take more than one
            view = view[os.write(fd, view) :]

    def play(self, seed: int) -> int:
        """One game on the deal of `seed`; the number of decisions."""
        n = len(self.processes)
        match = f"hand-{seed}"
        for seat in range(n):
            start = Start(
                protocol=PROTOCOL_VERSION,
                game="vendetta",
                match=match,
                seat=seat,
                players=n,
                names=self.names,
                variants={},
                config=self.config,
                time=TimeControl(),
            )
            self.send(seat, start)
            self.ready.decode(self.reads[seat].readline())  # type: ignore[union-attr]
        state = self.rules.new_game(n, self.config, SeededChance(seed))
        events: list[msgspec.Struct] = []
        seen = [0] * n
        request_id = 0
        decode, reads = self.answer.decode, self.reads
        while (decision := state.decision()) is not None:
            seat = decision.seat
            request_id += 1
            request: Request[Any, Any, Any] = Request(
                id=request_id,
                decision=decision.kind,
                view=state.transient_view(seat),
                events=state.events_for(seat, events[seen[seat] :]),
                options=decision.options,
                constraints=decision.constraints,
                time_ms=1000,
                bank_ms=0,
            )
            self.send(seat, request)
            seen[seat] = len(events)
            answer = decode(reads[seat].readline())  # type: ignore[union-attr]
            events += state.apply(seat, answer.action)
        result = result_of(state.outcome())
        for seat in range(n):
            self.send(seat, End(match=match, seat=seat, result=result, events=[]))
        return request_id

    def close(self) -> None:
        for process in self.processes:
            assert process.stdin is not None
            process.stdin.close()
            process.wait()
