"""Containment for bot processes: what a bot may see, touch and start, per level.

- ``launch``: the levels, the launcher chain per level, and ``prepare``, which
  readies a bot or its build; refuses a level it cannot apply in full.
- ``view``: the filesystem a bot sees (the system, its runtime, its own files).
- ``runtimes``: the real toolchain behind a version manager's proxy, and the
  runtime folders a host names.
- ``procmask``: the machine-wide files of ``/proc`` covered in the sandbox.
- ``seccomp``: the system calls a bot may not make (socket families allow-listed).
- ``cgroup``: a control group per bot and per build, bounding its whole tree.
- ``resources``: what a referee holds for its bots: a block of uids, a folder of stdout FIFOs.
- ``leftovers``: what dead referees left (groups, FIFO folders), swept once per
  process; on cgroup v1 the guardian that stops a referee's bots when it dies.
- ``limits``: per-process resource limits.
- ``strays``: stopping whatever a bot started, at the end of each game.
- ``sigfreeze``: holding a bot's tree by SIGSTOP where the host has no cgroup freezer.
- ``procfixed``: the files of ``/proc`` a bot sees with fixed content (``meminfo``, ``cpuinfo``).
- ``host``: what this machine offers (bubblewrap and its tools), probed once.
- ``cgroup_host``: what this machine's control groups give, probed once.
- ``delegation``: asking a regular user's systemd for a delegated scope when the host gives no group.
- ``names``: the names a referee gives what it makes on the host, that a later
  one sweeps by.

The resources stack one way, ``names`` at the bottom: names, delegation <- cgroup_host <-
cgroup <- leftovers <- launch, and names <- resources <- launch. Only
``launch.prepare`` sweeps leftovers; making a group or a folder sweeps nothing.

docs/sandbox.md says what each level guarantees and what it does not.
"""

from referee.sandbox.host import HostSupport, host_support
from referee.sandbox.launch import (
    LEVELS,
    Launch,
    SandboxUnavailable,
    launcher_argv,
    prepare,
    require_level,
    sandbox_summary,
)
from referee.sandbox.limits import memory_resource
from referee.sandbox.sigfreeze import SignalFreezer
from referee.sandbox.strays import kill_strays

__all__ = [
    "LEVELS",
    "HostSupport",
    "Launch",
    "SandboxUnavailable",
    "SignalFreezer",
    "host_support",
    "kill_strays",
    "launcher_argv",
    "memory_resource",
    "prepare",
    "require_level",
    "sandbox_summary",
]
