"""A worker process: referees the games its parent sends, answers with their records.

Started by ``tournaments.runner`` as ``python -m tournaments.worker``. Reads a
setup line, then job lines, from stdin; writes one ``done`` line per finished
game. When stdin closes (the parent finished, or died), every game still running
is cancelled and every bot process stopped before the worker exits.
"""

from __future__ import annotations

import signal
import sys

# Ctrl-C in a terminal goes to the whole process group, workers included. The
# parent decides what happens then (it closes our stdin, and we stop our games
# and bots); a worker that raised KeyboardInterrupt would only print tracebacks
# over the parent's one line. Ignored before the imports below: a worker still
# importing when Ctrl-C comes would print one too.
if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)

import msgspec
import trio

from protocol.codec import LineReader, StreamClosed
from tournaments.pool import open_pool
from tournaments.runner import GameDone, GameFailed, Job, WorkerSetup, harness_failure, play_scheduled

_setup_decoder = msgspec.json.Decoder(WorkerSetup)
_job_decoder = msgspec.json.Decoder(Job)
_encoder = msgspec.json.Encoder()


async def serve() -> None:
    stdin = trio.lowlevel.FdStream(sys.stdin.fileno())
    stdout = trio.lowlevel.FdStream(sys.stdout.fileno())
    reader = LineReader(stdin, 64 << 20)
    setup = _setup_decoder.decode(await reader.readline())
    write_lock = trio.Lock()

    async with open_pool(setup.settings) as pool, trio.open_nursery() as nursery:
        warm = pool if setup.config.reuse_processes else None

        async def play(job: Job) -> None:
            answer: GameDone | GameFailed
            try:
                record = await play_scheduled(
                    setup.config, setup.bots, setup.settings, job.game, warm, tournament=setup.tournament
                )
                answer = GameDone(game=job.game, record=record)
            except Exception as exc:
                # A harness bug costs this game only; the parent records it.
                if (failure := harness_failure(job.game, exc)) is None:
                    raise
                answer = failure
            async with write_lock:
                await stdout.send_all(_encoder.encode(answer) + b"\n")

        while True:
            try:
                job = _job_decoder.decode(await reader.readline())
            except StreamClosed:
                break
            nursery.start_soon(play, job)
        # The parent closes stdin after its last answer, or when it dies: either
        # way nothing more will be read, so stop whatever still runs.
        nursery.cancel_scope.cancel()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as above, for a worker started through main()
    trio.run(serve)


if __name__ == "__main__":
    main()
