"""What the benchmarks say about the machine they ran on."""

from __future__ import annotations

from pathlib import Path


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, or "?" where /proc has none."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"
