"""Answers its first decision, then at once sends an answer for a request not sent yet (id + 3).

With three seats, id + 3 is its own next request: a referee that took the
early line as that request's answer would accept an answer to a question the
bot had not been asked.
"""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


PASS = {"type": "place", "placements": []}

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "answers_ahead"})
    elif message["type"] == "request":
        send({"type": "action", "id": message["id"], "action": PASS})
        send({"type": "action", "id": message["id"] + 3, "action": PASS})
