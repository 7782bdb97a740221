"""Run one bot through every check and judge what it did.

Every game is played by the referee's own ``run_match``: the bot under check
in one seat as a real process (kept warm from game to game, like a tournament
does), random in-process seats in the others. A failure is the termination the
referee recorded, read together with the transcript ``Recorder`` kept of the
bot's lines, and charged to the check it breaks: a wrong request id to "request
ids", an answer nobody asked for to "nothing unasked", a timeout whose answer
appears once the input closes to "flushes each line", a crash or an illegal
action to the game it happened in.

After a timeout the remaining games are skipped: each would cost the whole
clock again, and the check that failed already says what to fix.
"""

from __future__ import annotations

import math
import os
import stat
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import msgspec
import trio

from protocol.codec import ProtocolViolation, decode_bot_message
from protocol.messages import Action, Log, Ready
from referee.bot_folder import walk_entries
from referee.bots import BotBuildFailed, BotSpec, BotSpecError
from referee.build import build_bot, check_sandbox_view
from referee.channel import BotChannel, ChannelBase, DeadBot
from referee.errors import BotError
from referee.games import get_rules
from referee.games.base import GameRules
from referee.games.checkbot import find_position
from referee.match import MatchSpec, run_match
from referee.pipe import StreamClosed
from referee.process import BotProcess
from referee.seats import WarmPool, open_pool
from referee.settings import RefereeSettings
from tournaments.checkbot.seats import RandomSeat
from tournaments.config.ranges import MIN_STARTUP_MS

__all__ = ["CHECKS", "CheckResult", "Report", "StartupTime", "Thinking", "check_bot", "needed_startup_ms"]

Status = Literal["pass", "fail", "skip"]


class CheckResult(msgspec.Struct, kw_only=True):
    """One check: its name, pass/fail/skip, and on a failure what happened and how to fix it."""

    name: str
    status: Status = "pass"
    detail: str = ""
    """What the bot did (on a failure), or a note (on a pass or a skip)."""
    wanted: str = ""
    """What the protocol wants."""
    fix: str = ""
    """How to fix it, naming the PROTOCOL.md section."""


class Thinking(msgspec.Struct, frozen=True, kw_only=True):
    """The bot's time per decision over every game of the check, in ms."""

    decisions: int
    median_ms: float
    p95_ms: float
    max_ms: float


class StartupTime(msgspec.Struct, frozen=True, kw_only=True):
    """How long the bot took to start: from a fresh process's start to its first ready line, in ms."""

    processes: int
    """Fresh processes that said ready (0: none did)."""
    limit_ms: int
    """The startup_ms the bot was checked with."""
    slowest_ms: float
    needed_ms: int
    """The startup_ms to give it: twice its slowest start-up (a loaded machine is slower), in whole 100 ms."""


def needed_startup_ms(startups: list[float]) -> int:
    """The startup limit a bot with these start-up times needs: twice the slowest, rounded up to 100 ms."""
    slowest = max(startups, default=0.0)
    return max(MIN_STARTUP_MS, math.ceil(2 * slowest / 100) * 100)


class Report(msgspec.Struct, kw_only=True):
    """Everything ``famiglia check-bot`` found, as ``--json`` prints it."""

    bot: str
    game: str
    passed: bool
    checks: list[CheckResult]
    thinking: Thinking
    startup: StartupTime
    games: int
    seconds: float


