"""sealed_greedy: a Sealed bot with no dependency, only the protocol (protocol/PROTOCOL.md).

Bids what the prize is worth: the card of the prize's value if it still holds it,
else the nearest card above it, else its lowest (a prize it cannot win is not
worth a good card). Ties of other seats are not guessed at: the bids of every
finished round are in the view (``history``), but this bot does not read them.
"""

import json
import sys


def choose(request):
    cards = sorted(option["card"] for option in request["options"])
    prize = request["view"]["prize"]
    above = [card for card in cards if card >= prize]
    card = above[0] if above else cards[0]
    return {"type": "bid", "card": card}


def main():
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "start":
            answer = {"type": "ready", "name": "sealed_greedy"}
        elif kind == "request":
            answer = {"type": "action", "id": message["id"], "action": choose(message)}
        else:
            continue
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
