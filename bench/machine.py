"""What the benchmarks say about the machine they ran on, and how long they run on it."""

from __future__ import annotations

import argparse
import os
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


def host_cpu_group_procs() -> str | None:
    """The ``cgroup.procs`` file of the cpu group this process was started in, when famiglia's referee
    has made a cpu group of its own and moved this process into it (cgroup v1: referee.sandbox.cgroup_host);
    else None.

    A bench puts the host's other work there, its busy loops: started from this
    process they would be born in the referee's own group, as if they were famiglia's.
    """
    # Imported here: the other helpers of this module need none of famiglia's packages.
    from referee.sandbox.cgroup_host import cgroup_support

    support = cgroup_support()
    home = support.parents.get("cpu_bound")
    if support.version != "v1" or home is None:
        return None
    if not os.path.basename(home).startswith(f"famiglia-referee-{os.getpid()}-"):
        return None  # a group this process did not make (a worker's): not the host's to return to
    return os.path.join(os.path.dirname(home), "cgroup.procs")
