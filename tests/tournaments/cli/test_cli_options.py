"""Every option of every command, tried as a careless user would: a value that cannot work is refused.

Each case runs the real command line (Typer's CliRunner) with one bad value and
expects exit code 2, exactly one line saying what is wrong, and no traceback;
and, where the command would create something, that nothing was created.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import TEST_BOTS
from tournaments.cli import app
from tournaments.config.tournament import load_tournament
from tournaments.lifecycle.opening import open_tournament
from tournaments.store import Store

runner = CliRunner()
PASSER = str(TEST_BOTS / "passer")
HUGE = str(10**30)


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with what the cases point at: a tournament store, a replay, a plain file, a folder."""
    root = tmp_path_factory.mktemp("options")
    (root / "a-file").write_text("not a folder\n")
    (root / "a-folder").mkdir()
    (root / "garbage.sqlite").write_bytes(b"not a database" * 50)
    (root / "garbage.jsonl").write_text("not a replay\n")
    (root / "empty.jsonl").write_text("")
    script = root / "bot.py"
    script.write_text("#!/usr/bin/env python3\nprint('hello')\n")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)  # readable, not executable
    good = root / "t.toml"
    good.write_text(tournament_text(""))
    store = Store(root / "t.sqlite")
    open_tournament(store, load_tournament(good))
    store.close()
    return root


def tournament_text(extra: str, *, time: str = "", limits: str = "", entrants: int = 4, head: str = "") -> str:
    bots = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(entrants))
    return (
        f'[tournament]\ngame = "vendetta"\ntable_size = 3\n{head}{extra}\n'
        f"[tournament.time]\n{time}\n[tournament.limits]\n{limits}\n{bots}"
    )


PLAY = ["play", "vendetta", PASSER, PASSER, PASSER]

# (case id, argv with {root} for the fixture folder, a fragment the one line must hold)
SAMPLE_RANDOM = Path(__file__).resolve().parents[3] / "sample_bots" / "random_py"

