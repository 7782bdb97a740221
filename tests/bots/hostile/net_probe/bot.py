"""Tries to connect to 127.0.0.1:<port> (its argument); exits 7 if it got through."""

import json
import socket
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    return {"type": "action", "id": request["id"], "action": (request.get("options") or [PASS])[0]}


PASS = {"type": "place", "placements": []}

port = int(sys.argv[1]) if len(sys.argv) > 1 else 9
try:
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
except OSError as exc:
    sys.stderr.write(f"hostile: no network: {exc}\n")
else:
    sys.stderr.write("hostile: connected to the host\n")
    sys.exit(7)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "net_probe"})
    elif message["type"] == "request":
        send(answer(message))
