"""Which check a bot broke, and how to fix it: the checks, the causes, the fixes.

``CHECKS`` names every check with what the protocol wants and the PROTOCOL.md
section to read. A ``Verdicts`` keeps one ``CheckResult`` per check of a run
and charges each failure to the check whose rule it broke: a game's
termination, read together with what the ``Transcript`` kept of the bot's lines
(a wrong request id to "request ids", an answer nobody asked for to "nothing
unasked", a timeout whose answer appears once the input closes to "flushes each
line", a crash or an illegal action to the game it happened in), and the
figures measured over the whole run (thinking time, stderr).
"""

from __future__ import annotations

from collections.abc import Iterable

from referee.games.base import GameRules
from tournaments.hosting.checkbot.report import CheckResult, Thinking, needed_startup_ms
from tournaments.hosting.checkbot.transcript import Transcript

__all__ = ["CAUSE_FIXES", "CHECKS", "FIXES", "JUDGED_OVER_THE_RUN", "Verdicts", "cause_fix", "needs"]


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
JUDGED_OVER_THE_RUN = ("messages", "request ids", "nothing unasked", "flushes each line", "time", "stderr")
"""The checks judged over every game of the run, not in a game of their own: without a decision answered
in some game, nothing judges them."""
FIXES = {
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
CAUSE_FIXES: dict[str, tuple[str, str]] = {
    "crash": (
        (
            "it exited (or closed its input) in the middle of a game: the reason quotes its last stderr lines; "
            "run it by hand on the messages of that decision kind"
        ),
        "A game, message by message",
    ),
    "stall": ("keep stdout open until stdin closes, and keep answering", "A game, message by message"),
}


def cause_fix(kind: str, rules: GameRules, example: str = "") -> tuple[str, str] | None:
    """How to fix a game that ended on ``kind``, and the PROTOCOL.md section: None when the check's own fix fits.

    Besides the referee's termination kinds, two causes of a "messages" failure are
    told apart from a broken line: an action of the wrong shape (its fields, their
    JSON types) is read where the game's actions are described, a message of the
    wrong shape where the action message is. ``example`` is an answer of the right
    shape to the request that was answered wrongly (its first option), if it listed any.
    """
    if kind == "illegal":
        return rules.checkbot_illegal_fix(), rules.checkbot_section()
    if kind == "action shape":
        copy = f"one of the request's options copied unchanged (such as {example}), or " if example else ""
        fix = (
            f"answer with an action of the game's own shape: {copy}every field the section gives for it, each of "
            f"its JSON type (an integer as a JSON integer); famiglia schema {rules.name} prints every action as a "
            "JSON Schema"
        )
        return fix, rules.checkbot_section()
    if kind == "message shape":
        fix = (
            'send each answer as {"type":"action","id":<the request\'s id>,"action":{...}}: '
            '"id" a JSON integer, "action" a JSON object'
        )
        return fix, "action"
    return CAUSE_FIXES.get(kind)


def needs(check: str, because: str) -> str:
    """What a check that cannot run says: the earlier check it needs, and why that one failed."""
    return f'not run: it needs "{check}" to pass, and {because}'


class Verdicts:
    """The results of one run's checks, in the order they were first met, and the rules that fill them."""

    def __init__(self, rules: GameRules, startup_limit_ms: int) -> None:
        self.rules = rules
        self.startup_limit_ms = startup_limit_ms
        self.forced: set[str] = set()
        """The names of the forced-position checks (the game's targets)."""
        self.results: dict[str, CheckResult] = {}

    def result(self, name: str) -> CheckResult:
        if name not in self.results:
            self.results[name] = CheckResult(name=name)
        return self.results[name]

    def fail(self, name: str, detail: str, *, cause: str = "", example: str = "") -> None:
        """Fail check ``name``; ``cause``, a termination kind, picks the fix when it names the real fault
        (``example``: an answer of the right shape, for ``cause_fix``)."""
        result = self.result(name)
        if result.status == "fail":
            return  # the first failure says it
        if name in CHECKS:
            wanted, section = CHECKS[name]
        elif name in self.forced:
            wanted, section = "answer it with a legal action", self.rules.checkbot_section()
        else:  # a table size with its variants
            wanted, section = "play every table size and every variant", "start"
        fix = FIXES.get(name, "play every decision kind the section lists")
        if (by_cause := cause_fix(cause, self.rules, example)) is not None:
            fix, section = by_cause
        result.status = "fail"
        result.detail = detail
        result.wanted = wanted
        result.fix = f'{fix} (PROTOCOL.md, section "{section}")'

    def charge(self, check: str, kind: str, did: str, request: int, transcript: Transcript, process_games: int) -> str:
        """Charge a game's failure (``did``: the termination in words) to the check whose rule it broke.

        ``check`` is the game's own check, ``request`` the request it ended at (0:
        at its start), ``process_games`` the games the process had played before
        it. Returns why no later game can be played ("" when they can): only a bot
        that does not start, or whose answers stay in its output buffer, stops them.
        """
        late = b" ".join(transcript.late_lines)[:160]
        blocked = ""
        if kind == "timeout" and transcript.late_ms is not None and request == 0 and process_games == 0:
            # It answers, only later than the limit, with its input open: slow, not unflushed.
            self.fail(
                "startup",
                f"its ready came {transcript.late_ms:.0f} ms after it was started, over the startup limit of "
                f"{self.startup_limit_ms} ms",
            )
            needed = needed_startup_ms(transcript.startup_ms)
            self.result("startup").fix = (
                f"start faster (do slow setup after ready), or run where startup_ms is at least "
                f"{needed} (famiglia check-bot --startup-ms {needed}) "
                f'(PROTOCOL.md, section "{CHECKS["startup"][1]}")'
            )
            blocked = needs("startup", "the bot does not start within the startup limit")
        elif kind == "timeout" and transcript.late_ms is not None and request:
            self.fail("time", f"{did}; its answer came {transcript.late_ms:.0f} ms after the request, past its clock")
        elif kind == "timeout" and late.strip():
            waited = transcript.patience(request == 0)
            self.fail(
                "flushes each line",
                f"{did}; nothing came in {waited:g} s more with its input open, then {late!r} came out "
                "only when its input closed: written, but held in its output buffer",
            )
            blocked = needs("flushes each line", "its lines stay in its output buffer, so every game would time out")
            if request == 0 and process_games == 0:
                startup = self.result("startup")
                startup.status = "skip"
                startup.detail = "not judged: its ready was held in its output buffer (see flushes each line)"
        elif request == 0 and process_games > 0:
            self.fail("warm reuse", f"{did}, after {process_games} game(s) on the same process")
        elif kind == "timeout" and request == 0:
            waited = transcript.patience(True)
            self.fail("startup", f"{did}, nor in {waited:g} s more, nor when its input closed")
            blocked = needs("startup", "the bot does not start")
        elif kind == "timeout":
            self.fail("time", did)
        elif request == 0 and kind in ("crash", "stall"):
            self.fail("startup", did)
            blocked = needs("startup", "the bot does not start")
        elif kind == "protocol" and did.startswith("protocol: answered request "):
            answered = int(did.split()[3].rstrip(","))
            self.fail("nothing unasked" if answered in transcript.answered else "request ids", did)
        elif kind == "protocol" and did.startswith(("protocol: a second answer", "protocol: unasked output")):
            self.fail("nothing unasked", did)
        elif kind == "protocol" and "on stderr" in did:
            self.fail("stderr", did)
        elif kind == "protocol" and "before ready" in did:
            self.fail("nothing unasked", did)
        elif kind == "protocol" and " has the wrong shape: " in did:
            self.fail("messages", did, cause="action shape", example=transcript.first_option)
        elif kind == "protocol" and "wrong message shape" in did:
            self.fail("messages", did, cause="message shape")
        elif kind == "protocol":
            self.fail("messages", did)
        else:
            self.fail(check, did, cause=kind)
            return ""
        # A failure charged to a cross-cutting check leaves the game's own check unjudged.
        if check != "startup":
            self.skip_unjudged([check], blocked or "not judged: the game ended on a failure charged to another check")
        return blocked

    def skip_unjudged(self, names: Iterable[str], why: str) -> None:
        """Mark each of ``names`` that nothing failed as skipped, saying ``why``."""
        for name in names:
            result = self.result(name)
            if result.status == "pass":
                result.status, result.detail = "skip", why

    def judge_time(self, thinking: Thinking, move_ms: int) -> None:
        """The "time" check over the whole run, unless a timeout already failed it."""
        result = self.result("time")
        if result.status != "pass":
            return
        if thinking.max_ms > move_ms:
            self.fail(
                "time", f"its slowest decision took {thinking.max_ms:.0f} ms, over move_ms {move_ms} (the bank paid)"
            )
        elif thinking.p95_ms > move_ms / 2:
            self.fail(
                "time", f"95% of its decisions took up to {thinking.p95_ms:.0f} ms, over half of move_ms {move_ms}"
            )
        else:
            result.detail = f"median {thinking.median_ms} ms, p95 {thinking.p95_ms} ms, max {thinking.max_ms} ms"

    def note_stderr(self, most_bytes: int) -> None:
        """The "stderr" check passed: say how much the bot wrote in its most talkative game."""
        stderr = self.result("stderr")
        if stderr.status == "pass":
            stderr.detail = f"at most {most_bytes} bytes in one game"
