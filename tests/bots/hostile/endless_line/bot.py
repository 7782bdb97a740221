"""Prints 100 MB without a newline at its first decision."""

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
        send({"type": "ready", "name": "endless_line"})
    elif message["type"] == "request":
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        time.sleep(30)
