"""Deal seeds are keyed with a secret kept in the store: the tournament file alone gives no deal,
while a host repeats deals on purpose with ``--deals-from``. About 5 s."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.replay import ChanceRecord, read_replay
from tests.conftest import TEST_BOTS
from tournaments.cli import app
from tournaments.config.tournament import load_tournament
from tournaments.lifecycle.plan import build_schedule
from tournaments.store import Store

TOURNAMENT = (
    '[tournament]\nname = "keyed"\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\nseed = 5\n'
    'replays = "replays"\n' + "".join(f'[[entrant]]\nname = "p{i}"\nbot = "{TEST_BOTS / "passer"}"\n' for i in range(3))
)


def run(toml: Path, db: Path, *extra: str) -> str:
    ran = CliRunner().invoke(app, ["tournament", "run", str(toml), "--db", str(db), "--workers", "1", *extra])
    assert ran.exit_code == 0, ran.output
    return ran.output


def seeds(db: Path) -> list[int]:
    return [game.seed for game in Store(db).schedule()]


def draws(db: Path) -> list[bytes]:
    """Every game's chance draws, as JSON, in game order."""
    out = []
    for game in Store(db).finished():
        assert game.replay is not None
        records = read_replay(Path(game.replay))
        out.append(b"".join(bytes(str(r.draws), "utf-8") for r in records if isinstance(r, ChanceRecord)))
    return out


@pytest.fixture(scope="module")
def two_stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where t.toml was run twice, into a.sqlite and b.sqlite; played once for the tests that read them."""
    folder = tmp_path_factory.mktemp("two-stores")
    toml = folder / "t.toml"
    toml.write_text(TOURNAMENT)
    run(toml, folder / "a.sqlite")
    run(toml, folder / "b.sqlite")
    return folder


def test_two_stores_of_one_tournament_file_deal_differently_and_not_from_the_files_seed(two_stores: Path) -> None:
    a, b = seeds(two_stores / "a.sqlite"), seeds(two_stores / "b.sqlite")
    public = [game.seed for game in build_schedule(load_tournament(two_stores / "t.toml"), b"")]
    assert len(set(a)) == len(set(b)) == 1  # one table: every seating on one deal (duplicate games)
    assert set(a) != set(b)
    assert not (set(a) | set(b)) & set(public)
    # The same tables and seatings: only the deals are secret.
    assert [g.seating for g in Store(two_stores / "a.sqlite").schedule()] == [
        g.seating for g in Store(two_stores / "b.sqlite").schedule()
    ]


def test_deals_from_another_store_repeats_its_deals(two_stores: Path, tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"  # a copy here: this run's replays go here
    toml.write_text(TOURNAMENT)
    run(toml, tmp_path / "again.sqlite", "--deals-from", str(two_stores / "a.sqlite"))
    assert seeds(tmp_path / "again.sqlite") == seeds(two_stores / "a.sqlite")
    assert draws(tmp_path / "again.sqlite") == draws(two_stores / "a.sqlite")


def test_deals_from_is_refused_for_a_store_that_already_deals_with_its_own_key(
    two_stores: Path, tmp_path: Path
) -> None:
    toml = two_stores / "t.toml"
    before = seeds(two_stores / "b.sqlite")
    ran = CliRunner().invoke(
        app,
        [
            "tournament",
            "run",
            str(toml),
            "--db",
            str(two_stores / "b.sqlite"),
            "--deals-from",
            str(two_stores / "a.sqlite"),
        ],
    )
    assert ran.exit_code == 2
    assert ran.output.startswith("famiglia: error: ") and "start a new --db" in ran.output
    assert seeds(two_stores / "b.sqlite") == before, "a refused run changed the store's deals"
    missing = CliRunner().invoke(
        app,
        [
            "tournament",
            "run",
            str(toml),
            "--db",
            str(tmp_path / "c.sqlite"),
            "--deals-from",
            str(tmp_path / "no.sqlite"),
        ],
    )
    assert missing.exit_code == 2 and "no such results file" in missing.output


def test_a_store_made_before_deal_keys_resumes_with_its_own_deals_and_says_they_are_public(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text(TOURNAMENT)
    config = load_tournament(toml)
    old = tmp_path / "old.sqlite"
    store = Store(old)
    store.begin(config, build_schedule(config, b""))  # what an older famiglia stored
    store.db.execute("DROP TABLE identity")
    store.close()
    before = seeds(old)
    output = run(toml, old)
    assert "made before famiglia kept deal keys" in output
    assert seeds(old) == before and Store(old).counts() == (6, 6)
    assert Store(old).deal_key() is None
