"""Waits <seconds> (its argument) before saying ready, then passes: a long but legal game."""

import json
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    return {"type": "action", "id": request["id"], "action": (request.get("options") or [PASS])[0]}


PASS = {"type": "place", "placements": []}

time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "dawdler"})
    elif message["type"] == "request":
        send(answer(message))