# name -> (what the protocol wants, the PROTOCOL.md section to read)
CHECKS: dict[str, tuple[str, str]] = {
    "build": ("the build command in bot.toml succeeds", "Building your bot"),
    "startup": ("answer start with a ready line within the startup limit", "ready"),
    "whole game": ("play a game from start to end", "A game, message by message"),
    "messages": ("one valid JSON message per line, under 1 MiB, an action of the game's shape", "Transport"),
    "request ids": ("each action carries the id of the request it answers", "action"),
    "nothing unasked": ("exactly one action per request and nothing after end", "A game, message by message"),
    "flushes each line": ("every line flushed as soon as it is written", "Transport"),
    "warm reuse": (
        "another start after end on the same process (or a clean exit after end)",
        "Several games in one process",
    ),
    "restart": ("a fresh process plays as well as the first", "Several games in one process"),
    "time": ("every decision well within move_ms (95% under half of it), the bank untouched", "Time"),
    "stderr": ("stderr under the flood limit of each game", "Transport"),
    "exits when input closes": ("exit when stdin closes, leaving no process behind", "A game, message by message"),
    "own folder untouched": ("write nothing into the bot's folder (read-only under the strict sandbox)", "Transport"),
}
_FIX = {
    "build": "run the build command in the bot's folder by hand and fix what it reports",
    "startup": "print the ready line (and flush) as soon as start arrives; do slow setup lazily",
    "messages": "send exactly the JSON objects of the section, one per line, with no raw newline",
    "request ids": "copy the request's id field into the action unchanged",
    "nothing unasked": "answer each request exactly once and send nothing else but log lines",
    "flushes each line": "flush stdout after every line (C: fflush(stdout); Python: print(..., flush=True))",
    "warm reuse": "reset per-game state on every start and keep reading stdin after end",
    "restart": "make a fresh process play as the first did (no file or cache an earlier process must leave)",
    "time": "answer sooner: search less, or stop when time_ms is nearly spent",
    "stderr": "write less to stderr (only the last 64 KiB per game are kept anyway)",
    "exits when input closes": "exit when stdin ends, and make every child process exit with you",
    "own folder untouched": "write scratch files to /tmp, not beside the bot",
}


# What a bot did wrong in a game, by the termination the referee recorded: the
# fix names that cause, whichever check the game belongs to (a restart that ends
# on an illegal placement is about the placement, not about kept state). An
# illegal action's fix is the game's own (GameRules.checkbot_illegal_fix).
_CAUSE_FIX: dict[str, tuple[str, str]] = {
    "crash": (
        (
            "it exited (or closed its input) in the middle of a game: the reason quotes its last stderr lines; "
            "run it by hand on the messages of that decision kind"
        ),
        "A game, message by message",
    ),
    "stall": ("keep stdout open until stdin closes, and keep answering", "A game, message by message"),
}


def _cause_fix(kind: str, rules: GameRules) -> tuple[str, str] | None:
    """How to fix a game that ended on ``kind``, and the PROTOCOL.md section: None when the check's own fix fits."""
    if kind == "illegal":
        return rules.checkbot_illegal_fix(), rules.checkbot_section()
    return _CAUSE_FIX.get(kind)


