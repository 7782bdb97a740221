"""How long the ``famiglia`` command takes to start: ``--help`` and ``play --help``, against bare Python.

Usage: python bench/cli_startup.py [--runs N] [--importtime]

Unlike the other scripts here this one runs the command line itself, as a user
starts it: the virtualenv's ``famiglia`` script (``python -m tournaments.cli``
when it is not installed). Each round starts ``python -c pass`` (the baseline:
the interpreter alone), ``famiglia --help`` and ``famiglia play --help`` once
each, in that order, so a machine that gets busier part way through weighs on
all three alike; ``--runs`` rounds (default 15). Reported per command: the
median wall time and the median CPU time (user + system of the child, from
``getrusage``), which a busy machine disturbs less than the wall time.
``--importtime`` also prints the 15 slowest imports of ``famiglia play --help``
(``python -X importtime``, cumulative microseconds).

The last line: ``cli_startup: help <ms> ms play-help <ms> ms python <ms> ms``
(median wall times; target for both commands: under 250 ms).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

PYTHON = sys.executable
"""The interpreter of the virtualenv this script runs with (not resolved: its symlink is the virtualenv)."""


def famiglia() -> list[str]:
    """The installed ``famiglia`` script beside this interpreter, else the package run as a module."""
    script = Path(PYTHON).parent / "famiglia"
    return [str(script)] if script.is_file() else [PYTHON, "-m", "tournaments.cli"]


def timed(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``command``, its output discarded; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def slowest_imports(command: list[str], count: int) -> list[tuple[int, str]]:
    """The ``count`` imports of ``command`` with the largest cumulative time (microseconds, module)."""
    # -X importtime is an interpreter option: run the module, whatever the script's shebang says.
    args = [PYTHON, "-X", "importtime", "-m", "tournaments.cli", *command[len(famiglia()) :]]
    report = subprocess.run(args, capture_output=True, text=True, check=True).stderr
    rows = []
    for line in report.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].strip()))
    return sorted(rows, reverse=True)[:count]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="rounds of the three commands (default 15)")
    parser.add_argument("--importtime", action="store_true", help="list the slowest imports of play --help")
    args = parser.parse_args(argv)

    commands = {
        "python -c pass": [PYTHON, "-c", "pass"],
        "famiglia --help": [*famiglia(), "--help"],
        "famiglia play --help": [*famiglia(), "play", "--help"],
    }
    for command in commands.values():
        timed(command)  # once untimed: the files are in the page cache for every measured run
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, command in commands.items():
            wall, cpu = timed(command)
            walls[name].append(wall)
            cpus[name].append(cpu)
    for name in commands:
        print(
            f"{name:22} wall median {1000 * statistics.median(walls[name]):6.1f} ms "
            f"(min {1000 * min(walls[name]):6.1f})  CPU median {1000 * statistics.median(cpus[name]):6.1f} ms"
        )
    if args.importtime:
        print("slowest imports of famiglia play --help (cumulative):")
        for micros, module in slowest_imports(commands["famiglia play --help"], 15):
            print(f"  {micros / 1000:7.1f} ms  {module}")
    medians = {name: 1000 * statistics.median(values) for name, values in walls.items()}
    print(
        f"cli_startup: help {medians['famiglia --help']:.0f} ms "
        f"play-help {medians['famiglia play --help']:.0f} ms python {medians['python -c pass']:.0f} ms"
    )


if __name__ == "__main__":
    main()
