"""Leaves a grandchild in a session of its own (out of the process group), then plays on."""

import json
import os
import signal
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    return {"type": "action", "id": request["id"], "action": (request.get("options") or [PASS])[0]}


PASS = {"type": "place", "placements": []}

if os.fork() == 0:
    os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.fork() == 0:  # and a great-grandchild, reparented away from the bot
        time.sleep(3600)
        os._exit(0)
    time.sleep(3600)
    os._exit(0)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "setsid_grandchild"})
    elif message["type"] == "request":
        send(answer(message))
