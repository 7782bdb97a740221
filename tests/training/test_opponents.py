"""The single-agent environment against real bots (training/opponents.py): sample bots in their sandbox,
warm processes, the referee's deals, a hostile opponent contained, every process gone at close."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from referee.bots import BotSpecError
from referee.games import get_rules
from referee.games.base import SeededChance
from tests.conftest import (
    ROOT,
    SAMPLE_BOTS,
    TEST_BOTS,
    assert_no_bot_outlived_its_referee,
    processes_in,
    wait_until_gone,
)
from training.opponents import OpponentsEnv

pytestmark = pytest.mark.slow


def _play(env: OpponentsEnv, seed: int, rng: np.random.Generator) -> tuple[float, dict[str, object], int]:
    seen, info = env.reset(seed=seed)
    done, reward, steps = bool(info.get("result")), 0.0, 0
    while not done:
        assert env.observation_space.contains(seen)
        seen, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(seen["action_mask"]))))
        assert not truncated
        steps += 1
    return reward, info, steps


@pytest.mark.parametrize(
    ("game", "opponents"),
    [
        ("vendetta", ["random_py", "greedy_py", "node_js"]),
        ("sicilianos", ["sicilianos_py", "random_py"]),
    ],
)
def test_a_learner_plays_whole_games_against_sample_bots_kept_warm(game: str, opponents: list[str]) -> None:
    if "node_js" in opponents and shutil.which("node") is None:
        opponents = [bot for bot in opponents if bot != "node_js"] + ["random_py"]
    env = OpponentsEnv(game, [str(SAMPLE_BOTS / bot) for bot in opponents], seat=1)
    try:
        rng = np.random.default_rng(0)
        for seed in range(3):
            reward, info, steps = _play(env, seed, rng)
            result = info["result"]
            assert isinstance(result, dict)
            assert result["terminations"] == []  # no bot failed
            assert reward == pytest.approx(1 - 2 * (result["ranks"][1] - 1) / len(opponents))
            assert steps > 0
        assert env._pool is not None and env._pool.reused > 0  # later games ran on the same processes
    finally:
        env.close()


def test_a_seed_deals_what_the_engine_deals_and_a_new_reset_abandons_the_game_in_play() -> None:
    env = OpponentsEnv("vendetta", [str(SAMPLE_BOTS / "random_py")] * 2, seat=0)
    try:
        first, _ = env.reset(seed=11)
        env.step(int(np.flatnonzero(first["action_mask"])[-1]))  # in the middle of a game ...
        again, _ = env.reset(seed=11)  # ... a reset starts the deal again
        rules = get_rules("vendetta")
        state = rules.new_game(3, rules.config({}), SeededChance(11))
        decision = state.decision()
        assert decision is not None and decision.seat == 0
        expected = env.encoding.observe(state.view(0), decision)
        assert np.array_equal(first["observation"], expected)
        assert np.array_equal(again["observation"], expected)
        assert env.game_seed == 11
    finally:
        env.close()


def test_an_opponent_that_crashes_forfeits_and_the_learners_game_goes_on() -> None:
    env = OpponentsEnv(
        "vendetta", [str(TEST_BOTS / "hostile" / "crash_at_start"), str(SAMPLE_BOTS / "random_py")], seat=2
    )
    try:
        reward, info, steps = _play(env, 3, np.random.default_rng(1))
        result = info["result"]
        assert isinstance(result, dict)
        assert [t["seat"] for t in result["terminations"]] == [0]
        assert result["terminations"][0]["kind"] == "crash"
        assert 2 not in result["forfeited"]
        assert steps > 0 and reward >= 0.0  # the crashed seat ranks last
    finally:
        env.close()


def test_close_stops_every_bot_process(tmp_path: Path) -> None:
    folder = tmp_path / "random_py"
    shutil.copytree(SAMPLE_BOTS / "random_py", folder)
    tmp_path.chmod(0o755)  # the sandbox runs the bot as a uid of its own, which must read its folder
    folder.chmod(0o755)
    env = OpponentsEnv("sicilianos", [str(folder)] * 2)
    first, _ = env.reset(seed=1)
    env.step(int(np.flatnonzero(first["action_mask"])[0]))
    assert processes_in(folder)  # the opponents are running, mid-game
    env.close()
    assert wait_until_gone(folder) == []
    with pytest.raises(RuntimeError, match="closed"):
        env.reset(seed=2)


def test_a_bot_that_is_not_there_is_one_line() -> None:
    with pytest.raises(BotSpecError, match="no bot.toml|not a folder") as caught:
        OpponentsEnv("vendetta", ["sample_bots/nothing_here", "sample_bots/random_py"])
    assert "\n" not in str(caught.value)


def test_a_step_after_the_end_says_to_reset() -> None:
    env = OpponentsEnv("sicilianos", [str(SAMPLE_BOTS / "random_py")] * 2)
    try:
        _play(env, 4, np.random.default_rng(0))
        with pytest.raises(RuntimeError, match=r"call reset\(\)"):
            env.step(0)
    finally:
        env.close()


KILLED = """
import sys
import numpy as np
from training.opponents import OpponentsEnv

env = OpponentsEnv("vendetta", [sys.argv[1]] * 2)
seen, _ = env.reset(seed=1)
env.step(int(np.flatnonzero(seen["action_mask"])[0]))
print("playing", flush=True)
sys.stdin.read()  # until the test kills this process
"""


def test_no_bot_outlives_a_training_process_that_is_killed(tmp_path: Path) -> None:
    folder = tmp_path / "random_py"
    shutil.copytree(SAMPLE_BOTS / "random_py", folder)
    tmp_path.chmod(0o755)
    folder.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    trainer = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    try:
        assert trainer.stdout is not None and trainer.stdout.readline() == b"playing\n"
        assert processes_in(folder)
    finally:
        trainer.kill()
        trainer.wait()
    assert_no_bot_outlived_its_referee(folder)
