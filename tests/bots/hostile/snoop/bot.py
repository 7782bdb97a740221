"""Reports on stderr, for each path given as an argument, whether it can read, list or write it; then passes.

One line per path: `snoop: <path> read=<yes|no> list=<yes|no> write=<yes|no>`. A
path given as `write:<path>` is only tried for writing (a new file at that path).
"""

import json
import os
import sys


def attempt(action):
    try:
        action()
    except OSError:
        return "no"
    return "yes"


def read(path):
    with open(path, "rb") as handle:
        handle.read(1)


def append(path):
    with open(path, "ab") as handle:
        handle.write(b"")


for arg in sys.argv[1:]:
    if arg.startswith("write:"):
        path = arg[len("write:") :]
        result = attempt(lambda path=path: open(path, "xb").close())
        sys.stderr.write(f"snoop: {path} create={result}\n")
        continue
    listing = attempt(lambda arg=arg: os.listdir(arg))
    reading = attempt(lambda arg=arg: read(arg)) if not os.path.isdir(arg) else "n/a"
    writing = attempt(lambda arg=arg: append(arg)) if not os.path.isdir(arg) else "n/a"
    sys.stderr.write(f"snoop: {arg} read={reading} list={listing} write={writing} exists={os.path.exists(arg)}\n")
sys.stderr.write(f"snoop: uid={os.getuid()} home={os.environ.get('HOME')} cwd={os.getcwd()}\n")
sys.stderr.write("snoop: done\n")
sys.stderr.flush()

PASS = {"type": "place", "placements": []}
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        sys.stdout.write(json.dumps({"type": "ready", "name": "snoop"}) + "\n")
    elif message["type"] == "request":
        action = (message.get("options") or [PASS])[0]
        sys.stdout.write(json.dumps({"type": "action", "id": message["id"], "action": action}) + "\n")
    sys.stdout.flush()
