"""A build is a stranger's code: attacks on its containment, each with a real build in the real sandbox.

A uid of its own (root referee), no terminal, nothing of root left behind
however deep it hides it, records it cannot forge, a failure that costs only
its own entrant.
"""

from __future__ import annotations

import hashlib
import io
import os
import resource
import sqlite3
import stat
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from pathlib import Path

import msgspec
import pexpect
import pytest
from typer.testing import CliRunner

from referee.bot_folder import make_safe_for_host, pack_folder, remove_tree, unpack_package
from referee.bots import BotBuildFailed, BotSpecError, load_bot
from referee.build import build_bot, build_cache, build_package, read_record
from referee.play import prepare_bots
from referee.sandbox import host_support
from referee.settings import RefereeSettings
from tests.conftest import ROOT, TEST_BOTS, processes_in, wait_until_gone
from tournaments.cli import app

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="only a root referee gives builds a uid of their own")


def bot_folder(parent: Path, build: str, *, files: dict[str, str] | None = None, name: str = "builder") -> Path:
    """A bot folder (a copy of the passer) whose bot.toml has ``build``; world-readable like a shared bot."""
    folder = parent / name
    folder.mkdir()
    (folder / "bot.py").write_text((TEST_BOTS / "passer" / "bot.py").read_text())
    build_line = build.replace("\\", "\\\\").replace('"', '\\"')
    (folder / "bot.toml").write_text(f'name = "{name}"\ncommand = "python3 bot.py"\nbuild = "{build_line}"\n')
    for relative, text in (files or {}).items():
        (folder / relative).write_text(textwrap.dedent(text))
    for path in (parent, folder):
        os.chmod(path, 0o755)
    return folder


def entries(folder: Path) -> list[os.stat_result]:
    return [os.lstat(Path(root) / name) for root, dirs, files in os.walk(folder) for name in [*dirs, *files]]


@ROOT_ONLY
def test_a_build_runs_as_a_uid_of_its_own_and_leaves_nothing_of_the_build_uid_or_set_id(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "sh -c 'id -u > uid; cp /bin/true suid; chmod u+s,g+s suid; stat -c %u suid > owner'")
    spec = build_bot(load_bot(str(folder)))
    built = Path(spec.cwd)
    uid = int((built / "uid").read_text())
    # Not root: a set-id file it makes during the build is never root's, even for a moment.
    assert uid != 0 and uid >= RefereeSettings().bot_uid_base
    assert int((built / "owner").read_text()) == uid
    # Afterwards everything is the referee's, readable by all, and no bit is left to climb with.
    for info in entries(built):
        assert info.st_uid == 0 and info.st_mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX) == 0
        assert stat.S_ISLNK(info.st_mode) or info.st_mode & stat.S_IROTH
    # The bot's own folder was never written.
    assert sorted(p.name for p in folder.iterdir()) == ["bot.py", "bot.toml"]


def test_a_set_id_file_hidden_thousands_of_folders_deep_is_cleared_and_the_build_still_counts(tmp_path: Path) -> None:
    # A recursive walk dies at Python's recursion limit (about 1,000 levels) and
    # left the bit; 3,000 levels of 'd/' are also past the kernel's path limit.
    script = """
        import os, shutil
        fd = os.open(".", os.O_RDONLY)
        for _ in range(3000):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.fchdir(fd)
        shutil.copy("/bin/true", "hidden")
        os.chmod("hidden", 0o6755)
    """
    folder = bot_folder(tmp_path, "python3 deep.py", files={"deep.py": script})
    spec = build_bot(load_bot(str(folder)))
    fd = os.open(spec.cwd, os.O_RDONLY)
    try:
        for _ in range(3000):
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        info = os.stat("hidden", dir_fd=fd, follow_symlinks=False)
    finally:
        os.close(fd)
    assert info.st_mode & (stat.S_ISUID | stat.S_ISGID) == 0
    assert info.st_uid == os.geteuid()
    remove_tree(Path(spec.cwd))
    assert not Path(spec.cwd).exists()


