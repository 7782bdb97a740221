"""Answers its first decision with bytes that are neither UTF-8 nor JSON."""

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
        send({"type": "ready", "name": "garbage"})
    elif message["type"] == "request":
        sys.stdout.buffer.write(b'{"type": "action", "id": \xff\xfe\x80\xc3\x28 \x00\x01 garbage\n')
        sys.stdout.buffer.flush()
