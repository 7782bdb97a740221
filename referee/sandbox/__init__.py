"""Containment for bot processes: what a bot may see, touch and start, per level.

- ``launch``: the launcher chain per level, the bot's uid and stdout FIFO;
  refuses a level it cannot apply in full.
- ``view``: the filesystem a bot sees (the system, its runtime, its own files).
- ``runtimes``: the real toolchain behind a version manager's proxy, and the
  runtime folders a host names.
- ``procmask``: the machine-wide files of ``/proc`` covered in the sandbox.
- ``seccomp``: the system calls a bot may not make (socket families allow-listed).
- ``cgroups``: a control group per bot and per build, bounding its whole tree.
- ``limits``: per-process resource limits.
- ``strays``: stopping whatever a bot started, at the end of each game.
- ``host``: what this machine offers, probed once.

docs/sandbox.md says what each level guarantees and what it does not.
"""

from referee.sandbox.host import HostSupport, host_support
from referee.sandbox.launch import (
    LEVELS,
    Launch,
    SandboxUnavailable,
    launcher_argv,
    prepare_build,
    prepare_launch,
    require_level,
    sandbox_summary,
)
from referee.sandbox.limits import memory_resource
from referee.sandbox.strays import kill_strays

__all__ = [
    "LEVELS",
    "HostSupport",
    "Launch",
    "SandboxUnavailable",
    "host_support",
    "kill_strays",
    "launcher_argv",
    "memory_resource",
    "prepare_build",
    "prepare_launch",
    "require_level",
    "sandbox_summary",
]
