"""A bot pinned by a run: every process start, and every build, checks its files still have the pinned content."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import msgspec
import pytest

from referee import pinning
from referee.bots import BotSpec, load_bot
from referee.build import build_bot
from referee.pinning import BotChangedDuringRun, bot_fingerprint, check_pin
from tests.conftest import TEST_BOTS


def copied_passer(tmp_path: Path, build: str | None = None) -> Path:
    folder = tmp_path / "bot"
    shutil.copytree(TEST_BOTS / "passer", folder, ignore=shutil.ignore_patterns("__pycache__"))
    if build is not None:
        (folder / "bot.toml").write_text((folder / "bot.toml").read_text() + f'build = "{build}"\n')
    return folder


def pinned(spec: BotSpec) -> BotSpec:
    return msgspec.structs.replace(spec, pin=bot_fingerprint(spec))


def test_an_unpinned_bot_is_not_read_at_all(tmp_path: Path) -> None:
    check_pin(BotSpec(name="x", command=["/no/such/program"], cwd=str(tmp_path / "gone")))


def test_a_pinned_folder_bot_starts_until_its_folder_changes_then_names_the_entrant(tmp_path: Path) -> None:
    folder = copied_passer(tmp_path)
    spec = pinned(load_bot(str(folder)))
    check_pin(spec)
    (folder / "notes.txt").write_text("a file added while the run goes on")
    with pytest.raises(BotChangedDuringRun, match=r"^entrant 'passer''s bot changed during this run \(folder "):
        check_pin(spec)
    (folder / "notes.txt").unlink()
    check_pin(spec)  # put back as it was: the pinned content again


def test_a_pinned_command_line_bot_is_checked_by_the_files_its_words_name(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("print('v1')\n")
    spec = pinned(load_bot("python3 bot.py", base=tmp_path))
    check_pin(spec)
    (tmp_path / "bot.py").write_text("print('v2')\n")
    with pytest.raises(BotChangedDuringRun):
        check_pin(spec)


def test_an_unchanged_bot_is_hashed_once_however_often_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = pinned(load_bot(str(copied_passer(tmp_path))))
    hashed: list[str] = []
    real = pinning.bot_fingerprint
    monkeypatch.setattr(pinning, "bot_fingerprint", lambda bot: hashed.append(bot.name) or real(bot))
    for _ in range(5):
        check_pin(spec)
    assert hashed == ["passer"], "a cold-start run must not pack a large bot at every process start"
    (Path(spec.cwd) / "bot.py").write_text((Path(spec.cwd) / "bot.py").read_text() + "# edited\n")
    with pytest.raises(BotChangedDuringRun):
        check_pin(spec)
    assert hashed == ["passer", "passer"], "a moved entry is hashed again"


def test_a_build_checks_the_pin_before_it_builds_and_its_copy_needs_none_after(tmp_path: Path) -> None:
    folder = copied_passer(tmp_path, build="true")
    spec = pinned(load_bot(str(folder)))
    built = build_bot(spec)
    assert built.pin is None and built.cwd != spec.cwd, "the built copy is named by the content just checked"
    (folder / "bot.py").write_text((folder / "bot.py").read_text() + "# edited before the next build\n")
    with pytest.raises(BotChangedDuringRun, match="changed during this run"):
        build_bot(spec)


def test_the_error_reaches_the_host_whole_from_a_worker_process() -> None:
    error = BotChangedDuringRun("mine", "folder:" + "a" * 64, "folder:" + "b" * 64)
    again = pickle.loads(pickle.dumps(error))
    assert isinstance(again, BotChangedDuringRun) and str(again) == str(error)
    assert "--new-version mine" in str(again) and "folder aaaaaaaaaaaa" in str(again)
