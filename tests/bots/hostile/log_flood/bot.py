"""At each request, 100 log lines of almost 1 MiB each (under the line limit), then its answer.

Its argument says when and in what shape: ``before`` the answer or ``after``
it (read between two requests), and ``plain`` (the usual shape, letters) or
``brackets`` (the keys the other way round and the message all brackets: the
dearest line for a referee to decode in full). Writing it costs the bot little;
reading it would cost the referee far more (issue 42, item 3).
"""

import json
import sys

WHEN, SHAPE = sys.argv[1], sys.argv[2]
LINES = 100
SIZE = (1 << 20) - 64

if SHAPE == "plain":
    LOG = ('{"type":"log","message":"' + "x" * SIZE + '"}\n').encode()
else:
    LOG = ('{"message":"' + "[" * SIZE + '","type":"log"}\n').encode()
PASS = {"type": "place", "placements": []}


def send(data):
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def answer(request):
    action = (request.get("options") or [PASS])[0]
    return (json.dumps({"type": "action", "id": request["id"], "action": action}) + "\n").encode()


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send(b'{"type":"ready","name":"log_flood"}\n')
    elif message["type"] == "request":
        if WHEN == "after":
            send(answer(message))
        for _ in range(LINES):
            send(LOG)
        if WHEN == "before":
            send(answer(message))