class Recorder(ChannelBase):
    """A ``BotChannel`` around the bot's process that keeps what it sent and how fast.

    ``swap`` puts a fresh process behind it. Each fresh process's start-up
    time is kept: from its start to its first ``ready``. On ``kill`` after an
    unanswered ``start`` or request (a timeout) it first waits ``patience``
    seconds more with the bot's input open: an answer that comes then is late,
    and says how late. Only then does it close the input and read what still
    comes out: an answer that appears only at that point was written but never
    flushed.
    """

    def __init__(
        self,
        process: BotProcess,
        patience: Callable[[bool], float] = lambda startup: 0.0,
        *,
        cpu_clock: bool = True,
    ) -> None:
        self.process = process
        self.patience = patience
        self.cpu_clock = cpu_clock
        """Thinking is charged as the referee's clock charges it: the tree's CPU time on the cpu clock
        (waiting for a core on a busy machine costs a bot nothing), else the wall time."""
        self.sent_cpu_ns = 0
        self._offer(process)
        self.answered: set[int] = set()
        self.open_request = 0
        self.sent_at = 0.0
        self.waiting_ready = False
        self.thinking_ms: list[float] = []
        self.late_lines: list[bytes] = []
        self.late_ms: float | None = None
        """How long after its start or request the overdue answer came while the input was still open."""
        self.decision = ""  # the kind of the last request sent
        self.spawned_at = self.start_sent_at = trio.current_time()
        self.first_ready = True  # the next ready is this process's first
        self.heard = False
        """A line other than a log came since the last start or request: the bot answered, rightly or not."""
        self.startup_ms: list[float] = []
        """Each fresh process's start-up: from its start until its first ready line."""

    def _offer(self, process: BotProcess) -> None:
        """Offer the referee what the process offers (its CPU meter, its freezer): check-bot plays a
        bot under the clock and the fairness rules of a tournament, not a gentler one."""
        self.meter = process.meter
        self.sandbox = process.sandbox
        self.restless = False
        self.poll_schedule = None

    @property
    def can_hold(self) -> bool:
        return self.process.can_hold

    def hold(self) -> None:
        self.process.hold()

    def swap(self, process: BotProcess) -> None:
        self.process = process
        self._offer(process)
        self.spawned_at = trio.current_time()
        self.first_ready = True

    @property
    def name(self) -> str:
        return self.process.name

    async def send(self, data: bytes) -> None:
        if data.startswith(b'{"type":"request"'):
            request = msgspec.json.decode(data, type=dict[str, Any])
            self.open_request = request["id"]
            self.decision = str(request["decision"])
            self.sent_at = trio.current_time()
            self.sent_cpu_ns = self.meter() if self.meter is not None else 0
            self.heard = False
        elif data.startswith(b'{"type":"start"'):
            self.start_sent_at = trio.current_time()
            self.heard = False
            self.waiting_ready = True
            self.open_request = 0
            self.answered.clear()  # request ids start again at 1 in every game
        await self.process.send(data)

    async def readline(self) -> bytes:
        line = await self.process.readline()
        try:
            message = decode_bot_message(line)
        except ProtocolViolation:
            self.heard = True
            return line
        self.heard = self.heard or not isinstance(message, Log)
        if isinstance(message, Ready):
            self.waiting_ready = False
            if self.first_ready:
                self.first_ready = False
                self.startup_ms.append((trio.current_time() - self.spawned_at) * 1000)
        elif isinstance(message, Action) and self.open_request:
            self.thinking_ms.append(self._thinking_ms())
            self.answered.add(self.open_request)
            self.open_request = 0
        return line

    def _thinking_ms(self) -> float:
        """The last request's thinking time, as the referee's clock charged it."""
        if self.cpu_clock and self.meter is not None:
            return (self.meter() - self.sent_cpu_ns) / 1e6
        return (trio.current_time() - self.sent_at) * 1000

    async def kill(self) -> None:
        # Only a timeout is looked into: after a wrong line the bot has answered, rightly or not.
        if (self.open_request or self.waiting_ready) and not self.heard:
            with trio.CancelScope(shield=True):
                await self._wait_for_late_answer()
                if self.late_ms is not None:
                    await self.process.kill()
                    return
                stdin = self.process.process.stdin
                if stdin is not None:
                    with trio.move_on_after(0.2):
                        await stdin.aclose()
                with trio.move_on_after(0.5):
                    while True:
                        try:
                            self.late_lines.append(await self.process.readline())
                        except (BotError, ProtocolViolation):
                            break
        await self.process.kill()

    async def _wait_for_late_answer(self) -> None:
        """After a timeout, read on with the input open: a bot that is only slow answers now (``late_ms``)."""
        startup = self.waiting_ready
        began = (self.spawned_at if self.first_ready else self.start_sent_at) if startup else self.sent_at
        with trio.move_on_after(self.patience(startup)):
            while True:
                try:
                    line = await self.process.readline()
                    message = decode_bot_message(line)
                except (BotError, ProtocolViolation):
                    return
                if isinstance(message, Ready if startup else Action):
                    self.late_ms = (trio.current_time() - began) * 1000
                    if startup and self.first_ready:
                        self.first_ready = False
                        self.startup_ms.append(self.late_ms)
                    return

    def stderr_text(self) -> str:
        return self.process.stderr_text()


class _Game(msgspec.Struct, kw_only=True):
    """One game of the check: the check it belongs to, the table, where the bot sits."""

    check: str
    players: int
    seat: int
    variants: dict[str, str] = {}
    state: Any = None
    note: str = ""


