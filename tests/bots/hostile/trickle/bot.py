"""Writes every other line one byte at a time, a little apart; the others in one write.

Against the referee's poll for a quick answer (referee.match.QUICK_ANSWER_S):
an answer that begins to arrive within the poll and ends after it, and a
rhythm of quick and slow answers. Both must be read as answers; the game is a
normal one.
"""

import json
import os
import sys
import time

print("hostile: trickling every other line", file=sys.stderr, flush=True)
lines = 0
for raw in sys.stdin.buffer:
    message = json.loads(raw)
    if message["type"] == "start":
        reply = {"type": "ready", "name": "trickle"}
    elif message["type"] == "request":
        action = message["options"][0] if message.get("options") else {"type": "place", "placements": []}
        reply = {"type": "action", "id": message["id"], "action": action}
    else:
        continue
    data = json.dumps(reply).encode() + b"\n"
    lines += 1
    if lines % 2:
        os.write(1, data)
        continue
    for i in range(len(data)):
        os.write(1, data[i : i + 1])
        time.sleep(0.000_02)
