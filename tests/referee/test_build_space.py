"""A build pays for the disk it takes: bounded in all (``build_mb``), and the build cache bounded in size.

``file_mb`` bounded each file, not their number: a build wrote 48 files of 63 MiB,
3.0 GB kept, and through a ladder each submission added as much and was accepted.
Each case is a real build in the real sandbox (standard), with small bounds so the
tests write little: a build past its bound is stopped and refused with one line,
the ways a build could hide what it writes are counted, and the cache evicts the
least recently used copies and never one in use, in this process or another.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import msgspec
import pytest

from ladder.config import SubmissionSection
from ladder.submissions import check_submission, save_upload
from ladder.upload import inspect_upload
from referee import build_space, cache_space
from referee.bot_folder import pack_folder
from referee.bots import BotBuildFailed, BotSpecError, load_bot
from referee.build import build_bot, build_cache, build_package, read_record, release_build
from referee.build_space import ENTRY_BYTES, folder_bytes
from referee.settings import BotLimits, RefereeSettings
from tests.conftest import ROOT, processes_in, wait_until_gone
from tests.ladder.helpers import BROKEN_BOT, upload_of
from tests.referee.test_build_containment import bot_folder

SMALL = RefereeSettings(limits=BotLimits(build_mb=8))
"""Builds held to 8 MiB: the tests write tens of MiB, not gigabytes."""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A build cache of this test's own."""
    root = tmp_path / "cache" / "bots"
    monkeypatch.setenv("FAMIGLIA_BOT_CACHE", str(root))
    monkeypatch.delenv("FAMIGLIA_BOT_CACHE_MB", raising=False)
    return root


def copy_of(folder: Path) -> Path:
    return build_cache() / f"{pack_folder(folder)[0]}-standard"


def refused(folder: Path, settings: RefereeSettings = SMALL) -> str:
    """The one line a build of ``folder`` is refused with; its copy is gone and its reason kept."""
    with pytest.raises(BotBuildFailed) as caught:
        build_bot(load_bot(str(folder)), settings)
    reason = str(caught.value)
    assert "\n" not in reason and reason.startswith("builder: its build ")
    entry = copy_of(folder)
    assert not entry.exists(), "the refused build's files were kept"
    assert read_record(entry.with_name(entry.name + ".failed")) == reason
    assert wait_until_gone(entry, 10.0) == []
    return reason


# --- a build's total -----------------------------------------------------------------


def test_a_build_writing_without_end_is_stopped_once_past_build_mb_and_refused_in_one_line(
    tmp_path: Path, cache: Path
) -> None:
    # The build, smaller: files each under file_mb, as many as it likes (here at most 400 MiB).
    folder = bot_folder(
        tmp_path, "sh -c 'i=0; while [ $i -lt 400 ]; do head -c 1048576 /dev/zero > f$i; i=$((i+1)); done'"
    )
    reason = refused(folder)
    assert reason == (
        "builder: its build was stopped writing into its folder, more than build_mb (8 MiB) allows; "
        "leave build outputs and data out of the bot's folder, or ask the host for a larger build_mb"
    )


def test_what_a_build_leaves_is_measured_again_once_it_has_ended(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build_space, "WATCH_TICK_S", 3600.0)  # no measure while it runs: the last one holds
    folder = bot_folder(tmp_path, "sh -c 'head -c 20000000 /dev/zero > data'")
    assert refused(folder).startswith("builder: its build left 19 MiB in its folder, more than build_mb (8 MiB)")


@pytest.mark.parametrize(
    ("build", "files"),
    [
        # A sparse file takes no blocks, and its size once copied or packed.
        ("sh -c 'truncate -s 60M sparse'", {}),
        # Empty files take no bytes, and an inode each: 5,000 of them count 5,000 blocks.
        ("python3 many.py", {"many.py": "for i in range(5000):\n    open(f'e{i}', 'w').close()\n"}),
        # A folder closed to everyone (mode 000) hides nothing.
        ("sh -c 'mkdir hide; head -c 20000000 /dev/zero > hide/x; chmod 000 hide; sleep 1'", {}),
        # Nor does a folder 3,000 levels deep, past the kernel's path limit.
        (
            "python3 deep.py",
            {
                "deep.py": """
                    import os
                    fd = os.open(".", os.O_RDONLY)
                    for _ in range(3000):
                        os.mkdir("d", dir_fd=fd)
                        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
                        os.close(fd)
                        fd = inner
                    os.fchdir(fd)
                    with open("x", "wb") as out:
                        out.write(bytes(20_000_000))
                """
            },
        ),
    ],
    ids=["sparse", "empty-files", "closed-folder", "deep"],
)
def test_what_a_build_hides_is_counted(build: str, files: dict[str, str], tmp_path: Path, cache: Path) -> None:
    folder = bot_folder(tmp_path, build, files={name: textwrap.dedent(text) for name, text in files.items()})
    assert "more than build_mb (8 MiB)" in refused(folder)


