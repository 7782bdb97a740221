"""What the benchmarks say about the machine they ran on, and how long they run on it."""

from __future__ import annotations

import argparse
from pathlib import Path


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, or "?" where /proc has none."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def positive_seconds(text: str) -> float:
    """``--seconds`` for argparse: a time to measure must be more than 0 (a usage error otherwise)."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the time to measure must be more than 0 seconds")
    return seconds
