"""Plays every game to the end within its clock, but stalls in ladder games whenever it is behind on points.

An entrant who wants to hog a ladder without ever failing: no timeout, no crash, nothing the
ladder's health counts; only long games, whenever it is losing (its points below the leader's
in the view of each request), each decision taking 40 % of its move time. It passes (places
nothing) at every turn, so it is behind in most games. Quick in check-bot's games (named
"check-..."), which turn away a bot that is slow at most of its decisions.
"""

import json
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


PASS = {"type": "place", "placements": []}

in_ladder = False
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        in_ladder = str(message.get("match", "")).startswith("ladder-")
        send({"type": "ready", "name": "sore_loser"})
    elif message["type"] == "request":
        view = message.get("view") or {}
        points = view.get("points") or []
        seat = view.get("seat", 0)
        if in_ladder and points and seat < len(points) and points[seat] < max(points):
            time.sleep(message.get("time_ms", 0) / 1000 * 0.4)
        send({"type": "action", "id": message["id"], "action": (message.get("options") or [PASS])[0]})
