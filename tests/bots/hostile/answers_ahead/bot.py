"""Answers its first decision and, in the same write, an answer for a request not sent yet (id + 3).

With three seats, id + 3 is its own next request: a referee that took the
early line as that request's answer would accept an answer to a question the
bot had not been asked.

Both lines go out in one write (under the pipe's atomic size), so the referee
reads them together. Written one after the other, a bot preempted between the
two writes may put the early line in the pipe after the request it guesses was
sent, and then it is that request's answer to any referee: nothing tells when
the bot wrote it. (tests/referee/match/test_read_path.py scripts the early line
arriving on its own while no request is open.)
"""

import json
import sys


def send(*messages):
    sys.stdout.write("".join(json.dumps(message) + "\n" for message in messages))
    sys.stdout.flush()


PASS = {"type": "place", "placements": []}

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "answers_ahead"})
    elif message["type"] == "request":
        answer = {"type": "action", "id": message["id"], "action": PASS}
        send(answer, {**answer, "id": message["id"] + 3})
