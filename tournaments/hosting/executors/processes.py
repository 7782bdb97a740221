"""The worker-process executor: W processes on this machine, so every core referees.

The host starts ``python -m tournaments.hosting.executors.processes`` per worker and
talks to it over its stdin and stdout: a setup line (the ``Competition``), then
one job line per game, each given to the worker with the fewest games in play;
the worker plays its jobs at once with a pool of bot processes of its own and
answers one line per game (the record, or the harness's failure). Bots are
built here, once (``local_bots``), not once per worker. When its stdin closes
(the host finished, or died), a worker cancels every game still running and
stops every bot process before it exits.

A worker that dies costs the games it held nothing but their turn: each is
``NotPlayed``, and so is every game after it (the executor cannot go on; a
tournament stops, to be resumed).
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

import itertools
import subprocess
from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import msgspec
import trio

from referee.bots import BotSpec
from referee.errors import BotCrashed
from referee.match import MatchRecord, MatchSpec
from referee.pipe import LineReader, StreamClosed
from referee.play import play_match
from referee.process import signal_name
from referee.seats import open_pool
from tournaments.hosting.executors.base import Competition, Seat
from tournaments.hosting.executors.local_bots import LocalBots
from tournaments.hosting.faults import NotPlayed, RefereeFailed, failure_of, stop_reason, stops_the_run

__all__ = ["ProcessExecutor", "main"]

WORKER_MODULE = "tournaments.hosting.executors.processes"
_MAX_LINE = 64 << 20


class Job(msgspec.Struct, tag="job", tag_field="type", kw_only=True):
    """One game for a worker to play: its bots ready to start, the seats that cannot, where its replay goes."""

    id: int
    spec: MatchSpec
    bots: list[BotSpec]
    dead: dict[int, str] = {}
    """Seats whose bot cannot start (its build failed), with the reason they fail with."""
    replay: str | None = None


class Answer(msgspec.Struct, kw_only=True):
    """A worker's answer for one job: the record, or the harness's failure (its line and traceback)."""

    id: int
    record: MatchRecord | None = None
    error: str = ""
    traceback: str = ""
    stops: str = ""
    """A fault of the machine or the setup (a full disk under a replay), in one line: the worker ends, and the
    run stops with this line."""


_encoder = msgspec.json.Encoder()
_answer_decoder = msgspec.json.Decoder(Answer)


class ProcessExecutor:
    """Spread the games over ``workers`` worker processes, up to ``concurrency`` at once in all."""

    def __init__(self, workers: int, concurrency: int | None = None) -> None:
        self.workers = max(1, workers)
        self.slots = trio.CapacityLimiter(max(1, concurrency if concurrency is not None else self.workers))
        self._running: list[_Worker] = []
        self._bots: LocalBots | None = None
        self._ids = itertools.count()

    @asynccontextmanager
    async def open(self, competition: Competition) -> AsyncIterator[None]:
        self._bots = LocalBots(competition.settings)
        async with trio.open_nursery() as nursery:
            self._running = [_Worker() for _ in range(self.workers)]
            for worker in self._running:
                await nursery.start(worker.run, competition)
            try:
                yield
            finally:
                # Each worker's stdin is closed as its task ends: it then cancels its games, stops its bots, exits.
                nursery.cancel_scope.cancel()
                self._running, self._bots = [], None

    async def ready(self) -> None:
        return

    async def play(self, spec: MatchSpec, seats: Sequence[Seat], replay: Path | None) -> MatchRecord:
        if not self._running or self._bots is None:
            raise RuntimeError("ProcessExecutor.play outside its open() block")
        if (lost := next((w.failed for w in self._running if w.failed), None)) is not None:
            raise NotPlayed(lost)  # one worker gone: the run stops rather than go on short of it
        bots, dead = await self._bots.seat(seats)
        job = Job(
            id=next(self._ids), spec=spec, bots=bots, dead={seat: error.reason for seat, error in dead.items()},
            replay=None if replay is None else str(replay),
        )  # fmt: skip
        answer = await min(self._running, key=lambda w: len(w.waiting)).play(job)
        if answer.record is None:
            raise RefereeFailed(answer.error, answer.traceback)
        return answer.record

    def keep(self, archives: Collection[Path]) -> None:
        return  # nothing is shipped anywhere


class _Waiting:
    """A job sent to a worker, and its answer once it comes (or why it will not)."""

    __slots__ = ("answer", "answered", "lost")

    def __init__(self) -> None:
        self.answered = trio.Event()
        self.answer: Answer | None = None
        self.lost = ""


class _Worker:
    """One worker process: its jobs in play, the answers read back, and how it ended if it did."""

    def __init__(self) -> None:
        self.waiting: dict[int, _Waiting] = {}
        self.failed = ""
        """How the worker ended with jobs unfinished; empty while it works."""
        self._stdin: trio.abc.SendStream | None = None
        self._writing = trio.Lock()

    async def run(self, competition: Competition, *, task_status: trio.TaskStatus[None]) -> None:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", WORKER_MODULE], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        try:
            await process.stdin.send_all(_encoder.encode(competition) + b"\n")
            task_status.started()
            await self._read(process, process.stdout)
        finally:
            with trio.CancelScope(shield=True):
                await process.stdin.aclose()
                with trio.move_on_after(5):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()

    async def _read(self, process: trio.Process, stdout: trio.abc.ReceiveStream) -> None:
        reader = LineReader(stdout, _MAX_LINE)
        while True:
            try:
                line = await reader.readline()
                answer = _answer_decoder.decode(line)
            except StreamClosed:
                # Only the host ends a worker (it closes its stdin as the block ends): this one died.
                how = f"a worker process {await _how_it_ended(process)}"
                self._fail(f"{how} with {len(self.waiting)} games unfinished" if self.waiting else how)
                return
            except msgspec.DecodeError as exc:
                self._fail(f"a worker sent an unreadable line: {exc}")
                return
            if answer.stops:
                self._fail(answer.stops)  # the run stops with the worker's own words, not only its exit code
                continue
            if (waiting := self.waiting.pop(answer.id, None)) is not None:
                waiting.answer = answer
                waiting.answered.set()

    def _fail(self, why: str) -> None:
        self.failed = self.failed or why  # the first reason: a worker that said why then exits
        for waiting in self.waiting.values():
            waiting.lost = self.failed
            waiting.answered.set()
        self.waiting.clear()

    async def play(self, job: Job) -> Answer:
        if self.failed or self._stdin is None:
            raise NotPlayed(self.failed or "the worker process is not running")
        waiting = self.waiting[job.id] = _Waiting()
        try:
            async with self._writing:
                await self._stdin.send_all(_encoder.encode(job) + b"\n")
            await waiting.answered.wait()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise NotPlayed(self.failed or "the worker process stopped reading its jobs") from None
        finally:
            self.waiting.pop(job.id, None)
        if waiting.answer is None:
            raise NotPlayed(waiting.lost)
        return waiting.answer


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

_setup_decoder = msgspec.json.Decoder(Competition)
_job_decoder = msgspec.json.Decoder(Job)


async def serve() -> bool:
    """Play the host's jobs until it closes stdin; False when a fault of the machine or the setup ended it."""
    stdin = trio.lowlevel.FdStream(sys.stdin.fileno())
    stdout = trio.lowlevel.FdStream(sys.stdout.fileno())
    reader = LineReader(stdin, _MAX_LINE)
    competition = _setup_decoder.decode(await reader.readline())
    settings = competition.settings
    write_lock = trio.Lock()
    stopped = False

    async with open_pool(settings, max_games=0 if competition.warm else 1) as pool, trio.open_nursery() as nursery:

        async def play(job: Job) -> None:
            try:
                record = await play_match(
                    job.spec, job.bots, settings, pool=pool, replay_path=None if job.replay is None else Path(job.replay),
                    unavailable={seat: BotCrashed(reason) for seat, reason in job.dead.items()},
                )  # fmt: skip
                answer = Answer(id=job.id, record=record)
            except Exception as exc:  # noqa: BLE001 - every fault is answered: a game's, or one that stops the run
                # A harness bug costs this game only; a fault of the machine or the setup ends this worker,
                # told to the host in one line (the run stops with it) rather than a traceback on the terminal.
                if stops_the_run(exc):
                    nonlocal stopped
                    stopped = True
                    async with write_lock:
                        await stdout.send_all(_encoder.encode(Answer(id=job.id, stops=stop_reason(exc))) + b"\n")
                    nursery.cancel_scope.cancel()
                    return
                failure = failure_of(exc)
                answer = Answer(id=job.id, error=failure.error, traceback=failure.traceback)
            async with write_lock:
                await stdout.send_all(_encoder.encode(answer) + b"\n")

        while True:
            try:
                job = _job_decoder.decode(await reader.readline())
            except StreamClosed:
                break
            nursery.start_soon(play, job)
        # The host closes stdin once it has its answers, or when it dies: either
        # way nothing more will be read, so stop whatever still runs.
        nursery.cancel_scope.cancel()
    return not stopped


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as above, for a worker started through main()
    if not trio.run(serve):
        sys.exit(1)


if __name__ == "__main__":
    main()
