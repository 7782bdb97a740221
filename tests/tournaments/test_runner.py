"""Tournament files, the store, resuming, and a real run killed with SIGKILL."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.settings import DEFAULT_MARGIN_MS
from tests.conftest import TEST_BOTS, assert_no_bot_outlived_its_referee, wait_until_gone, workers_of
from tournaments.config.tournament import ConfigProblems, load_tournament
from tournaments.hosting.schedule import seat_counts
from tournaments.lifecycle.plan import build_schedule
from tournaments.playing import settings_for
from tournaments.runner import run_pending
from tournaments.store import Store, StoreError


def write_toml(folder: Path, body: str, entrants: int = 4, bot: Path = TEST_BOTS / "passer") -> Path:
    path = folder / "t.toml"
    bots = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{bot}"\n' for i in range(entrants))
    path.write_text(body + bots)
    return path


def own_passer(folder: Path) -> Path:
    """A copy of ``tests/bots/passer`` in ``folder``, for a test that looks for bots left behind.

    Bot processes are found by their working folder (``wait_until_gone``): in
    a copy of its own a test sees only its own bots, never those of a test
    running beside it, and its wait ends as soon as they are gone.
    """
    copy = folder / "passer"
    shutil.copytree(TEST_BOTS / "passer", copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_a_bad_tournament_file_lists_every_problem_one_line_each(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        '[tournament]\ngame = "chess"\nformat = "swiss"\ntable_size = 9\nspeed = 3\n'
        "[tournament.time]\nmove_ms = -5\n"
        '[[entrant]]\nname = "a"\nbot = "no/such/folder-or-command"\n'
        '[[entrant]]\nname = "a"\nbot = "python3 x.py"\n'
    )
    with pytest.raises(ConfigProblems) as caught:
        load_tournament(path)
    problems = caught.value.problems
    expected = ["tournament.speed: unknown key", "tournament.game: unknown game 'chess'",
                "tournament.format: 'swiss'", "tournament.time.move_ms", "entrant 'a'.bot",
                "entrant 'a': the name is used twice"]  # fmt: skip
    for fragment in expected:
        assert any(fragment in p for p in problems), (fragment, problems)
    assert all("\n" not in p for p in problems)


def test_a_bad_variant_and_a_table_too_big_for_the_game_are_reported(tmp_path: Path) -> None:
    path = write_toml(
        tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 6\n[tournament.variants]\ncontrol = "x"\n', 6
    )
    with pytest.raises(ConfigProblems) as caught:
        load_tournament(path)
    text = str(caught.value)
    assert "vendetta is for 3 to 5 players, not 6" in text and "tournament.variants" in text


def test_the_harness_margin_and_the_game_wall_limit_come_from_the_time_table(tmp_path: Path) -> None:
    head = '[tournament]\ngame = "vendetta"\ntable_size = 3\n[tournament.time]\nmove_ms = 200\n'
    default = load_tournament(write_toml(tmp_path, head))
    assert settings_for(default).clock.margin_ms == DEFAULT_MARGIN_MS and settings_for(default).clock.game_wall_ms == 0
    explicit = load_tournament(write_toml(tmp_path, head + f"margin_ms = {DEFAULT_MARGIN_MS}\ngame_wall_ms = 0\n"))
    assert explicit.fingerprint() == default.fingerprint()  # a store begun before these keys still resumes
    tuned = load_tournament(write_toml(tmp_path, head + "margin_ms = 20\ngame_wall_ms = 30000\n"))
    settings = settings_for(tuned)
    assert settings.clock.margin_ms == 20 and settings.clock.game_wall_ms == 30_000
    assert settings.clock.time.move_ms == 200  # the bots' time control is unchanged
    assert tuned.fingerprint() != default.fingerprint()  # they change how games end: no silent resume
    with pytest.raises(ConfigProblems) as caught:
        load_tournament(write_toml(tmp_path, head + "margin_ms = -1\ngame_wall_ms = 1.5\n"))
    assert len(caught.value.problems) == 2
    assert all("tournament.time." in p and "0 or more" in p for p in caught.value.problems)


def test_the_schedule_balances_seats_on_duplicate_deals(tmp_path: Path) -> None:
    config = load_tournament(write_toml(tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 3\n'))
    games = build_schedule(config)
    assert len(games) == 4 * 6  # every 3-subset of 4, all 6 seat orders
    counts = seat_counts(games, 4)
    assert (counts == counts[0, 0]).all()
    by_table: dict[int, set[int]] = {}
    for game in games:
        by_table.setdefault(game.table, set()).add(game.seed)
    assert all(len(seeds) == 1 for seeds in by_table.values())


async def test_pending_games_are_played_once_and_a_second_run_plays_none(tmp_path: Path) -> None:
    config = load_tournament(write_toml(tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 4\nseed = 3\n', 4))
    store = Store(tmp_path / "r.sqlite")
    assert store.begin(config, build_schedule(config))
    seen: list[int] = []
    played = await run_pending(config, store, concurrency=2, workers=1, on_result=lambda g, r: seen.append(g.index))
    assert played == 4 and sorted(seen) == [0, 1, 2, 3]
    assert store.counts() == (4, 4)
    assert not store.begin(config, build_schedule(config))
    assert await run_pending(config, store, concurrency=2, workers=1, on_result=lambda g, r: None) == 0


async def test_worker_processes_play_every_pending_game_once(tmp_path: Path) -> None:
    body = '[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 4\n'
    config = load_tournament(write_toml(tmp_path, body, 4))
    store = Store(tmp_path / "w.sqlite")
    schedule = build_schedule(config)
    store.begin(config, schedule)
    seen: list[int] = []
    played = await run_pending(config, store, concurrency=2, workers=2, on_result=lambda g, r: seen.append(g.index))
    assert played == len(schedule) == 24 and sorted(seen) == list(range(24))
    assert store.counts() == (24, 24)
    assert all(not game.seats[0].termination for game in store.finished())


def test_a_store_refuses_a_different_tournament(tmp_path: Path) -> None:
    config = load_tournament(write_toml(tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 1\n'))
    other = load_tournament(write_toml(tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 2\n'))
    store = Store(tmp_path / "r.sqlite")
    store.begin(config, build_schedule(config))
    with pytest.raises(StoreError, match="other settings"):
        store.begin(other, build_schedule(other))


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot use as a results database"):
        Store(path)


def _finished_rows(db: Path) -> dict[int, tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT game, seed, ended_by, record FROM result JOIN schedule USING (game)")
        return {row[0]: row[1:] for row in rows}


def _wait_while_running(runner: subprocess.Popen[str], db: Path, results: int, *, workers: bool = False) -> None:
    """Until ``db`` holds ``results`` results (and the runner has worker processes, if asked), while it runs."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.02)
        try:
            if db.exists() and len(_finished_rows(db)) >= results and (not workers or workers_of(runner.pid)):
                return
        except sqlite3.OperationalError:
            continue
    raise AssertionError("the run ended (or stalled) before it could be interrupted")


