"""sotto_low: a Sotto bot with no dependency, only the protocol (protocol/PROTOCOL.md).

Reads one JSON message a line from stdin and answers each request with one of its
options: its highest card when that beats every card already on the table this
trick, else its lowest (a card that cannot win is not wasted).
"""

import json
import sys


def choose(request):
    options = request["options"]
    view = request["view"]
    cards = sorted(options, key=lambda option: option["card"])
    shown = [card for card in view["trick"] if card is not None]
    if shown and cards[-1]["card"] > max(shown):
        return cards[-1]
    return cards[0]


def main():
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "start":
            answer = {"type": "ready", "name": "sotto_low"}
        elif kind == "request":
            answer = {"type": "action", "id": message["id"], "action": choose(message)}
        else:
            continue
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
