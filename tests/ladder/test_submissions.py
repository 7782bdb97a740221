"""Submissions: an upload is built in the cache and run through check-bot; only a pass is accepted."""

from __future__ import annotations

from pathlib import Path

import msgspec

from ladder.config import SubmissionSection
from ladder.submissions import check_submission, save_upload
from ladder.upload import inspect_upload
from referee.settings import RefereeSettings
from tests.ladder.helpers import BROKEN_BOT, SAMPLE_BOTS, upload_of

SETTINGS = RefereeSettings(sandbox="none")


async def checked(tmp_path: Path, folder: Path) -> tuple[bool, str, str, bool]:
    data = upload_of(folder)
    digest = inspect_upload(data, SubmissionSection())
    save_upload(tmp_path / "uploads", digest, data)
    verdict, spec = await check_submission(tmp_path / "uploads", digest, "ann", "vendetta", SETTINGS)
    return verdict.accepted, verdict.reason, verdict.report, spec is not None


async def test_a_sample_bot_passes_and_comes_back_ready_to_play(tmp_path: Path) -> None:
    accepted, reason, report, ready = await checked(tmp_path, SAMPLE_BOTS / "random_py")
    assert accepted and ready and "passed check-bot" in reason
    assert msgspec.json.decode(report)["passed"] is True


async def test_a_bot_that_fails_check_bot_is_rejected_with_the_failing_check(tmp_path: Path) -> None:
    accepted, reason, report, ready = await checked(tmp_path, BROKEN_BOT)
    assert not accepted and not ready
    assert reason.startswith("check-bot: request ids")
    assert msgspec.json.decode(report)["passed"] is False


async def test_a_bot_whose_build_fails_is_rejected_with_the_build_s_words(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text(
        'name = "b"\ncommand = "./b"\nbuild = "sh -c \'echo no compiler here >&2; exit 3\'"\n'
    )
    accepted, reason, report, ready = await checked(tmp_path, bot)
    assert not accepted and not ready and report == ""
    assert reason.startswith("build:") and "no compiler here" in reason


async def test_a_bot_toml_that_is_not_toml_is_rejected(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text("this is = = not toml")
    accepted, reason, _, _ = await checked(tmp_path, bot)
    assert not accepted and "not valid TOML" in reason
