"""Files of ``/proc`` a bot reads with fixed content: what runtimes need there, and nothing another seat moves.

``meminfo`` and ``cpuinfo`` cannot simply be covered (``referee.sandbox.procmask``):
runtimes size their heaps from ``meminfo`` (Node's ``os.totalmem()``, the
JVM's available memory) and read their CPU's features from ``cpuinfo``. But
as the kernel writes them they are the machine's own figures at this instant:
free, cached, shared and dirty memory, kernel stacks (one more per thread),
page tables, which any seat moves by holding memory or starting threads; and,
on machines that scale their clock, each CPU's current speed, which rises
with any seat's work. So each bot sees a copy made by the referee instead:

- ``meminfo``: the machine's total memory as it is, and as free and available
  what the bot may use (``memory_mb``, or the total without a bound); every
  other figure 0, no swap (a bot's group has none);
- ``cpuinfo``: the host's, read once when the referee first needs it and the
  same for every bot from then on.

bubblewrap copies each from a memory file descriptor into the sandbox
(``--ro-bind-data``), read-only.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping

__all__ = ["FIXED_FILES", "fixed_cpuinfo", "fixed_meminfo", "fixed_proc_fds", "fixed_proc_flags"]

FIXED_FILES = ("meminfo", "cpuinfo")
_KEPT = {"MemTotal", "Hugepagesize"}  # properties of the machine, not of what runs on it
_AVAILABLE = {"MemFree", "MemAvailable"}


@functools.cache
def _host_meminfo() -> tuple[tuple[str, str], ...]:
    """(key, rest of the line) for each line of the host's /proc/meminfo, read once."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            text = handle.read()
    except OSError:
        return ()
    lines = []
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        if sep:
            lines.append((key, rest))
    return tuple(lines)


def fixed_meminfo(bound_bytes: int) -> bytes:
    """The ``meminfo`` a bot sees: the host's keys, its total, ``bound_bytes`` (0: the total) free and available."""
    total_kb = 0
    for key, rest in _host_meminfo():
        if key == "MemTotal":
            total_kb = int(rest.split()[0])
    free_kb = min(total_kb, bound_bytes >> 10) if bound_bytes > 0 else total_kb
    out = []
    for key, rest in _host_meminfo():
        words = rest.split()
        unit = " kB" if words[-1:] == ["kB"] else ""
        if key in _KEPT:
            value = int(words[0]) if words else 0
        elif key in _AVAILABLE:
            value = free_kb
        else:
            value = 0
        # The kernel's layout: the key and its colon in 16 columns, the number right-aligned in 8.
        out.append(f"{key + ':':<16}{value:>8}{unit}\n")
    return "".join(out).encode("ascii")


@functools.cache
def fixed_cpuinfo() -> bytes:
    """The host's ``cpuinfo`` as it was when first read in this process: every bot sees the same."""
    try:
        with open("/proc/cpuinfo", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def _memory_file(name: str, data: bytes) -> int:
    """A memory file holding ``data``, positioned at its start, inheritable (bwrap reads it after exec)."""
    fd = os.memfd_create(f"famiglia-{name}", 0)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def fixed_proc_fds(bound_bytes: int) -> dict[str, int]:
    """{file of /proc: a memory file with its fixed content} for one bot whose memory is bounded by ``bound_bytes``.

    The caller passes the descriptors to the chain and closes them once it has started.
    Only files this kernel has (bwrap cannot make a mount point in /proc).
    """
    contents: dict[str, Callable[[], bytes]] = {"meminfo": lambda: fixed_meminfo(bound_bytes), "cpuinfo": fixed_cpuinfo}
    fds: dict[str, int] = {}
    try:
        for name, content in contents.items():
            if os.path.isfile(f"/proc/{name}"):
                fds[name] = _memory_file(name, content())
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    return fds


def fixed_proc_flags(fds: Mapping[str, int]) -> list[str]:
    """bwrap flags that show each file of ``fds`` (from ``fixed_proc_fds``) at its place; they follow ``--proc /proc``."""
    flags: list[str] = []
    for name, fd in fds.items():
        # bwrap makes the copy readable by its owner alone unless told: root's, as root.
        flags += ["--perms", "0444", "--ro-bind-data", str(fd), f"/proc/{name}"]
    return flags