def test_a_build_within_build_mb_is_kept_with_its_size_and_zero_turns_the_bound_off(
    tmp_path: Path, cache: Path
) -> None:
    folder = bot_folder(tmp_path, "sh -c 'head -c 6000000 /dev/zero > data'")
    spec = build_bot(load_bot(str(folder)), SMALL)
    entry = Path(spec.cwd)
    assert (entry / "data").stat().st_size == 6_000_000
    assert int(entry.with_name(entry.name + ".size").read_text()) == folder_bytes(entry) > 6_000_000
    big = bot_folder(tmp_path, "sh -c 'head -c 20000000 /dev/zero > data'", name="big")
    unbounded = RefereeSettings(limits=BotLimits(build_mb=0))
    assert (Path(build_bot(load_bot(str(big)), unbounded).cwd) / "data").stat().st_size == 20_000_000


def test_folder_bytes_counts_each_entry_once_and_follows_no_link(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"x" * 10_000)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "empty").touch()
    (tmp_path / "to-usr").symlink_to("/usr")  # a link to a large folder is one entry
    assert folder_bytes(tmp_path) == (
        max(10_000, os.stat(tmp_path / "file").st_blocks * 512) + os.stat(tmp_path / "sub").st_size + 2 * ENTRY_BYTES
    )
    # Past stop_above it stops: here after the first folder, without what "sub" holds.
    assert folder_bytes(tmp_path, stop_above=0) == folder_bytes(tmp_path) - ENTRY_BYTES


# --- the cache's size -----------------------------------------------------------------


def three_mib_bot(parent: Path, name: str) -> Path:
    """A bot whose build leaves 3 MiB of its own (distinct content: a copy of its own in the cache)."""
    return bot_folder(parent, f"sh -c 'head -c 3145728 /dev/zero > data; echo {name} > who'", name=name)


def cached(root: Path) -> set[str]:
    return {entry.name for entry in root.iterdir() if entry.is_dir()}


