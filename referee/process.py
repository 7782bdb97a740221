"""One bot process: started in its own process group, read with bounds, always cleaned up.

``open_bot`` is an async context manager. Inside it the bot's stdout is read
line by line (``BotProcess.readline``), its stdin written (``send``), and its
stderr drained by a task into a bounded tail. Leaving the context, however it is
left (normal end, a crash of the referee, a cancelled match), runs the cleanup in
a shielded scope: close stdin, give the bot a grace period to exit, then SIGTERM
and finally SIGKILL its whole process group.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from protocol.codec import LineReader, StreamClosed
from referee.bots import BotSpec
from referee.errors import BotCrashed, BotStalled
from referee.settings import RefereeSettings

__all__ = ["BotProcess", "StderrTail", "open_bot"]


class StderrTail:
    """The last ``limit`` bytes a bot wrote to stderr (older output is dropped)."""

    __slots__ = ("limit", "_data", "dropped")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._data = bytearray()
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        self._data += chunk
        excess = len(self._data) - self.limit
        if excess > 0:
            del self._data[:excess]
            self.dropped += excess

    def reset(self) -> None:
        self._data.clear()
        self.dropped = 0

    def text(self) -> str:
        return self._data.decode("utf-8", "replace")

    def last_lines(self, count: int = 3, width: int = 200) -> str:
        lines = [line.strip()[:width] for line in self.text().splitlines() if line.strip()]
        return " | ".join(lines[-count:])


class BotProcess:
    """A running bot: bounded line input, message output, stderr tail, exit status."""

    def __init__(self, spec: BotSpec, process: trio.Process, settings: RefereeSettings) -> None:
        self.spec = spec
        self.process = process
        self.settings = settings
        assert process.stdout is not None and process.stdin is not None
        self.reader = LineReader(process.stdout, settings.max_line_bytes)
        self.stderr = StderrTail(settings.stderr_bytes)
        self.started_at = trio.current_time()
        self.games_played = 0
        self.healthy = True

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

    async def kill(self) -> None:
        """Stop the bot at once (after a forfeit: no grace); safe to call twice."""
        self.healthy = False
        with trio.CancelScope(shield=True):
            self.signal_group(signal.SIGKILL)
            await self.process.wait()

    def stderr_text(self) -> str:
        return self.stderr.text()

    async def send(self, data: bytes) -> None:
        """Write one encoded message; BotCrashed if the bot no longer reads."""
        assert self.process.stdin is not None
        try:
            await self.process.stdin.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise await self.crash_error("stopped reading its input") from None

    async def crash_error(self, what: str) -> BotCrashed | BotStalled:
        """Describe why the bot's pipe broke: its exit status and last stderr lines."""
        # The exit usually follows the pipe closing by a moment: wait a little for it
        # so the reason can carry the exit code or signal.
        with trio.move_on_after(0.5):
            await self.process.wait()
        code = self.process.returncode
        stderr = self.stderr.last_lines()
        tail = f"; stderr: {stderr}" if stderr else ""
        if code is None:
            return BotStalled(f"{what} but is still running{tail}")
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return BotCrashed(f"{what}: killed by {name}{tail}")
        return BotCrashed(f"{what}: exited with code {code}{tail}")

    async def drain_stderr(self) -> None:
        assert self.process.stderr is not None
        try:
            while chunk := await self.process.stderr.receive_some(65536):
                self.stderr.feed(chunk)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    def signal_group(self, signum: int) -> None:
        # The bot leads its own session and process group (start_new_session), so
        # the group id is its pid; this reaches every child it forked too.
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    async def aclose(self) -> None:
        """Stop the bot and its process group: EOF, grace, SIGTERM, grace, SIGKILL."""
        grace = self.settings.grace_ms / 1000
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
    """Start ``spec`` and yield it; on exit, the process and its group are gone."""
    try:
        process = await trio.lowlevel.open_process(
            spec.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=spec.cwd,
            start_new_session=True,
            env=settings.bot_environment(),
        )
    except OSError as exc:
        raise BotCrashed(f"could not start {spec.command[0]!r}: {exc.strerror or exc}") from None
    bot = BotProcess(spec, process, settings)
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
