"""Bots fingerprinted by content and the versions a store records (issue 29, section 1)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from referee.bots import BotSpec, load_bot
from tests.conftest import ROOT, TEST_BOTS
from tests.tournaments.store_feeder import finished
from tournaments.config.tournament import TournamentConfig, parse_tournament
from tournaments.lifecycle.plan import build_schedule
from tournaments.lifecycle.versions import bot_fingerprint, settle_versions
from tournaments.report.standings import standings
from tournaments.store import BotChanged, Store


def folder_bot(tmp_path: Path) -> BotSpec:
    shutil.copytree(TEST_BOTS / "passer", tmp_path / "bot", ignore=shutil.ignore_patterns("__pycache__"))
    return load_bot(str(tmp_path / "bot"))


def test_a_folder_bot_is_its_content_wherever_it_is_and_whatever_python_caches(tmp_path: Path) -> None:
    bot = folder_bot(tmp_path)
    before = bot_fingerprint(bot)
    assert before.startswith("folder:") and before == bot_fingerprint(load_bot(str(TEST_BOTS / "passer")))
    (tmp_path / "bot" / "__pycache__").mkdir()
    (tmp_path / "bot" / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0")
    assert bot_fingerprint(bot) == before, "compiled caches are not the bot"
    (tmp_path / "bot" / "notes.txt").write_text("a file the bot may read")
    assert bot_fingerprint(bot) != before, "anything else in the folder is"


def test_a_command_line_bot_is_the_files_its_words_name(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("print('v1')\n")
    (tmp_path / "weights.bin").write_bytes(b"\1\2")
    bot = load_bot("python3 bot.py --weights weights.bin --depth 3", base=tmp_path)
    before = bot_fingerprint(bot)
    assert before.startswith("files:")
    (tmp_path / "unrelated.txt").write_text("beside it, not named")
    same_program = BotSpec(name="b", command=[str(Path(sys.executable).resolve()), *bot.command[1:]], cwd=bot.cwd)
    assert bot_fingerprint(bot) == bot_fingerprint(same_program) == before, "neither the interpreter nor other files"
    (tmp_path / "weights.bin").write_bytes(b"\1\3")
    assert bot_fingerprint(bot) != before


def config_of(bot: BotSpec) -> TournamentConfig:
    data = {
        "tournament": {"name": "v", "game": "vendetta", "table_size": 3, "seed": 1},
        "entrant": [{"name": "mine", "bot": bot.cwd}]
        + [{"name": f"p{i}", "bot": str(TEST_BOTS / "passer")} for i in (1, 2)],
    }
    return parse_tournament(data, base=ROOT, source="test")


def test_versions_follow_the_content_and_results_stay_with_the_code_that_earned_them(tmp_path: Path) -> None:
    config = config_of(folder_bot(tmp_path))
    store = Store(tmp_path / "t.sqlite")
    store.begin(config, build_schedule(config, store.deal_key() or b""))
    assert settle_versions(store, config) == [1, 1, 1]
    (tmp_path / "bot" / "bot.py").write_text((tmp_path / "bot" / "bot.py").read_text() + "# before any game\n")
    assert settle_versions(store, config) == [1, 1, 1], "changed before it played: nothing to keep apart"
    games = store.schedule()
    store.record_batch([(game, finished(game)) for game in games[:3]], [], [1, 1, 1])

    (tmp_path / "bot" / "bot.py").write_text((tmp_path / "bot" / "bot.py").read_text() + "# after three games\n")
    with pytest.raises(BotChanged, match=r"^entrant 'mine''s bot has changed since its recorded games"):
        settle_versions(store, config)
    assert settle_versions(store, config, ["mine"]) == [2, 1, 1]
    store.record_batch([(game, finished(game)) for game in games[3:]], [], [2, 1, 1])
    names = {row.name: row.games for row in standings(store).standings}
    assert names == {"mine v1": 3, "mine v2": 3, "p1": 6, "p2": 6}

    (tmp_path / "bot" / "bot.py").write_text(
        (tmp_path / "bot" / "bot.py").read_text().replace("# after three games\n", "")
    )
    assert settle_versions(store, config) == [1, 1, 1], "put back as it was: version 1 again, no flag needed"
    store.close()


def test_a_store_made_before_versions_reads_its_games_as_version_1_and_records_the_next(tmp_path: Path) -> None:
    config = config_of(folder_bot(tmp_path))
    store = Store(tmp_path / "t.sqlite")
    store.begin(config, build_schedule(config, store.deal_key() or b""))
    games = store.schedule()
    store.record_batch([(games[0], finished(games[0]))], [])  # no versions known: NULL
    store.db.execute("DROP TABLE bot_version")
    store.db.execute("ALTER TABLE seat DROP COLUMN version")
    store.close()
    reopened = Store(tmp_path / "t.sqlite")
    assert [seat.version for seat in reopened.finished()[0].seats] == [1, 1, 1]
    assert settle_versions(reopened, config) == [1, 1, 1], "the bot as found now is the first version recorded"
    reopened.close()


def test_a_head_to_head_takes_no_new_version_of_the_pair_under_test(tmp_path: Path) -> None:
    bot = folder_bot(tmp_path)
    data = {
        "tournament": {"name": "h", "game": "vendetta", "table_size": 3, "seed": 1, "format": "head-to-head",
                       "a": "mine", "b": "p1", "max_games": 12},
        "entrant": [{"name": "mine", "bot": bot.cwd}]
        + [{"name": f"p{i}", "bot": str(TEST_BOTS / "passer")} for i in (1, 2, 3)],
    }  # fmt: skip
    config = parse_tournament(data, base=ROOT, source="test")
    store = Store(tmp_path / "t.sqlite")
    store.begin(config, build_schedule(config, store.deal_key() or b""))
    settle_versions(store, config)
    game = store.schedule()[0]
    store.record_batch([(game, finished(game))], [], [1, 1, 1, 1])
    (tmp_path / "bot" / "bot.py").write_text((tmp_path / "bot" / "bot.py").read_text() + "# changed mid-test\n")
    with pytest.raises(ValueError, match=r"^--new-version 'mine': mine is under test in this head-to-head"):
        settle_versions(store, config, ["mine"])
    assert len(store.bot_versions()[0]) == 1, "no version recorded for a refused run"
    store.close()