def test_the_cache_evicts_the_least_recently_used_copies_and_never_one_in_use(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAMIGLIA_BOT_CACHE_MB", "8")  # two of these copies and a bit
    a, b, c, d = (three_mib_bot(tmp_path, name) for name in "abcd")
    held_a = build_bot(load_bot(str(a)))  # in use for the whole test: the oldest, never evicted
    for folder in (b, c):
        release_build(Path(build_bot(load_bot(str(folder))).cwd))  # built, used, let go
    # a, b and c: 9 MiB and more, past 8: b, the least recently used of those let go, went.
    assert cached(cache) == {copy_of(a).name, copy_of(c).name}
    release_build(Path(build_bot(load_bot(str(d))).cwd))
    # a, c and d: past 8 again: c went, a stays in use.
    assert cached(cache) == {copy_of(a).name, copy_of(d).name}
    assert sum(int(p.read_text()) for p in cache.glob("*.size")) <= 8 << 20
    assert (Path(held_a.cwd) / "who").read_text() == "a\n"
    # An evicted copy is built again when it is next asked for.
    again = build_bot(load_bot(str(b)))
    assert (Path(again.cwd) / "who").read_text() == "b\n"


def test_a_copy_another_process_uses_is_not_evicted(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAMIGLIA_BOT_CACHE_MB", "5")  # room for one of these copies
    a, b, c = (three_mib_bot(tmp_path, name) for name in "abc")
    release_build(Path(build_bot(load_bot(str(a))).cwd))
    # Another process (a tournament's, a Dask worker's) takes the same copy and keeps it.
    code = (
        "import sys; from referee.build import build_bot; from referee.bots import load_bot\n"
        f"build_bot(load_bot({str(a)!r})); print('holding', flush=True); sys.stdin.read()"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        assert other.stdout is not None and other.stdout.readline() == b"holding\n"
        for folder in (b, c):
            release_build(Path(build_bot(load_bot(str(folder))).cwd))
        # Past 5 MiB: a's copy, the least recently used, is in use elsewhere; b's went instead.
        assert cached(cache) == {copy_of(a).name, copy_of(c).name}
    finally:
        other.communicate(b"")
    # Let go by its last user, a's copy is the first to go at the next build past the bound.
    release_build(Path(build_bot(load_bot(str(b))).cwd))
    assert copy_of(a).name not in cached(cache)


def test_a_build_killed_midway_leaves_a_folder_the_next_eviction_removes(tmp_path: Path, cache: Path) -> None:
    folder = three_mib_bot(tmp_path, "a")
    leftover = cache / f"{'0' * 64}-standard"  # a copy no record calls built: a build that was killed
    leftover.mkdir(parents=True)
    (leftover / "junk").write_bytes(b"x" * 1000)
    build_bot(load_bot(str(folder)))
    assert not leftover.exists()
    assert processes_in(cache) == []


@pytest.mark.parametrize("value", ["lots", "-1", "1e9", "99999999999"])
def test_a_cache_size_that_is_not_a_number_of_mib_is_one_line_with_the_fix(
    value: str, tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAMIGLIA_BOT_CACHE_MB", value)
    with pytest.raises(BotSpecError, match=r"^FAMIGLIA_BOT_CACHE_MB=.*: give the build cache's size in MiB, a whole"):
        build_package("0" * 64, b"", "builder", SMALL)


async def test_through_a_ladder_a_submission_whose_build_writes_past_build_mb_is_rejected_and_kept_nowhere(
    tmp_path: Path, cache: Path
) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text(
        'name = "b"\ncommand = "./b"\nbuild = "sh -c \'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do '
        "head -c 1048576 /dev/zero > f$i; done'\"\n"
    )
    data = upload_of(bot)
    digest = inspect_upload(data, SubmissionSection())
    save_upload(tmp_path / "uploads", digest, data)
    verdict, spec = await check_submission(tmp_path / "uploads", digest, "ann", "vendetta", SMALL)
    assert not verdict.accepted and spec is None
    assert verdict.reason.startswith("build: ann: its build ") and "more than build_mb (8 MiB)" in verdict.reason
    assert cached(cache) == set()


async def test_a_submission_refused_by_check_bot_leaves_its_copy_to_the_cache(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = upload_of(BROKEN_BOT)
    digest = inspect_upload(data, SubmissionSection())
    save_upload(tmp_path / "uploads", digest, data)
    settings = RefereeSettings(sandbox="none")
    verdict, _ = await check_submission(tmp_path / "uploads", digest, "ann", "vendetta", settings)
    assert not verdict.accepted and cached(cache) == {f"{digest}-none"}
    # Not held by the server that refused it: the next eviction may take it.
    assert cache_space.keep_within(cache, 1) == [f"{digest}-none"]
    assert msgspec.json.decode(verdict.report)["passed"] is False


@pytest.mark.skipif(os.geteuid() != 0, reason="makes a tree of another user's to walk as that user")
def test_a_regular_users_walk_opens_a_folder_its_owner_closed_and_counts_what_it_holds(tmp_path: Path) -> None:
    # Without root the referee is its build's uid: a folder the build closed (mode 000) refuses it
    # until it opens it again, through the folder's own descriptor.
    nobody = 65534
    top = Path(tempfile.mkdtemp(prefix="famiglia-walk-", dir="/tmp"))
    try:
        (top / "closed").mkdir()
        (top / "closed" / "data").write_bytes(bytes(3_000_000))
        for path in (top, top / "closed", top / "closed" / "data"):
            os.chown(path, nobody, nobody)
        os.chmod(top / "closed", 0)
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # the walk, as that user: no root to read past the closed folder
            try:
                os.setgroups([])
                os.setresgid(nobody, nobody, nobody)
                os.setresuid(nobody, nobody, nobody)
                os.write(write, str(folder_bytes(top)).encode())
            except BaseException as exc:  # noqa: BLE001 - said to the parent, whatever it is
                os.write(write, repr(exc).encode())
            os._exit(0)
        os.close(write)
        os.waitpid(child, 0)
        with os.fdopen(read) as answer:
            said = answer.read()
        assert said.isdigit(), said
        assert int(said) == folder_bytes(top) > 3_000_000  # the same count as root's, the closed folder's file in it
        assert stat.S_IMODE((top / "closed").stat().st_mode) == 0o700  # opened again by its owner
    finally:
        subprocess.run(["rm", "-rf", str(top)], check=False)
