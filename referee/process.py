"""One bot process: started in its own process group, read with bounds, always cleaned up.

``open_bot`` is an async context manager. Inside it the bot's stdout is read
line by line (``BotProcess.readline``), its stdin written (``send``), and its
stderr drained by a task into a bounded tail. Leaving the context, however it is
left (normal end, a crash of the referee, a cancelled match), runs the cleanup in
a shielded scope: close stdin, give the bot a grace period to exit, then SIGTERM
and finally SIGKILL its whole process group.

The bot is started through the launcher chain of its sandbox level
(``referee.sandbox``). The spawn happens on the Trio thread itself, not in a
worker thread as ``trio.lowlevel.open_process`` does: the chain's parent-death
signals fire when the spawning *thread* ends, and Trio's idle worker threads
end after ten seconds, which would kill every bot in a longer game.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

import trio

from protocol.codec import ProtocolViolation
from referee.bots import BotSpec
from referee.channel import ChannelBase
from referee.errors import BotCrashed, BotError, BotProtocolError, BotStalled
from referee.pinning import check_pin
from referee.pipe import LineReader, StreamClosed, write_now
from referee.sandbox import Launch, SignalFreezer, kill_strays, prepare
from referee.sandbox.cgroup import BotCgroup
from referee.settings import RefereeSettings

__all__ = ["BotProcess", "ChildProcess", "RunningProcess", "StderrTail", "open_bot", "raise_open_file_limit"]

_LINES_AFTER_END = 16
"""Whole lines read and dropped at a game's end before a process is reused; more is a bot still talking."""


