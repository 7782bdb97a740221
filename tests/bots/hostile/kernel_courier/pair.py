"""Drives two kernel couriers, a writer and a reader, each started as the referee starts a bot.

``python pair.py <level> <courier folder>`` reads a plan as JSON on stdin::

    {"tag": 123, "discrete": {"flock": {"secrets": ["1010", "0101"], "targets": [...]}, ...},
     "analog": {"procs": 100, ...}}

For each discrete channel and each secret: the reader prepares, the writer
sends, the reader receives, both clear. For each analog channel: the reader
samples, the writer holds the amount, the reader samples again, the writer
clears; three times. Prints one JSON object: {"discrete": {channel: [the
reader's answer per secret]}, "analog": {channel: [[before, while held], ...]}}.
Run by tests/referee/sandbox/test_seat_channels.py, as root or as a regular user.
"""

import json
import sys

import trio

from referee.bots import load_bot
from referee.process import open_bot
from referee.sandbox import require_level
from referee.settings import RefereeSettings

TRIALS = 3


async def ask(seat, line):
    await seat.send((line + "\n").encode())
    with trio.fail_after(30):
        return (await seat.readline()).decode().strip()


async def main():
    level, folder = sys.argv[1], sys.argv[2]
    plan = json.load(sys.stdin)
    settings = RefereeSettings(sandbox=require_level(level), grace_ms=200)
    courier = load_bot(folder)
    tag = plan["tag"]
    heard, figures = {}, {}
    async with open_bot(courier, settings) as writer, open_bot(courier, settings) as reader:
        for channel, task in plan["discrete"].items():
            targets = " ".join(task["targets"])
            answers = []
            for secret in task["secrets"]:
                await ask(reader, f"prepare {channel} {tag} {targets}")
                await ask(writer, f"send {channel} {tag} {secret} {targets}")
                answers.append(await ask(reader, f"receive {channel} {tag} {targets}"))
                await ask(writer, "clear")
                await ask(reader, "clear")
            heard[channel] = answers
        for channel, amount in plan["analog"].items():
            trials = []
            for _ in range(TRIALS):  # the machine's other work moves these figures too
                before = await ask(reader, f"sample {channel}")
                await ask(writer, f"hold {channel} {amount}")
                during = await ask(reader, f"sample {channel}")
                await ask(writer, "clear")
                trials.append([before, during])
            figures[channel] = trials
    print(json.dumps({"discrete": heard, "analog": figures}))


trio.run(main)
