"""A policy entered as a bot (training/policy_bot.py): it sees what the environment showed it, check-bot
passes it in both games, and a policy that picks a refused step still plays a legal action."""

from __future__ import annotations

import io
import random
import textwrap
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from protocol.codec import encode_message
from protocol.messages import PROTOCOL_VERSION, Request, Start, TimeControl
from referee.games import get_rules
from referee.games.base import SeededChance
from tests.tournaments.hosting.checkbot.bot_checks import failing, run_check
from training.aec import env
from training.decisions import Asked, Observation, decision_from_request
from training.policy_bot import serve_policy


def _highest(observation: Observation) -> int:
    """A policy that needs no training: the highest number the mask allows."""
    return int(np.flatnonzero(observation["action_mask"])[-1])


def _lines(game: str, n: int, seed: int, decisions: int) -> tuple[bytes, list[int]]:
    """The referee's lines for seat-by-seat requests of a seeded random game, and the seat of each request."""
    rules = get_rules(game)
    config = rules.config({})
    state = rules.new_game(n, config, SeededChance(seed))
    rng = random.Random(seed)
    start = Start(
        protocol=PROTOCOL_VERSION,
        game=game,
        match="m",
        seat=0,
        players=n,
        names=[f"s{i}" for i in range(n)],
        variants=rules.variants(config),
        config=config,
        time=TimeControl(),
    )
    out = [encode_message(start)]
    seats = []
    for request_id in range(1, decisions + 1):
        decision = state.decision()
        assert decision is not None
        if decision.seat == 0:
            request: Request[Any, Any, Any] = Request(
                id=request_id,
                decision=decision.kind,
                view=state.view(0),
                events=[],
                options=decision.options,
                constraints=decision.constraints,
                time_ms=1000,
                bank_ms=0,
            )
            out.append(encode_message(request))
            seats.append(request_id)
        state.apply(decision.seat, state.random_action(rng))
    return b"".join(out), seats


@pytest.mark.parametrize("game", ["vendetta", "sicilianos"])
def test_the_bot_answers_what_the_environment_would_make_of_the_same_policy(game: str) -> None:
    lines, asked = _lines(game, 3, 4, 60)
    stdout = io.BytesIO()
    serve_policy(_highest, name="highest", stdin=io.BytesIO(lines), stdout=stdout)
    answers = [msgspec.json.decode(line) for line in stdout.getvalue().splitlines()]
    assert answers[0] == {"type": "ready", "name": "highest"}
    assert [a["id"] for a in answers[1:]] == asked
    # The environment, given each request's view and decision, makes the same action from the same policy.
    rules = get_rules(game)
    aec = env(game, 3)
    for line, answer in zip(lines.splitlines()[1:], answers[1:], strict=True):
        message = msgspec.json.decode(line)
        view, decision = decision_from_request(rules, 0, message)
        steps = Asked(aec.encoding, view, decision)
        made = None
        while made is None:
            made = steps.choose(_highest({"observation": steps.vector(), "action_mask": steps.mask()}))
        assert answer["action"] == msgspec.to_builtins(made)


def test_a_step_the_mask_refuses_is_replaced_by_a_legal_one_and_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    lines, asked = _lines("sicilianos", 3, 2, 40)
    stdout = io.BytesIO()
    serve_policy(lambda observation: -1, name="sloppy", stdin=io.BytesIO(lines), stdout=stdout)
    answers = [msgspec.json.decode(line) for line in stdout.getvalue().splitlines()[1:]]
    assert [a["id"] for a in answers] == asked
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 1 and "the policy chose a step the mask refuses" in errors[0]


def test_a_view_policy_gets_the_view_struct() -> None:
    seen: list[Any] = []

    def policy(observation: Observation) -> int:
        seen.append(observation["view"])
        return _highest(observation)

    lines, _ = _lines("vendetta", 3, 1, 10)
    serve_policy(policy, observation="view", stdin=io.BytesIO(lines), stdout=io.BytesIO())
    assert seen and all(type(view).__name__ == "VendettaView" for view in seen)


BOT = textwrap.dedent(
    """
    import numpy as np

    from training.policy_bot import serve_policy

    weights = {}


    def policy(observation):
        mask = observation["action_mask"]
        vector = observation["observation"]
        key = (mask.size, vector.size)
        if key not in weights:  # a fixed linear policy, as a trained one would load from a file
            weights[key] = np.random.default_rng(0).normal(size=key).astype(np.float32)
        scores = weights[key] @ vector
        scores[mask == 0] = -np.inf
        return int(np.argmax(scores))


    serve_policy(policy, name="linear")
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("game", ["vendetta", "sicilianos"])
def test_check_bot_passes_a_policy_served_as_a_bot(tmp_path: Path, game: str) -> None:
    folder = tmp_path / "linear"
    folder.mkdir()
    (folder / "bot.py").write_text(BOT, encoding="utf-8")
    (folder / "bot.toml").write_text('name = "linear"\ncommand = "python bot.py"\n', encoding="utf-8")
    tmp_path.chmod(0o755)
    report = run_check(folder, game)
    assert failing(report) == [], [r for r in report.checks if r.status == "fail"]
    assert report.passed and report.thinking.decisions > 50
