"""Replays for the viewer tests, written in-process: random legal play through the engine.

The records are the ones the referee writes (header, chance draws, actions with
their events, log lines, a forfeit, the result), so ``verify_replay`` accepts
them; no bot process is needed, which keeps the browser tests fast.
"""

from __future__ import annotations

import random
from pathlib import Path

import msgspec

from protocol.messages import TimeControl
from referee.games import get_rules
from referee.games.base import RecordingChance, SeededChance
from referee.match import result_of
from referee.match.recorder import ReplayRecorder
from referee.replay import REPLAY_FORMAT, Header, SeatInfo, encode_raw

HOSTILE = "</script><!-- <img src=x onerror=alert(1)> & \u2028"


def write_replay(
    path: Path,
    game: str,
    variants: dict[str, str],
    names: list[str],
    *,
    seed: int = 7,
    forfeit_at: int | None = None,
    forfeit_seat: int = 1,
) -> Path:
    """Play random legal actions to the end; seat ``forfeit_seat`` forfeits at decision ``forfeit_at``.

    Every seat logs a line at its decisions (with HTML in it) so escaping is exercised.
    """
    rules = get_rules(game)
    config = rules.config(variants)
    chance = RecordingChance(SeededChance(seed))
    state = rules.new_game(len(names), config, chance)
    record = ReplayRecorder(path, chance.draws)
    record.begin(
        Header(
            format=REPLAY_FORMAT,
            match=f"{game}-{seed}",
            game=game,
            variants=rules.variants(config),
            config=encode_raw(config),
            seats=[SeatInfo(name=n, command=["bot"]) for n in names],
            seed=seed,
            time=TimeControl(),
            illegal_action="forfeit",
            started="2026-01-01T00:00:00+00:00",
        )
    )
    rng = random.Random(seed)
    request = 0
    while (decision := state.decision()) is not None:
        request += 1
        if forfeit_at is not None and request == forfeit_at and decision.seat == forfeit_seat:
            events = state.forfeit(forfeit_seat)
            record.forfeit(forfeit_seat, request, "timeout", f"no answer in time {HOSTILE}", events)
            continue
        if forfeit_at is not None and request == forfeit_at:
            forfeit_at += 1  # the forfeiting seat's next decision
        action = state.random_action(rng)
        record.log(decision.seat, request, f"seat {decision.seat} thinks {HOSTILE}")
        events = state.apply(decision.seat, action)
        record.action(decision.seat, request, decision.kind, action, (1.0 + request % 7) / 1000, events)
    record.result(result_of(state.outcome()), 0.0)
    record.close()
    return path


def vendetta_replay(path: Path, **kwargs: object) -> Path:
    return write_replay(path, "vendetta", {"round_limit": "3"}, ["alpha", "<b>bravo</b>", "charlie"], **kwargs)  # type: ignore[arg-type]


def sicilianos_replay(path: Path, **kwargs: object) -> Path:
    return write_replay(
        path, "sicilianos", {"turn_limit": "14"}, ["alpha", "<b>bravo</b>", "charlie", "delta"], **kwargs
    )  # type: ignore[arg-type]


def records(path: Path) -> list[dict[str, object]]:
    return [msgspec.json.decode(line) for line in path.read_bytes().splitlines()]
