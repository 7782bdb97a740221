"""kill_strays: what a warm bot left behind is gone when the call returns, even when dying takes a while."""

from __future__ import annotations

import subprocess
import sys

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
