"""Allocates memory without end at its first decision (stops itself at 8 GiB)."""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    return {"type": "action", "id": request["id"], "action": (request.get("options") or [PASS])[0]}


PASS = {"type": "place", "placements": []}

hoard = []
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "memory_hog"})
    elif message["type"] == "request":
        while len(hoard) < 512:
            hoard.append(bytearray(16 << 20))
        sys.stderr.write("hostile: allocated 8 GiB unchecked\n")
        sys.exit(9)
