"""Rules H5, I2/I3 (hidden cards): a real bot process tries every route to the deal seed and learns nothing.

The spy (tests/bots/hostile/seed_spy) collects every integer it can see and
sends it back as log lines; these tests know the real seeds and check that
none of those integers is a seed or rebuilds the deal. Takes about 10 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from referee.games import get_rules
from referee.games.base import RecordingChance, SeededChance
from referee.replay import ChanceRecord, Header, LogRecord, read_replay
from tests.conftest import TEST_BOTS
from tournaments.store import Store

SPY = TEST_BOTS / "hostile" / "seed_spy"
PASSER = TEST_BOTS / "passer"
FAMIGLIA = Path(sys.executable).with_name("famiglia")
NOBODY = 65534


def spy_report(replay: Path, seat: int) -> tuple[set[int], dict[str, Any]]:
    """(every integer the spy saw, its findings) from its log lines in a replay."""
    numbers: set[int] = set()
    findings: dict[str, Any] = {}
    for record in read_replay(replay):
        if isinstance(record, LogRecord) and record.seat == seat and record.message.startswith("spy "):
            data = json.loads(record.message[4:])
            numbers.update(data.get("candidates", []))
            findings.update(data.get("findings", {}))
    assert findings, f"the spy reported nothing in {replay}"
    return numbers, findings


def rebuilds_the_deal(replay: Path, candidates: set[int]) -> list[int]:
    """The candidates whose game, built with famiglia's own engine, draws what the replay drew."""
    records = read_replay(replay)
    header = records[0]
    assert isinstance(header, Header)
    rules = get_rules(header.game)
    config = msgspec.json.decode(header.config, type=rules.config_type)
    drawn = [msgspec.json.encode(d) for r in records if isinstance(r, ChanceRecord) for d in r.draws]
    hits = []
    for candidate in candidates:
        if not 0 <= candidate < 2**64:
            continue
        chance = RecordingChance(SeededChance(candidate))
        rules.new_game(len(header.seats), config, chance)
        mine = [msgspec.json.encode(d) for d in chance.draws]
        if mine and mine == drawn[: len(mine)]:
            hits.append(candidate)
    return hits


def test_a_bot_learns_no_seed_from_start_environment_proc_or_tmp_in_famiglia_play(tmp_path: Path) -> None:
    """The referee's own command line carries the seed (--seed): the spy reads /proc, every integer
    of every message it gets (start, requests), its environment and /tmp at the default level,
    and nothing rebuilds the deal."""
    seed = 7_654_321_987_654_321
    replay = tmp_path / "r.jsonl"
    ran = subprocess.run(
        [
            str(FAMIGLIA),
            "play",
            "sicilianos",
            str(SPY),
            str(PASSER),
            str(PASSER),
            "--seed",
            str(seed),
            "--replay",
            str(replay),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["sandbox"].startswith("standard")
    candidates, findings = spy_report(replay, 0)
    assert seed not in candidates
    assert rebuilds_the_deal(replay, candidates) == []
    # The control: the spy's check works, the real seed does rebuild it.
    assert rebuilds_the_deal(replay, {seed}) == [seed]
    assert not {"FAMIGLIA_SEED", "FAMIGLIA_MATCH"} & set(findings["env"])


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder anyone may enter and read, like a user's project folder (tmp_path's parents are 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="famiglia-spy-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the spy under another uid")
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
def test_a_bot_under_another_uid_reads_no_store_replay_or_stderr_and_derives_no_deal(open_folder: Path) -> None:
    """Permissions alone, no sandbox (a bot as another user, as `none` with its own uid would be):
    the tournament file is readable but its seed gives no deal; the store, other games'
    replays and stderr files cannot be read."""
    store_path = open_folder / "t.sqlite"
    probes = [open_folder / "t.toml", store_path, Path(f"{store_path}-wal"), open_folder / "replays"]
    spy = [
        "setpriv",
        "--reuid",
        str(NOBODY),
        "--regid",
        str(NOBODY),
        "--clear-groups",
        "/usr/bin/python3",
        str(SPY / "bot.py"),
        # As a list in a file of its own: named as words, the store (which the run writes) would be
        # part of the spy's fingerprint, and the run would stop when it changed (referee.pinning).
        f"@{open_folder / 'probes.txt'}",
    ]
    (open_folder / "probes.txt").write_text("\n".join(map(str, probes)))
    (open_folder / "probes.txt").chmod(0o644)
    entrants = [("spy", " ".join(spy)), ("p1", str(PASSER)), ("p2", str(PASSER))]
    (open_folder / "t.toml").write_text(
        '[tournament]\nname = "open"\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\nseed = 4242\n'
        'replays = "replays"\nconcurrency = 1\nworkers = 1\nsandbox = "none"\n'
        + "".join(f'[[entrant]]\nname = "{n}"\nbot = "{b}"\n' for n, b in entrants)
    )
    ran = subprocess.run(
        [str(FAMIGLIA), "tournament", "run", str(open_folder / "t.toml")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=open_folder,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    store = Store(store_path)
    seeds = {game.seed for game in store.schedule()}
    finished = store.finished()
    assert len(finished) == 6
    learned: set[int] = set()
    tried: dict[str, str] = {}
    for game in finished:
        assert game.replay is not None
        numbers, findings = spy_report(Path(game.replay), game.seats[[s.entrant for s in game.seats].index(0)].seat)
        assert findings["uid"] == NOBODY
        learned |= numbers
        tried.update(findings["read"])
    assert tried[str(open_folder / "t.toml")] == "read"  # the user's file: readable, and useless
    assert not seeds & learned, "the spy computed or read a deal seed"
    harness_files = {p: how for p, how in tried.items() if p != str(open_folder / "t.toml")}
    assert harness_files, "the spy tried no harness file"
    assert all(how != "read" for how in harness_files.values()), harness_files
    assert tried[str(store_path)] == "Permission denied"
