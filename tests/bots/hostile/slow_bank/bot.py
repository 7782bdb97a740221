"""Answers every decision 200 ms over its move time, until the bank is gone."""

import json
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    return {"type": "action", "id": request["id"], "action": (request.get("options") or [PASS])[0]}


PASS = {"type": "place", "placements": []}

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "slow_bank"})
    elif message["type"] == "request":
        time.sleep(message["time_ms"] / 1000 + 0.2)
        send(answer(message))
