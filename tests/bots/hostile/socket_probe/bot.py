"""Tries to reach the host through sockets, then passes.

Arguments: unix socket paths (`unix:<path>`), an abstract unix socket name
(`abstract:<name>`), a UDP or TCP port on 127.0.0.1 (`udp:<port>`, `tcp:<port>`).
Each attempt prints `socket_probe: <target> reached` or `... refused: <why>`.
"""

import json
import socket
import sys


def probe(target):
    kind, _, where = target.partition(":")
    if kind in ("unix", "abstract"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(2)
        sock.connect(where if kind == "unix" else "\0" + where)
        sock.sendall(b"escaped\n")
    elif kind == "udp":
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.sendto(b"escaped\n", ("127.0.0.1", int(where)))
    else:
        sock = socket.create_connection(("127.0.0.1", int(where)), timeout=2)
        sock.sendall(b"escaped\n")
    sock.close()


for target in sys.argv[1:]:
    try:
        probe(target)
    except OSError as exc:
        sys.stderr.write(f"socket_probe: {target} refused: {exc.strerror or exc}\n")
    else:
        # A datagram sent is not a datagram received: the test checks its listener.
        sys.stderr.write(f"socket_probe: {target} {'sent' if target.startswith('udp:') else 'reached'}\n")
sys.stderr.write("socket_probe: done\n")
sys.stderr.flush()

PASS = {"type": "place", "placements": []}
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        sys.stdout.write(json.dumps({"type": "ready", "name": "socket_probe"}) + "\n")
    elif message["type"] == "request":
        action = (message.get("options") or [PASS])[0]
        sys.stdout.write(json.dumps({"type": "action", "id": message["id"], "action": action}) + "\n")
    sys.stdout.flush()