def _variant_games(rules: GameRules) -> list[_Game]:
    """Every table size and every variant set of the game's ``checkbot_variants``, spread over one another.

    As many games as the larger of the two counts: game i plays the i-th size
    and the i-th variant set, each taken in turn, the bot in a different seat
    each time. A size met again (more variant sets than sizes) names its check
    after the variants too, so each game has a check of its own.
    """
    sizes = list(range(rules.min_players, rules.max_players + 1))
    variants = rules.checkbot_variants() or [{}]
    games = []
    for i in range(max(len(sizes), len(variants))):
        players = sizes[i % len(sizes)]
        chosen = variants[i % len(variants)]
        described = ", ".join(f"{k}={v}" for k, v in chosen.items()) or "default variants"
        seat = (players - 1) if i % 2 else i % players
        games.append(
            _Game(
                check=f"{players} players" if i < len(sizes) else f"{players} players, {described}",
                players=players,
                seat=seat,
                variants=chosen,
                note=f"seat {seat}, {described}",
            )
        )
    return games


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


_WATCHED_FILES = 5000
"""A bot folder with more files than this is not watched (a command line run from a big folder)."""


def _folder_snapshot(folder: Path) -> dict[str, tuple[int, int]] | None:
    """Every file under the bot's folder: size and modification time.

    Python's bytecode caches are left out: the interpreter writes them on its
    own, and skips them silently where the folder is read-only.
    """
    found = {}
    try:
        # Links are not followed (a link's own size and time are watched) and the
        # walk is not recursive: a folder nested deeper than Python's recursion
        # limit is walked like any other.
        for path, info in walk_entries(folder, skip=frozenset({"__pycache__"})):
            if stat.S_ISDIR(info.st_mode):
                continue
            found[str(Path(path).relative_to(folder))] = (info.st_size, info.st_mtime_ns)
            if len(found) > _WATCHED_FILES:
                return None
    except OSError:
        return None
    return found


_SIGTERM_BIT = 1 << (15 - 1)


def _ignoring_sigterm(folder: Path, leader: int) -> list[str]:
    """The bot's processes working in ``folder`` that ignore SIGTERM (from /proc/PID/status), by pid and command."""
    found = []
    for pid in _bot_processes(folder, leader):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            ignored = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:")), 16)
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, StopIteration, ValueError):
            continue
        if ignored & _SIGTERM_BIT:
            found.append(f"{pid} ({command.strip()[:60]})")
    return found


