"""Puts the most bytes the line and log-line limits let through into the replay, at every decision.

Each request gets 100 log lines (the most allowed before answering) of 4,096
control characters (the most of a log line a replay keeps), each stored as six
bytes, then its action padded with a field the game does not read up to just
under the 1 MiB line limit. With the argument ``illegal`` the padded action is
also illegal (under the "pass" policy it is rejected and the seat plays on).
"""

import json
import sys

LOG = json.dumps({"type": "log", "message": "\x01" * 4096}) + "\n"
PAD = "\x01" * 160_000  # 6 bytes a character on the wire: with ILLEGAL too, the line stays under 1 MiB
PASS = {"type": "place", "placements": []}
ILLEGAL = {"type": "place", "placements": [{"district": 99, "count": 1}] * 2000}
illegal = sys.argv[1:] == ["illegal"]


def send(text):
    sys.stdout.write(text)
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send(json.dumps({"type": "ready", "name": "replay_stuffer"}) + "\n")
    elif message["type"] == "request":
        send(LOG * 100)
        action = dict(ILLEGAL if illegal else (message.get("options") or [PASS])[0], pad=PAD)
        send(json.dumps({"type": "action", "id": message["id"], "action": action}) + "\n")
