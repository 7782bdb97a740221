"""Sleeps far past the deadline at its second decision."""

import json
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    return {"type": "action", "id": request["id"], "action": (request.get("options") or [PASS])[0]}


PASS = {"type": "place", "placements": []}

requests = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "sleep_once"})
    elif message["type"] == "request":
        requests += 1
        if requests == 2:
            time.sleep(30)
        send(answer(message))