TERMINAL_ATTACK = """
    import fcntl, os, termios
    seen = []
    try:
        tty = os.open("/dev/tty", os.O_RDWR)
        seen.append("tty-opened")
        fcntl.ioctl(tty, termios.TIOCSTI, b"x")
        seen.append("tiocsti-on-tty")
    except OSError as exc:
        seen.append(f"tty-refused:{exc.errno}")
    for fd in (0, 1, 2):
        try:
            fcntl.ioctl(fd, termios.TIOCSTI, b"x")
            seen.append(f"tiocsti-on-{fd}")
        except OSError:
            pass
        try:
            os.write(fd, b"\\x1b]0;PWNED-TITLE\\x07\\x1b[2J")
        except OSError:
            pass
    open("seen", "w").write(" ".join(seen))
"""


def build_in_a_terminal(folder: Path, python: list[str], *, cwd: Path, env: dict[str, str]) -> Path:
    """Build ``folder`` (whose build is ``TERMINAL_ATTACK``) in a referee started in a real pseudo-terminal.

    Asserts that the build could neither open the terminal nor push input into
    it, and that nothing it wrote reached it; the built copy's folder.
    """
    code = f"from referee.build import build_bot; from referee.bots import load_bot; print('BUILT', build_bot(load_bot({str(folder)!r})).cwd)"
    child = pexpect.spawn(python[0], [*python[1:], "-c", code], cwd=str(cwd), env=env, timeout=120)
    child.expect(pexpect.EOF)
    output = child.before.decode("utf-8", "replace")
    child.close()
    assert child.exitstatus == 0, output
    built = Path(output.split("BUILT", 1)[1].strip())
    seen = (built / "seen").read_text().split()
    assert seen and seen[0].startswith("tty-refused"), seen
    assert not any(item.startswith("tiocsti") for item in seen), seen
    assert "\x1b" not in output and "PWNED" not in output
    return built


