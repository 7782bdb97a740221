"""Everything the harness writes is the host's alone: 0600 files in the 0700 folders it creates.

Checked with a umask of 0, so the modes come from famiglia, not from the shell.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.private import make_private_dirs, write_private
from tests.conftest import TEST_BOTS
from tournaments.cli import app
from tournaments.store import Store

PASSER = str(TEST_BOTS / "passer")


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def noisy_bot(folder: Path) -> str:
    """A passer that writes a line to stderr first, so its games leave stderr files."""
    bot = folder / "noisy"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "noisy"\ncommand = "python3 bot.py"\n')
    (bot / "bot.py").write_text(
        f"import runpy, sys\nsys.stderr.write('hello\\n')\nrunpy.run_path({str(TEST_BOTS / 'passer' / 'bot.py')!r})\n"
    )
    return str(bot)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_private_folders_are_0700_and_existing_folders_keep_their_mode(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    make_private_dirs(tmp_path / "a" / "b")
    assert mode(tmp_path) == 0o755
    assert mode(tmp_path / "a") == mode(tmp_path / "a" / "b") == 0o700
    write_private(tmp_path / "a" / "f", b"x")
    assert mode(tmp_path / "a" / "f") == 0o600
    with pytest.raises(FileExistsError):
        write_private(tmp_path / "a" / "f", b"y", replace=False)
    assert (tmp_path / "a" / "f").read_bytes() == b"x"


def test_the_store_and_its_wal_and_shm_are_0600_in_a_new_0700_folder(tmp_path: Path) -> None:
    store = Store(tmp_path / "new" / "r.sqlite")
    store.db.execute("CREATE TABLE probe (x)")  # makes SQLite write its -wal and -shm
    assert mode(tmp_path / "new") == 0o700
    for name in ("r.sqlite", "r.sqlite-wal", "r.sqlite-shm"):
        assert mode(tmp_path / "new" / name) == 0o600, name


def test_a_store_an_older_famiglia_left_readable_becomes_0600(tmp_path: Path) -> None:
    Store(tmp_path / "r.sqlite").close()
    (tmp_path / "r.sqlite").chmod(0o644)
    Store(tmp_path / "r.sqlite")
    assert mode(tmp_path / "r.sqlite") == 0o600


def test_replays_stderr_and_the_report_page_are_0600_in_0700_folders(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text(
        '[tournament]\nname = "perm"\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\nreplays = "out/replays"\n'
        + f'[[entrant]]\nname = "noisy"\nbot = "{noisy_bot(tmp_path)}"\n'
        + "".join(f'[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(2))
    )
    ran = CliRunner().invoke(app, ["tournament", "run", str(toml), "--workers", "1"])
    assert ran.exit_code == 0, ran.output
    store = Store(tmp_path / "t.sqlite")
    folder = tmp_path / "out" / "replays" / store.tournament_id()
    assert mode(tmp_path / "out") == mode(tmp_path / "out" / "replays") == mode(folder) == 0o700
    replays = sorted(folder.glob("game-*.jsonl"))
    stderr = sorted(folder.glob("*.stderr"))
    assert len(replays) == 6 and stderr  # a warm process writes its line in its first game only
    assert all(mode(path) == 0o600 for path in [*replays, *stderr])
    page = CliRunner().invoke(app, ["report", "--db", str(tmp_path / "t.sqlite")])
    assert page.exit_code == 0, page.output
    assert mode(tmp_path / "t.html") == 0o600


def test_famiglia_play_writes_its_replay_and_stderr_0600(tmp_path: Path) -> None:
    noisy = noisy_bot(tmp_path)
    replay = tmp_path / "new" / "r.jsonl"
    ran = CliRunner().invoke(app, ["play", "vendetta", noisy, PASSER, PASSER, "--replay", str(replay)])
    assert ran.exit_code == 0, ran.output
    assert mode(tmp_path / "new") == 0o700
    assert mode(replay) == 0o600
    assert mode(replay.with_name("r.jsonl.seat0.stderr")) == 0o600


@pytest.mark.parametrize("umask", [0o002, 0o022])
def test_a_hosts_chmod_over_the_checkout_is_undone_and_said_at_the_next_command(tmp_path: Path, umask: int) -> None:
    # docs/sandbox.md asks a host to open a bot's folder to the sandbox's uids; one who runs
    # `chmod -R o+rX` over the whole checkout opens the results and replays beside the bots too.
    os.umask(umask)
    toml = tmp_path / "t.toml"
    toml.write_text(
        '[tournament]\nname = "perm"\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\nreplays = "runs/replays"\n'
        + "".join(f'[[entrant]]\nname = "p{i}"\nbot = "{PASSER}"\n' for i in range(3))
    )
    db = tmp_path / "runs" / "t.sqlite"
    ran = CliRunner().invoke(app, ["tournament", "run", str(toml), "--db", str(db), "--workers", "1"])
    assert ran.exit_code == 0, ran.output
    assert "warning:" not in ran.output, "nothing was open: nothing to say"
    folder = tmp_path / "runs" / "replays" / Store(db).tournament_id()
    assert mode(db) == 0o600 and mode(folder) == 0o700 and mode(tmp_path / "runs") == 0o700

    os.system(f"chmod -R o+rX {tmp_path}")
    assert mode(db) == 0o604 and mode(folder) == 0o705

    shown = CliRunner().invoke(app, ["standings", "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    warnings = [line for line in shown.output.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and f"{db} (was 0604)" in warnings[0], shown.output
    assert "never a folder of results" in warnings[0]
    assert mode(db) == 0o600

    os.system(f"chmod -R o+rX {tmp_path}")
    again = CliRunner().invoke(app, ["tournament", "run", str(toml), "--db", str(db), "--workers", "1"])
    assert again.exit_code == 0, again.output
    assert f"{folder} (was 0705)" in again.output and f"{db} (was 0604)" in again.output, again.output
    assert mode(db) == 0o600 and mode(folder) == 0o700
