"""sealed_random: a Sealed bot with no dependency, only the protocol (protocol/PROTOCOL.md).

Reads one JSON message a line from stdin and answers each request with one of its
options, chosen at random. Sealed asks every seat at once each round, but a bot
sees nothing of that: it gets its own request and answers it, as in any game.
"""

import json
import random
import sys


def main():
    rng = random.Random()
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "start":
            answer = {"type": "ready", "name": "sealed_random"}
        elif kind == "request":
            answer = {"type": "action", "id": message["id"], "action": rng.choice(message["options"])}
        else:
            continue
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
