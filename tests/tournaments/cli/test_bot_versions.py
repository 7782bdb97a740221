"""A bot edited in place under its entrant's name (issue 29, section 1): refused, or a new version rated apart.

Through the real command line (``tournaments.cli.app``): runs, the refusal's
one line, ``--new-version``, and what standings, games, crosstable and the
report show once an entrant has two versions.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from tests.conftest import TEST_BOTS
from tournaments.cli import app

runner = CliRunner()


def tournament(folder: Path, repetitions: int) -> Path:
    """Three entrants at 3-player tables; p0's bot is a copy in ``folder`` that the tests edit."""
    mine = folder / "mine"
    if not mine.exists():
        shutil.copytree(TEST_BOTS / "passer", mine, ignore=shutil.ignore_patterns("__pycache__"))
    toml = folder / "t.toml"
    bots = f'[[entrant]]\nname = "p0"\nbot = "{mine}"\n' + "".join(
        f'[[entrant]]\nname = "p{i}"\nbot = "{TEST_BOTS / "passer"}"\n' for i in (1, 2)
    )
    toml.write_text(
        f'[tournament]\nname = "versions"\ngame = "vendetta"\ntable_size = 3\nrepetitions = {repetitions}\n' + bots
    )
    return toml


def run(toml: Path, *extra: str) -> tuple[int, str]:
    done = runner.invoke(app, ["tournament", "run", str(toml), "--db", str(toml.with_suffix(".sqlite")),
                               "--workers", "1", *extra])  # fmt: skip
    return done.exit_code, done.output


def test_an_edited_bot_is_refused_by_name_then_played_as_a_new_version_rated_apart(tmp_path: Path) -> None:
    toml = tournament(tmp_path, 1)
    db = toml.with_suffix(".sqlite")
    code, output = run(toml)
    assert code == 0, output
    with (tmp_path / "mine" / "bot.py").open("a") as bot:
        bot.write("# edited in place\n")

    code, output = run(toml)
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("famiglia: error: "), output
    assert "entrant 'p0'" in lines[0] and "changed since its recorded games" in lines[0]
    assert "new entrant name" in lines[0] and "--new-version p0" in lines[0] and "p0 v2" in lines[0]

    code, output = run(tournament(tmp_path, 2), "--new-version", "p0")
    assert code == 0, output
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        played = connection.execute("SELECT version, COUNT(*) FROM seat WHERE entrant = 0 GROUP BY version").fetchall()
    assert played == [(1, 6), (2, 6)], "the old code's games and the new code's games, each recorded with its version"

    report = json.loads(runner.invoke(app, ["standings", "--db", str(db), "--format", "json"]).output)
    assert {row["name"]: row["games"] for row in report["standings"]} == {"p0 v1": 6, "p0 v2": 6, "p1": 12, "p2": 12}
    every = json.loads(runner.invoke(app, ["games", "--db", str(db), "--entrant", "p0", "--format", "json"]).output)
    newer = json.loads(runner.invoke(app, ["games", "--db", str(db), "--entrant", "p0 v2", "--format", "json"]).output)
    assert len(every) == 12 and len(newer) == 6 and all("p0 v2" in row["seats"] for row in newer)
    cross = runner.invoke(app, ["crosstable", "--db", str(db)])
    assert cross.exit_code == 0 and "p0 v1" in cross.output and "p0 v2" in cross.output
    page = runner.invoke(app, ["report", "--db", str(db), "--no-viewer"])
    assert page.exit_code == 0, page.output
    assert "p0 v2" in (tmp_path / "t.html").read_text()


def test_new_version_of_a_name_that_is_no_entrant_is_one_line(tmp_path: Path) -> None:
    code, output = run(tournament(tmp_path, 1), "--new-version", "p9")
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, output
    assert "--new-version 'p9': no entrant of this tournament has that name; entrants: p0, p1, p2" in lines[0]


SELF_EDITING = """
with open(__file__, "a") as me:  # an edit in place while the run goes on, as a person saving a file would
    me.write("# edited while the run played\\n")
"""


def test_a_bot_edited_during_a_run_stops_it_by_name_and_its_finished_games_keep_the_version_that_played(
    tmp_path: Path,
) -> None:
    toml = tournament(tmp_path, 2)
    bot = tmp_path / "mine" / "bot.py"
    bot.write_text(bot.read_text() + SELF_EDITING)
    # A fresh process per game, one game at a time: the second start of p0 meets its edited file.
    toml.write_text(
        toml.read_text().replace(
            "[[entrant]]",
            '[tournament.executor]\nconcurrency = 1\nreuse_processes = false\n[tournament.sandbox]\nlevel = "none"\n'
            "[[entrant]]",
            1,
        )
    )
    db = toml.with_suffix(".sqlite")
    code, output = run(toml)
    errors = output.split("famiglia: error: ")[1:]  # after the live table, which ends without a newline here
    assert code == 2 and len(errors) == 1 and len(errors[0].strip().splitlines()) == 1, output
    assert errors[0].startswith("entrant 'p0''s bot changed during this run"), output
    assert "run the same command to go on" in errors[0] and "--new-version p0" in errors[0], output
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        played = connection.execute("SELECT version, COUNT(*) FROM seat WHERE entrant = 0 GROUP BY version").fetchall()
        versions = connection.execute("SELECT COUNT(*) FROM bot_version WHERE entrant = 0").fetchone()[0]
    # The file changes once its first process has read it: what that process (and any started with it) played
    # is the pinned code's, as version 1; no process started after the edit played.
    assert len(played) == 1 and played[0][0] == 1 and 1 <= played[0][1] < 12, played
    assert versions == 1

    # The second of the two ways on: the edited bot recorded as a new version. It edits itself
    # again at every start, so this run stops too, after its first game as version 2.
    code, output = run(toml, "--new-version", "p0")
    assert "entrant 'p0''s bot changed during this run" in output, output
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        played = connection.execute("SELECT version, COUNT(*) FROM seat WHERE entrant = 0 GROUP BY version").fetchall()
    assert len(played) == 2 and played[1][0] == 2 and played[1][1] >= 1, (played, output)
