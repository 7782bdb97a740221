"""What one referee process can hold at once, checked before a tournament plays anything.

A referee process runs its games' bots as its own child processes. Three things
bound how many it can hold, and each is checked here from the tournament's
settings alone, before any bot starts:

- uids: run as root at the standard or strict sandbox level, every bot alive gets
  a uid of its own from a block of UIDS_PER_REFEREE (8,192) per referee process
  (referee/sandbox/launch.py); one more bot could not start.
- open files: each bot costs the referee four descriptors (stdin, the stdout FIFO,
  stderr and its control group's CPU time file; referee/process.py,
  referee/sandbox/cgroup.py; a pidfd only while its exit is awaited, and a poll
  instead where none can be had), each game one more for its replay file,
  and the referee keeps a few dozen of its own (store, event loop, workers' pipes)
  and at most ``KEPT_FILES`` for the cpu clock's reading of its bots' waits;
  the process's limit is its soft RLIMIT_NOFILE, which the referee raises to the
  hard limit (at most 65,536; as root it first tries to raise the hard limit to
  65,536, which a container without CAP_SYS_RESOURCE refuses) when it starts bots.
- CPU: the referee runs on one core, about 100 us per decision (bench/referee.py),
  so many games in one process answer slower but still fairly: the clock runs only
  while the referee waits for a bot. It is not refused here; bench/concurrency.py
  measures it.

Memory is not a bound in practice: about 100 KiB per game in the referee
(bench/concurrency.py), the bots' own memory being theirs.
"""

from __future__ import annotations

import math
import os
import resource

from referee.run_delay import KEPT_FILES
from referee.sandbox.resources import UIDS_PER_REFEREE
from tournaments.config.tournament import TournamentConfig
from tournaments.hosting.settings import RunCounts

__all__ = [
    "FILES_FOR_WAITS",
    "FILES_PER_BOT",
    "FILES_PER_CONTAINED_BOT",
    "FILES_PER_GAME",
    "FILES_RESERVED",
    "CapacityError",
    "bots_per_referee",
    "check_capacity",
    "check_tournament_capacity",
    "games_per_referee",
    "open_file_limit",
]

FILES_PER_BOT = 3
FILES_PER_CONTAINED_BOT = FILES_PER_BOT + 1  # at standard and strict: its control group's CPU time file
FILES_PER_GAME = 1
FILES_RESERVED = 64
FILES_FOR_WAITS = KEPT_FILES  # at standard and strict: the run delays the cpu clock reads (referee.run_delay)
_WANTED_FILES = 65536  # what referee.process.raise_open_file_limit asks for


class CapacityError(ValueError):
    """More games at once than one referee process can hold; the message says how to fix it."""


def games_per_referee(concurrency: int, workers: int) -> int:
    """Games one referee process plays at once: all of them in-process, else a worker's share."""
    return concurrency if workers <= 1 else math.ceil(concurrency / workers)


def bots_per_referee(concurrency: int, workers: int, table_size: int) -> int:
    """Bot processes one referee process runs at once (seated bots; idle warm ones may add some)."""
    return games_per_referee(concurrency, workers) * table_size


def open_file_limit() -> int:
    """The open-file limit a referee process gets: its soft limit raised towards the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return _WANTED_FILES
    return max(soft if soft != resource.RLIM_INFINITY else hard, min(_WANTED_FILES, hard))


def check_capacity(
    concurrency: int,
    workers: int,
    table_size: int,
    sandbox: str,
    *,
    root: bool | None = None,
    open_files: int | None = None,
) -> None:
    """Raise CapacityError when one referee process could not hold this many games at once.

    ``table_size`` is the largest table; ``root`` (default: whether this process
    runs as root) decides whether sandboxed bots get uids of their own;
    ``open_files`` (default: open_file_limit()) is the descriptor limit.
    """
    games = games_per_referee(concurrency, workers)
    bots = games * table_size
    where = "in one referee process" if workers <= 1 else f"per worker ({workers} workers)"
    fix = "lower concurrency or add workers"
    is_root = os.geteuid() == 0 if root is None else root
    if sandbox != "none" and is_root and bots > UIDS_PER_REFEREE:
        most = UIDS_PER_REFEREE // table_size
        raise CapacityError(
            f"concurrency {concurrency} puts {bots} bots at once {where}, more than the "
            f"{UIDS_PER_REFEREE} uids a referee process gives sandboxed bots: at most {most} games "
            f"of {table_size} per referee process; {fix}"
        )
    limit = open_file_limit() if open_files is None else open_files
    per_bot = FILES_PER_BOT if sandbox == "none" else FILES_PER_CONTAINED_BOT
    reserved = FILES_RESERVED if sandbox == "none" else FILES_RESERVED + FILES_FOR_WAITS
    needed = bots * per_bot + games * FILES_PER_GAME + reserved
    if needed > limit:
        most = (limit - reserved) // (table_size * per_bot + FILES_PER_GAME)
        raise CapacityError(
            f"concurrency {concurrency} needs about {needed} open files {where}, more than this "
            f"process's limit of {limit}: at most {most} games of {table_size} per referee process; "
            f"{fix}, or raise the limit (ulimit -n)"
        )


def check_tournament_capacity(config: TournamentConfig, counts: RunCounts) -> None:
    """check_capacity for a tournament file's largest table and sandbox level, at the run's ``counts``."""
    check_capacity(counts.concurrency, counts.workers, max(config.format.table_sizes), config.sandbox.level)
