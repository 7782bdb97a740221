"""Growing a stored tournament: more entrants or more games extend the store; other changes are refused."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from tests.conftest import TEST_BOTS, assert_no_bot_outlived_its_referee, wait_until_gone
from tests.tournaments.store_feeder import Instant
from tests.tournaments.test_runner import _finished_rows, _wait_while_running, own_passer
from tournaments.cli import app
from tournaments.config.tournament import TournamentConfig, load_tournament
from tournaments.hosting.schedule import ScheduledGame, seat_counts
from tournaments.lifecycle.growth import GrowthRefused
from tournaments.lifecycle.opening import open_tournament
from tournaments.lifecycle.plan import build_schedule
from tournaments.runner import run_pending, run_tournament
from tournaments.store import Store, StoreError

HEAD = '[tournament]\ngame = "vendetta"\ntable_size = 3\nseed = 7\n'


def tournament(
    folder: Path, head: str, entrants: int, name: str = "t.toml", bot: Path = TEST_BOTS / "passer"
) -> TournamentConfig:
    path = folder / name
    bots = "".join(f'\n[[entrant]]\nname = "p{i}"\nbot = "{bot}"\n' for i in range(entrants))
    path.write_text(head + bots)
    return load_tournament(path)


def _schedule_rows(db: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT * FROM schedule ORDER BY game").fetchall()


def _by_table(games: list[ScheduledGame]) -> dict[int, list[ScheduledGame]]:
    tables: dict[int, list[ScheduledGame]] = {}
    for game in games:
        tables.setdefault(game.table, []).append(game)
    return tables


async def test_an_entrant_added_to_a_finished_round_robin_plays_only_its_games_and_keeps_the_old_ones(
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.sqlite"
    store = Store(db)
    first = open_tournament(store, tournament(tmp_path, HEAD, 4))
    assert first.how == "begun"
    # What is grown is the store, not the games: a stand-in executor finishes each game it is handed
    # (real games of a grown tournament: the SIGKILL test below).
    await run_pending(first.config, store, concurrency=2, executor=Instant(), on_result=lambda g, r: None)
    old_results, old_schedule = _finished_rows(db), _schedule_rows(db)
    assert len(old_results) == 24

    grown = open_tournament(store, tournament(tmp_path, HEAD, 5))
    assert grown.how == "grown" and grown.new_entrants == ["p4"] and grown.new_games == 36  # C(5,3) - C(4,3) tables
    new = store.pending()
    assert [g.index for g in new] == list(range(24, 60))
    # Before the new games: standings say how many games each entrant has of those scheduled.
    shown = CliRunner().invoke(app, ["standings", "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    rows = {line.split("│")[2].strip(): line for line in shown.output.splitlines() if line.count("│") > 8}
    assert "18 of 36" in rows["p0"] and "0 of 36" in rows["p4"], shown.output
    assert "95% intervals: from ±" in shown.output and "run it again" in shown.output
    assert all(4 in game.seating for game in new), "only games with the new entrant are added"
    played: list[int] = []
    executor = Instant()
    await run_pending(
        grown.config, store, concurrency=2, executor=executor, on_result=lambda g, r: played.append(g.index)
    )
    assert sorted(played) == sorted(executor.handed) == list(range(24, 60))
    after = _finished_rows(db)
    assert {game: after[game] for game in old_results} == old_results, "an old result changed"
    assert _schedule_rows(db)[:24] == old_schedule
    # Every k-subset of the five once: the same tables a five-entrant round-robin has.
    assert sorted({tuple(sorted(g.seating)) for g in store.schedule()}) == sorted(
        {tuple(sorted(g.seating)) for g in build_schedule(grown.config)}
    )
    assert open_tournament(store, tournament(tmp_path, HEAD, 5)).how == "resumed"


def test_new_tables_keep_seat_balance_and_deal_each_table_on_a_new_keyed_deal(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.sqlite")
    open_tournament(store, tournament(tmp_path, HEAD, 4))
    old_seeds = {g.seed for g in store.schedule()}
    open_tournament(store, tournament(tmp_path, HEAD, 6))
    new = store.schedule()[24:]
    tables = _by_table(new)
    assert all(len({g.seed for g in games}) == 1 and len(games) == 6 for games in tables.values())
    seeds = [games[0].seed for games in tables.values()]
    assert len(set(seeds)) == len(seeds) and not set(seeds) & old_seeds, "every new table has a deal of its own"
    # Keyed with the store's secret: not the seeds the public derivation gives.
    public = {g.seed for g in build_schedule(store.config(), b"")}
    assert not set(seeds) & public
    counts = seat_counts(new, 6)
    for entrant in range(6):
        assert len(set(counts[entrant])) == 1, f"entrant {entrant} is not in every seat equally: {counts[entrant]}"


def test_raising_games_per_entrant_schedules_only_the_extra_games(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.sqlite")
    head = HEAD + "games_per_entrant = 18\n"
    open_tournament(store, tournament(tmp_path, head, 4))
    before = store.schedule()
    grown = open_tournament(store, tournament(tmp_path, head.replace("= 18", "= 36"), 4))
    assert grown.how == "grown" and grown.new_entrants == []
    after = store.schedule()
    assert after[: len(before)] == before
    games = Counter(e for g in after for e in g.seating)
    assert min(games.values()) >= 36 and max(games.values()) - min(games.values()) <= 6, games
    assert grown.new_games == len(after) - len(before) > 0


def test_a_gauntlet_grown_by_a_field_member_seats_the_hero_at_every_new_table(tmp_path: Path) -> None:
    store = Store(tmp_path / "g.sqlite")
    head = HEAD + 'format = "gauntlet"\nhero = "p0"\n'
    open_tournament(store, tournament(tmp_path, head, 4))
    before = len(store.schedule())
    grown = open_tournament(store, tournament(tmp_path, head, 5))
    new = store.schedule()[before:]
    assert grown.new_games > 0 and all(0 in g.seating for g in new)
    games = Counter(e for g in store.schedule() for e in g.seating)
    # As a five-entrant gauntlet from the start would: the hero at C(4, 2) tables, each field member at 3.
    assert games == {0: 36, 1: 18, 2: 18, 3: 18, 4: 18}, games


def test_a_head_to_head_grown_by_its_budget_adds_whole_pairs_on_new_deals(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite")
    head = HEAD + 'format = "head-to-head"\na = "p0"\nb = "p1"\nmax_games = 24\n'
    open_tournament(store, tournament(tmp_path, head, 5))
    before = store.schedule()
    open_tournament(store, tournament(tmp_path, head.replace("= 24", "= 48"), 5))
    new = store.schedule()[len(before) :]
    assert len(new) == 24 and new[0].index == len(before) and len(before) % 2 == 0
    for a_game, b_game in zip(new[::2], new[1::2], strict=True):
        assert a_game.seed == b_game.seed and a_game.seating.index(0) == b_game.seating.index(1)
    assert not {g.seed for g in new} & {g.seed for g in before}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (("move_ms = 1000", "move_ms = 2000"), "time.move_ms = 1000 (the file now says 2000)"),
        (
            ('game = "vendetta"', 'game = "vendetta"\nsandbox = "none"'),
            "sandbox = 'standard' (the file now says 'none')",
        ),
        (("seed = 7", "seed = 8"), "seed = 7 (the file now says 8)"),
        (("seed = 7", 'seed = 7\n[tournament.variants]\ncontrol = "majority"'), "variants = {}"),
        (("seed = 7", "seed = 7\nrepetitions = 2"), None),  # growing: accepted
    ],
)
def test_a_change_that_makes_old_results_incomparable_is_refused_naming_old_and_new(
    tmp_path: Path, change: tuple[str, str], named: str | None
) -> None:
    head = HEAD + "[tournament.time]\nmove_ms = 1000\n"
    store = Store(tmp_path / "r.sqlite")
    open_tournament(store, tournament(tmp_path, head, 4))
    before = _schedule_rows(store.path)
    changed = tournament(tmp_path, head.replace(*change), 4)
    if named is None:
        assert open_tournament(store, changed).how == "grown"
        return
    with pytest.raises(GrowthRefused) as refused:
        open_tournament(store, changed)
    message = str(refused.value)
    assert named in message and "--db" in message and "\n" not in message
    assert _schedule_rows(store.path) == before, "a refused change wrote to the store"


@pytest.mark.parametrize(
    ("entrants", "head", "named"),
    [
        (3, HEAD + "repetitions = 2\n", "the file leaves out 'p3', whose games are in the store"),
        (4, HEAD + "repetitions = 1\n", r"repetitions = 2 \(the file now says 1; played games cannot be taken back"),
        (4, HEAD + "games_per_entrant = 6\n", "the store counts games by repetitions"),
    ],
)
def test_an_entrant_cannot_leave_and_games_cannot_be_taken_back(
    tmp_path: Path, entrants: int, head: str, named: str
) -> None:
    store = Store(tmp_path / "r.sqlite")
    open_tournament(store, tournament(tmp_path, HEAD + "repetitions = 2\n", 4))
    with pytest.raises(GrowthRefused, match=named):
        open_tournament(store, tournament(tmp_path, head, entrants))


def test_a_changed_bot_under_an_old_name_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.sqlite")
    config = tournament(tmp_path, HEAD, 4)
    open_tournament(store, config)
    text = (tmp_path / "t.toml").read_text().replace(str(TEST_BOTS / "passer"), "python3 -c pass", 1)
    (tmp_path / "t.toml").write_text(text)
    with pytest.raises(GrowthRefused, match="entrant 'p0' runs .*a changed bot is a new entrant"):
        open_tournament(store, load_tournament(tmp_path / "t.toml"))


def test_a_store_begun_before_growth_existed_resumes_and_reordered_entrants_resume_too(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.sqlite")
    config = tournament(tmp_path, HEAD, 4)
    # How stores were begun before this change: begin() with the full schedule.
    store.begin(config, build_schedule(config, store.deal_key()))
    assert open_tournament(store, config).how == "resumed"
    reordered = msgspec.structs.replace(config, entrants=list(reversed(config.entrants)))
    opened = open_tournament(store, reordered)
    assert opened.how == "resumed" and [e.name for e in opened.config.entrants] == ["p0", "p1", "p2", "p3"]


@pytest.mark.slow
def test_a_growth_run_killed_with_sigkill_resumes_without_losing_or_repeating_a_game(tmp_path: Path) -> None:
    """A few seconds: 6 games, then the 18 a fourth entrant adds, killed midway and resumed."""
    passer = own_passer(tmp_path)
    db = tmp_path / "t.sqlite"
    head = HEAD + "concurrency = 2\n"
    # The games before the growth are not what is tested: a stand-in executor finishes them here.
    store = Store(db)
    assert run_tournament(tournament(tmp_path, head, 3, bot=passer), store, executor=Instant()) == 6
    store.close()
    old = _finished_rows(db)
    tournament(tmp_path, head, 4, bot=passer)
    toml = tmp_path / "t.toml"
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
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    _wait_while_running(runner, db, len(old) + 2)
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait()
    assert_no_bot_outlived_its_referee(passer)
    before = _finished_rows(db)
    assert len(old) + 2 <= len(before) < 24, "the kill should land mid-growth"
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert resumed.returncode == 0, resumed.stderr
    # The resumed referee swept whatever the killed one left: nothing at all remains.
    assert wait_until_gone(passer) == []
    assert f"{len(before)} of 24 games already recorded" in resumed.stdout
    after = _finished_rows(db)
    assert sorted(after) == list(range(24))
    for game, row in before.items():
        assert after[game] == row, f"game {game} was played again"
    assert {game: after[game] for game in old} == old


def test_the_same_interpreter_by_another_path_is_the_same_bot_and_resumes(tmp_path: Path) -> None:
    """``famiglia`` and ``python -m tournaments.cli`` run bots on python3 or python: one interpreter, one bot."""
    store = Store(tmp_path / "r.sqlite")
    config = tournament(tmp_path, HEAD, 4)
    open_tournament(store, config)
    alias = tmp_path / "python-alias"
    alias.symlink_to(sys.executable)
    moved = [
        msgspec.structs.replace(e, bot=msgspec.structs.replace(e.bot, command=[str(alias), *e.bot.command[1:]]))
        for e in config.entrants
    ]
    assert config.entrants[0].bot.command[0] == sys.executable
    opened = open_tournament(store, msgspec.structs.replace(config, entrants=moved))
    assert opened.how == "resumed" and opened.new_games == 0 and len(store.schedule()) == 24


def test_growth_that_fails_halfway_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    """Growing is one transaction: a failure after the new settings and entrants are written rolls all back."""
    store = Store(tmp_path / "r.sqlite")
    open_tournament(store, tournament(tmp_path, HEAD, 4))
    before = (store.tournament(), store.entrant_names(), _schedule_rows(store.path))
    bigger = tournament(tmp_path, HEAD, 5)
    stored = store.tournament()
    assert stored is not None
    fingerprint = stored[2]
    clash = [ScheduledGame(index=0, table=99, row=0, seed=1, seating=(4, 0, 1))]  # game 0 exists: the insert fails
    with pytest.raises(StoreError, match="cannot grow"):
        store.extend(fingerprint, bigger, 4, clash)
    assert (store.tournament(), store.entrant_names(), _schedule_rows(store.path)) == before
    assert open_tournament(store, bigger).how == "grown"
