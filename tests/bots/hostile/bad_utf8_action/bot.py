"""Answers its first decision with an action whose type string holds bytes that are not UTF-8."""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "bad_utf8_action"})
    elif message["type"] == "request":
        sys.stdout.buffer.write(
            b'{"type":"action","id":%d,"action":{"type":"pl\xffce","placements":[]}}\n' % message["id"]
        )
        sys.stdout.buffer.flush()
