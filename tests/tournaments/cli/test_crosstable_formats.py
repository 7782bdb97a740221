"""``famiglia crosstable --format csv`` and ``--format json``: what the table shows, for a script to read.

The store is filled by a stand-in executor that finishes every game at once
(seat 0 first, seat 1 second, ...), so who finished ahead of whom is known.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from tests.conftest import ROOT, TEST_BOTS
from tests.tournaments.store_feeder import Instant
from tournaments.cli import app
from tournaments.config.tournament import parse_tournament
from tournaments.lifecycle.plan import build_schedule
from tournaments.report.standings import crosstable
from tournaments.runner import run_pending
from tournaments.store import Store

runner = CliRunner()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four entrants at 3-player tables, every table once in all its seatings: 24 games."""
    data = {
        "tournament": {"name": "cross", "game": "vendetta", "table_size": 3, "repetitions": 1, "seed": 5},
        "entrant": [{"name": f"p{i}", "bot": str(TEST_BOTS / "passer")} for i in range(4)],
    }
    config = parse_tournament(data, base=ROOT, source="test")
    path = tmp_path_factory.mktemp("cross") / "cross.sqlite"
    store = Store(path)
    store.begin(config, build_schedule(config, store.deal_key() or b""))
    trio.run(lambda: run_pending(config, store, concurrency=4, executor=Instant(), on_result=lambda g, r: None))
    store.close()
    return path


def expected(db: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """(entrant, opponent) -> (games the entrant finished ahead, games together), as the table counts them."""
    store = Store(db)
    table = crosstable(store)
    store.close()
    return {
        (row, column): (table.ahead[i][j], table.met[i][j])
        for i, row in enumerate(table.names)
        for j, column in enumerate(table.names)
        if i != j
    }


def test_crosstable_as_json_holds_the_names_and_both_counts_of_every_pair(db: Path) -> None:
    done = runner.invoke(app, ["crosstable", "--db", str(db), "--format", "json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    assert data["names"] == ["p0", "p1", "p2", "p3"]
    read = {
        (row, column): (data["ahead"][i][j], data["met"][i][j])
        for i, row in enumerate(data["names"])
        for j, column in enumerate(data["names"])
        if i != j
    }
    assert read == expected(db)
    assert all(met == 12 for _, met in read.values())  # any two of four meet at 2 tables of 6 seatings
    assert all(read[(a, b)][0] + read[(b, a)][0] == 12 for a, b in read)


def test_crosstable_as_csv_has_one_row_per_ordered_pair_of_entrants(db: Path) -> None:
    done = runner.invoke(app, ["crosstable", "--db", str(db), "--format", "csv"])
    assert done.exit_code == 0, done.output
    rows = list(csv.DictReader(io.StringIO(done.output)))
    assert rows and list(rows[0]) == ["entrant", "opponent", "ahead", "games"]
    read = {(row["entrant"], row["opponent"]): (int(row["ahead"]), int(row["games"])) for row in rows}
    assert len(read) == len(rows) == 4 * 3
    assert read == expected(db)


def test_crosstable_with_an_unknown_format_is_one_line_naming_the_choices(db: Path) -> None:
    done = runner.invoke(app, ["crosstable", "--db", str(db), "--format", "xml"])
    assert done.exit_code == 2, done.output
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert lines == ["famiglia: error: --format 'xml': choose table, csv or json"]