def _session_and_namespace(pid: int) -> tuple[int, str]:
    """A process's session id and PID namespace; OSError when it is gone."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    session = int(stat[stat.rindex(")") + 2 :].split()[3])
    return session, os.readlink(f"/proc/{pid}/ns/pid")


def _bot_processes(folder: Path, leader: int) -> list[int]:
    """The processes of the bot started as ``leader``: in its session (the bot leads
    one of its own), or in a PID namespace one of them lives in (a sandbox's). The
    person's shell in the same folder is neither."""
    ours = os.readlink("/proc/self/ns/pid")
    found: dict[int, tuple[int, str]] = {}
    for pid in _processes_in(folder):
        try:
            found[pid] = _session_and_namespace(pid)
        except (OSError, ValueError, IndexError):
            continue
    namespaces = {ns for session, ns in found.values() if session == leader and ns != ours}
    return [pid for pid, (session, ns) in found.items() if session == leader or ns in namespaces]


def _processes_in(folder: Path) -> list[int]:
    """Live processes working in ``folder`` (Linux /proc): what a bot left behind."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == folder:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


class _Run:
    """One check of one bot: the warm process, the results, the games played."""

    def __init__(self, bot: BotSpec, game: str, settings: RefereeSettings, pool: WarmPool) -> None:
        self.bot = bot
        self.game = game
        self.rules = get_rules(game)
        self.forced: set[str] = set()
        """The names of the forced-position checks (the game's targets)."""
        self.settings = settings
        self.pool = pool
        self.results: dict[str, CheckResult] = {}
        self.recorder: Recorder | None = None
        self.games = 0
        self.stopped = ""  # why the remaining games are skipped
        self.exits_after_game = False
        self.process_games = 0  # games the current process has played
        self.warm_starts = 0  # games started on a process that had played before
        self.stderr_max = 0

    def result(self, name: str) -> CheckResult:
        if name not in self.results:
            self.results[name] = CheckResult(name=name)
        return self.results[name]

    def fail(self, name: str, detail: str, *, cause: str = "") -> None:
        """Fail check ``name``; ``cause``, a termination kind, picks the fix when it names the real fault."""
        result = self.result(name)
        if result.status == "fail":
            return  # the first failure says it
        if name in CHECKS:
            wanted, section = CHECKS[name]
        elif name in self.forced:
            wanted, section = "answer it with a legal action", self.rules.checkbot_section()
        else:  # a table size with its variants
            wanted, section = "play every table size and every variant", "start"
        fix = _FIX.get(name, "play every decision kind the section lists")
        if (by_cause := _cause_fix(cause, self.rules)) is not None:
            fix, section = by_cause
        result.status = "fail"
        result.detail = detail
        result.wanted = wanted
        result.fix = f'{fix} (PROTOCOL.md, section "{section}")'

    async def fresh_process(self) -> Recorder:
        """Close the current process (if any) and start another one.

        The processes live in the pool's nursery (referee.seats), not in the
        task that asks: ``replace`` runs inside ``run_match``'s own nursery.
        """
        if self.recorder is not None:
            self.pool.discard(self.recorder.process)
        self.process_games = 0
        process = await self.pool.acquire(self.bot, fresh=True)
        if isinstance(process, DeadBot):
            raise process.error
        assert isinstance(process, BotProcess)
        if self.recorder is None:
            self.recorder = Recorder(process, self.patience, cpu_clock=self.settings.clock == "cpu")
        else:
            self.recorder.swap(process)
        return self.recorder

    def patience(self, startup: bool) -> float:
        """Seconds to wait, input open, for an answer past its deadline: long enough to tell slow from unflushed.

        A start-up gets its limit once more (at least 2 s, at most a minute), so
        the time a slow starter needs can be measured; a decision gets its whole
        clock once more, from 0.5 to 3 s.
        """
        clock = self.settings.time
        if startup:
            return min(60.0, max(2.0, clock.startup_ms / 1000))
        return min(3.0, max(0.5, (clock.move_ms + clock.bank_ms) / 1000))

    async def replace(self, seat: int) -> BotChannel | None:
        """The warm process broke at the next start: a fresh one, as the pool does.

        A clean exit (code 0) after ``end`` is allowed by the protocol; anything
        else (an exit code, a signal, a process that closed its output and hangs)
        fails warm reuse, and the check goes on with the fresh process.
        """
        assert self.recorder is not None
        if self.process_games == 0:
            return None  # a process that never played: its failure is the startup's
        code = self.recorder.process.process.returncode
        if code == 0:
            self.exits_after_game = True
        else:
            status = "still running" if code is None else f"exit code {code}"
            self.fail("warm reuse", f"after {self.process_games} game(s) it failed at the next start ({status})")
        return await self.fresh_process()

    async def play(self, entry: _Game, seed: int) -> None:
        """Play one game and charge whatever went wrong to the check it breaks."""
        if self.stopped:
            self.result(entry.check).status = "skip"
            self.result(entry.check).detail = self.stopped
            return
        recorder = self.recorder
        assert recorder is not None
        exited = recorder.process.process.returncode is not None
        if recorder.process.healthy and exited and self.process_games > 0:
            await self.replace(entry.seat)  # it exited after its last game: judged there
        elif not recorder.process.healthy or exited:
            recorder = await self.fresh_process()  # stopped by the referee after a failure
        recorder.late_lines.clear()
        recorder.late_ms = None
        if self.process_games:
            self.warm_starts += 1
        channels: list[BotChannel] = [RandomSeat(f"random{i}") for i in range(entry.players)]
        channels[entry.seat] = recorder
        spec = MatchSpec(game=self.game, seed=seed, variants=entry.variants, match=f"check-{self.game}-{seed}")
        before = recorder.process.stderr.total
        record = await run_match(spec, channels, self.settings, replace=self.replace, initial_state=entry.state)
        self.games += 1
        written = recorder.process.stderr.total - before
        self.stderr_max = max(self.stderr_max, written)
        failed = [t for t in record.result.terminations if t.seat == entry.seat]
        if failed:
            termination = failed[0]
            did = f"{termination.kind}: {termination.reason}"
            if termination.request:
                did += f" (at a {recorder.decision} decision; game: {entry.players} players, {entry.note})"
            self.charge(entry.check, termination.kind, did, termination.request, recorder)
            return
        self.process_games += 1  # counted once the game went well: a failed process is replaced
        self.result(entry.check).detail = entry.note
        await self.listen_after_end(recorder)

    async def listen_after_end(self, recorder: Recorder) -> None:
        """Nothing may come after ``end``: a line now is an answer nobody asked for."""
        with trio.move_on_after(0.05):
            try:
                line = await recorder.process.readline()
            except BotError:
                return  # it exited after end: valid, it is started again
            except ProtocolViolation as exc:
                line = str(exc).encode()
            self.fail("nothing unasked", f"sent {line[:120]!r} after end, with no request open")
            await recorder.process.kill()

    def charge(self, check: str, kind: str, did: str, request: int, recorder: Recorder) -> None:
        """Charge a game's failure (``did``: the termination in words) to the check whose rule it broke."""
        late = b" ".join(recorder.late_lines)[:160]
        startup_limit = self.settings.time.startup_ms
        if kind == "timeout" and recorder.late_ms is not None and request == 0 and self.process_games == 0:
            # It answers, only later than the limit, with its input open: slow, not unflushed.
            self.fail(
                "startup",
                f"its ready came {recorder.late_ms:.0f} ms after it was started, over the startup limit of "
                f"{startup_limit} ms",
            )
            self.result("startup").fix = (
                f"start faster (do slow setup after ready), or run where startup_ms is at least "
                f"{needed_startup_ms(recorder.startup_ms)} (famiglia check-bot --startup-ms "
                f"{needed_startup_ms(recorder.startup_ms)}) "
                f'(PROTOCOL.md, section "{CHECKS["startup"][1]}")'
            )
            self.stopped = "skipped: the bot did not start within the startup limit"
        elif kind == "timeout" and recorder.late_ms is not None and request:
            self.fail("time", f"{did}; its answer came {recorder.late_ms:.0f} ms after the request, past its clock")
            self.stopped = "skipped: an earlier game timed out"
        elif kind == "timeout" and late.strip():
            waited = recorder.patience(request == 0)
            self.fail(
                "flushes each line",
                f"{did}; nothing came in {waited:g} s more with its input open, then {late!r} came out "
                "only when its input closed: written, but held in its output buffer",
            )
            self.stopped = "skipped: an earlier game timed out"
            if request == 0 and self.process_games == 0:
                startup = self.result("startup")
                startup.status = "skip"
                startup.detail = "not judged: its ready was held in its output buffer (see flushes each line)"
        elif request == 0 and self.process_games > 0:
            self.fail("warm reuse", f"{did}, after {self.process_games} game(s) on the same process")
            self.stopped = "skipped: the bot does not play a second game on one process"
        elif kind == "timeout" and request == 0:
            waited = recorder.patience(True)
            self.fail("startup", f"{did}, nor in {waited:g} s more, nor when its input closed")
            self.stopped = "skipped: the bot did not start"
        elif kind == "timeout":
            self.fail("time", did)
            self.stopped = "skipped: an earlier game timed out"
        elif request == 0 and kind in ("crash", "stall"):
            self.fail("startup", did)
            self.stopped = "skipped: the bot did not start"
        elif kind == "protocol" and did.startswith("protocol: answered request "):
            answered = int(did.split()[3].rstrip(","))
            self.fail("nothing unasked" if answered in recorder.answered else "request ids", did)
        elif kind == "protocol" and did.startswith(("protocol: a second answer", "protocol: unasked output")):
            self.fail("nothing unasked", did)
        elif kind == "protocol" and "on stderr" in did:
            self.fail("stderr", did)
        elif kind == "protocol" and "before ready" in did:
            self.fail("nothing unasked", did)
        elif kind == "protocol":
            self.fail("messages", did)
        else:
            self.fail(check, did, cause=kind)
            if check == "whole game" and kind in ("crash", "stall"):
                # Every later game would end the same way: one line says it.
                self.stopped = "skipped: the bot could not play a whole game"
            return
        # A failure charged to a cross-cutting check leaves the game's own check unjudged.
        if self.result(check).status == "pass" and check != "startup":
            self.result(check).status = "skip"
            self.result(check).detail = "not judged: the game ended on a failure charged to another check"


async def check_bot(
    bot: BotSpec,
    game: str,
    settings: RefereeSettings,
    *,
    progress: Callable[[str], None] = lambda name: None,
) -> Report:
    """Build ``bot``, run it through every check of ``game``; the report.

    ``progress`` is called with each check's name before it runs. ValueError
    for an unknown game; a failed build is a failed check, not an exception.
    """
    get_rules(game)  # ValueError for an unknown game, before anything starts
    began = trio.current_time()
    progress("build")
    try:
        bot = await trio.to_thread.run_sync(build_bot, bot, settings)
        check_sandbox_view(bot, settings)
    except (BotBuildFailed, BotSpecError) as exc:
        build = CheckResult(name="build", status="fail", detail=str(exc), wanted=CHECKS["build"][0])
        build.fix = f'{_FIX["build"]} (PROTOCOL.md, section "{CHECKS["build"][1]}")'
        return Report(
            bot=bot.name,
            game=game,
            passed=False,
            checks=[build],
            thinking=Thinking(decisions=0, median_ms=0.0, p95_ms=0.0, max_ms=0.0),
            startup=StartupTime(
                processes=0, limit_ms=settings.time.startup_ms, slowest_ms=0.0, needed_ms=MIN_STARTUP_MS
            ),
            games=0,
            seconds=round(trio.current_time() - began, 2),
        )
    folder = Path(bot.cwd)  # the folder it runs from: its built copy when it has a build
    files_before = _folder_snapshot(folder)
    async with open_pool(settings) as pool:
        run = _Run(bot, game, settings, pool)
        for name in ("build", "startup", "whole game"):
            run.result(name)
        progress("startup")
        try:
            await run.fresh_process()
        except BotError as error:
            run.fail("startup", f"{error.kind}: {error.reason}")
            run.stopped = "skipped: the bot did not start"
        if run.recorder is not None:
            progress("whole game")
            rules = run.rules
            await run.play(_Game(check="whole game", players=rules.min_players, seat=0, note="seat 0"), seed=1)
            for name in CHECKS:
                if name not in ("build", "startup", "whole game"):
                    run.result(name)
            for i, entry in enumerate(_variant_games(rules)):
                progress(entry.check)
                await run.play(entry, seed=10 + i)
            targets = rules.checkbot_targets()
            run.forced.update(target.name for target in targets)
            for i, target in enumerate(targets):
                progress(target.name)
                forced = find_position(rules, target)
                if forced is None:
                    run.result(target.name).status = "skip"
                    run.result(target.name).detail = "no such position found in the seeded search"
                    continue
                entry = _Game(
                    check=target.name,
                    players=forced.players,
                    seat=forced.seat,
                    variants=forced.variants,
                    state=forced.state,
                    note=f"{target.what}: seed {forced.seed}, after {forced.steps} decisions, seat {forced.seat}",
                )
                await run.play(entry, seed=100 + i)
            warm = run.result("warm reuse")
            if warm.status == "pass":
                if run.exits_after_game:
                    warm.detail = "exits after each game (valid: it was started again)"
                elif run.warm_starts:
                    warm.detail = f"{run.warm_starts} games started on a process that had played before"
                else:
                    warm.status, warm.detail = "skip", "not judged: no game ended normally, so no process was reused"
            progress("restart")
            await _check_restart(run)
            progress("exits when input closes")
            await _check_exit(run, folder)
    files_after = _folder_snapshot(folder)
    if files_before is None or files_after is None:
        watched = run.result("own folder untouched")
        watched.status, watched.detail = "skip", f"{folder} holds over {_WATCHED_FILES} files: not watched"
        changed: list[str] = []
    else:
        changed = sorted(
            name for name in files_before.keys() | files_after.keys() if files_before.get(name) != files_after.get(name)
        )
    if changed and run.recorder is not None:
        run.fail("own folder untouched", f"changed {', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''}")
    thinking = _thinking(run, settings)
    startups = run.recorder.startup_ms if run.recorder is not None else []
    checks = list(run.results.values())
    return Report(
        bot=bot.name,
        game=game,
        passed=all(result.status != "fail" for result in checks),
        checks=checks,
        thinking=thinking,
        startup=StartupTime(
            processes=len(startups),
            limit_ms=settings.time.startup_ms,
            slowest_ms=round(max(startups, default=0.0), 1),
            needed_ms=needed_startup_ms(startups),
        ),
        games=run.games,
        seconds=round(trio.current_time() - began, 2),
    )


async def _check_restart(run: _Run) -> None:
    if run.stopped:
        run.result("restart").status = "skip"
        run.result("restart").detail = run.stopped
        return
    await run.fresh_process()
    before = len(run.results)
    rules = run.rules
    await run.play(_Game(check="restart", players=rules.max_players, seat=1, note="a new process, seat 1"), seed=2)
    assert len(run.results) >= before


async def _check_exit(run: _Run, folder: Path) -> None:
    """Close the bot's input: it must exit within the grace time and leave no process working in its folder."""
    result = run.result("exits when input closes")
    recorder = run.recorder
    if run.stopped or recorder is None:
        result.status, result.detail = "skip", run.stopped or "the bot did not start"
        return
    if not recorder.process.healthy or recorder.process.process.returncode is not None:
        # The last process was stopped after a failure: a fresh one, whose input closes at once.
        recorder = await run.fresh_process()
    process = recorder.process.process
    stubborn = _ignoring_sigterm(folder, process.pid)
    grace = run.settings.grace_ms / 1000
    if process.stdin is not None:
        with trio.move_on_after(grace):
            await process.stdin.aclose()
    with trio.move_on_after(grace):
        await process.wait()
    if process.returncode is None:
        run.fail("exits when input closes", f"still running {grace:g} s after its input closed")
        return
    if held := await _held_output(recorder.process):
        # A bot that flushes each line has nothing left to say after end; this was
        # in its buffer: written earlier, delivered only when the buffer filled or
        # the process exited (its answers arrive in bursts, or late).
        run.fail(
            "flushes each line",
            f"{len(held)} bytes came out only when its input closed and it exited ({held[:80]!r}...): "
            "lines it wrote earlier were still in its output buffer",
        )
    if stubborn:
        # The sandbox's PID namespace ends them with the bot; without one they would stay.
        run.fail(
            "exits when input closes",
            f"runs {len(stubborn)} process(es) that ignore SIGTERM, which would outlive it: {', '.join(stubborn)}",
        )
        return
    await trio.sleep(0.05)
    left = _bot_processes(folder, process.pid)
    if left:
        run.fail("exits when input closes", f"exited, but left {len(left)} process(es) running in its folder")
    else:
        result.detail = f"exit code {process.returncode}"


async def _held_output(process: BotProcess) -> bytes:
    """What the exited bot's stdout still delivers: whole lines and an unfinished one, up to 64 KiB."""
    held = bytearray()
    with trio.move_on_after(0.5):
        while len(held) < 65536:
            try:
                held += await process.reader.readline() + b"\n"
            except StreamClosed as closed:
                # The last line never got its newline: its bytes are in the message only as a count.
                if "middle of a line" in str(closed):
                    held += f"<{str(closed).rsplit('(', 1)[-1].rstrip(')')} of an unfinished line>".encode()
                break
            except (ProtocolViolation, trio.BrokenResourceError, trio.ClosedResourceError):
                break
    return bytes(held)


def _thinking(run: _Run, settings: RefereeSettings) -> Thinking:
    times = run.recorder.thinking_ms if run.recorder is not None else []
    if not times:
        return Thinking(decisions=0, median_ms=0.0, p95_ms=0.0, max_ms=0.0)
    thinking = Thinking(
        decisions=len(times),
        median_ms=round(statistics.median(times), 2),
        p95_ms=round(_percentile(times, 0.95), 2),
        max_ms=round(max(times), 2),
    )
    result = run.result("time")
    if result.status == "pass":
        move = settings.time.move_ms
        if thinking.max_ms > move:
            run.fail("time", f"its slowest decision took {thinking.max_ms:.0f} ms, over move_ms {move} (the bank paid)")
        elif thinking.p95_ms > move / 2:
            run.fail("time", f"95% of its decisions took up to {thinking.p95_ms:.0f} ms, over half of move_ms {move}")
        else:
            result.detail = f"median {thinking.median_ms} ms, p95 {thinking.p95_ms} ms, max {thinking.max_ms} ms"
    stderr = run.result("stderr")
    if stderr.status == "pass":
        stderr.detail = f"at most {run.stderr_max} bytes in one game"
    return thinking
