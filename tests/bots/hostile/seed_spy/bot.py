"""Tries to learn the deal seed every way a bot might, and reports what it found as log lines.

Arguments: files and folders of the host to try (a tournament file, a store,
replays, other seats' stderr files). It collects every integer it can see
(every message, the environment, /proc, /tmp, whatever it could read)
and, from a readable tournament file, the deal seeds that file's seed gave
before deal keys existed. It sends them back as ``log`` lines starting with
``spy `` (JSON), so the test, which knows the real seed, can judge. It plays
on with the first option, or an empty Vendetta placement.
"""

import hashlib
import json
import os
import re
import sys

DIGITS = re.compile(rb"\d{6,}")
candidates = set()
findings = {"uid": os.getuid(), "read": {}, "proc": [], "tmp": [], "env": sorted(os.environ)}


def collect(value):
    """Every integer in a decoded JSON value, and every long digit run in its strings."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        candidates.add(value)
    elif isinstance(value, str):
        collect_bytes(value.encode())
    elif isinstance(value, list):
        for item in value:
            collect(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            collect(key)
            collect(item)


def collect_bytes(data):
    for run in DIGITS.findall(data):
        candidates.add(int(run[:20]))


def old_deal_seed(base, table):
    """How deal seeds were made from the tournament file's seed before deal keys."""
    digest = hashlib.blake2b(f"famiglia-deal:{base}:{table}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def try_read(path):
    try:
        if os.path.isdir(path):
            names = os.listdir(path)
            findings["read"][path] = "listed"
            for name in names:
                try_read(os.path.join(path, name))
            return None
        with open(path, "rb") as handle:
            data = handle.read(1 << 22)
    except OSError as exc:
        findings["read"][path] = exc.strerror or "error"
        return None
    findings["read"][path] = "read"
    collect_bytes(data)
    return data


def from_tournament_file(data):
    match = re.search(rb"^\s*seed\s*=\s*(-?\d+)", data, re.MULTILINE)
    if match is None:
        return
    seed = int(match.group(1))
    for table in range(64):
        candidates.add(old_deal_seed(seed, table))  # head-to-head deals
        for block in range(3):
            candidates.add(old_deal_seed(old_deal_seed(seed, 1_000_000 + block), table))


def probes():
    """The files to try: the arguments, or the lines of the file an argument names after "@".

    A results store named on the command line would be part of the bot's fingerprint, which
    changes as the run writes it; "@list" keeps the probes out of the bot's own words."""
    for arg in sys.argv[1:]:
        if arg.startswith("@"):
            with open(arg[1:]) as listing:
                yield from listing.read().split()
        else:
            yield arg


def snoop():
    for path in probes():
        data = try_read(path)
        if data is not None and path.endswith(".toml"):
            from_tournament_file(data)
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{entry}/{part}", "rb") as handle:
                    data = handle.read(1 << 20)
            except OSError:
                continue
            findings["proc"].append(f"{entry}/{part}")
            collect_bytes(data)
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            findings["tmp"].append(os.path.join(folder, name))
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                try:
                    with open(path, "rb") as handle:
                        collect_bytes(handle.read(1 << 20))
                except OSError:
                    pass
    for value in os.environ.values():
        collect_bytes(value.encode())


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


sent = set()


def report(with_findings):
    """Findings, then the candidates not sent yet, 100 to a line (a log line is cut at 4096 characters)."""
    if with_findings:
        summary = dict(findings, proc=findings["proc"][:20], tmp=findings["tmp"][:20], proc_count=len(findings["proc"]))
        send({"type": "log", "message": "spy " + json.dumps({"findings": summary})[:4000]})
    numbers = sorted(candidates - sent)
    sent.update(numbers)
    for start in range(0, len(numbers), 100):
        send({"type": "log", "message": "spy " + json.dumps({"candidates": numbers[start : start + 100]})})


sys.stderr.write("spy: looking for the seed\n")  # so its games have stderr files to find
reported = False
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        collect(message)
        reported = False  # a warm process plays several games: report in each
        send({"type": "ready", "name": "seed_spy"})
    elif message["type"] == "request":
        collect(message)  # every integer of every request too: the view, events, options, clocks
        if not reported:
            snoop()
        report(not reported)
        reported = True
        action = (message.get("options") or [{"type": "place", "placements": []}])[0]
        send({"type": "action", "id": message["id"], "action": action})
