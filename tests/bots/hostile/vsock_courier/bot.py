"""Carries a secret from one seat to another through vsock ports, then passes.

vsock ports are one table for the whole machine, not one per network
namespace. `send <port> <bits>` binds port+i for every 1 among the bits before
its ready line, and holds them; `receive <port> <count>` tries to bind
port..port+count-1 at its first request (every seat is ready by then): a port
in use is a 1. Reports `vsock_courier: sent <bits>` / `received <bits>`, or
`vsock_courier: <send|receive> refused: <ERRNO>`.
"""

import errno
import json
import socket
import sys

AF_VSOCK = 40
ANY_CID = 0xFFFFFFFF
held = []


def say(text):
    sys.stderr.write(f"vsock_courier: {text}\n")
    sys.stderr.flush()


def send(base, bits):
    for offset, bit in enumerate(bits):
        if bit == "1":
            sock = socket.socket(AF_VSOCK, socket.SOCK_STREAM)
            sock.bind((ANY_CID, base + offset))
            held.append(sock)
    say(f"sent {bits}")


def receive(base, count):
    bits = ""
    for offset in range(count):
        with socket.socket(AF_VSOCK, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((ANY_CID, base + offset))
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
                bits += "1"
            else:
                bits += "0"
    say(f"received {bits}")


def attempt(role, action, *args):
    try:
        action(*args)
    except OSError as exc:
        say(f"{role} refused: {errno.errorcode.get(exc.errno or 0, exc.errno)}")


role, base, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if role == "send":
    attempt("send", send, base, what)
PASS = {"type": "place", "placements": []}
asked = False
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        sys.stdout.write(json.dumps({"type": "ready", "name": "vsock_courier"}) + "\n")
    elif message["type"] == "request":
        if role == "receive" and not asked:
            attempt("receive", receive, base, int(what))
        asked = True
        action = (message.get("options") or [PASS])[0]
        sys.stdout.write(json.dumps({"type": "action", "id": message["id"], "action": action}) + "\n")
    sys.stdout.flush()
