"""A warm bot that leaves a spinning helper behind at every game.

At each `start` it checks whether the helper of its previous game is still
alive and says so on stderr (`stray_spinner: game N: previous helper alive` or
`... gone`), then starts a new one: a grandchild in a session of its own
(double fork, setsid) that spins the CPU forever. Then it passes.
"""

import json
import os
import sys

helper = None
games = 0


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def leave_helper():
    read, write = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.close(read)
            os.write(write, str(os.getpid()).encode())
            os.close(write)
            while True:
                pass
        os._exit(0)
    os.close(write)
    pid = int(os.read(read, 32))
    os.close(read)
    os.wait()
    return pid


PASS = {"type": "place", "placements": []}
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        games += 1
        if helper is not None:
            state = "alive" if alive(helper) else "gone"
            sys.stderr.write(f"stray_spinner: game {games}: previous helper {state}\n")
            sys.stderr.flush()
        helper = leave_helper()
        sys.stdout.write(json.dumps({"type": "ready", "name": "stray_spinner"}) + "\n")
    elif message["type"] == "request":
        action = (message.get("options") or [PASS])[0]
        sys.stdout.write(json.dumps({"type": "action", "id": message["id"], "action": action}) + "\n")
    sys.stdout.flush()
