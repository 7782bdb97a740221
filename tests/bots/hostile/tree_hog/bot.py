"""Starts 8 children that each hold 200 MiB at its first decision, each under a per-process limit of 256 MiB.

Per process every child is within bounds; together they hold 1.6 GiB. Only a
control group's memory bound, which counts the whole tree, stops them.
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
        send({"type": "ready", "name": "tree_hog"})
    elif message["type"] == "request":
        pipes = []
        for _ in range(8):
            read, write = os.pipe()
            if os.fork() == 0:
                os.close(read)
                try:
                    hoard = b"x" * (200 << 20)
                except MemoryError:
                    os._exit(1)
                os.write(write, b"k")
                os.read(0, 1)  # holds it until its input ends with the game
                os._exit(0)
            os.close(write)
            pipes.append(read)
        holding = sum(os.read(read, 1) == b"k" for read in pipes)
        sys.stderr.write(f"hostile: {holding} children hold {holding * 200} MiB\n")
        sys.exit(9 if holding == 8 else 8)
