"""Ignores SIGTERM and end of input, leaves a setsid grandchild, hangs at its first decision."""

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

for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
    signal.signal(signum, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    time.sleep(3600)
    os._exit(0)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "immortal"})
    elif message["type"] == "request":
        break
while True:
    time.sleep(3600)
