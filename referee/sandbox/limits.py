"""Per-process resource limits, as ``prlimit`` flags."""

from __future__ import annotations

import resource
from pathlib import Path

from referee.bots import BotSpec
from referee.settings import BotLimits

__all__ = ["memory_resource", "prlimit_flags"]

# Runtimes that reserve far more address space than they use (the JVM's heap and
# code cache, V8's cages, Go's arenas, GHC's 1 TB heap reservation): an address
# space limit stops them at start-up, so their memory is bounded by RLIMIT_DATA.
_ADDRESS_RESERVERS = frozenset(
    {
        "java", "jvm", "kotlin", "scala", "clojure", "groovy",
        "node", "nodejs", "javascript", "js", "typescript", "ts", "deno", "bun",
        "go", "golang", "csharp", "c#", "dotnet", "fsharp", "haskell", "ghc",
    }
)  # fmt: skip


def memory_resource(spec: BotSpec, limits: BotLimits) -> str:
    """``as`` or ``data``: which rlimit bounds this bot's memory."""
    if limits.memory_kind != "auto":
        return limits.memory_kind
    names = {spec.language.strip().lower(), Path(spec.command[0]).name.lower() if spec.command else ""}
    return "data" if names & _ADDRESS_RESERVERS else "as"


def nproc_flag(processes: int) -> str:
    """``prlimit``'s process-count flag for a referee without root: never above its own hard limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    return f"--nproc={processes if hard == resource.RLIM_INFINITY else min(processes, hard)}"


def prlimit_flags(spec: BotSpec, limits: BotLimits, *, root: bool, with_nproc: bool) -> list[str]:
    """``prlimit`` flags for ``limits``; without root a hard limit is never raised."""
    wanted: list[tuple[str, int, int]] = []  # (flag, resource, value)
    mib = 1 << 20
    if limits.memory_mb > 0:
        kind = memory_resource(spec, limits)
        wanted.append((kind, resource.RLIMIT_AS if kind == "as" else resource.RLIMIT_DATA, limits.memory_mb * mib))
    if limits.open_files > 0:
        wanted.append(("nofile", resource.RLIMIT_NOFILE, limits.open_files))
    if limits.file_mb > 0:
        wanted.append(("fsize", resource.RLIMIT_FSIZE, limits.file_mb * mib))
    if with_nproc and limits.processes > 0:
        wanted.append(("nproc", resource.RLIMIT_NPROC, limits.processes))
    flags = []
    for name, which, value in wanted:
        if not root:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
        flags.append(f"--{name}={value}")
    if limits.cpu_s > 0:
        # SIGXCPU at the soft limit names the cause; SIGKILL a second later if ignored.
        flags.append(f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}")
    flags.append("--core=0")  # a crashing bot must not leave a core dump
    return flags
