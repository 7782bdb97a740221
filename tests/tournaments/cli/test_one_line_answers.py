"""Inputs that used to get a partial or wrong answer: each is now one line on stderr, exit 2, or simply works.

Issue #39, item 7: a constrained count out of range, a file saved with a byte-order
mark, ``~`` in a bot's path, ``human`` where only ``famiglia play`` seats one, missing
replays at ``famiglia report``, and a replay whose header is another game's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from referee.games import get_rules
from referee.replay import encode_raw
from tests.conftest import TEST_BOTS
from tests.tournaments.replay_factory import vendetta_replay
from tournaments.cli import app
from tournaments.config.tournament import load_tournament

runner = CliRunner()
PASSER = str(TEST_BOTS / "passer")


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("famiglia: error:"), output
    assert "Traceback" not in output
    return lines[0]


def tournament_file(folder: Path, extra: str = "", bot: str = PASSER, name: str = "t.toml") -> Path:
    path = folder / name
    entrants = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{PASSER if i else bot}"\n' for i in range(3))
    path.write_text('[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 3\n' + extra + entrants)
    return path


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("games_per_entrant = 0", "tournament.games_per_entrant: must be 1 or more games, got 0"),
        ("games_per_entrant = -3", "tournament.games_per_entrant: must be 1 or more games, got -3"),
        ('games_per_entrant = "24"', "tournament.games_per_entrant: expected a whole number of games, 1 or more, got '24'"),
        ("[tournament.format]\ngames_per_entrant = 0", "tournament.format.games_per_entrant: must be 1 or more games"),
        ("[tournament.limits]\nmemory_mb = -1", "tournament.limits.memory_mb: must be 0 (no limit) or 32 to 16777216 MiB, got -1"),
        ("[tournament.time]\ngame_wall_ms = -5", "tournament.time.game_wall_ms: must be 0 (no limit) or 100 to 604800000 milliseconds, got -5"),
    ],
    ids=["games_per_entrant 0", "games_per_entrant negative", "games_per_entrant text", "in its section",
         "a limit below 0", "the game's wall limit below 0"],
)  # fmt: skip
def test_a_count_out_of_range_names_the_key_the_value_and_the_range(tmp_path: Path, setting: str, said: str) -> None:
    done = runner.invoke(app, ["tournament", "run", str(tournament_file(tmp_path, setting + "\n"))])
    assert done.exit_code == 2, done.output
    line = one_error_line(done.output)
    assert said in line and "Annotated" not in line
    assert not (tmp_path / "t.sqlite").exists()


def test_a_tournament_file_saved_with_a_byte_order_mark_reads_as_the_same_file(tmp_path: Path) -> None:
    plain = tournament_file(tmp_path, name="plain.toml")
    marked = tmp_path / "notepad.toml"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert load_tournament(marked) == load_tournament(plain)


def test_a_non_utf8_byte_after_a_byte_order_mark_is_named_where_it_is_in_the_file(tmp_path: Path) -> None:
    marked = tmp_path / "t.toml"
    marked.write_bytes(b"\xef\xbb\xbf[tournament]\n\xff")
    done = runner.invoke(app, ["tournament", "run", str(marked)])
    assert done.exit_code == 2, done.output
    assert f"{marked}: not UTF-8 text (byte 16)" in one_error_line(done.output)


def test_a_tilde_in_a_tournament_files_bot_is_refused_naming_the_full_path_to_write(tmp_path: Path) -> None:
    done = runner.invoke(app, ["tournament", "run", str(tournament_file(tmp_path, bot="~/bots/mine"))])
    assert done.exit_code == 2, done.output
    line = one_error_line(done.output)
    home = os.path.expanduser("~")
    assert "entrant 'p0'.bot: '~/bots/mine': ~ is not expanded here" in line
    assert f"write the full path, '{home}/bots/mine'" in line


@pytest.mark.parametrize("bot", ["~/bots/mine", "python3 ~/bots/mine/bot.py"])
@pytest.mark.parametrize("command", ["play", "check-bot"])
def test_a_tilde_in_a_quoted_bot_on_the_command_line_is_one_line(command: str, bot: str) -> None:
    args = ["play", "vendetta", bot, PASSER, PASSER] if command == "play" else ["check-bot", bot]
    done = runner.invoke(app, args)
    assert done.exit_code == 2, done.output
    line = one_error_line(done.output)
    assert f"{bot!r}: ~ is not expanded here" in line
    assert repr(bot.replace("~", os.path.expanduser("~"))) in line


def test_human_as_a_tournament_entrant_says_only_famiglia_play_seats_one(tmp_path: Path) -> None:
    done = runner.invoke(app, ["tournament", "run", str(tournament_file(tmp_path, bot="human"))])
    assert done.exit_code == 2, done.output
    line = one_error_line(done.output)
    assert "entrant 'p0'.bot: 'human' is you at this terminal, a seat only `famiglia play` gives" in line


def test_check_bot_human_says_only_famiglia_play_seats_one() -> None:
    done = runner.invoke(app, ["check-bot", "human"])
    assert done.exit_code == 2, done.output
    assert "'human' is you at this terminal, a seat only `famiglia play` gives" in one_error_line(done.output)


def _header_made_into(replay: Path, game: str, config: bytes | None = None) -> Path:
    lines = replay.read_bytes().splitlines()
    header = json.loads(lines[0])
    header["game"] = game
    if config is not None:
        header["config"] = json.loads(config)
    replay.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]) + b"\n")
    return replay


def test_replay_view_of_a_replay_whose_header_names_a_game_not_installed_is_one_line(tmp_path: Path) -> None:
    replay = _header_made_into(vendetta_replay(tmp_path / "r.jsonl"), "chess")
    done = runner.invoke(app, ["replay", "view", str(replay)])
    assert done.exit_code == 2, done.output
    line = one_error_line(done.output)
    assert f"{replay}: unknown game 'chess'" in line and "install the game's package to view its replays" in line
    assert not list(tmp_path.glob("*.html"))


def test_replay_view_of_a_header_for_another_game_than_its_content_is_one_line(tmp_path: Path) -> None:
    replay = _header_made_into(vendetta_replay(tmp_path / "r.jsonl"), "sicilianos")
    done = runner.invoke(app, ["replay", "view", str(replay)])
    assert done.exit_code == 2, done.output
    line = one_error_line(done.output)
    assert f"{replay}: its header says sicilianos, but" in line and "use an unchanged copy" in line
    assert not list(tmp_path.glob("*.html"))


def test_replay_view_of_a_valid_header_of_another_game_over_this_games_decisions_is_one_line(tmp_path: Path) -> None:
    config = encode_raw(get_rules("sicilianos").config({}))
    replay = _header_made_into(vendetta_replay(tmp_path / "r.jsonl"), "sicilianos", msgspec.json.encode(config))
    done = runner.invoke(app, ["replay", "view", str(replay)])
    assert done.exit_code == 2, done.output
    line = one_error_line(done.output)
    assert f"{replay}: its header says sicilianos, but" in line and "use an unchanged copy" in line
    assert not list(tmp_path.glob("*.html"))


def test_replay_view_of_a_replay_cut_short_still_writes_its_page(tmp_path: Path) -> None:
    # What the view refuses is a replay no page can draw; one cut short is drawn up to where it stops.
    replay = vendetta_replay(tmp_path / "r.jsonl")
    replay.write_bytes(b"\n".join(replay.read_bytes().splitlines()[:8]) + b"\n")
    done = runner.invoke(app, ["replay", "view", str(replay)])
    assert done.exit_code == 0, done.output
    assert "stops making sense at line" in (tmp_path / "r.html").read_text()


def test_report_with_missing_replays_warns_in_one_line_and_still_writes_the_page(tmp_path: Path) -> None:
    toml = tournament_file(tmp_path, 'workers = 1\n[tournament.variants]\nround_limit = "1"\n')
    assert runner.invoke(app, ["tournament", "run", str(toml)]).exit_code == 0
    folder = next((tmp_path / "t-replays").iterdir())
    for game in (1, 4):
        (folder / f"game-{game:06d}.jsonl").unlink()
    done = runner.invoke(app, ["report", "--db", str(tmp_path / "t.sqlite")])
    assert done.exit_code == 0, done.output
    (warning,) = [line for line in done.output.splitlines() if "warning" in line]
    assert warning == (
        f"famiglia: warning: 2 of 6 games have no replay: not found in {folder}; "
        "the report lists them without a replay or viewer page"
    )
    assert (tmp_path / "t.html").is_file()
    assert len(list((tmp_path / "t-games").glob("game-??????.html"))) == 4
