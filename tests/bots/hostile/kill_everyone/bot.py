"""Sends SIGKILL to every process it may signal (kill -1) at its first decision, then plays on."""

import json
import os
import signal
import sys


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
        send({"type": "ready", "name": "kill_everyone"})
    elif message["type"] == "request":
        requests += 1
        if requests == 1:
            try:
                os.kill(-1, signal.SIGKILL)
                sys.stderr.write("hostile: kill(-1) sent\n")
            except OSError as exc:
                sys.stderr.write(f"hostile: kill(-1) refused: {exc}\n")
        send(answer(message))
