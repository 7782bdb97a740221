"""Answers at once and spins on the others' time, in processes that undo a freeze by SIGSTOP.

At its first request it starts 8 processes in pairs, each in a session of its
own. Each arms a POSIX timer that sends it SIGCONT every millisecond and
sends SIGCONT to its partner without pause while it runs: a tree stopped
one process at a time would wake itself at once. Each says on stderr what
was refused: ``sigcont_waker: timer refused: ENOSYS``, ``sigcont_waker: kill refused: EPERM``
(or ``... ok``).
"""

import ctypes
import errno
import os
import signal
from typing import Any

from protocol.bot import serve

libc = ctypes.CDLL(None, use_errno=True)
SIGEV_SIGNAL, CLOCK_MONOTONIC = 0, 1


def say(text: str) -> None:
    os.write(2, f"sigcont_waker: {text}\n".encode())


def refusal(code: int) -> str:
    return f"refused: {errno.errorcode.get(code, code)}"


def arm_timer() -> None:
    """A timer that sends this process SIGCONT every millisecond."""
    event = (ctypes.c_int * 16)()  # struct sigevent: value (8 bytes), signo, notify, ...
    event[2], event[3] = signal.SIGCONT, SIGEV_SIGNAL
    timer = ctypes.c_void_p()
    if libc.timer_create(CLOCK_MONOTONIC, event, ctypes.byref(timer)) != 0:
        say(f"timer {refusal(ctypes.get_errno())}")
        return
    every = (ctypes.c_long * 4)(0, 1_000_000, 0, 1_000_000)  # interval, then first expiry: 1 ms
    libc.timer_settime(timer, 0, every, None)
    say("timer ok")


def wake(partner: int) -> None:
    os.setsid()
    arm_timer()
    told = False
    while True:
        try:
            os.kill(partner, signal.SIGCONT)
            result = "ok"
        except OSError as exc:
            result = refusal(exc.errno or 0)
        if not told:
            say(f"kill {result}")
            told = True
        for _ in range(10_000):
            pass


class Waker:
    name = "sigcont_waker"

    def __init__(self) -> None:
        self.started = False

    def decide(self, request: Any) -> Any:
        if not self.started:
            self.started = True
            for _ in range(4):
                read, write = os.pipe()
                first = os.fork()
                if first == 0:
                    os.close(write)
                    wake(int(os.read(read, 32)))  # its partner's pid, once the parent knows it
                second = os.fork()
                if second == 0:
                    wake(first)
                os.write(write, str(second).encode())
                os.close(read)
                os.close(write)
        return request.options[0] if request.options else {"type": "place", "placements": []}


serve(Waker())