class RunningProcess(Protocol):
    """What ``BotProcess`` needs of a process (``ChildProcess``, or a ``trio.Process``)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdin(self) -> trio.abc.SendStream | None: ...

    @property
    def stdout(self) -> trio.abc.ReceiveStream | None: ...

    @property
    def stderr(self) -> trio.abc.ReceiveStream | None: ...

    async def wait(self) -> int: ...


class FifoReader(trio.abc.ReceiveStream):
    """The read end of a FIFO, where end-of-file means the writers came and went.

    A FIFO opened for reading before any writer reads as end-of-file at once;
    but poll/epoll report it neither readable nor hung up until a writer has
    connected. So every read waits for readiness first.
    """

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd: int | None = fd

    def fileno(self) -> int:
        """The FIFO's file descriptor (non-blocking), -1 once closed."""
        return -1 if self._fd is None else self._fd

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        while True:
            if self._fd is None:
                raise trio.ClosedResourceError("the FIFO is closed")
            await trio.lowlevel.wait_readable(self._fd)
            if self._fd is None:
                raise trio.ClosedResourceError("the FIFO is closed")
            try:
                return os.read(self._fd, max_bytes or 65536)
            except BlockingIOError:
                continue

    async def aclose(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            trio.lowlevel.notify_closing(fd)
            os.close(fd)
        await trio.lowlevel.checkpoint()


class ChildProcess:
    """A process spawned on the Trio thread, with streams for its pipes and a pidfd to wait on."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdin: trio.abc.SendStream,
        stdout: trio.abc.ReceiveStream,
        stderr: trio.abc.ReceiveStream,
    ) -> None:
        self._popen = popen
        self.stdin: trio.abc.SendStream | None = stdin
        self.stdout: trio.abc.ReceiveStream | None = stdout
        self.stderr: trio.abc.ReceiveStream | None = stderr
        self._wait_lock = trio.Lock()

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        """The exit status if the process has exited (it is reaped then), else None."""
        return self._popen.poll()

    async def wait(self) -> int:
        """The exit status (negative: killed by that signal), once the process has exited."""
        async with self._wait_lock:
            if self._popen.poll() is None:
                # The pidfd is opened only now, not for the process's whole life: a
                # referee holding thousands of bots counts descriptors (bench/concurrency.py).
                # The pid cannot name another process meanwhile: only this object reaps
                # the child, and poll has just said it is not reaped.
                try:
                    pidfd: int | None = os.pidfd_open(self._popen.pid)
                except (AttributeError, OSError):  # an old kernel: poll instead
                    pidfd = None
                if pidfd is not None:
                    try:
                        # Readable once the process has exited; reaping it then cannot block.
                        await trio.lowlevel.wait_readable(pidfd)
                    finally:
                        trio.lowlevel.notify_closing(pidfd)
                        os.close(pidfd)
                    self._popen.wait()
                else:
                    while self._popen.poll() is None:
                        await trio.sleep(0.01)
        await trio.lowlevel.checkpoint()
        code = self._popen.returncode
        assert code is not None
        return code


def spawn(launch: Launch, spec: BotSpec, env: dict[str, str]) -> ChildProcess:
    """Start ``launch.argv`` now, from this thread, in a new session; OSError if it cannot start."""
    parent_ends: list[int] = []
    child_ends: list[int] = []

    def pipe() -> tuple[int, int]:
        read, write = os.pipe2(os.O_CLOEXEC)
        return read, write

    try:
        stdin_read, stdin_write = pipe()
        child_ends.append(stdin_read)
        parent_ends.append(stdin_write)
        stderr_read, stderr_write = pipe()
        child_ends.append(stderr_write)
        parent_ends.append(stderr_read)
        if launch.fifo is not None:
            # Opened before the spawn so the bot's open of the write end never blocks.
            stdout_read = os.open(launch.fifo, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            parent_ends.append(stdout_read)
            child_stdout = subprocess.DEVNULL
        else:
            stdout_read, child_stdout = pipe()
            parent_ends.append(stdout_read)
            child_ends.append(child_stdout)
        popen = subprocess.Popen(
            launch.argv,
            stdin=stdin_read,
            stdout=child_stdout,
            stderr=stderr_write,
            cwd=spec.cwd,
            env=env,
            start_new_session=True,
            close_fds=True,
            pass_fds=launch.pass_fds,
        )
        launch.spawned()
    except BaseException:
        for fd in parent_ends:
            os.close(fd)
        raise
    finally:
        for fd in child_ends:
            os.close(fd)
    stdout: trio.abc.ReceiveStream
    stdout = FifoReader(stdout_read) if launch.fifo is not None else trio.lowlevel.FdStream(stdout_read)
    return ChildProcess(popen, trio.lowlevel.FdStream(stdin_write), stdout, trio.lowlevel.FdStream(stderr_read))


class StderrTail:
    """The last ``limit`` bytes a bot wrote to stderr (older output is dropped)."""

    __slots__ = ("_data", "dropped", "limit", "total")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._data = bytearray()
        self.dropped = 0
        self.total = 0  # bytes fed since the last reset, kept or not

    def feed(self, chunk: bytes | bytearray) -> None:
        self.total += len(chunk)
        self._data += chunk
        excess = len(self._data) - self.limit
        if excess > 0:
            del self._data[:excess]
            self.dropped += excess

    def reset(self) -> None:
        self._data.clear()
        self.dropped = 0
        self.total = 0

    def text(self) -> str:
        return self._data.decode("utf-8", "replace")

    def last_lines(self, count: int = 3, width: int = 200) -> str:
        lines = [line.strip()[:width] for line in self.text().splitlines() if line.strip()]
        return " | ".join(lines[-count:])


class BotProcess(ChannelBase):
    """A running bot: bounded line input, message output, stderr tail, exit status (a ``ChannelBase``
    that offers everything the contract declares: its pipe, its CPU and wait meters, a freezer, a sandbox)."""

    def __init__(
        self, spec: BotSpec, process: RunningProcess, settings: RefereeSettings, launch: Launch | None = None
    ) -> None:
        self.spec = spec
        self.process = process
        self.settings = settings
        assert process.stdout is not None and process.stdin is not None
        self.reader: LineReader = LineReader(process.stdout, settings.max_line_bytes)
        self.stderr = StderrTail(settings.stderr_bytes)
        self.started_at = trio.current_time()
        self.games_played = 0
        self.healthy = True
        # Chains that fork report a bot killed by signal N as exit code 128 + N.
        self.signal_exit_codes = launch.signal_exit_codes if launch is not None else False
        self.stdout_fifo = launch.fifo if launch is not None else None
        # At standard and strict the chain's first process is outside the bot's
        # PID namespace, the bot pid 2 inside it (referee.sandbox.strays).
        self.namespaced = launch.namespaced if launch is not None else False
        self.sandbox = launch.description if launch is not None else ""
        """The sandbox the bot runs in, as match records show it."""
        self.failure: BotError | None = None
        """Set when the referee stopped the bot for something its pipes do not show (a stderr flood)."""
        self.poll_schedule = None  # where the referee's quick-answer polls stood after its last game
        # What freezes the bot's whole tree between its requests, unless the host lets bots
        # think on others' time: its control group (referee.sandbox.cgroup) where the host
        # gives a freezer, else SIGSTOP to every process of its PID namespace (sigfreeze).
        group = launch.cgroup if launch is not None else None
        self.freezer: BotCgroup | SignalFreezer | None = None
        if group is not None and group.can_freeze and not settings.clock.ponder:
            self.freezer = group
        elif launch is not None and launch.freeze_by_signal:
            self.freezer = SignalFreezer(process.pid)
        self.frozen = False
        self.meter = group.cpu_usage_ns if group is not None and group.can_measure else None
        """The CPU time in nanoseconds the bot's whole tree has used (the cpu clock reads it); None without."""
        self.waited = (
            group.cpu_wait_ns if self.meter is not None and group is not None and group.can_measure_waits else None
        )
        """The time in nanoseconds the tree's tasks have waited for a CPU (the cpu clock does not charge it)."""
        # Caught running while not asked: frozen between its requests in later games too. Without a
        # CPU meter to catch it by (no control group), held between its requests from the start.
        self.restless = self.freezer is not None and self.meter is None

    @property
    def can_hold(self) -> bool:
        """A freezer the host lets the referee use (it has one, and bots may not ponder)."""
        return self.freezer is not None

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def name(self) -> str:
        return self.spec.name

    async def readline(self) -> bytes:
        """The bot's next line; BotCrashed/BotStalled when its output closes."""
        try:
            return await self.reader.readline()
        except StreamClosed:
            raise await self.crash_error("closed its output") from None
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise await self.crash_error("closed its output") from None

    def hold(self) -> None:
        """The bot has answered: its whole tree stops where it is until it is next written to.

        The referee calls it for a bot caught running while it was not asked
        (referee.match.clock, ``RAN_UNASKED_NS``): such a seat then cannot take the
        CPU an asking seat needs, whatever it starts. Nothing without a
        freezer, or when the host lets bots think on others' time (``ponder``).
        """
        if self.freezer is not None and not self.frozen:
            self.freezer.freeze()
            self.frozen = True

    def resume(self) -> None:
        """Let the bot's tree run again (before anything is written to it, and before it is stopped)."""
        if self.frozen:
            assert self.freezer is not None
            self.freezer.thaw()
            self.frozen = False

    async def kill(self) -> None:
        """Stop the bot at once (after a forfeit: no grace); safe to call twice."""
        self.healthy = False
        self.resume()  # a frozen tree takes no signal on cgroup v1 until it is thawed
        with trio.CancelScope(shield=True):
            self.signal_group(signal.SIGKILL)
            await self.process.wait()

    def stderr_text(self) -> str:
        return self.stderr.text()

    def end_game(self) -> None:
        """Between two games of a warm process: stop everything the bot started but the bot.

        When that fails (processes forking faster than they are killed) the bot
        is marked unhealthy, so it is stopped whole rather than reused.
        """
        self.resume()
        if self.process.returncode is not None:
            return
        if not kill_strays(self.process.pid, namespaced=self.namespaced) or not self.clean_after_end():
            self.healthy = False

    def clean_after_end(self) -> bool:
        """Drop the whole lines the bot wrote after its game's end (part of no game); False when a line
        is left begun, or more came than a bot says after its end: read in its next game, they would
        be taken for that game's (a log misfiled, or unasked output that ends it)."""
        try:
            for _ in range(_LINES_AFTER_END):
                if self.reader.pending_line() is None:
                    return not self.reader.partial
        except ProtocolViolation:  # a line past the limit
            return False
        return False

    async def send(self, data: bytes) -> None:
        """Write one encoded message; BotCrashed if the bot no longer reads."""
        if self.frozen:
            self.resume()
        stdin = self.process.stdin
        assert stdin is not None
        try:
            # One write and no scheduler trip when the pipe has room (the usual case).
            if rest := write_now(stdin, data):
                await stdin.send_all(rest)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise await self.crash_error("stopped reading its input") from None

    async def crash_error(self, what: str) -> BotError:
        """Describe why the bot's pipe broke: its exit status and last stderr lines."""
        # The exit usually follows the pipe closing by a moment: wait a little for it
        # so the reason can carry the exit code or signal.
        with trio.move_on_after(0.5):
            await self.process.wait()
        if self.failure is not None:
            return self.failure
        code = self.process.returncode
        if code is not None:
            self.take_stderr_left()
        stderr = self.stderr.last_lines()
        tail = f"; stderr: {stderr}" if stderr else ""
        if code is None:
            return BotStalled(f"{what} but is still running{tail}")
        if code < 0:
            signum = -code
        elif self.signal_exit_codes and 128 < code <= 128 + 64:
            signum = code - 128
        else:
            signum = 0
        if signum:
            return BotCrashed(f"{what}: killed by {signal_name(signum)}{tail}")
        return BotCrashed(f"{what}: exited with code {code}{tail}")

    def take_stderr_left(self) -> None:
        """Read what an exited bot wrote to stderr that the draining task has not read yet.

        The draining task may not have run since the bot's last write: on a busy
        machine a bot that prints why it fails and exits at once was reported
        without that line. Once the bot has exited, all it wrote is in the pipe,
        so a read that does not wait takes it here, in order after what the task
        took. Bounded: the tail keeps at most ``stderr_bytes`` anyway.
        """
        stream = self.process.stderr
        fileno = getattr(stream, "fileno", None)
        if fileno is None:
            return
        try:
            descriptor = fileno()
            for _ in range(16):
                chunk = os.read(descriptor, 65536)
                if not chunk:
                    return
                self.stderr.feed(chunk)
        except (OSError, ValueError):  # nothing more yet, or the stream is closed
            return

    async def drain_stderr(self) -> None:
        """Keep the tail of the bot's stderr until it ends, then make sure reading its stdout FIFO ends too."""
        assert self.process.stderr is not None
        limit = self.settings.stderr_flood_bytes
        try:
            while chunk := await self.process.stderr.receive_some(65536):
                self.stderr.feed(chunk)
                if 0 < limit < self.stderr.total and self.failure is None:
                    # Reading a flood costs the referee CPU the other seats need:
                    # stop the bot; its next read or write reports this failure.
                    self.failure = BotProtocolError(f"flood: more than {limit} bytes on stderr in one game")
                    self.healthy = False
                    self.signal_group(signal.SIGKILL)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        self.end_fifo()

    def end_fifo(self) -> None:
        """Turn a stdout FIFO no writer ever reached into end-of-file for the referee.

        A reader sees end-of-file on a FIFO only after a writer came and went. A
        chain that fails before the bot opens its end (a program missing inside
        the sandbox) never connects; opening and closing a write end here turns
        that into end-of-file, so the failure is a crash with its reason rather
        than a wait for the startup limit. Called when stderr ends: every process
        of the chain holds stderr, so it ends when the chain has gone, or when
        the bot itself closed it, long after the chain's last link opened the
        FIFO (an extra writer coming and going then changes nothing). Done here
        rather than in a task waiting for the process, which would cost each
        bot a task of its own.
        """
        if self.stdout_fifo is None:
            return
        try:
            os.close(os.open(self.stdout_fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # already closed by the referee: nothing is reading
            pass

    def signal_group(self, signum: int) -> None:
        # The bot leads its own session and process group (start_new_session), so
        # the group id is its pid; this reaches every child it forked too. A child
        # that left the group with setsid is reached through the PID namespace of
        # the standard and strict levels: its init is in this group.
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    async def aclose(self) -> None:
        """Stop the bot and its process group: EOF, grace, SIGTERM, grace, SIGKILL."""
        grace = self.settings.grace_ms / 1000
        self.resume()  # end of input, SIGTERM and grace mean nothing to a frozen tree
        with trio.CancelScope(shield=True):
            if self.process.stdin is not None:
                with trio.move_on_after(grace):
                    await self.process.stdin.aclose()
            with trio.move_on_after(grace):
                await self.process.wait()
            if self.process.returncode is None:
                self.signal_group(signal.SIGTERM)
                with trio.move_on_after(grace):
                    await self.process.wait()
            # Always: children left in the group die with the bot.
            self.signal_group(signal.SIGKILL)
            await self.process.wait()
            for stream in (self.process.stdout, self.process.stderr):
                if stream is not None:
                    await stream.aclose()


@asynccontextmanager
async def open_bot(spec: BotSpec, settings: RefereeSettings) -> AsyncIterator[BotProcess]:
    """Start ``spec`` in its sandbox and yield it; on exit, the process and its group are gone.

    BotCrashed when it cannot be started; SandboxUnavailable (a ValueError)
    when ``settings.sandbox`` cannot run on this machine; BotChangedDuringRun (a
    ValueError) when its files no longer have the content its run pinned.
    """
    raise_open_file_limit()
    if spec.pin is not None:
        # The code this process runs is the code its games are recorded under. In a thread: the first
        # check of a large bot hashes it, and other tables' clocks run on this loop meanwhile.
        await trio.to_thread.run_sync(check_pin, spec)
    launch = prepare(spec, settings)
    try:
        try:
            process = spawn(launch, spec, settings.bot_environment())
        except OSError as exc:
            raise BotCrashed(f"could not start {launch.argv[0]!r}: {exc.strerror or exc}") from None
        bot = BotProcess(spec, process, settings, launch)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(bot.drain_stderr)
                try:
                    yield bot
                finally:
                    await bot.aclose()
        finally:
            # The nursery above already waited for aclose; this covers a failure to
            # enter it at all.
            if process.returncode is None:
                with trio.CancelScope(shield=True):
                    bot.signal_group(signal.SIGKILL)
                    await process.wait()
    finally:
        launch.release()


def raise_open_file_limit(wanted: int = 65536) -> int:
    """Raise this process's soft open-file limit towards ``wanted`` (capped by the hard limit, which
    root raises too).

    Each bot costs the referee four descriptors (three pipes and its
    control group's CPU time), and a tournament runs many at once; the common
    soft default of 1024 is too few. Returns the soft limit now in force.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < wanted and os.geteuid() == 0:
        try:  # root may raise the hard limit itself (up to the kernel's fs.nr_open)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, wanted))
            hard = wanted
        except (ValueError, OSError):
            pass
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def signal_name(signum: int) -> str:
    """``SIGKILL`` for 9, or ``signal N`` for a number that names no signal."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
