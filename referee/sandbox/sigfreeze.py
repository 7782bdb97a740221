"""Freezing a bot's tree where the host gives no cgroup freezer: SIGSTOP to every process of its PID namespace.

At ``standard`` and ``strict`` every process a bot starts stays in its PID
namespace, below the chain's first process (``referee.sandbox.strays``). A
host with no freezer to give (a regular user without systemd's delegation, no
v1 freezer mounted) still lets the referee stop them all: SIGSTOP cannot be
caught, blocked or ignored, and a process stops with all its threads (a
thread it starts meanwhile joins the stop).

The stop goes to each listed process's whole process group (``killpg``): the
kernel gives a group's signal to a child whose fork was under way as it came,
so no fork slips between the listing and the stop. A process stopped starts
no fork; the tree is listed again until a listing finds nothing new (one
that moved to a group already stopped gets its own SIGSTOP). The groups are
all in the bot's session, which holds only the bot's tree and bwrap's monitor
(stopped with them, harmlessly). SIGCONT to the same groups at the seat's
turn lets them all go on, without listing the tree again.

What could wake a stopped process behind the referee's back is refused by the
system call filter on such hosts (``referee.sandbox.seccomp``,
``freeze_by_signal``): sending SIGCONT, tracing (a tracer may resume a stopped
tracee), a POSIX timer or a message-queue notice that delivers a signal the
filter cannot read, SIGCONT chosen as a descriptor's I/O signal or as the
signal of a parent's death.

A SIGSTOP takes effect when its process next runs, as a cgroup freeze does: a
process waiting for a CPU stops as soon as it gets one, before it runs any
code of its own.
"""

from __future__ import annotations

import os
import signal

from referee.sandbox.strays import descendants

__all__ = ["SignalFreezer"]

_ROUNDS = 64  # listings in one freeze; only processes forked between a listing and its stops need another


class SignalFreezer:
    """Stops and resumes every process below a sandbox chain's first process (its PID namespace's init and all below).

    The same two calls as a control group's freezer (``referee.sandbox.cgroup.BotCgroup``),
    synchronous and cheap: two listings of the tree through /proc and a signal per process group.
    """

    def __init__(self, chain: int) -> None:
        self.chain = chain
        """The chain's first process: bwrap's monitor, outside the namespace, the leader of the bot's session."""
        self._groups: list[int] = []

    def freeze(self) -> None:
        """Stop every process of the tree where it is, those forked meanwhile too."""
        seen: set[int] = set()
        groups: dict[int, None] = {}
        for _ in range(_ROUNDS):
            fresh = [pid for pid in descendants(self.chain) if pid not in seen]
            if not fresh:
                break
            seen.update(fresh)
            # A listed process may end and its pid (or group) go to a new process elsewhere
            # before its signal; the kernel hands out pids in order up to pid_max, so that takes
            # the whole pid space going round within microseconds (as BotCgroup.kill_all says).
            for pid in fresh:
                group = _group_of(pid)
                if group is None:
                    continue
                if group in groups:
                    _signal(pid, signal.SIGSTOP)  # joined a stopped group since: a stop of its own
                else:
                    _signal_group(group, signal.SIGSTOP)
                    groups[group] = None
        self._groups = list(groups)

    def thaw(self) -> None:
        """Let every process of the tree run again: SIGCONT to the groups the freeze stopped."""
        for group in self._groups:
            _signal_group(group, signal.SIGCONT)
        self._groups = []

    def frozen(self) -> bool:
        """Whether every process of the tree is stopped now (a stop lands when its process next runs)."""
        return all(_state(pid) in "TtZX" for pid in descendants(self.chain))


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:  # gone meanwhile
        return None


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):  # gone meanwhile
        pass


def _state(pid: int) -> str:
    """A process's state letter (``T``: stopped, ``t``: stopped by its tracer); ``X`` once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return "X"
