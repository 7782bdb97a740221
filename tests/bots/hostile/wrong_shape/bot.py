"""Answers with valid JSON of the wrong shape."""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    return {"type": "action", "id": request["id"], "action": (request.get("options") or [PASS])[0]}


PASS = {"type": "place", "placements": []}

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "wrong_shape"})
    elif message["type"] == "request":
        send({"type": "action", "id": message["id"], "action": {"type": "place", "placements": "lots"}})
