"""Computes (spins the CPU) 200 ms past its move time at every decision, until the bank is gone."""

import json
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


PASS = {"type": "place", "placements": []}

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "slow_thinker"})
    elif message["type"] == "request":
        # CPU time, not wall time: what the cpu clock charges (a sleep would cost nothing there).
        until = time.process_time() + message["time_ms"] / 1000 + 0.2
        while time.process_time() < until:
            pass
        send({"type": "action", "id": message["id"], "action": (message.get("options") or [PASS])[0]})
