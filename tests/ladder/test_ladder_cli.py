"""``famiglia ladder``: its commands' mistakes are one line and exit 2, and its group keeps famiglia quick to start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tournaments.cli import app

runner = CliRunner()


def test_init_writes_an_example_that_loads_and_never_overwrites(tmp_path: Path) -> None:
    from ladder.config import load_ladder

    path = tmp_path / "club.toml"
    assert runner.invoke(app, ["ladder", "init", str(path)]).exit_code == 0
    config = load_ladder(path)
    assert config.game == "vendetta" and config.concurrency == 2
    again = runner.invoke(app, ["ladder", "init", str(path)])
    assert again.exit_code == 2 and "exists already" in again.output


def test_add_entrant_prints_a_token_once_and_refuses_a_taken_or_odd_name(tmp_path: Path) -> None:
    path = tmp_path / "club.toml"
    runner.invoke(app, ["ladder", "init", str(path)])
    first = runner.invoke(app, ["ladder", "add-entrant", str(path), "ann"])
    assert first.exit_code == 0
    token = first.output.strip().splitlines()[-1]
    assert len(token) >= 40 and token.encode() not in (tmp_path / "club.sqlite").read_bytes()
    taken = runner.invoke(app, ["ladder", "add-entrant", str(path), "ann"])
    assert taken.exit_code == 2 and "already registered" in taken.output
    odd = runner.invoke(app, ["ladder", "add-entrant", str(path), "<script>"])
    assert odd.exit_code == 2 and "a name is 1 to 40" in odd.output


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[ladder]\nname = 'x'\nconcurrency = 0\n", "concurrency"),
        ("[ladder]\nname = 'x'\ngame = 'chess'\n", "chess"),
        ("[ladder]\nname = 'x'\ntable_sizes = [9]\n", "table_sizes"),
        ("[ladder]\nname = 'x'\ncolour = 'red'\n", "colour"),
        ("[ladder\n", "not valid TOML"),
    ],
)
def test_a_wrong_ladder_file_is_one_line_saying_what_to_fix(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    done = runner.invoke(app, ["ladder", "serve", str(path)])
    assert done.exit_code == 2 and says in done.output and len(done.output.strip().splitlines()) == 1


def test_submit_to_nowhere_or_of_no_bot_is_one_line(tmp_path: Path) -> None:
    done = runner.invoke(app, ["ladder", "submit", str(tmp_path), "--server", "http://127.0.0.1:9", "--token", "t"])
    assert done.exit_code == 2 and "no bot.toml" in done.output
    (tmp_path / "bot.toml").write_text('name = "b"\ncommand = "true"\n')
    done = runner.invoke(app, ["ladder", "submit", str(tmp_path), "--server", "ftp://x", "--token", "t"])
    assert done.exit_code == 2 and "http://HOST:PORT" in done.output


def test_the_ladder_group_imports_no_web_library_until_a_command_runs() -> None:
    program = "import sys, tournaments.cli; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True)
    modules = {name.split(".")[0] for name in done.stdout.split()}
    assert "ladder" in modules
    assert modules.isdisjoint({"starlette", "hypercorn", "httpx", "trio", "jinja2", "sqlite3"})


def test_a_second_server_of_the_same_ladder_is_refused_at_once(tmp_path: Path) -> None:
    from tournaments.hosting.storage import hold_store

    path = tmp_path / "club.toml"
    runner.invoke(app, ["ladder", "init", str(path)])
    lock = hold_store(tmp_path / "club.sqlite")  # what a running server holds
    try:
        done = runner.invoke(app, ["ladder", "serve", str(path), "--port", "0"])
    finally:
        lock.release()
    assert done.exit_code == 2 and "is being written by process" in done.output


def test_the_host_s_controls_say_what_they_did_or_one_line_why_not(tmp_path: Path) -> None:
    path = tmp_path / "club.toml"
    runner.invoke(app, ["ladder", "init", str(path)])
    early = runner.invoke(app, ["ladder", "pause", str(path)])
    assert early.exit_code == 2 and "no ladder store beside it yet" in early.output
    runner.invoke(app, ["ladder", "add-entrant", str(path), "ann"])
    assert "paused" in runner.invoke(app, ["ladder", "pause", str(path)]).output
    assert "resumed" in runner.invoke(app, ["ladder", "resume", str(path)]).output
    retire = runner.invoke(app, ["ladder", "retire", str(path), "ann"])
    assert retire.exit_code == 2 and "no active version to retire" in retire.output
    requeue = runner.invoke(app, ["ladder", "requeue", str(path), "7"])
    assert requeue.exit_code == 2 and "there is no game 7" in requeue.output
    assert "no games played yet" in runner.invoke(app, ["ladder", "standings", str(path)]).output


def test_serve_on_a_port_in_use_or_an_unknown_host_names_it_and_creates_nothing(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "club.toml"
    assert runner.invoke(app, ["ladder", "init", str(path)]).exit_code == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        in_use = runner.invoke(app, ["ladder", "serve", str(path), "--port", str(port)])
    assert in_use.exit_code == 2 and f"--port {port}: 127.0.0.1:{port} is in use" in in_use.output, in_use.output
    unknown = runner.invoke(app, ["ladder", "serve", str(path), "--host", "no-such-host.invalid"])
    assert unknown.exit_code == 2 and "--host 'no-such-host.invalid': no such host" in unknown.output
    foreign = runner.invoke(app, ["ladder", "serve", str(path), "--host", "192.0.2.1"])  # TEST-NET-1: nobody's
    assert foreign.exit_code == 2 and "not an address of this machine" in foreign.output
    for said in (in_use, unknown, foreign):
        assert "Traceback" not in said.output and len(said.output.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["club.toml"]  # no store, no data folder
