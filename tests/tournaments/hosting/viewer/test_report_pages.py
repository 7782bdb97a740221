"""`famiglia report`'s viewer pages: the code shared once, pages that hold only their game,
worker processes for long tournaments, pages kept when still current, and --no-viewer. About 8 s."""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from protocol.messages import Result
from referee.match import MatchRecord, SeatTiming
from referee.replay import tournament_match_id
from tests.tournaments.replay_factory import records, write_replay
from tournaments.cli import app
from tournaments.config.tournament import parse_tournament
from tournaments.lifecycle.plan import build_schedule
from tournaments.report.game_pages import PARALLEL_FROM
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[4]
NAMES = ["greedy", "greedy-twin", "random"]
runner = CliRunner()


def make_tournament(folder: Path, games: int) -> Path:
    """A store of ``games`` finished Vendetta games with their replays, played without bot processes."""
    config = parse_tournament(
        {
            "tournament": {"name": "pages", "game": "vendetta", "table_size": 3, "repetitions": games,
                           "variants": {"round_limit": "2"}},
            "entrant": [{"name": name, "bot": "sample_bots/random_py"} for name in NAMES],
        },
        base=ROOT,
        source="test",
    )  # fmt: skip
    db = folder / "t.sqlite"
    store = Store(db)
    schedule = build_schedule(config, b"test")[:games]
    store.begin(config, schedule)
    for game in schedule:
        replay = folder / "replays" / f"game-{game.index:06d}.jsonl"
        replay.parent.mkdir(exist_ok=True)
        names = [NAMES[e] for e in game.seating]
        write_replay(replay, "vendetta", {"round_limit": "2"}, names, seed=game.seed % 1000)
        lines = replay.read_bytes().split(b"\n")
        header = msgspec.json.decode(lines[0])
        header["match"] = tournament_match_id(store.tournament_id(), game.index)  # the game it is
        replay.write_bytes(b"\n".join([msgspec.json.encode(header), *lines[1:]]))
        result = records(replay)[-1]["result"]
        store.record(
            game,
            MatchRecord(
                match=header["match"], game="vendetta", seed=game.seed, variants={}, names=names,
                result=msgspec.convert(result, type=Result),
                timings=[SeatTiming(decisions=1, total_ms=1.0, max_ms=1.0, bank_left_ms=0.0)] * 3,
                seconds=0.1, replay=str(replay),
            ),
        )  # fmt: skip
    store.close()
    return db


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tournament(tmp_path_factory.mktemp("pages"), PARALLEL_FROM + 2)


def report(db: Path, out: Path, *options: str) -> None:
    made = runner.invoke(app, ["report", "--db", str(db), "--out", str(out), *options])
    assert made.exit_code == 0, made.output


def test_pages_load_the_viewers_code_from_one_shared_folder_and_hold_only_their_game(
    tournament: Path, tmp_path: Path
) -> None:
    report(tournament, tmp_path / "r.html", "--jobs", "2")  # enough games for the worker processes
    folder = tmp_path / "r-games"
    assert sorted(p.name for p in (folder / "assets").iterdir()) == ["board-vendetta.js", "viewer.css", "viewer.js"]
    pages = sorted(folder.glob("game-*.html"))
    assert len(pages) == (PARALLEL_FROM + 2) * 4  # everything, and one page per seat
    for page in pages:
        html = page.read_text()
        assert "<style>" not in html and "FamigliaBoard" not in html  # no code or styles of its own
        assert re.findall(r'<script src="([^"]+)"', html) == ["assets/board-vendetta.js", "assets/viewer.js"]
        assert page.stat().st_size < 20_000
    linked = re.findall(r'href="(r-games/game-\d+\.html)"', (tmp_path / "r.html").read_text())
    assert len(linked) == PARALLEL_FROM + 2 and all((tmp_path / href).is_file() for href in linked)


def test_a_report_run_again_writes_only_the_pages_of_new_or_changed_replays(tournament: Path, tmp_path: Path) -> None:
    report(tournament, tmp_path / "r.html", "--jobs", "1")
    folder = tmp_path / "r-games"
    before = {p.name: p.stat().st_mtime_ns for p in folder.glob("game-*.html")}
    changed = tournament.parent / "replays" / "game-000003.jsonl"
    later = max(before.values()) + 10**9
    os.utime(changed, ns=(later, later))  # as if the replay were written again after the pages
    report(tournament, tmp_path / "r.html", "--jobs", "1")
    after = {p.name: p.stat().st_mtime_ns for p in folder.glob("game-*.html")}
    rewritten = sorted(name for name in after if after[name] != before[name])
    assert rewritten == ["game-000003.html", *(f"game-000003.seat-{s}.html" for s in range(3))]


def test_no_viewer_writes_the_report_alone_with_links_to_the_replays(tournament: Path, tmp_path: Path) -> None:
    report(tournament, tmp_path / "r.html", "--no-viewer")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]
    html = (tmp_path / "r.html").read_text()
    assert "-games/" not in html and html.count('">replay</a>') == PARALLEL_FROM + 2


def test_jobs_below_one_is_refused_in_one_line(tournament: Path, tmp_path: Path) -> None:
    refused = runner.invoke(app, ["report", "--db", str(tournament), "--out", str(tmp_path / "r.html"), "--jobs", "0"])
    assert refused.exit_code == 2
    assert len(refused.output.strip().splitlines()) == 1 and "--jobs" in refused.output
    assert not (tmp_path / "r.html").exists()
