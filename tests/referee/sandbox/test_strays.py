"""kill_strays: what a warm bot left behind is killed, and gone when the call returns if the patience allows."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Iterator

import pytest

from referee.sandbox import strays
from referee.sandbox.strays import descendants, kill_strays, namespace_pid

# A parent (the bot) that starts a child holding 400 MB it has touched, says so, and waits.
# A SIGKILLed process with that much memory takes milliseconds to exit (its pages are freed
# first), the same wait a stray has on a host whose cores are busy.
_LEAVES_A_HEAVY_CHILD = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c",
    "import sys, time; b = bytearray(400 << 20); b[::4096] = b'x' * len(b[::4096]); print('ready', flush=True); time.sleep(600)"],
    stdout=subprocess.PIPE, text=True)
print(child.stdout.readline().strip(), flush=True)
sys.stdin.read()
"""


def test_a_stray_that_takes_a_while_to_die_is_gone_when_kill_strays_returns() -> None:
    bot = subprocess.Popen(
        [sys.executable, "-c", _LEAVES_A_HEAVY_CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert bot.stdout is not None and bot.stdout.readline().strip() == "ready"
        (stray,) = descendants(bot.pid)
        assert kill_strays(bot.pid, namespaced=False, patience_s=30) is True
        assert namespace_pid(stray) is None  # gone (or a zombie), not still exiting
        assert bot.poll() is None  # the bot itself is kept
    finally:
        bot.kill()
        bot.wait()


def scripted_strays(monkeypatch: pytest.MonkeyPatch, scans: Iterator[list[int]]) -> list[int]:
    """``kill_strays`` over scripted scans of the bot's processes; returns the pids it signalled."""
    signalled: list[int] = []
    monkeypatch.setattr(strays, "_strays", lambda chain, namespaced: next(scans))
    monkeypatch.setattr(strays.os, "kill", lambda pid, signum: signalled.append(pid))
    return signalled


def test_a_killed_stray_still_exiting_after_the_patience_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    # A stray killed in the first round that the host has not yet run to exit (a loaded host, a spent
    # CPU quota): it runs none of its own code again, so the bot may play on.
    signalled = scripted_strays(monkeypatch, itertools.repeat([41]))
    assert kill_strays(7, namespaced=True, patience_s=0.01) is True
    assert set(signalled) == {41}


def test_a_process_first_seen_after_the_patience_fails_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every scan finds a new process (forks racing the kills): the caller must stop the bot whole.
    signalled = scripted_strays(monkeypatch, ([41, *range(100, 100 + n)] for n in itertools.count()))
    assert kill_strays(7, namespaced=True, patience_s=0.01) is False
    assert 41 in signalled
