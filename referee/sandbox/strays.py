"""Stopping what a bot started: every process below it, but not the bot itself.

A warm bot process plays game after game. Whatever it started during a game (a
helper that spins the CPU, a daemon that called ``setsid``) must not outlive
that game and run during the next one, maybe another entrant's. At the
``standard`` and ``strict`` levels every process the bot starts stays inside
its PID namespace, where orphans are adopted by the namespace's init, so the
processes of a bot are exactly the descendants of its chain's first process:
the init (pid 1 inside: the seat's sysinfo supervisor,
``referee.sandbox.sysinfo_answer``), the bot (pid 2 inside) and the rest, the
strays. At
``none`` the bot is the first process and its strays are its descendants;
one that left with ``setsid`` and was adopted outside is out of reach there.
"""

from __future__ import annotations

import os
import signal
import time

__all__ = ["descendants", "kill_strays", "namespace_pid"]


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                found += [int(word) for word in handle.read().split()]
        except OSError:
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, parents before their children."""
    seen: list[int] = []
    queue = [pid]
    while queue:
        for child in _children(queue.pop()):
            if child not in seen:
                seen.append(child)
                queue.append(child)
    return seen


def namespace_pid(pid: int) -> int | None:
    """``pid``'s number inside its innermost PID namespace; None once it is gone or a zombie.

    A zombie has already died (it waits only for its parent to read its
    status), so it counts as gone.
    """
    # Read at the end of every game for every bot's processes: the whole file in
    # one read and two searches, not a Python loop over its fifty-odd lines.
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            text = handle.read()
    except OSError:
        return None
    state = text.find(b"\nState:\t")
    if state >= 0 and text[state + 8 : state + 9] in (b"Z", b"X"):
        return None
    at = text.find(b"\nNSpid:")
    if at < 0:
        return None
    end = text.find(b"\n", at + 1)
    try:
        return int(text[at + 7 : end if end >= 0 else len(text)].split()[-1])
    except (ValueError, IndexError):
        return None


def _strays(chain: int, *, namespaced: bool) -> list[int]:
    inner = {pid: namespace_pid(pid) for pid in descendants(chain)}
    below = [pid for pid, number in inner.items() if number is not None]
    if not namespaced:
        return below
    # The chain's first process stays outside the namespace; its child is the
    # namespace's init (pid 1 inside) and the init's child with pid 2 is the
    # bot. Everything else below is a stray, including any process in a
    # namespace the bot nested inside its own, whatever its number there.
    keep: set[int] = set()
    for init in _children(chain):
        if inner.get(init) == 1:
            keep.add(init)
            keep.update(pid for pid in _children(init) if inner.get(pid) == 2)
    return [pid for pid in below if pid not in keep]


def kill_strays(chain: int, *, namespaced: bool, patience_s: float = 0.1) -> bool:
    """SIGKILL every process of the bot but the bot; True once none is left unkilled.

    A SIGKILLed process is gone only once the kernel has run it again to exit,
    which on a loaded host (or in a cgroup whose CPU quota a spinning stray has
    spent) can take longer than a game's end should wait. The kills are
    repeated with short sleeps between (what a stray forked meanwhile is killed
    in the next round) until none is left or ``patience_s`` has passed. Then
    what is left is enough if every process of it was killed in an earlier
    round: it runs none of its own code again, and only waits its turn to exit
    (a process with a fatal signal pending cannot fork). False when a process
    not seen before is still there (a fork bomb racing the kills): the caller
    must stop the bot itself. The referee's loop waits through this only for a
    bot that left processes behind.
    """
    end = time.monotonic() + patience_s
    pause = 0.0002
    killed: set[int] = set()
    while strays := _strays(chain, namespaced=namespaced):
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        killed.update(strays)
        if time.monotonic() >= end:
            return all(pid in killed for pid in _strays(chain, namespaced=namespaced))
        time.sleep(pause)
        pause = min(2 * pause, 0.005)
    return True
