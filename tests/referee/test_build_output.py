"""What a build said, kept for its author: its whole output (its ends when long) and a reason quoting the
first error, however the build ended."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.bot_folder import pack_folder
from referee.bots import BotBuildFailed, load_bot
from referee.build import OUTPUT_ENDS, build_bot, build_output
from referee.settings import DEFAULT_SETTINGS
from tests.referee.test_build_containment import bot_folder

# What gcc and make print for one missing semicolon, with warnings before it and more noise after it
# than the kept ends hold: the reason used to be the last three lines, make's, and lost gcc's error.
GCC_LIKE = """
import sys
print("gcc -O2 -o bot bot.c")
print("bot.c:1:10: warning: unused variable 'x' [-Wunused-variable]")
print("bot.c:3:5: error: expected ';' before '}' token", file=sys.stderr)
print("bot.c:3:5: <script>alert('build')</script> \x1b[31mred\x1b[0m")
for i in range(4000):
    print(f"bot.c:{i + 4}:1: note: in expansion of macro 'STEP' ({i})")
print("make: *** [Makefile:2: bot] Error 1", file=sys.stderr)
sys.exit(2)
"""


def digest_of(folder: Path) -> str:
    return pack_folder(folder)[0]


def test_a_failed_build_s_reason_quotes_its_first_error_and_its_output_keeps_both_ends(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "python3 -u make.py", files={"make.py": GCC_LIKE})
    with pytest.raises(BotBuildFailed) as failed:
        build_bot(load_bot(str(folder)))
    assert str(failed.value) == "builder: build failed (exit 2): bot.c:3:5: error: expected ';' before '}' token"
    output = build_output(digest_of(folder), DEFAULT_SETTINGS)
    assert output is not None
    assert output.startswith("gcc -O2 -o bot bot.c\nbot.c:1:10: warning")
    assert "bot.c:3:5: error: expected ';'" in output
    assert output.rstrip().endswith("make: *** [Makefile:2: bot] Error 1")
    left_out = output.split("\n\n[... ", 1)[1].split(" bytes of the build's output left out here ...]", 1)[0]
    kept = len(output.encode()) - len(f"\n\n[... {left_out} bytes of the build's output left out here ...]\n\n")
    assert kept == 2 * OUTPUT_ENDS  # the first and the last 32 KiB exactly, the rest counted
    assert int(left_out.replace(",", "")) > 0


def test_a_good_build_s_output_is_kept_whole_and_a_bot_without_a_build_has_none(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "sh -c 'echo compiling; echo done >&2'")
    build_bot(load_bot(str(folder)))
    assert build_output(digest_of(folder), DEFAULT_SETTINGS) == "compiling\ndone\n"
    quiet = bot_folder(tmp_path, "true", name="quiet")
    build_bot(load_bot(str(quiet)))
    assert build_output(digest_of(quiet), DEFAULT_SETTINGS) == ""  # ran, said nothing: not "no build"
    assert build_output("0" * 64, DEFAULT_SETTINGS) is None


def test_a_build_that_runs_out_of_time_keeps_what_it_said_before(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "sh -c 'echo fetching crates; sleep 60'")
    with pytest.raises(BotBuildFailed, match="build took longer than 1 s"):
        build_bot(load_bot(str(folder)), timeout_s=1)
    assert build_output(digest_of(folder), DEFAULT_SETTINGS) == "fetching crates\n"


def test_a_copy_evicted_from_the_cache_takes_its_build_output_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from referee import cache_space
    from referee.build import build_cache, release_build

    monkeypatch.setenv("FAMIGLIA_BOT_CACHE", str(tmp_path / "cache"))  # evicting here touches no other test's copy
    folder = bot_folder(tmp_path, "sh -c 'echo compiled'")
    built = build_bot(load_bot(str(folder)))
    key = f"{digest_of(folder)}-{DEFAULT_SETTINGS.sandbox}"
    assert build_output(digest_of(folder), DEFAULT_SETTINGS) == "compiled\n"
    release_build(Path(built.cwd))
    assert key in cache_space.keep_within(build_cache(), 1)  # past a one-byte bound, it goes
    assert build_output(digest_of(folder), DEFAULT_SETTINGS) is None  # and no record of it stays behind
