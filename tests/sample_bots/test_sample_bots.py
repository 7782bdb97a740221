"""Every sample bot plays real matches of both games as a subprocess, within the protocol."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from referee.bots import BotSpec, load_bot
from referee.build import build_bot
from referee.match import MatchSpec
from referee.play import play_match
from referee.replay import read_replay, verify_replay
from referee.seats import open_pool
from referee.settings import RefereeSettings
from tests.conftest import SAMPLE_BOTS, TEST_BOTS, wait_until_gone
from tests.protocol.test_protocol_doc import assert_traffic_matches_schema, play_tapped

NEEDS = {"node_js": "node", "c_bot": "gcc"}
FOLDERS = ["random_py", "greedy_py", "node_js", "c_bot"]
ALL_FOLDERS = [*FOLDERS, "sicilianos_py"]


def sample(folder: str) -> BotSpec:
    tool = NEEDS.get(folder)
    if tool is not None and shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    return build_bot(load_bot(str(SAMPLE_BOTS / folder)))


@pytest.mark.slow
@pytest.mark.parametrize("game", ["vendetta", "sicilianos"])
async def test_all_four_sample_bots_play_a_whole_game_within_the_protocol(game: str) -> None:
    bots = [sample(folder) for folder in FOLDERS]
    taps = await play_tapped(game, bots, seed=17)
    assert assert_traffic_matches_schema(game, taps) > 40
    for tap in taps:
        kinds = [m["type"] for m in tap.from_bot]
        assert kinds[0] == "ready" and kinds.count("action") >= 1


@pytest.mark.slow
@pytest.mark.parametrize("folder", FOLDERS)
async def test_each_sample_bot_finishes_a_five_player_vendetta_with_a_verified_replay(
    folder: str, tmp_path: Path
) -> None:
    bot = sample(folder)
    passer = load_bot(str(TEST_BOTS / "passer"))
    replay = tmp_path / "game.jsonl"
    record = await play_match(MatchSpec(game="vendetta", seed=3), [bot, passer, bot, passer, bot], replay_path=replay)
    assert record.result.terminations == []
    assert verify_replay(read_replay(replay)) == record.result
    assert wait_until_gone(Path(bot.cwd)) == []


@pytest.mark.slow
@pytest.mark.parametrize("folder", ALL_FOLDERS)
async def test_a_warm_process_plays_game_after_game(folder: str) -> None:
    bot = sample(folder)
    settings = RefereeSettings()
    async with open_pool(settings) as pool:
        from referee.match import run_match

        processes = []
        for seed in range(3):
            seats = [await pool.acquire(bot) for _ in range(3)]
            record = await run_match(MatchSpec(game="vendetta", seed=seed), seats, settings)
            assert record.result.terminations == []
            processes.append(sorted(id(seat) for seat in seats))
            for seat in seats:
                pool.release(seat, bot)
        assert pool.started == 3 and pool.reused == 6
        assert processes[0] == processes[1] == processes[2]
    assert wait_until_gone(Path(bot.cwd)) == []