COMMAND_LINE_CASES: list[tuple[str, list[str], str]] = [
    # check-bot: a clock no bot can meet is the user's mistake, not a failed check
    (
        "check-bot-startup-zero",
        ["check-bot", str(SAMPLE_RANDOM), "--startup-ms", "0"],
        "--startup-ms 0: 0 ms is too short",
    ),
    ("check-bot-move-huge", ["check-bot", str(SAMPLE_RANDOM), "--move-ms", HUGE], "more than a week"),
    # play
    ("play-startup-zero", [*PLAY, "--startup-ms", "0"], "--startup-ms 0: 0 ms is too short"),
    ("play-startup-negative", [*PLAY, "--startup-ms", "-5"], "--startup-ms -5"),
    ("play-move-zero", [*PLAY, "--move-ms", "0"], "--move-ms 0: must be at least 1"),
    ("play-move-negative", [*PLAY, "--move-ms", "-1"], "--move-ms -1"),
    ("play-move-not-a-number", [*PLAY, "--move-ms", "abc"], "'--move-ms'"),
    ("play-move-huge", [*PLAY, "--move-ms", HUGE], "more than a week"),
    ("play-bank-negative", [*PLAY, "--bank-ms", "-1"], "--bank-ms -1"),
    ("play-margin-negative", [*PLAY, "--margin-ms", "-1"], "--margin-ms -1"),
    ("play-game-wall-tiny", [*PLAY, "--game-wall-ms", "5"], "ends every game before its bots start"),
    ("play-seed-negative", [*PLAY, "--seed", "-1"], "--seed -1"),
    ("play-seed-huge", [*PLAY, "--seed", HUGE], "--seed"),
    ("play-illegal-unknown", [*PLAY, "--illegal", "warn"], "--illegal 'warn'"),
    ("play-sandbox-unknown", [*PLAY, "--sandbox", "tight"], "tight"),
    ("play-variant-no-equals", [*PLAY, "--variant", "control"], "KEY=VALUE"),
    ("play-variant-unknown", [*PLAY, "--variant", "colour=red"], "colour"),
    ("play-variant-bad-value", [*PLAY, "--variant", "control=nobody"], "nobody"),
    ("play-replay-a-folder", [*PLAY, "--replay", "{root}/a-folder"], "is a folder"),
    ("play-replay-under-a-file", [*PLAY, "--replay", "{root}/a-file/r.jsonl"], "is a file"),
    ("play-replay-exists", [*PLAY, "--replay", "{root}/garbage.jsonl"], "already exists"),
    ("play-replay-in-proc", [*PLAY, "--replay", "/proc/r.jsonl"], "cannot write in /proc"),
    ("play-unknown-game", ["play", "chess", PASSER, PASSER, PASSER], "chess"),
    ("play-too-few-bots", ["play", "vendetta", PASSER, PASSER], "vendetta is for 3 to 5 players, not 2"),
    ("play-too-many-bots", ["play", "vendetta", *[PASSER] * 6], "vendetta is for 3 to 5 players, not 6"),
    ("play-no-bots", ["play", "vendetta"], "Missing argument"),
    ("play-empty-bot", ["play", "vendetta", PASSER, PASSER, ""], "empty"),
    ("play-missing-bot", ["play", "vendetta", PASSER, PASSER, "{root}/no-such-bot"], "no-such-bot"),
    ("play-bot-not-executable", ["play", "vendetta", PASSER, PASSER, "{root}/bot.py"], "chmod +x"),
    ("play-bot-folder-without-toml", ["play", "vendetta", PASSER, PASSER, "{root}/a-folder"], "no bot.toml"),
    # demo
    ("demo-folder-is-a-file", ["demo", "--folder", "{root}/a-file"], "is a file, not a folder"),
    ("demo-folder-in-proc", ["demo", "--folder", "/proc/x"], "cannot write in /proc"),
    ("demo-folder-under-a-file", ["demo", "--folder", "{root}/a-file/runs"], "is a file"),
    ("demo-workers-zero", ["demo", "--folder", "{root}/demo", "--workers", "0"], "--workers 0"),
    ("demo-workers-huge", ["demo", "--folder", "{root}/demo", "--workers", "1000000"], "--workers 1000000"),
    # tournament run
    ("run-no-file", ["tournament", "run", "{root}/none.toml"], "no such file"),
    ("run-file-is-a-folder", ["tournament", "run", "{root}/a-folder"], "is a folder"),
    ("run-file-not-toml", ["tournament", "run", "{root}/garbage.jsonl"], "not valid TOML"),
    ("run-db-is-a-folder", ["tournament", "run", "{root}/t.toml", "--db", "{root}/a-folder"], "is a folder"),
    ("run-db-under-a-file", ["tournament", "run", "{root}/t.toml", "--db", "{root}/a-file/t.sqlite"], "is a file"),
    ("run-db-in-proc", ["tournament", "run", "{root}/t.toml", "--db", "/proc/t.sqlite"], "cannot write in /proc"),
    (
        "run-db-not-a-database",
        ["tournament", "run", "{root}/t.toml", "--db", "{root}/garbage.sqlite"],
        "not a database",
    ),
    ("run-concurrency-zero", ["tournament", "run", "{root}/t.toml", "--concurrency", "0"], "--concurrency 0"),
    ("run-concurrency-negative", ["tournament", "run", "{root}/t.toml", "--concurrency", "-3"], "--concurrency -3"),
    ("run-concurrency-huge", ["tournament", "run", "{root}/t.toml", "--concurrency", "1000000000"], "--concurrency"),
    ("run-workers-zero", ["tournament", "run", "{root}/t.toml", "--workers", "0"], "--workers 0"),
    ("run-workers-huge", ["tournament", "run", "{root}/t.toml", "--workers", "1000000"], "--workers 1000000"),
    ("run-workers-not-a-number", ["tournament", "run", "{root}/t.toml", "--workers", "many"], "'--workers'"),
    ("run-deals-from-missing", ["tournament", "run", "{root}/t.toml", "--deals-from", "{root}/none.sqlite"], "no such"),
    (
        "run-deals-from-not-a-database",
        ["tournament", "run", "{root}/t.toml", "--db", "{root}/new.sqlite", "--deals-from", "{root}/garbage.sqlite"],
        "not a database",
    ),
    ("run-deals-from-folder", ["tournament", "run", "{root}/t.toml", "--deals-from", "{root}/a-folder"], "folder"),
    # reading a store
    ("standings-no-db", ["standings", "--db", "{root}/none.sqlite"], "no such results database"),
    ("standings-db-folder", ["standings", "--db", "{root}/a-folder"], "no such results database"),
    ("standings-db-garbage", ["standings", "--db", "{root}/garbage.sqlite"], "not a database"),
    ("standings-format-xml", ["standings", "--db", "{root}/t.sqlite", "--format", "xml"], "--format 'xml'"),
    ("standings-no-db-option", ["standings"], "Missing option '--db'"),
    ("crosstable-no-db", ["crosstable", "--db", "{root}/none.sqlite"], "no such results database"),
    ("games-format-xml", ["games", "--db", "{root}/t.sqlite", "--format", "xml"], "--format 'xml'"),
    ("games-format-empty", ["games", "--db", "{root}/t.sqlite", "--format", ""], "--format ''"),
    ("games-entrant-unknown", ["games", "--db", "{root}/t.sqlite", "--entrant", "nobody"], "no entrant called"),
    ("games-termination-unknown", ["games", "--db", "{root}/t.sqlite", "--termination", "boom"], "--termination"),
    ("report-out-folder", ["report", "--db", "{root}/t.sqlite", "--out", "{root}/a-folder"], "is a folder"),
    ("report-out-under-a-file", ["report", "--db", "{root}/t.sqlite", "--out", "{root}/a-file/r.html"], "is a file"),
    ("report-out-in-proc", ["report", "--db", "{root}/t.sqlite", "--out", "/proc/r.html"], "--out /proc/r.html"),
    ("report-no-db", ["report", "--db", "{root}/none.sqlite"], "no such results database"),
    # replays
    ("verify-missing", ["replay", "verify", "{root}/none.jsonl"], "none.jsonl"),
    ("verify-folder", ["replay", "verify", "{root}/a-folder"], "a-folder"),
    ("verify-garbage", ["replay", "verify", "{root}/garbage.jsonl"], "garbage.jsonl"),
    ("verify-empty", ["replay", "verify", "{root}/empty.jsonl"], "empty.jsonl"),
    ("show-garbage", ["replay", "show", "{root}/garbage.jsonl"], "garbage.jsonl"),
    ("view-missing", ["replay", "view", "{root}/none.jsonl"], "none.jsonl"),
    ("view-out-is-the-replay", ["replay", "view", "{root}/garbage.jsonl", "--out", "{root}/garbage.jsonl"], "itself"),
    ("view-out-folder", ["replay", "view", "{root}/garbage.jsonl", "--out", "{root}/a-folder"], "is a folder"),
    # the command itself
    ("unknown-command", ["tournaments"], "No such command"),
    ("unknown-option", ["standings", "--database", "x"], "No such option"),
]


