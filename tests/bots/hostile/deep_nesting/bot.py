"""Sends valid JSON nested 1,000 deep at its first decision: where is its argument.

action: inside the action; line: as the whole line; log: inside a log line (then passes).
"""

import json
import sys

WHERE = sys.argv[1] if len(sys.argv) > 1 else "action"
DEEP = "[" * 1000 + "]" * 1000


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    return {"type": "action", "id": request["id"], "action": (request.get("options") or [PASS])[0]}


PASS = {"type": "place", "placements": []}

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "deep_nesting"})
    elif message["type"] == "request":
        if WHERE == "action":
            sys.stdout.write(f'{{"type":"action","id":{message["id"]},"action":{DEEP}}}\n')
        elif WHERE == "line":
            sys.stdout.write(DEEP + "\n")
        else:
            sys.stdout.write(f'{{"type":"log","message":"deep","note":{DEEP}}}\n')
            sys.stdout.write(json.dumps(answer(message)) + "\n")
        sys.stdout.flush()
