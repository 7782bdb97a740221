"""A ladder file's game, variants and (once games exist) table sizes cannot change under an existing store."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from ladder.config import LadderConfig
from ladder.fixed_keys import keep_fixed_keys
from ladder.store import LadderStore, new_token
from tournaments.cli import app

FILE = Path("club.toml")


def config(**changes: object) -> LadderConfig:
    return msgspec.structs.replace(LadderConfig(name="club"), **changes)


@pytest.fixture
def store(tmp_path: Path) -> LadderStore:
    return LadderStore(tmp_path / "club.sqlite")


def a_game(store: LadderStore) -> None:
    versions = []
    for name in ("ann", "bob", "cat"):
        entrant = store.add_entrant(name, new_token())
        version = store.add_version(entrant, name[0] * 64, (25.0, 8.3), per_hour=5)
        store.decide(version.id, accepted=True, reason="ok", report="{}")
        versions.append(version.id)
    store.add_table(1, versions, [versions])


def test_the_game_cannot_change_on_an_existing_ladder(store: LadderStore) -> None:
    keep_fixed_keys(store, config(), FILE)
    with pytest.raises(ValueError, match="club.toml: game is 'sicilianos' but this ladder was started with 'vendetta'"):
        keep_fixed_keys(store, config(game="sicilianos"), FILE)
    keep_fixed_keys(store, config(), FILE)  # put back: accepted again


def test_variants_cannot_change_even_before_games(store: LadderStore) -> None:
    keep_fixed_keys(store, config(variants={"round_limit": "30"}), FILE)
    with pytest.raises(ValueError, match='variants is {} but this ladder was started with {"round_limit":"30"}'):
        keep_fixed_keys(store, config(), FILE)


def test_table_sizes_may_change_until_the_first_game_and_never_after(store: LadderStore) -> None:
    keep_fixed_keys(store, config(table_sizes=[3]), FILE)
    keep_fixed_keys(store, config(table_sizes=[4, 3]), FILE)  # no game yet: the new sizes are kept
    a_game(store)
    keep_fixed_keys(store, config(table_sizes=[3, 4]), FILE)  # the same sizes in another order
    with pytest.raises(ValueError, match=r"table_sizes is \[3\] .* \[3,4\].*once games are played"):
        keep_fixed_keys(store, config(table_sizes=[3]), FILE)


def test_other_keys_may_change(store: LadderStore) -> None:
    keep_fixed_keys(store, config(), FILE)
    keep_fixed_keys(store, config(name="renamed", concurrency=7), FILE)


def test_serving_a_ladder_whose_game_was_changed_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "club.toml"
    runner = CliRunner()
    assert runner.invoke(app, ["ladder", "init", str(path)]).exit_code == 0
    store = LadderStore(tmp_path / "club.sqlite")
    keep_fixed_keys(store, LadderConfig(name="club ladder"), path)
    store.close()
    path.write_text(path.read_text().replace('game = "vendetta"', 'game = "sicilianos"'))
    served = runner.invoke(app, ["ladder", "serve", str(path), "--port", "0", "--stop-after", "1"])
    assert served.exit_code == 2, served.output
    assert "game is 'sicilianos' but this ladder was started with 'vendetta'" in served.output
    assert "Traceback" not in served.output