@pytest.mark.slow
def test_a_build_has_no_terminal_to_open_push_input_into_or_write_to(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "python3 attack.py", files={"attack.py": TERMINAL_ATTACK})
    # The referee runs in a real pseudo-terminal, its controlling terminal, as when a host types the command.
    build_in_a_terminal(folder, [sys.executable], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow
def test_a_tournament_goes_on_without_an_entrant_whose_build_fails(tmp_path: Path) -> None:
    broken = bot_folder(tmp_path, "sh -c 'echo cannot compile >&2; exit 3'", name="broken")
    passer = TEST_BOTS / "passer"
    (tmp_path / "t.toml").write_text(
        '[tournament]\ngame = "vendetta"\ntable_size = 3\nrepetitions = 1\n'
        f'[[entrant]]\nname = "broken"\nbot = "{broken}"\n'
        + "".join(f'[[entrant]]\nname = "p{i}"\nbot = "{passer}"\n' for i in range(2))
    )
    runner = CliRunner()
    done = runner.invoke(app, ["tournament", "run", str(tmp_path / "t.toml"), "--workers", "1"])
    assert done.exit_code == 0, done.output
    assert "Traceback" not in done.output
    games = runner.invoke(app, ["games", "--db", str(tmp_path / "t.sqlite"), "--format", "json"])
    assert games.exit_code == 0, games.output
    played = msgspec.json.decode(games.output)
    assert len(played) == 6 and all(len(game["seats"]) == 3 for game in played)  # one deal, six seatings
    for game in played:
        assert [kind for name, kind in zip(game["seats"], game["terminations"]) if name == "broken"] == ["crash"]
        assert [kind for name, kind in zip(game["seats"], game["terminations"]) if name != "broken"] == ["", ""]
    with sqlite3.connect(tmp_path / "t.sqlite") as store:
        reasons = {row[0] for row in store.execute("SELECT reason FROM seat WHERE termination = 'crash'")}
    assert reasons == {"cannot start: broken: build failed (exit 3): cannot compile"}


def test_records_of_a_build_live_outside_its_folder_and_a_planted_link_is_never_followed(tmp_path: Path) -> None:
    secret = tmp_path / "root-only"
    secret.write_text("TOP-SECRET")
    os.chmod(secret, 0o600)
    # The build plants links at the names the worker's records once had, and fails.
    plant = f"sh -c 'ln -s {secret} .famiglia-built; ln -s {secret} .famiglia-build-failed; exit 1'"
    folder = bot_folder(tmp_path, plant)
    digest, package = pack_folder(folder)
    for attempt in range(2):
        with pytest.raises(BotBuildFailed) as failed:
            build_package(digest, package, "builder", RefereeSettings(), retry_failed=False)
        assert "TOP-SECRET" not in str(failed.value) and "build failed (exit 1)" in str(failed.value), attempt
    assert secret.read_text() == "TOP-SECRET"
    records = sorted(p.name for p in build_cache().iterdir() if p.name.startswith(digest))
    assert f"{digest}-standard.failed" in records
    # A link where the cache keeps a record is not read, and goes.
    record = build_cache() / f"{digest}-standard.failed"
    record.unlink()
    record.symlink_to(secret)
    assert read_record(record) is None and not record.is_symlink()


def test_a_bot_toml_that_is_a_link_is_refused_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.toml"
    secret.write_text('name = "leaked"\ncommand = "true"\n')
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").symlink_to(secret)
    with pytest.raises(BotSpecError, match="cannot be read as a plain file"):
        load_bot(str(folder))


def test_a_fifo_named_bot_toml_is_refused_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    os.mkfifo(folder / "bot.toml")
    with pytest.raises(BotSpecError, match="has no bot.toml"):
        load_bot(str(folder))


def archive(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def member(
    name: str, kind: bytes = tarfile.REGTYPE, *, data: bytes = b"", link: str = "", mode: int = 0o644
) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, data if kind == tarfile.REGTYPE else None


@pytest.mark.parametrize(
    "hostile",
    [
        member("../escaped", data=b"x"),
        member("hard", tarfile.LNKTYPE, link="/etc/passwd"),
        member("hard", tarfile.LNKTYPE, link="../../etc/passwd"),
    ],
    ids=["dot-dot", "hard-link-absolute", "hard-link-out"],
)
def test_a_package_whose_names_leave_its_folder_is_refused(
    tmp_path: Path, hostile: tuple[tarfile.TarInfo, bytes | None]
) -> None:
    with pytest.raises(BotSpecError, match="could not be unpacked"):
        unpack_package(archive(member("bot.toml", data=b"x"), hostile), tmp_path / "out")
    assert not (tmp_path / "escaped").exists()


def test_a_package_cannot_write_through_a_link_it_unpacked_first(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    package = archive(member("out", tarfile.SYMTYPE, link=str(outside)), member("out/evil", data=b"x"))
    with pytest.raises(BotSpecError, match="leads out of the folder through a link"):
        unpack_package(package, tmp_path / "unpacked")
    assert list(outside.iterdir()) == []


def test_an_absolute_name_in_a_package_lands_inside_its_folder(tmp_path: Path) -> None:
    unpack_package(
        archive(member("/etc", tarfile.DIRTYPE), member("/etc/famiglia-escaped", data=b"x")), tmp_path / "out"
    )
    assert (tmp_path / "out" / "etc" / "famiglia-escaped").read_bytes() == b"x"
    assert not Path("/etc/famiglia-escaped").exists()


def test_a_package_keeps_files_folders_and_links_and_drops_devices_and_set_id_bits(tmp_path: Path) -> None:
    package = archive(
        member("dir", tarfile.DIRTYPE, mode=0o777),
        member("dir/tool", data=b"#!/bin/sh\n", mode=0o6777),
        member("python", tarfile.SYMTYPE, link="/usr/bin/python3"),
        member("null", tarfile.CHRTYPE),
        member("pipe", tarfile.FIFOTYPE),
    )
    out = tmp_path / "out"
    unpack_package(package, out)
    assert sorted(p.name for p in out.iterdir()) == ["dir", "python"]
    assert os.readlink(out / "python") == "/usr/bin/python3"
    assert os.lstat(out / "dir" / "tool").st_mode & (stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH) == 0


def test_making_a_folder_safe_removes_what_is_neither_file_folder_nor_link_and_opens_it_to_read(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    (folder / "sub").mkdir(parents=True)
    os.mkfifo(folder / "sub" / "fifo")
    (folder / "sub" / "secret").write_text("x")
    os.chmod(folder / "sub" / "secret", 0o4700)
    os.chmod(folder / "sub", 0o700)
    make_safe_for_host(folder, owner=None)
    assert not (folder / "sub" / "fifo").exists()
    assert stat.S_IMODE(os.lstat(folder / "sub" / "secret").st_mode) == 0o755
    assert stat.S_IMODE(os.lstat(folder / "sub").st_mode) == 0o755


def test_the_same_content_is_built_once(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "sh -c 'date +%s%N > stamp'")
    first = build_bot(load_bot(str(folder)))
    stamp = (Path(first.cwd) / "stamp").read_text()
    second = build_bot(load_bot(str(folder)))
    assert second.cwd == first.cwd and (Path(second.cwd) / "stamp").read_text() == stamp
    (folder / "bot.py").write_text((folder / "bot.py").read_text() + "\n# changed\n")
    third = build_bot(load_bot(str(folder)))
    assert third.cwd != first.cwd
    assert Path(third.cwd).name.startswith(hashlib.sha256(pack_folder(folder)[1]).hexdigest())


def test_a_build_cache_that_is_someone_elses_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    foreign = tmp_path / "cache"
    foreign.mkdir()
    os.chown(foreign, 12345, 12345) if os.geteuid() == 0 else pytest.skip("needs root to make a folder someone else's")
    monkeypatch.setenv("FAMIGLIA_BOT_CACHE", str(foreign))
    with pytest.raises(BotSpecError, match="not a folder of this user's; remove it, or set FAMIGLIA_BOT_CACHE"):
        build_cache()


def test_a_failed_build_through_play_is_one_line_naming_the_bot(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "sh -c 'echo oops >&2; exit 2'")
    with pytest.raises(BotBuildFailed, match=r"^builder: build failed \(exit 2\): oops$"):
        prepare_bots([load_bot(str(folder))])
    assert host_support().bwrap is not None


@pytest.mark.slow
def test_a_regular_users_build_has_no_terminal_either(tmp_path: Path) -> None:
    # The same attack with the referee running as a regular user: the build runs
    # as that user in a user namespace, in a session of its own.
    from tests.referee.sandbox.test_containment import _interpreter_for_others, _referee_code_for_others, _regular_user

    user = _regular_user()
    python = _interpreter_for_others()
    host = Path(tempfile.mkdtemp(prefix="famiglia-host-", dir="/tmp"))
    try:
        os.chmod(host, 0o755)
        code = _referee_code_for_others(host)
        folder = bot_folder(host, "python3 attack.py", files={"attack.py": TERMINAL_ATTACK})
        os.chown(folder, user.pw_uid, user.pw_gid)
        subprocess.run(["chmod", "-R", "o+rX", str(host)], check=True)
        cache = host / "cache"
        cache.mkdir()
        os.chown(cache, user.pw_uid, user.pw_gid)
        env = {"PATH": "/usr/bin:/bin", "HOME": user.pw_dir, "PYTHONPATH": str(code), "LANG": "C.UTF-8",
               "FAMIGLIA_BOT_CACHE": str(cache / "bots")}  # fmt: skip
        as_user = ["setpriv", "--reuid", str(user.pw_uid), "--regid", str(user.pw_gid), "--init-groups", python]
        built = build_in_a_terminal(folder, as_user, cwd=host, env=env)
        assert all(info.st_uid == user.pw_uid for info in entries(built))
    finally:
        subprocess.run(["rm", "-rf", str(host)], check=False)


def test_a_build_that_prints_without_end_is_stopped_by_its_file_limit_not_the_referees_memory(tmp_path: Path) -> None:
    # 200 MB on stdout, past file_mb (64): it went whole into the referee's memory before.
    folder = bot_folder(tmp_path, "sh -c 'head -c 200000000 /dev/zero; echo done'")
    before = rss_kib()
    with pytest.raises(BotBuildFailed, match=r"^builder: build failed \(exit"):
        build_bot(load_bot(str(folder)))
    assert rss_kib() - before < 50_000


def rss_kib() -> int:
    """This process's peak resident memory, in KiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.mark.slow
def test_a_referee_killed_mid_build_leaves_no_build_running_and_the_next_run_builds_again(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "sh -c 'sleep 30; touch done'")
    code = (
        f"from referee.build import build_bot; from referee.bots import load_bot; build_bot(load_bot({str(folder)!r}))"
    )
    referee = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    digest = pack_folder(folder)[0]
    entry = build_cache() / f"{digest}-standard"
    deadline = time.monotonic() + 60
    while not processes_in(entry):  # the build is running in its copy
        assert time.monotonic() < deadline and referee.poll() is None, "the build never started"
        time.sleep(0.05)
    referee.kill()
    referee.wait()
    assert wait_until_gone(entry, 10.0) == [], "the build outlived its referee"
    assert read_record(build_cache() / f"{digest}-standard.built") is None
    # The next run starts over from the package; this time its build is let to finish.
    (folder / "bot.toml").write_text((folder / "bot.toml").read_text().replace("sleep 30", "sleep 0"))
    spec = build_bot(load_bot(str(folder)))
    assert (Path(spec.cwd) / "done").exists()
