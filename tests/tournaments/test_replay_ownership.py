"""A replay belongs to one game of one tournament and says so; nothing overwrites it; reports
link a replay only to its own game. About 3 s."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.replay import read_header, read_replay, replay_mismatch, tournament_match_id, verify_replay
from tests.conftest import TEST_BOTS
from tournaments.cli import app
from tournaments.config.tournament import load_tournament
from tournaments.lifecycle.plan import build_schedule
from tournaments.playing import replay_path
from tournaments.runner import run_pending
from tournaments.store import Store

PASSER = str(TEST_BOTS / "passer")
# The README's own example: every tournament file in a folder names the same replays folder.
TOURNAMENT = (
    '[tournament]\nname = "club"\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\nseed = 1\n'
    'replays = "replays"\n' + "".join(f'[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(3))
)


def run(toml: Path, db: Path) -> None:
    ran = CliRunner().invoke(app, ["tournament", "run", str(toml), "--db", str(db), "--workers", "1"])
    assert ran.exit_code == 0, ran.output


def listed_games(db: Path) -> list[dict[str, object]]:
    ran = CliRunner().invoke(app, ["games", "--db", str(db), "--format", "json"])
    assert ran.exit_code == 0, ran.output
    games: list[dict[str, object]] = json.loads(ran.output)
    return games


@pytest.fixture(scope="module")
def two_clubs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where a.toml and b.toml, the same file, were run into a.sqlite and b.sqlite: one replays folder.

    Played once for the tests that read them; a test that changes a file puts it back.
    """
    folder = tmp_path_factory.mktemp("two-clubs")
    (folder / "a.toml").write_text(TOURNAMENT)
    (folder / "b.toml").write_text(TOURNAMENT)  # same name, same seed, same folder
    run(folder / "a.toml", folder / "a.sqlite")
    run(folder / "b.toml", folder / "b.sqlite")
    return folder


def test_tournaments_sharing_a_replays_folder_keep_their_own_replays(two_clubs: Path) -> None:
    tmp_path = two_clubs
    a_games, b_games = listed_games(tmp_path / "a.sqlite"), listed_games(tmp_path / "b.sqlite")
    a_paths = {str(g["replay"]) for g in a_games}
    b_paths = {str(g["replay"]) for g in b_games}
    assert len(a_paths) == len(b_paths) == 6 and not a_paths & b_paths
    for db, games in ((tmp_path / "a.sqlite", a_games), (tmp_path / "b.sqlite", b_games)):
        tournament = Store(db).tournament_id()
        for game in games:
            header = read_header(Path(str(game["replay"])))
            assert header.match == tournament_match_id(tournament, int(str(game["game"])))
    assert Store(tmp_path / "a.sqlite").tournament_id() != Store(tmp_path / "b.sqlite").tournament_id()
    verified = CliRunner().invoke(app, ["replay", "verify", str(a_games[0]["replay"])])
    expected = tournament_match_id(Store(tmp_path / "a.sqlite").tournament_id(), int(str(a_games[0]["game"])))
    assert verified.exit_code == 0 and f"ok, match {expected}," in verified.output


def test_reports_refuse_a_replay_that_is_another_tournaments_game(two_clubs: Path, tmp_path: Path) -> None:
    folder = two_clubs
    mine = Path(str(listed_games(folder / "a.sqlite")[0]["replay"]))
    theirs = Path(str(listed_games(folder / "b.sqlite")[0]["replay"]))
    shutil.copyfile(mine, tmp_path / "mine.jsonl")
    shutil.copyfile(theirs, mine)  # a replay copied over another: it still verifies...
    try:
        verify_replay(read_replay(mine))
        game = listed_games(folder / "a.sqlite")[0]
        assert game["replay"] is None and "not this game" in str(game["replay_note"])
        table = CliRunner().invoke(app, ["games", "--db", str(folder / "a.sqlite")])
        assert "not linked" in table.output
        page = CliRunner().invoke(app, ["report", "--db", str(folder / "a.sqlite")])
        assert page.exit_code == 0, page.output
        html = (folder / "a.html").read_text()
        assert f'href="{mine.relative_to(folder).as_posix()}"' not in html
        assert html.count('">replay</a>') == 5 and "not linked" in html
    finally:
        shutil.copyfile(tmp_path / "mine.jsonl", mine)  # the other tests read the tournaments as played
        (folder / "a.html").unlink(missing_ok=True)


def test_replay_mismatch_names_a_missing_or_foreign_file(tmp_path: Path) -> None:
    assert "cannot read" in str(replay_mismatch(tmp_path / "none.jsonl", "t-1", 0))
    (tmp_path / "x.jsonl").write_text("not json\n")
    assert "header" in str(replay_mismatch(tmp_path / "x.jsonl", "t-1", 0))


def test_famiglia_play_never_overwrites_a_replay(tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    replay.write_text("someone else's game\n")
    ran = CliRunner().invoke(app, ["play", "vendetta", PASSER, PASSER, PASSER, "--replay", str(replay)])
    assert ran.exit_code == 2 and "already exists" in ran.output  # refused before the match is played
    assert replay.read_text() == "someone else's game\n"


async def test_a_resumed_tournament_replaces_only_its_own_unfinished_replay_files(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(TOURNAMENT)
    config = load_tournament(tmp_path / "t.toml")
    store = Store(tmp_path / "t.sqlite")
    store.begin(config, build_schedule(config, store.deal_key()))
    tournament = store.tournament_id()
    first = replay_path(config, tournament, store.schedule()[0])
    assert first is not None
    # What a run killed mid-game leaves: a partial replay, and a finished one whose result was not committed.
    first.parent.mkdir(parents=True)
    first.with_name(first.name + ".partial").write_text("half\n")
    first.write_text("unrecorded\n")
    other = first.parent.parent / "someone-else" / first.name
    other.parent.mkdir()
    other.write_text("another tournament's\n")
    played = await run_pending(config, store, concurrency=1, workers=1, on_result=lambda g, r: None)
    assert played == 6
    assert replay_mismatch(first, tournament, 0) is None
    verify_replay(read_replay(first))
    assert not first.with_name(first.name + ".partial").exists()
    assert other.read_text() == "another tournament's\n"
