"""What a bot puts in a replay is bounded in the replay's own bytes, so every replay famiglia writes reads back.

A control character in a log line is six bytes in the replay (``\\u0001``): counting
lines and characters let two seats of one Vendetta game write 452 MB, which
``famiglia replay verify`` and ``view`` refuse. Here: the bounds per decision and per
game (``ReplayLimits``), the cut record that says what was left out, the worst case
the bounds allow computed from the settings for every installed game at its largest
table, and real sandboxed bots stuffing the replay at every limit the protocol has.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from protocol.messages import TimeControl
from protocol.untrusted import MAX_REASON_CHARS
from referee.bots import load_bot
from referee.games import game_names, get_rules
from referee.games.base import RecordingChance, SeededChance
from referee.match import MatchSpec, result_of, run_match
from referee.match.recorder import LOG_CHARS, ReplayRecorder
from referee.play import play_match
from referee.replay import (
    MAX_REPLAY_BYTES,
    REPLAY_FORMAT,
    ActionRecord,
    CutRecord,
    Header,
    LogRecord,
    RejectedRecord,
    SeatInfo,
    encode_raw,
    encode_record,
    read_replay,
    verify_replay,
)
from referee.replay_budget import ACTION_AS_SENT_BYTES, SEATS_SHARE, ReplayBudget, describe_cut, seat_game_bytes
from referee.sandbox import require_level
from referee.settings import Clock, RefereeSettings, ReplayLimits
from tests.conftest import TEST_BOTS, wait_until_gone
from tests.referee.fakes import PASS, Response, ScriptedBot, action, line, passer, passing, ready
from tournaments.cli import app
from tournaments.hosting.viewer.build import build_viewer_data

CONTROL_LOG = "\x01" * LOG_CHARS
"""The costliest log line a replay keeps: every character a control character, six bytes each."""
MOST = ReplayLimits(kb_per_decision=16 << 10, kb_per_game=16 << 10)
"""The largest bounds a host may set (their ``le``)."""


def header(seats: int, game: str = "vendetta", config: Any = None) -> Header:
    rules = get_rules(game)
    config = config if config is not None else rules.config({})
    return Header(
        format=REPLAY_FORMAT, match="m", game=game, variants=rules.variants(config), config=encode_raw(config),
        seats=[SeatInfo(name=f"seat{seat}", command=["bot"]) for seat in range(seats)], seed=1, time=TimeControl(),
        illegal_action="pass", started="2026-01-01T00:00:00+00:00",
    )  # fmt: skip


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def kept_bytes(path: Path) -> tuple[dict[int, int], dict[tuple[int, int], int]]:
    """The bytes of log and rejected records (their lines) per seat, and per (seat, request), as the file holds them.

    A rejected record whose action was not kept counts nothing: it holds the referee's words only.
    """
    per_seat: dict[int, int] = {}
    per_request: dict[tuple[int, int], int] = {}
    for raw in lines_of(path):
        record = msgspec.json.decode(raw)
        if record["type"] == "log" or (record["type"] == "rejected" and record["action"] is not None):
            seat, request = record["seat"], record["request"]
            per_seat[seat] = per_seat.get(seat, 0) + len(raw) + 1
            per_request[seat, request] = per_request.get((seat, request), 0) + len(raw) + 1
    return per_seat, per_request


def cuts(path: Path) -> list[CutRecord]:
    return [record for record in read_replay(path) if isinstance(record, CutRecord)]


# --- the budget, through the recorder ------------------------------------------------


def test_log_lines_of_one_request_past_its_bytes_are_left_out_once_said_and_the_next_request_starts_afresh(
    tmp_path: Path,
) -> None:
    limits = ReplayLimits(kb_per_decision=64, kb_per_game=1024)
    recorder = ReplayRecorder(tmp_path / "r.jsonl", [], limits)
    recorder.begin(header(3))
    for request in (1, 2):
        for _ in range(100):
            recorder.log(1, request, CONTROL_LOG)
    recorder.close()
    per_seat, per_request = kept_bytes(tmp_path / "r.jsonl")
    one = len(encode_record(LogRecord(seat=1, request=1, message=CONTROL_LOG))) + 1
    assert one > 24_000  # six bytes a character: 4,096 characters are a 24 KiB line
    # As many whole lines as fit in 64 KiB, for each request, and one cut record each.
    assert per_request == {(1, 1): (64 << 10) // one * one, (1, 2): (64 << 10) // one * one}
    assert [(c.seat, c.request, c.bound, c.limit) for c in cuts(tmp_path / "r.jsonl")] == [
        (1, 1, "decision", 64 << 10),
        (1, 2, "decision", 64 << 10),
    ]
    assert per_seat[1] <= 2 * (64 << 10)


def test_a_seat_past_its_game_bytes_keeps_nothing_more_and_the_other_seats_keep_theirs(tmp_path: Path) -> None:
    limits = ReplayLimits(kb_per_decision=64, kb_per_game=200)
    recorder = ReplayRecorder(tmp_path / "r.jsonl", [], limits)
    recorder.begin(header(3))
    for request in range(1, 40):
        for _ in range(3):
            recorder.log(1, request, CONTROL_LOG)
        recorder.log(1, request, "short")  # would fit what is left: the cut lasts all the same
        recorder.log(2, request, f"seat 2 thinks about request {request}")
    recorder.close()
    per_seat, _ = kept_bytes(tmp_path / "r.jsonl")
    assert per_seat[1] <= 200 << 10
    game_cuts = [c for c in cuts(tmp_path / "r.jsonl") if c.bound == "game"]
    assert [(c.seat, c.limit) for c in game_cuts] == [(1, 200 << 10)]
    records = read_replay(tmp_path / "r.jsonl")
    after = records.index(game_cuts[0])
    # From the game's cut on, nothing more of seat 1's; seat 2 kept every line.
    assert not any(isinstance(r, LogRecord) and r.seat == 1 for r in records[after:])
    assert sum(isinstance(r, LogRecord) and r.seat == 2 for r in records) == 39


def test_a_rejected_action_past_the_budget_keeps_its_rule_and_message_without_the_bots_bytes(tmp_path: Path) -> None:
    recorder = ReplayRecorder(tmp_path / "r.jsonl", [], ReplayLimits(kb_per_decision=64, kb_per_game=1024))
    recorder.begin(header(3))
    small = encode_raw({"type": "place", "placements": [{"district": 99, "count": 1}]})
    padded = encode_raw({"type": "place", "placements": [], "pad": "\x01" * 100_000})
    recorder.rejected(1, 4, small, "P1", "no district 99", 0.01)
    recorder.rejected(1, 7, padded, "P1", "no district 99", 0.01)
    recorder.close()
    rejected = [r for r in read_replay(tmp_path / "r.jsonl") if isinstance(r, RejectedRecord)]
    assert [(r.request, r.rule, r.message, msgspec.json.decode(r.action)) for r in rejected] == [
        (4, "P1", "no district 99", msgspec.json.decode(small)),
        (7, "P1", "no district 99", None),
    ]
    assert [(c.request, c.bound) for c in cuts(tmp_path / "r.jsonl")] == [(7, "decision")]


def test_a_table_too_large_for_kb_per_game_gives_each_seat_its_part_of_the_seats_share() -> None:
    assert seat_game_bytes(MOST, 6) == 16 << 20  # the shipped games' tables: every seat its whole kb_per_game
    assert seat_game_bytes(MOST, 64) == SEATS_SHARE // 64  # a plug-in game's huge table shares the room
    budget = ReplayBudget(MOST, 64)
    assert budget.decision_bytes <= budget.game_bytes == SEATS_SHARE // 64


def test_a_cut_reads_as_what_was_left_out() -> None:
    decision = CutRecord(seat=2, request=14, bound="decision", limit=64 << 10)
    game = CutRecord(seat=2, request=40, bound="game", limit=1 << 20)
    assert describe_cut(decision) == (
        "seat 2's log lines and rejected actions for request 14 past 64 KiB are not kept "
        "(the replay's bound per decision)"
    )
    assert describe_cut(game) == (
        "seat 2's log lines and rejected actions from request 40 on are not kept: "
        "they passed 1024 KiB, the replay's bound per game"
    )


async def test_a_padded_action_is_recorded_as_the_engine_read_it_and_the_replay_verifies(tmp_path: Path) -> None:
    pad = "\x01" * 150_000

    def padder(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "request":
            return [action(message["id"], {**PASS, "pad": pad, "  ": [1] * 1000})]
        return passing(message)

    replay = tmp_path / "r.jsonl"
    record = await run_match(
        MatchSpec(game="vendetta", seed=3), [passer(), ScriptedBot(padder), passer()], replay_path=replay
    )
    assert record.result.terminations == []
    assert verify_replay(read_replay(replay)) == record.result
    padded = [r for r in read_replay(replay) if isinstance(r, ActionRecord) and r.seat == 1]
    assert padded and all(bytes(r.action) == b'{"type":"place","placements":[]}' for r in padded)
    assert replay.stat().st_size < 256 << 10


async def test_log_lines_before_ready_count_for_request_0_and_are_cut_there(tmp_path: Path) -> None:
    def chatty(message: dict[str, Any]) -> list[Response]:
        if message["type"] == "start":
            return [line({"type": "log", "message": CONTROL_LOG})] * 10 + [ready()]
        return passing(message)

    replay = tmp_path / "r.jsonl"
    settings = RefereeSettings(replay=ReplayLimits(kb_per_decision=32, kb_per_game=1024))
    record = await run_match(
        MatchSpec(game="vendetta", seed=3), [ScriptedBot(chatty), passer(), passer()], settings, replay_path=replay
    )
    assert record.result.terminations == []
    assert [(c.seat, c.request, c.bound) for c in cuts(replay)] == [(0, 0, "decision")]
    assert kept_bytes(replay)[1][0, 0] <= 32 << 10


# --- the worst case, computed from the settings -------------------------------------


def honest_replay(path: Path, game: str, seats: int, seed: int, *, passing: bool) -> int:
    """Write the replay of legal play (every seat passing, else random), no log line, through the referee's
    recorder; its decisions. Passing seats play the longest games (Sicilianos at six: 622 decisions, random 144)."""
    rules = get_rules(game)
    config = rules.config({})
    chance = RecordingChance(SeededChance(seed))
    state = rules.new_game(seats, config, chance)
    recorder = ReplayRecorder(path, chance.draws)
    recorder.begin(header(seats, game, config))
    rng = random.Random(seed)
    decisions = 0
    while (decision := state.decision()) is not None:
        decisions += 1
        chosen = state.pass_action() if passing else state.random_action(rng)
        events = state.apply(decision.seat, chosen)
        recorder.action(decision.seat, decisions, decision.kind, chosen, 9999.999, events)
    recorder.result(result_of(state.outcome()), 99999.999)
    recorder.close()
    return decisions


@pytest.mark.parametrize("game", game_names())
def test_the_worst_replay_the_bounds_allow_at_the_largest_table_stays_under_what_readers_read(
    game: str, tmp_path: Path
) -> None:
    """Every byte of a replay a bot can choose is bounded by the settings at their largest; the rest is the game's.

    What the bots choose: their log lines and rejected actions (``kb_per_game`` per
    seat, all kept), the padding of an accepted action (``ACTION_AS_SENT_BYTES`` a
    decision at most), and the text of their own forfeit (a reason of at most
    ``MAX_REASON_CHARS``, in its record and in the result). What the referee adds
    because of them: a cut record per request and one per seat's game, and a
    rejected record whose action was not kept, one per request at most. The game's
    own records (header, draws, actions, events) come from play at the largest
    table (passing seats, which play the longest games, and random ones), the
    longest of a few deals, taken twice over.
    """
    rules = get_rules(game)
    seats = rules.max_players
    played = [honest_replay(tmp_path / f"{seed}.jsonl", game, seats, seed, passing=seed < 2) for seed in range(4)]
    decisions = max(played)
    game_records = max(p.stat().st_size for p in tmp_path.glob("*.jsonl"))
    request = 10 * decisions  # any request number of such a game, in digits to spare
    cut = len(encode_record(CutRecord(seat=seats, request=request, bound="decision", limit=16 << 30))) + 1
    rejected_without_action = (
        len(encode_record(RejectedRecord(seat=seats, request=request, action=encode_raw(None), rule="R" * 64,
                                         message=CONTROL_LOG, ms=1e12)))
        + 1
    )  # fmt: skip
    reason = len(msgspec.json.encode("\U0001f600" * MAX_REASON_CHARS))  # four bytes a printable character at most
    per_seat = seat_game_bytes(MOST, seats) + cut + 2 * reason
    per_decision = ACTION_AS_SENT_BYTES + cut + rejected_without_action
    worst = 2 * game_records + seats * per_seat + (decisions + seats) * per_decision
    assert worst < MAX_REPLAY_BYTES, f"{game} at {seats}: {worst >> 20} MiB possible"
    # The seats' share leaves the game's own records room in the reader's limit.
    assert seats * seat_game_bytes(MOST, seats) <= SEATS_SHARE <= MAX_REPLAY_BYTES - 2 * game_records


# --- real bots, in the sandbox -------------------------------------------------------


@pytest.fixture
def arena() -> Iterator[Path]:
    """A folder open to other users (bots get their own uid), with the passer and the stuffer."""
    base = Path(tempfile.mkdtemp(prefix="famiglia-bytes-", dir="/tmp"))
    os.chmod(base, 0o755)
    shutil.copytree(TEST_BOTS / "passer", base / "passer")
    shutil.copytree(TEST_BOTS / "hostile" / "replay_stuffer", base / "stuffer")
    try:
        yield base
    finally:
        shutil.rmtree(base)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["logs", "illegal"])
async def test_two_replay_stuffers_at_a_full_vendetta_table_leave_a_bounded_replay_that_reads_back(
    mode: str, tmp_path: Path, arena: Path
) -> None:
    """The issue's game: two seats at a default five-seat Vendetta table at every byte limit there is.

    On main before the bound this replay was 452 MB, over the 256 MiB any reader reads.
    """
    passer_bot = load_bot(str(arena / "passer"))
    stuffer = load_bot(str(arena / "stuffer"))
    if mode == "illegal":
        stuffer = msgspec.structs.replace(stuffer, command=[*stuffer.command, "illegal"])
    settings = RefereeSettings(
        clock=Clock(time=TimeControl(startup_ms=10_000, move_ms=5_000, bank_ms=10_000)),
        sandbox=require_level("standard"),
        illegal_action="pass",
    )
    replay = tmp_path / "game.jsonl"
    record = await play_match(
        MatchSpec(game="vendetta", seed=7), [passer_bot, stuffer, passer_bot, stuffer, passer_bot], settings,
        replay_path=replay,
    )  # fmt: skip
    assert record.result.terminations == []  # a cut costs text, not the game

    budget = ReplayBudget(settings.replay, 5)
    per_seat, per_request = kept_bytes(replay)
    assert set(per_seat) == {1, 3}
    assert all(kept <= budget.game_bytes for kept in per_seat.values())
    assert all(kept <= budget.decision_bytes for kept in per_request.values())
    found = cuts(replay)
    assert {(c.seat, c.bound) for c in found} == {(1, "decision"), (3, "decision"), (1, "game"), (3, "game")}
    # The game's own records of a Vendetta game are some 100 KiB; the seats' output is bounded by the settings.
    assert replay.stat().st_size < 2 * budget.game_bytes + (512 << 10)

    records = read_replay(replay)
    assert verify_replay(records) == record.result
    seat_actions = [r for r in records if isinstance(r, ActionRecord) and r.seat in (1, 3)]
    assert all(len(r.action) <= ACTION_AS_SENT_BYTES for r in seat_actions)
    if mode == "illegal":
        assert all(r.substituted for r in seat_actions)
        rejected = [r for r in records if isinstance(r, RejectedRecord)]
        assert len(rejected) == len(seat_actions) and all(bytes(r.action) == b"null" for r in rejected)
    result = CliRunner().invoke(app, ["replay", "verify", str(replay)])
    assert result.exit_code == 0, result.output
    shown = CliRunner().invoke(app, ["replay", "show", str(replay), "--no-events"])
    assert shown.exit_code == 0 and "CUT: seat 1's log lines" in shown.output
    data = build_viewer_data(replay)
    assert data.problem is None
    assert any("seat 3's log lines" in cut for step in data.views["3"] for cut in step.get("cuts", []))
    assert not any("seat 3" in cut for step in data.views["1"] for cut in step.get("cuts", []))
    assert wait_until_gone(arena, 30.0) == []
