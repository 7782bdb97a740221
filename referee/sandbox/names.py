"""The names a referee gives what it makes on the host, so that a later referee can tell whose it is.

Every control group a referee makes is named after its pid and its PID
namespace (``famiglia-<pid>-<ns>-<name>``, its own leaf or cpu group
``famiglia-referee-<pid>-<ns>``): a referee that died by SIGKILL leaves them,
and the next one sweeps them (``referee.sandbox.leftovers``) when their pid
names no live process. A pid names a referee only within its PID namespace.
Its FIFO folder (``famiglia-bots-<random>``) carries no pid, for its bots
see its path: a lock the referee holds on it says it is in use
(``referee.sandbox.resources``).

The bottom of the sandbox's resources: this module imports none of them.
"""

from __future__ import annotations

import functools
import os
import re

__all__ = ["FIFO_NAME", "FIFO_PREFIX", "FIFO_STAGING_PREFIX", "GROUP_NAME", "LEAF_NAME", "LEAF_PREFIX", "PREFIX", "group_name",
           "leaf_name", "ns_tag"]  # fmt: skip

PREFIX = "famiglia-"
LEAF_PREFIX = "famiglia-referee-"  # the referee's own v2 leaf: swept only when empty, never killed
GROUP_NAME = re.compile(r"famiglia-(\d+)-([0-9a-f]+)-(.+)")
LEAF_NAME = re.compile(r"famiglia-referee-(\d+)-([0-9a-f]+)")
FIFO_PREFIX = "famiglia-bots-"
FIFO_NAME = re.compile(r"famiglia-bots-r[0-9a-f]{16}")
"""A FIFO folder's name: random, no pid (``referee.sandbox.resources``). The ``r`` keeps it from ever
reading as a number, which a referee of an earlier famiglia on the host would take for a pid."""
FIFO_STAGING_PREFIX = "famiglia-new-bots-"
"""A FIFO folder's name until it is locked: not ``FIFO_PREFIX``, so no sweep looks at it."""


@functools.cache
def ns_tag() -> str:
    """This process's PID namespace, in hex: a pid names a referee only within its namespace."""
    try:
        return format(os.stat("/proc/self/ns/pid").st_ino, "x")
    except OSError:
        return "0"


def group_name(name: str) -> str:
    """The folder of this referee's group ``name`` (a bot's, a build's, a probe's) in each hierarchy."""
    return f"{PREFIX}{os.getpid()}-{ns_tag()}-{name}"


def leaf_name() -> str:
    """The folder of this referee's own group: its v2 leaf, or its v1 cpu group."""
    return f"{LEAF_PREFIX}{os.getpid()}-{ns_tag()}"
