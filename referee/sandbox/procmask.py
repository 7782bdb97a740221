"""The files of ``/proc`` that speak for the whole machine, covered inside the sandbox.

A bot gets a ``/proc`` of its own PID namespace and sees its own processes
only. Some files there are counters of the whole machine, though, kept by the
one kernel every seat shares: a seat that computes, forks, opens files or
takes memory moves them, and a seat that reads them later learns when and how
hard the others thought, or what they spelled out on purpose. A side channel
between seats, and a view of the host. Covered, each for this reason:

- ``stat``: per-CPU busy and idle time, context switches, processes started
  and running, counted over every process on the machine;
- ``loadavg``: the run queue's averages and the number of threads on the
  machine, which a seat moves by exactly the threads it starts;
- ``uptime``: its second number is the idle time of all CPUs together;
- ``interrupts``, ``softirqs``: per-CPU timer, rescheduling and cross-CPU
  interrupt counts, which rise with any process's work;
- ``schedstat``: the scheduler's per-CPU run and wait times;
- ``vmstat``, ``zoneinfo``, ``buddyinfo``: page faults, allocations and free
  pages of the machine's memory;
- ``diskstats``: the reads and writes of the machine's disks;
- ``locks``: every file lock on the machine, with the locked file's inode;
- ``cmdline``: the kernel's boot line, the host's configuration (a virtual
  machine's may name its control ports); no runtime reads it;
- ``sys/fs/file-nr``, ``inode-nr``, ``dentry-state``, ``aio-nr``: how many
  files, inodes and asynchronous I/O contexts the machine holds, which a seat
  moves by the number it opens;
- ``sys/kernel/pty/nr``: how many terminals the machine has open, which a
  seat moves by opening its own (``/dev/ptmx``);
- ``swaps``: how much of each swap area the machine uses;
- ``cgroups``: how many control groups each controller has, one more for
  every bot the host starts;
- ``key-users``: every user's count of kernel keys;
- ``pressure/``: how long the machine's tasks stalled for CPU, memory, I/O;
- ``irq/``: per-interrupt counts.

A file is covered by ``/dev/null``, which bwrap mounts without device access:
opening it fails with EACCES, a plainer answer for a parser than an empty
file. A folder gets an empty read-only tmpfs. What runtimes read there has a
fallback of the bot's own: glibc counts the CPUs the process may run on
(``sched_getaffinity``) when neither ``/sys`` (not mounted) nor ``/proc/stat``
answers, so ``os.cpu_count()`` in Python, the JVM and C's ``sysconf`` still see
the CPUs; libuv takes the uptime from ``clock_gettime``. Node's ``os.cpus()``
lists no CPU (it reads ``/proc/stat``); ``os.availableParallelism()`` counts
them.

Shown with fixed content instead (``referee.sandbox.procfixed``): ``meminfo``
and ``cpuinfo``, which runtimes read. Left visible, and why: files only root
may read (``timer_list``, ``slabinfo``, ...); ``net/`` and ``sysvipc/``, the
bot's own network and IPC namespaces'. The ``sysinfo`` system call reports the
machine's free memory, load and number of threads too: ``strict`` refuses it
(``referee.sandbox.seccomp`` says why ``standard`` cannot).
"""

from __future__ import annotations

import functools
import os

__all__ = ["MASKED_FILES", "MASKED_FOLDERS", "proc_mask_flags"]

MASKED_FILES = (
    "stat",
    "loadavg",
    "uptime",
    "interrupts",
    "softirqs",
    "schedstat",
    "vmstat",
    "zoneinfo",
    "buddyinfo",
    "diskstats",
    "locks",
    "cmdline",
    "sys/fs/file-nr",
    "sys/fs/inode-nr",
    "sys/fs/dentry-state",
    "sys/fs/aio-nr",
    "sys/kernel/pty/nr",
    "swaps",
    "cgroups",
    "key-users",
)
MASKED_FOLDERS = ("pressure", "irq")


@functools.cache
def _present(proc: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The masked files and folders this kernel has (its configuration decides: ``schedstat``, ``pressure``)."""
    files = tuple(name for name in MASKED_FILES if os.path.isfile(os.path.join(proc, name)))
    folders = tuple(name for name in MASKED_FOLDERS if os.path.isdir(os.path.join(proc, name)))
    return files, folders


def proc_mask_flags(proc: str = "/proc") -> list[str]:
    """bwrap flags that cover the machine-wide files of the sandbox's ``/proc``; they follow ``--proc /proc``.

    Only what this kernel has: bwrap cannot make a mount point in ``/proc``.
    The sandbox's ``/proc`` is a fresh mount of the same kernel's, so the
    host's (``proc``) tells which exist.
    """
    files, folders = _present(proc)
    flags: list[str] = []
    for name in files:
        flags += ["--ro-bind", "/dev/null", f"/proc/{name}"]
    for name in folders:
        flags += ["--tmpfs", f"/proc/{name}", "--remount-ro", f"/proc/{name}"]
    return flags