def assert_refused_in_one_line(argv: list[str], fragment: str) -> str:
    result = runner.invoke(app, argv)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert len(lines) == 1, result.output
    assert lines[0].startswith("famiglia: error: ") and fragment in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(("argv", "fragment"), [case[1:] for case in COMMAND_LINE_CASES],
                         ids=[case[0] for case in COMMAND_LINE_CASES])  # fmt: skip
def test_a_command_line_value_that_cannot_work_is_refused_in_one_line(
    place: Path, argv: list[str], fragment: str
) -> None:
    before = _contents(place)
    assert_refused_in_one_line([arg.replace("{root}", str(place)) for arg in argv], fragment)
    assert _contents(place) == before, "a refused command created something"


def _contents(folder: Path) -> list[str]:
    """What is in ``folder``, without the -wal and -shm files SQLite keeps beside a store it opened."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(("-wal", "-shm")))


# (case id, tournament file text, the fragment its one problem line must hold)
FILE_CASES: list[tuple[str, str, str]] = [
    ("startup-zero", tournament_text("", time="startup_ms = 0"), "tournament.time.startup_ms: 0 ms is too short"),
    ("move-zero", tournament_text("", time="move_ms = 0"), "tournament.time.move_ms"),
    ("move-huge", tournament_text("", time="move_ms = 9000000000000"), "more than a week"),
    ("move-text", tournament_text("", time='move_ms = "1s"'), "tournament.time.move_ms"),
    ("bank-negative", tournament_text("", time="bank_ms = -1"), "tournament.time.bank_ms"),
    ("game-wall-tiny", tournament_text("", time="game_wall_ms = 5"), "tournament.time.game_wall_ms"),
    ("game-wall-below-startup", tournament_text("", time="game_wall_ms = 500\nstartup_ms = 1000"), "less than"),
    ("time-typo", tournament_text("", time="move = 5"), "did you mean 'move_ms'"),
    ("memory-tiny", tournament_text("", limits="memory_mb = 1"), "tournament.limits.memory_mb: 1 cannot work"),
    ("memory-huge", tournament_text("", limits="memory_mb = 9000000000000"), "tournament.limits.memory_mb"),
    ("open-files-tiny", tournament_text("", limits="open_files = 3"), "tournament.limits.open_files"),
    ("cpu-negative", tournament_text("", limits="cpu_s = -1"), "tournament.limits.cpu_s"),
    ("processes-text", tournament_text("", limits='processes = "many"'), "tournament.limits.processes"),
    ("memory-kind", tournament_text("", limits='memory_kind = "rss"'), "tournament.limits.memory_kind"),
    ("concurrency-zero", tournament_text("concurrency = 0"), "tournament.concurrency"),
    ("concurrency-huge", tournament_text("concurrency = 100000000"), "tournament.concurrency"),
    ("workers-negative", tournament_text("workers = -1"), "tournament.workers"),
    ("workers-huge", tournament_text("workers = 1000000"), "tournament.workers"),
    ("games-zero", tournament_text("games_per_entrant = 0"), "tournament.games_per_entrant"),
    ("games-huge", tournament_text("games_per_entrant = 1000000000"), "more than the 1,000,000"),
    ("repetitions-zero", tournament_text("repetitions = 0"), "tournament.repetitions"),
    ("repetitions-huge", tournament_text("repetitions = 100000000"), "more than the 1,000,000"),
    ("everyone-at-every-table-too-many", tournament_text("", entrants=120), "more than the 1,000,000"),
    ("max-games-zero", tournament_text('format = "head-to-head"\na = "p0"\nb = "p1"\nmax_games = 0'), "max_games"),
    (
        "max-games-huge",
        tournament_text('format = "head-to-head"\na = "p0"\nb = "p1"\nmax_games = 100000000'),
        "more than the 1,000,000",
    ),
    ("table-too-big", tournament_text("", entrants=9).replace("table_size = 3", "table_size = 9"), "not 9"),
    ("table-sizes-empty", tournament_text("").replace("table_size = 3", "table_sizes = []"), "empty"),
    ("table-sizes-twice", tournament_text("").replace("table_size = 3", "table_sizes = [3, 3]"), "listed twice"),
    ("name-empty", tournament_text('name = ""'), "tournament.name: empty"),
    ("replays-empty", tournament_text('replays = ""'), "tournament.replays: empty"),
    ("replays-a-file", tournament_text('replays = "a-file"'), "is a file"),
    ("seed-text", tournament_text('seed = "one"'), "tournament.seed"),
    ("illegal-unknown", tournament_text('illegal_action = "warn"'), "tournament.illegal_action"),
    ("sandbox-unknown", tournament_text('sandbox = "tight"'), "tournament.sandbox"),
    ("format-unknown", tournament_text('format = "swiss"'), "tournament.format"),
    ("game-unknown", tournament_text("").replace('"vendetta"', '"chess"'), "unknown game 'chess'"),
    ("variant-unknown", tournament_text('variants = { colour = "red" }'), "tournament.variants"),
    ("hero-unknown", tournament_text('format = "gauntlet"\nhero = "nobody"'), "tournament.hero"),
    (
        "head-to-head-short",
        tournament_text('format = "head-to-head"\na = "p0"\nb = "p1"', entrants=3),
        "needs 4 entrants",
    ),
    ("head-to-head-same", tournament_text('format = "head-to-head"\na = "p0"\nb = "p0"'), "different entrants"),
    (
        "head-to-head-two-sizes",
        tournament_text('format = "head-to-head"\na = "p0"\nb = "p1"').replace(
            "table_size = 3", "table_sizes = [3, 4]"
        ),
        "one table size",
    ),
    ("elo-nan", tournament_text('format = "head-to-head"\na = "p0"\nb = "p1"\nelo1 = nan'), "tournament.elo1"),
    ("alpha-one", tournament_text('format = "head-to-head"\na = "p0"\nb = "p1"\nalpha = 1.0'), "tournament.alpha"),
    ("too-few-entrants", tournament_text("", entrants=2), "cannot fill a table of 3"),
    ("unknown-key", tournament_text("concurency = 2"), "did you mean 'concurrency'"),
    ("bot-not-executable", tournament_text("").replace(PASSER, "./bot.py", 1), "chmod +x"),
]


@pytest.mark.parametrize(("text", "fragment"), [case[1:] for case in FILE_CASES], ids=[case[0] for case in FILE_CASES])
def test_a_tournament_file_value_that_cannot_work_is_refused_before_any_store_exists(
    place: Path, tmp_path: Path, text: str, fragment: str
) -> None:
    (tmp_path / "a-file").write_text("")
    script = tmp_path / "bot.py"
    script.write_text("print('hello')\n")
    os.chmod(script, 0o644)
    toml = tmp_path / "t.toml"
    toml.write_text(text)
    line = assert_refused_in_one_line(["tournament", "run", str(toml)], fragment)
    assert str(toml) in line
    assert not (tmp_path / "t.sqlite").exists(), "a refused tournament left a results file"


def test_a_good_file_is_not_refused_by_these_checks(place: Path, tmp_path: Path) -> None:
    """The baseline the cases above change one value of: it loads."""
    toml = tmp_path / "t.toml"
    toml.write_text(tournament_text("concurrency = 2", time="startup_ms = 100\ngame_wall_ms = 0"))
    assert load_tournament(toml).time.startup_ms == 100