@pytest.mark.slow
def test_a_run_killed_with_sigkill_resumes_without_losing_or_repeating_a_game(tmp_path: Path) -> None:
    passer = own_passer(tmp_path)
    toml = write_toml(
        tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 9\nconcurrency = 2\n', 4, passer
    )
    db = tmp_path / "t.sqlite"
    command = [
        sys.executable,
        "-m",
        "tournaments.cli",
        "tournament",
        "run",
        str(toml),
        "--db",
        str(db),
        "--workers",
        "1",
    ]
    runner = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    _wait_while_running(runner, db, 3)
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait()
    assert_no_bot_outlived_its_referee(passer)
    before = _finished_rows(db)
    assert 3 <= len(before) < 24, "the kill should land mid-tournament"
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert resumed.returncode == 0, resumed.stderr
    # The resumed referee swept whatever the killed one left: nothing at all remains.
    assert wait_until_gone(passer) == []
    assert f"{len(before)} of 24 games already recorded" in resumed.stdout
    after = _finished_rows(db)
    assert sorted(after) == list(range(24))
    for game, row in before.items():
        assert after[game] == row, f"game {game} was played again"


async def test_a_sicilianos_tournament_with_mixed_table_sizes_runs_unchanged(tmp_path: Path) -> None:
    body = '[tournament]\ngame = "sicilianos"\ntable_sizes = [3, 4]\nrepetitions = 1\nseed = 4\nreplays = "r"\n'
    config = load_tournament(write_toml(tmp_path, body, 4))
    store = Store(tmp_path / "s.sqlite")
    schedule = build_schedule(config)
    assert len(schedule) == 4 * 6 + 1 * 4
    store.begin(config, schedule)
    played = await run_pending(config, store, concurrency=4, workers=1, on_result=lambda g, r: None)
    assert played == len(schedule)
    sizes = sorted({len(game.seats) for game in store.finished()})
    assert sizes == [3, 4]
    assert len(list((tmp_path / "r" / store.tournament_id()).glob("game-*.jsonl"))) == len(schedule)


