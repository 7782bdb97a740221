"""Stopping what a test started in a process group of its own (``start_new_session=True``)."""

from __future__ import annotations

import os
import signal
import subprocess


def stop_group(process: subprocess.Popen[bytes] | subprocess.Popen[str], grace_s: float = 30) -> None:
    """SIGTERM to ``process``'s group, then SIGKILL if it has not ended within ``grace_s``; reaped either way."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
