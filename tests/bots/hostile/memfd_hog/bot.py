"""Writes into memory files (memfd) without end at its first decision (stops itself at 1 GiB).

RLIMIT_AS does not count these pages: only a control group's memory bound stops it.
"""

import json
import os
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        send({"type": "ready", "name": "memfd_hog"})
    elif message["type"] == "request":
        chunk = b"x" * (1 << 20)
        files, written = [], 0
        try:
            while written < 1024:
                if written % 64 == 0:
                    files.append(os.memfd_create("hoard"))
                os.write(files[-1], chunk)
                written += 1
        except OSError as exc:
            sys.stderr.write(f"hostile: memfd refused after {written} MiB: {exc.strerror}\n")
            sys.exit(8)
        sys.stderr.write("hostile: wrote 1 GiB into memfds unchecked\n")
        sys.exit(9)
