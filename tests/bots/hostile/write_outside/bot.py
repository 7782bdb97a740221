"""Tries to write into its folder, the folder above, /tmp and $HOME, then plays on."""

import json
import os
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    return {"type": "action", "id": request["id"], "action": (request.get("options") or [PASS])[0]}


PASS = {"type": "place", "placements": []}

TARGETS = [
    "escape.txt",
    "../escape.txt",
    "/tmp/famiglia-zoo-escape.txt",
    os.path.join(os.environ.get("HOME", "/tmp"), "famiglia-zoo-escape.txt"),
]
for target in TARGETS:
    try:
        with open(target, "w") as handle:
            handle.write("escaped\n")
    except OSError as exc:
        sys.stderr.write(f"hostile: {target}: refused: {exc.strerror}\n")
    else:
        sys.stderr.write(f"hostile: {target}: written\n")
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "write_outside"})
    elif message["type"] == "request":
        send(answer(message))
