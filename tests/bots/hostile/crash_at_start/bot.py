"""Exits with code 3 before the handshake."""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    return {"type": "action", "id": request["id"], "action": (request.get("options") or [PASS])[0]}


PASS = {"type": "place", "placements": []}

sys.stderr.write("hostile: crashing before the handshake\n")
sys.exit(3)