async def test_a_head_to_head_stops_at_its_budget_or_verdict_and_reports_it(tmp_path: Path) -> None:
    from tournaments.report.standings import head_to_head_status

    body = ('[tournament]\ngame = "vendetta"\nformat = "head-to-head"\ntable_size = 3\na = "p0"\nb = "p1"\n'
            'max_games = 12\nseed = 2\n')  # fmt: skip
    config = load_tournament(write_toml(tmp_path, body, 4))
    schedule = build_schedule(config)
    # Pairs: A's game then B's game in A's seat, on the same deal and opponents.
    first, second = schedule[0], schedule[1]
    assert first.seed == second.seed and first.seating.index(0) == second.seating.index(1)
    assert [e for e in first.seating if e != 0] == [e for e in second.seating if e != 1]
    store = Store(tmp_path / "h.sqlite")
    store.begin(config, schedule)
    await run_pending(config, store, concurrency=2, workers=1, on_result=lambda g, r: None)
    status = head_to_head_status(store)
    assert status is not None and status.pairs >= 1
    # Identical bots on identical deals draw every pair: never "A stronger".
    assert status.decision in ("not stronger", "continue") and status.wins == status.losses == 0


@pytest.mark.slow
def test_a_worker_killed_midway_stops_the_run_in_one_line_and_the_rerun_loses_no_game(tmp_path: Path) -> None:
    # 24 games: two finish before the kill, and the rest are enough to keep the run going until it lands.
    passer = own_passer(tmp_path)
    toml = write_toml(tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 6\n', 4, passer)
    db = tmp_path / "t.sqlite"
    command = [sys.executable, "-m", "tournaments.cli", "tournament", "run", str(toml), "--db", str(db)]
    runner = subprocess.Popen(
        [*command, "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    _wait_while_running(runner, db, 2, workers=True)
    os.kill(workers_of(runner.pid)[0], signal.SIGKILL)
    _, stderr = runner.communicate(timeout=120)
    assert runner.returncode == 1, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert "a worker process was killed by SIGKILL with" in lines[0] and "run the same command again" in lines[0]
    assert wait_until_gone(passer) == []
    before = _finished_rows(db)
    again = subprocess.run([*command, "--workers", "1"], check=False, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    after = _finished_rows(db)
    assert len(after) == 24 and all(after[game] == row for game, row in before.items())


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_says_how_to_resume_and_leaves_no_bot(tmp_path: Path) -> None:
    passer = own_passer(tmp_path)
    toml = write_toml(
        tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 8\nconcurrency = 2\n', 4, passer
    )
    # A path longer than the width the CLI gives piped output: the line must not wrap.
    (folder := tmp_path / ("results-" + "x" * 160)).mkdir()
    db = folder / "t.sqlite"
    command = [
        sys.executable,
        "-m",
        "tournaments.cli",
        "tournament",
        "run",
        str(toml),
        "--db",
        str(db),
        "--workers",
        "1",
    ]
    runner = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    _wait_while_running(runner, db, 2)
    runner.send_signal(signal.SIGINT)
    _, stderr = runner.communicate(timeout=120)
    assert runner.returncode == 130, stderr
    assert "Traceback" not in stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith("interrupted: ")]
    assert line.endswith(f"are recorded in {db}; run the same command again to resume")
    assert wait_until_gone(passer) == []


@pytest.mark.slow
def test_ctrl_c_in_a_terminal_with_workers_prints_only_the_resume_line(tmp_path: Path) -> None:
    # A terminal sends SIGINT to the whole process group: the runner and its workers.
    passer = own_passer(tmp_path)
    toml = write_toml(
        tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 5\nrepetitions = 3\n', 4, passer
    )
    db = tmp_path / "t.sqlite"
    command = [
        sys.executable,
        "-m",
        "tournaments.cli",
        "tournament",
        "run",
        str(toml),
        "--db",
        str(db),
        "--workers",
        "2",
    ]
    runner = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    _wait_while_running(runner, db, 2, workers=True)
    os.killpg(runner.pid, signal.SIGINT)
    _, stderr = runner.communicate(timeout=120)
    assert runner.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted: "), stderr
    assert wait_until_gone(passer) == [] and workers_of(runner.pid) == []


def test_a_resume_clears_the_leftovers_of_pending_games_only(tmp_path: Path) -> None:
    from tournaments.playing import prepare_replays, replays_folder

    config = load_tournament(write_toml(tmp_path, '[tournament]\ngame = "vendetta"\ntable_size = 3\nreplays = "r"\n'))
    schedule = build_schedule(config)
    folder = replays_folder(config, "t-1")
    assert folder is not None
    folder.mkdir(parents=True)
    pending = ["game-000000.jsonl", "game-000000.jsonl.partial", "game-000000.jsonl.seat2.stderr"]
    kept = ["game-000001.jsonl", "game-000001.jsonl.seat0.stderr", "game-0000001.jsonl", "notes.txt"]
    for name in pending + kept:
        (folder / name).write_text("x")
    prepare_replays(config, "t-1", [schedule[0]])
    assert sorted(p.name for p in folder.iterdir()) == sorted(kept)
