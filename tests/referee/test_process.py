"""referee.process: what a crashed bot's reason carries.

The draining task reads a bot's stderr while the match runs; these tests
build a BotProcess whose draining task has not run at all, the state a busy
machine leaves it in when a bot prints why it fails and exits at once.
"""

from __future__ import annotations

import os
import sys

import pytest
import trio

from referee.bots import BotSpec
from referee.errors import BotCrashed
from referee.process import BotProcess, spawn
from referee.sandbox import prepare, require_level
from referee.settings import RefereeSettings

SAYS_WHY_AND_EXITS = "import sys; sys.stderr.write('cannot read weights.bin\\n'); sys.stderr.flush(); sys.exit(3)"


@pytest.mark.parametrize("level", ["none", "standard"])
async def test_a_bot_that_exits_before_its_stderr_was_read_is_reported_with_its_last_stderr_line(
    level: str, tmp_path: object
) -> None:
    settings = RefereeSettings(sandbox=require_level(level))
    spec = BotSpec(name="says-why", command=[sys.executable, "-c", SAYS_WHY_AND_EXITS], cwd=str(tmp_path))
    launch = prepare(spec, settings)
    try:
        bot = BotProcess(spec, spawn(launch, spec, settings.bot_environment()), settings, launch)
        with trio.fail_after(60):
            await bot.process.wait()
        error = await bot.crash_error("closed its output")
        assert isinstance(error, BotCrashed)
        assert str(error) == "closed its output: exited with code 3; stderr: cannot read weights.bin"
        await bot.aclose()
    finally:
        launch.release()


async def test_a_missing_program_is_reported_with_the_reason_the_chain_printed(tmp_path: object) -> None:
    settings = RefereeSettings(sandbox=require_level("standard"))
    spec = BotSpec(name="missing", command=["/opt/no-such-bot-program"], cwd=str(tmp_path))
    launch = prepare(spec, settings)
    try:
        bot = BotProcess(spec, spawn(launch, spec, settings.bot_environment()), settings, launch)
        with trio.fail_after(60):
            await bot.process.wait()
        error = str(await bot.crash_error("closed its output"))
        assert "no-such-bot-program" in error.partition("; stderr: ")[2], error
        await bot.aclose()
    finally:
        launch.release()


async def test_a_running_bot_holds_no_pidfd_and_its_exit_is_still_awaited(tmp_path: object) -> None:
    # A referee holding thousands of bots counts descriptors: the pidfd is opened only to wait.
    settings = RefereeSettings(sandbox="none")
    spec = BotSpec(name="reader", command=[sys.executable, "-c", "import sys; sys.stdin.read()"], cwd=str(tmp_path))

    def pidfds() -> int:
        count = 0
        for fd in os.listdir("/proc/self/fd"):
            try:
                count += "pidfd" in os.readlink(f"/proc/self/fd/{fd}")
            except FileNotFoundError:  # the listing's own descriptor, closed since
                pass
        return count

    launch = prepare(spec, settings)
    try:
        before = pidfds()
        bot = BotProcess(spec, spawn(launch, spec, settings.bot_environment()), settings, launch)
        assert pidfds() == before
        await bot.aclose()  # end of input: the bot exits, and its exit is awaited through a pidfd
        assert bot.process.returncode == 0 and pidfds() == before
    finally:
        launch.release()
