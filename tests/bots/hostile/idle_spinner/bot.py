"""Answers at once and spins on the others' time: 8 processes, each in a session of its own
(given a number, that many; given ``threads``, 8 threads of its own process).

At every request it writes to stderr how much CPU its spinners have had
between its turns (from its answer to the start of its next request), against
the wall time between them: ``hostile: spinners had C s of CPU in W s between
its turns``. A seat frozen while it is not asked gets almost none there.
"""

import os
import sys
import threading
import time
from typing import Any

from protocol.bot import serve

TICK = os.sysconf("SC_CLK_TCK")


THREADS = sys.argv[1:] == ["threads"]  # spin in 8 threads of this process instead of 8 processes
COUNT = int(sys.argv[1]) if sys.argv[1:2] and sys.argv[1].isdigit() else 8


def spin_here() -> None:
    while True:
        pass


def spin() -> None:
    os.setsid()  # a scheduling group of its own, were the host to give one per session
    while True:
        pass


class IdleSpinner:
    name = "idle_spinner"

    def __init__(self) -> None:
        self.spinners: list[int] = []
        self.answered: tuple[float, float] | None = None  # (CPU, time) at its last answer
        self.cpu_between = 0.0
        self.wall_between = 0.0

    def cpu(self) -> float:
        total = 0
        for pid in self.spinners:
            try:
                with open(f"/proc/{pid}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime
            except OSError:
                continue
        return total / TICK

    def decide(self, request: Any) -> Any:
        now, cpu = time.monotonic(), self.cpu()
        if self.answered is not None:
            self.cpu_between += cpu - self.answered[0]
            self.wall_between += now - self.answered[1]
            sys.stderr.write(
                f"hostile: spinners had {self.cpu_between:.3f} s of CPU in {self.wall_between:.3f} s between its turns\n"
            )
            sys.stderr.flush()
        if not self.spinners and THREADS:
            # Python's threads take turns at the interpreter: short turns, so that the
            # thread that reads the requests is not kept waiting by the spinners.
            sys.setswitchinterval(0.0002)
            for _ in range(8):
                threading.Thread(target=spin_here, daemon=True).start()
            self.spinners.append(os.getpid())  # its own CPU time is theirs too now
        elif not self.spinners:
            for _ in range(COUNT):
                pid = os.fork()
                if pid == 0:
                    spin()
                self.spinners.append(pid)
        self.answered = (self.cpu(), time.monotonic())
        if request.options:
            return request.options[0]
        return {"type": "place", "placements": []}


serve(IdleSpinner())
