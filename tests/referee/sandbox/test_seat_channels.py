"""Two seats share no kernel state (issue 42, item 1): every channel carries 0 bits between them.

Every seat sees the same system files, and the kernel keeps state per file
that one opener sets and another can read: locks, watches, pages in memory.
It keeps objects per namespace (IPC, abstract sockets), per user (keys), and
figures for the whole machine (threads, memory, terminals). A writer and a
reader (tests/bots/hostile/kernel_courier), each started as the referee
starts a bot, try each: the writer spells a secret, the reader reads it back,
then both again with the secret's complement. A channel that carries nothing
gives the reader the same answer both times (or refuses it). The control:
the same pair, unconfined, reads both secrets exactly, so each test can fail.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.sandbox import require_level
from tests.conftest import ROOT
from tests.referee.sandbox.test_containment import (
    _interpreter_for_others,
    _referee_code_for_others,
    _regular_user,
    copy_bot,
)

pytestmark = pytest.mark.slow

BITS = 12
PAIR = ROOT / "tests" / "bots" / "hostile" / "kernel_courier" / "pair.py"
ON_FILES = ["flock", "posix", "ofd", "inotify", "fanotify", "nowait", "mincore", "cachestat"]
ON_FOLDERS = ["dnotify"]
BY_NAME = ["msg", "shm", "sem", "mq", "abstract", "devshm", "tmp", "keys"]
MACHINE = {"pty_nr": 20, "procs": 100, "meminfo": 512, "sysinfo_shared": 512}
"""The machine's figures and how much of each the writer takes: terminals, threads, MiB, MiB."""
SYSINFO_FIXED = {"procs": "value 1", "sysinfo_shared": "value 0"}
"""What sysinfo tells every seat, whatever any seat holds (referee.sandbox.sysinfo_answer)."""


