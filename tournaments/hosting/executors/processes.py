"""The worker-process executor: W processes on this machine, so every core referees.

The host starts ``python -m tournaments.hosting.executors.processes`` per worker and
talks to it over its stdin and stdout: a setup line, then one job line per
game; the worker answers one line per game (``GameDone`` or ``GameFailed``).
When its stdin closes (the host finished, or died), a worker cancels every game
still running and stops every bot process before it exits.
"""

from __future__ import annotations

import signal
import sys

# Ctrl-C in a terminal goes to the whole process group, workers included. The
# host decides what happens then (it closes our stdin, and we stop our games
# and bots); a worker that raised KeyboardInterrupt would only print tracebacks
# over the host's one line. Ignored before the imports below: a worker still
# importing when Ctrl-C comes would print one too.
if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)

import math
import subprocess

import msgspec
import trio

from referee.pipe import LineReader, StreamClosed
from referee.play import prepare_entrants
from referee.process import signal_name
from referee.seats import open_pool
from tournaments.hosting.executors.base import (
    GameDone,
    GameFailed,
    Report,
    TournamentWork,
    WorkerFailed,
    harness_failure,
)
from tournaments.hosting.schedule import ScheduledGame
from tournaments.playing import play_scheduled

__all__ = ["ProcessExecutor", "WorkerSetup", "main"]

WORKER_MODULE = "tournaments.hosting.executors.processes"


class WorkerSetup(msgspec.Struct, tag="setup", tag_field="type", kw_only=True):
    """The first line to a worker: what it plays and how many games at once."""

    work: TournamentWork
    concurrency: int


class Job(msgspec.Struct, tag="job", tag_field="type", kw_only=True):
    """One game for a worker to play."""

    game: ScheduledGame


_encoder = msgspec.json.Encoder()
_answer_decoder = msgspec.json.Decoder(GameDone | GameFailed)


class ProcessExecutor:
    """Spread the games over ``workers`` worker processes, ``ceil(concurrency / workers)`` games each."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)

    async def run(self, work: TournamentWork, games: trio.MemoryReceiveChannel[ScheduledGame], report: Report) -> None:
        # Built once here, not once per worker.
        bots, failed = await trio.to_thread.run_sync(prepare_entrants, work.bots, work.settings)
        setup = WorkerSetup(
            # An entrant whose build failed forfeits its seats; the others play.
            work=msgspec.structs.replace(work, bots=bots, unavailable={i: str(e) for i, e in failed.items()}),
            concurrency=max(1, math.ceil(work.concurrency / self.workers)),
        )
        async with games, trio.open_nursery() as nursery:
            for _ in range(self.workers):
                nursery.start_soon(_drive_worker, games.clone(), setup, report)


async def _drive_worker(games: trio.MemoryReceiveChannel[ScheduledGame], setup: WorkerSetup, report: Report) -> None:
    """Keep one worker process busy with up to ``setup.concurrency`` games."""
    slots = trio.Semaphore(setup.concurrency)
    in_flight = 0
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", WORKER_MODULE], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    try:
        await stdin.send_all(_encoder.encode(setup) + b"\n")

        async def send_jobs() -> None:
            nonlocal in_flight
            async with games:
                while True:
                    await slots.acquire()
                    try:
                        game = await games.receive()
                    except trio.EndOfChannel:
                        slots.release()
                        break
                    in_flight += 1
                    await stdin.send_all(_encoder.encode(Job(game=game)) + b"\n")
            # Wait for the answers, then tell the worker there is no more work.
            for _ in range(setup.concurrency):
                await slots.acquire()
            await stdin.aclose()

        async def read_answers() -> None:
            nonlocal in_flight
            reader = LineReader(stdout, 64 << 20)
            while True:
                try:
                    line = await reader.readline()
                except StreamClosed:
                    if in_flight:
                        how = await _how_it_ended(process)
                        raise WorkerFailed(f"a worker process {how} with {in_flight} games unfinished") from None
                    return
                try:
                    answer = _answer_decoder.decode(line)
                except msgspec.DecodeError as exc:
                    raise WorkerFailed(f"a worker sent an unreadable line: {exc}") from None
                in_flight -= 1
                await report(answer)
                slots.release()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(send_jobs)
            nursery.start_soon(read_answers)
    finally:
        with trio.CancelScope(shield=True):
            # Closing its stdin makes a worker cancel its games and stop its bots.
            await stdin.aclose()
            with trio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def _how_it_ended(process: trio.Process) -> str:
    """How a worker whose output closed ended: its exit code or signal, if it exits within a second."""
    with trio.move_on_after(1):
        await process.wait()
    code = process.returncode
    if code is None:
        return "stopped answering"
    if code < 0:
        return f"was killed by {signal_name(-code)}"
    return f"exited with code {code}"


# --- the worker process ------------------------------------------------------

_setup_decoder = msgspec.json.Decoder(WorkerSetup)
_job_decoder = msgspec.json.Decoder(Job)


async def serve() -> None:
    stdin = trio.lowlevel.FdStream(sys.stdin.fileno())
    stdout = trio.lowlevel.FdStream(sys.stdout.fileno())
    reader = LineReader(stdin, 64 << 20)
    work = _setup_decoder.decode(await reader.readline()).work
    write_lock = trio.Lock()

    async with open_pool(work.settings, max_games=work.max_games_per_process) as pool, trio.open_nursery() as nursery:

        async def play(job: Job) -> None:
            answer: GameDone | GameFailed
            try:
                record = await play_scheduled(
                    work.config, work.bots, work.settings, job.game, pool, tournament=work.tournament,
                    unavailable=work.dead_entrants(),
                )  # fmt: skip
                answer = GameDone(game=job.game, record=record)
            except Exception as exc:
                # A harness bug costs this game only; the host records it.
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
        # The host closes stdin after its last answer, or when it dies: either
        # way nothing more will be read, so stop whatever still runs.
        nursery.cancel_scope.cancel()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as above, for a worker started through main()
    trio.run(serve)


if __name__ == "__main__":
    main()