@pytest.fixture
def arena() -> Iterator[Path]:
    """A folder of the host's open to every user (mode 755), for bots with uids of their own."""
    folder = Path(tempfile.mkdtemp(prefix="famiglia-seats-", dir="/tmp"))
    os.chmod(folder, 0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _system_files() -> tuple[list[str], list[str]]:
    """Files and leaf folders of the system that every seat sees and nothing else reads while the tests run.

    Time zones of the "right" (leap second) kind: no program here reads them.
    """
    root = Path("/usr/share/zoneinfo/right")
    if not root.is_dir():
        root = Path("/usr/share/doc")
    walked = sorted(root.rglob("*"))
    files = [str(p) for p in walked if p.is_file() and not p.is_symlink() and p.stat().st_size > 0]
    leaves = [
        str(p) for p in walked
        if p.is_dir() and not p.is_symlink() and any(c.is_file() for c in p.iterdir())
        and not any(c.is_dir() for c in p.iterdir())
    ]  # fmt: skip
    if len(files) < BITS * len(ON_FILES) or len(leaves) < BITS:
        pytest.skip(f"{root} has too few files for {BITS} bits on each channel")
    return files, leaves


def plan(machine: dict[str, int]) -> tuple[dict[str, Any], str]:
    """What the pair tries (each channel's targets, a secret and its complement), and the secret."""
    secret = f"{random.getrandbits(BITS) | 1 | 1 << (BITS - 1):0{BITS}b}"
    complement = "".join("1" if bit == "0" else "0" for bit in secret)
    files, leaves = _system_files()
    discrete: dict[str, dict[str, Any]] = {}
    for number, channel in enumerate(ON_FILES):
        discrete[channel] = {"targets": files[number * BITS : (number + 1) * BITS]}
    discrete["dnotify"] = {"targets": leaves[:BITS]}
    for channel in BY_NAME:
        discrete[channel] = {"targets": [str(BITS)]}
    for task in discrete.values():
        task["secrets"] = [secret, complement]
    return {"tag": random.randrange(1, 1 << 20), "discrete": discrete, "analog": machine}, secret


def run_pair(level: str, courier: Path, tasks: dict[str, Any], *, user: Any = None, code: Path | None = None) -> Any:
    """Run pair.py (as ``user`` with ``code`` on its path, else as this process's user); its JSON report."""
    env = {**os.environ, "PYTHONPATH": str(code or ROOT)}
    command = [sys.executable, str(PAIR), level, str(courier)]
    if user is not None:
        env = {"PATH": "/usr/bin:/bin", "HOME": user.pw_dir, "PYTHONPATH": str(code), "LANG": "C.UTF-8"}
        command = ["setpriv", "--reuid", str(user.pw_uid), "--regid", str(user.pw_gid), "--init-groups",
                   _interpreter_for_others(), str(courier.parent / "pair.py"), level, str(courier)]  # fmt: skip
    done = subprocess.run(command, input=json.dumps(tasks), capture_output=True, text=True, env=env, timeout=300,
                          check=False, cwd=str(courier.parent))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def leaks(report: Any) -> dict[str, list[str]]:
    """The channels whose reader answered differently for the secret and its complement: each carried bits."""
    return {channel: answers for channel, answers in report["discrete"].items() if answers[0] != answers[1]}


def samples(trials: list[list[str]]) -> list[str]:
    """Every answer of every trial, in one list."""
    return [answer for trial in trials for answer in trial]


def figure(answer: str) -> int:
    word, _, value = answer.partition(" ")
    assert word == "value", answer
    return int(value)


@pytest.mark.parametrize("level", ["standard", "strict"])
def test_no_kernel_state_one_seat_sets_tells_another_seat_a_bit(level: str, arena: Path) -> None:
    require_level(level)
    courier = copy_bot(arena, "kernel_courier")
    tasks, _ = plan(MACHINE)
    report = run_pair(level, courier, tasks)
    assert leaks(report) == {}, report["discrete"]
    # What the filter refuses, and why it is not a bit either way.
    refused = {channel: answers[0] for channel, answers in report["discrete"].items() if "refused" in answers[0]}
    assert refused == {"dnotify": "refused EINVAL", "inotify": "refused ENOSYS", "fanotify": "refused ENOSYS",
                       "nowait": "refused ENOTSUP", "mincore": "refused ENOSYS", "cachestat": "refused ENOSYS",
                       "abstract": "refused EACCES", "keys": "refused EPERM"}  # fmt: skip
    # Locks hold nothing; IPC objects, /dev/shm and /tmp are each seat's own: the reader finds none.
    for channel in ("flock", "posix", "ofd", "msg", "shm", "sem", "mq", "devshm", "tmp"):
        assert report["discrete"][channel] == ["bits " + "0" * BITS] * 2, channel
    figures = {channel: samples(trials) for channel, trials in report["analog"].items()}
    assert set(figures["pty_nr"]) == {"refused EACCES"}
    assert len(set(figures["meminfo"])) == 1, figures["meminfo"]  # the same fixed figure, whatever the writer holds
    # sysinfo is answered by each seat's supervisor with fixed figures: the writer's threads and memory do not show.
    for channel, fixed in SYSINFO_FIXED.items():
        assert set(figures[channel]) == {fixed}, (channel, figures[channel])


def test_unconfined_the_same_pair_carries_every_secret(arena: Path) -> None:
    # The control: without the sandbox each channel carries the secret exactly, so the tests above can fail.
    courier = copy_bot(arena, "kernel_courier")
    tasks, secret = plan(MACHINE)
    report = run_pair("none", courier, tasks)
    complement = "".join("1" if bit == "0" else "0" for bit in secret)
    # A loaded machine may cost a timed channel one bit of the twelve (mq once lost its last); more than
    # that, or a channel that answers anything but bits, is a control that could not catch a leak.
    wrong = {
        channel: answers
        for channel, answers in report["discrete"].items()
        if not _within_a_bit(answers, [secret, complement])
    }
    assert wrong == {}, f"secret {secret}: {wrong}"
    # The machine's other work moves these too: the middle one of three trials.
    moved = {
        channel: statistics.median(figure(during) - figure(before) for before, during in trials)
        for channel, trials in report["analog"].items()
    }
    assert moved["pty_nr"] >= MACHINE["pty_nr"] // 2, report["analog"]
    assert moved["procs"] >= MACHINE["procs"] // 2, report["analog"]
    assert moved["meminfo"] >= (MACHINE["meminfo"] << 10) // 2, report["analog"]  # kB
    assert moved["sysinfo_shared"] >= (MACHINE["sysinfo_shared"] << 10) // 2, report["analog"]  # kB


def _within_a_bit(answers: list[str], sent: list[str]) -> bool:
    """Whether each answer is ``bits B`` with B the bits sent, save at most one."""
    if len(answers) != len(sent):
        return False
    for answer, bits in zip(answers, sent, strict=True):
        got = answer.removeprefix("bits ")
        if got == answer or len(got) != len(bits) or sum(a != b for a, b in zip(got, bits, strict=True)) > 1:
            return False
    return True


def test_a_regular_users_seats_share_no_kernel_state_either(arena: Path) -> None:
    # Without root both seats run as the user's uid, each in a user namespace of its own,
    # and with no control group to give: keys, locks and IPC must still carry nothing.
    user = _regular_user()
    code = _referee_code_for_others(arena)
    courier = copy_bot(arena, "kernel_courier")
    shutil.copy(PAIR, courier.parent / "pair.py")
    subprocess.run(["chmod", "-R", "o+rX", str(arena)], check=True)
    tasks, _ = plan({"pty_nr": 20, "meminfo": 256, "procs": 50, "sysinfo_shared": 256})
    report = run_pair("standard", courier, tasks, user=user, code=code)
    assert leaks(report) == {}, report["discrete"]
    assert report["discrete"]["keys"] == ["refused EPERM"] * 2
    assert set(samples(report["analog"]["pty_nr"])) == {"refused EACCES"}
    assert len(set(samples(report["analog"]["meminfo"]))) == 1, report["analog"]
    for channel, fixed in SYSINFO_FIXED.items():
        assert set(samples(report["analog"][channel])) == {fixed}, report["analog"]
