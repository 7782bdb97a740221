"""The driver: build the bot, play every game of the check, and hand each failure to the verdicts.

Every game is played by the referee's own ``run_match``: the bot under check
in one seat as a real process behind a ``Transcript`` (kept warm from game to
game, like a tournament does), random in-process seats in the others. The
games come from the game's own ``GameRules`` hooks: a whole game, every table
size and variant set (``variant_games``), one forced position per target
(referee.games.checkbot), then a fresh process (restart) and the bot's exit
when its input closes. What a game's end means is the verdicts' to say.

A failure stops no later game that can still be played, so a first try shows
every problem: a game is skipped only when an earlier check it needs failed
(the bot does not start, or its lines stay in its output buffer), and the
skip says which and why. One bound: after two games in a row that ended on a
timeout, or two on a stall (output closed, process still running), the rest are
skipped too, as each would cost its whole clock again to show the same fault.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import trio

from protocol.codec import ProtocolViolation
from referee.bots import BotBuildFailed, BotSpec, BotSpecError
from referee.build import build_bot, check_sandbox_view
from referee.channel import BotChannel, DeadBot
from referee.errors import BotError
from referee.games import get_rules
from referee.games.base import GameRules
from referee.games.checkbot import find_position
from referee.match import MatchSpec, run_match
from referee.process import BotProcess
from referee.seats import WarmPool, open_pool
from referee.settings import RefereeSettings
from tournaments.hosting.checkbot.probes import (
    WATCHED_FILES,
    bot_processes,
    changed_files,
    folder_snapshot,
    held_output,
    ignoring_sigterm,
)
from tournaments.hosting.checkbot.report import CheckReport, CheckResult, startup_over, thinking_over
from tournaments.hosting.checkbot.seats import RandomSeat
from tournaments.hosting.checkbot.transcript import Transcript
from tournaments.hosting.checkbot.verdicts import CHECKS, FIXES, JUDGED_OVER_THE_RUN, Verdicts, needs

__all__ = ["TIMEOUTS_IN_A_ROW", "CheckGame", "CheckRun", "check_bot", "variant_games"]

TIMEOUTS_IN_A_ROW = 2
"""After this many games in a row ended on the bot's timeout (or its stall), the remaining games are not played."""
CLOCK_COSTLY = ("timeout", "stall")
"""The ends that cost a game its bot's whole clock: a stall is waited out as a timeout is."""


class CheckGame(msgspec.Struct, kw_only=True):
    """One game of the check: the check it belongs to, the table, where the bot sits."""

    check: str
    players: int
    seat: int
    variants: dict[str, str] = {}
    state: Any = None
    note: str = ""


def variant_games(rules: GameRules) -> list[CheckGame]:
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
            CheckGame(
                check=f"{players} players" if i < len(sizes) else f"{players} players, {described}",
                players=players,
                seat=seat,
                variants=chosen,
                note=f"seat {seat}, {described}",
            )
        )
    return games


class CheckRun:
    """One check of one bot: the warm process behind its transcript, the verdicts, the games played."""

    def __init__(self, bot: BotSpec, game: str, settings: RefereeSettings, pool: WarmPool) -> None:
        self.bot = bot
        self.game = game
        self.rules = get_rules(game)
        self.settings = settings
        self.pool = pool
        self.verdicts = Verdicts(self.rules, settings.clock.time.startup_ms)
        self.transcript: Transcript | None = None
        self.games = 0
        self.blocked = ""
        """Why no later game can be played ("" while they can), as the checks it skips say."""
        self.timeouts_in_a_row = 0
        self.last_costly = ""
        self.fresh_each_game = False
        """A warm process failed its next start: each later game is played on a fresh one."""
        self.exits_after_game = False
        self.process_games = 0  # games the current process has played
        self.warm_starts = 0  # games started on a process that had played before
        self.stderr_max = 0

    async def fresh_process(self) -> Transcript:
        """Close the current process (if any) and start another one.

        The processes live in the pool's nursery (referee.seats), not in the
        task that asks: ``replace`` runs inside ``run_match``'s own nursery.
        """
        if self.transcript is not None:
            self.pool.discard(self.transcript.process)
        self.process_games = 0
        process = await self.pool.acquire(self.bot, fresh=True)
        if isinstance(process, DeadBot):
            raise process.error
        assert isinstance(process, BotProcess)
        if self.transcript is None:
            self.transcript = Transcript(process, self.patience, cpu_clock=self.settings.clock.mode == "cpu")
        else:
            self.transcript.swap(process)
        return self.transcript

    def patience(self, startup: bool) -> float:
        """Seconds to wait, input open, for an answer past its deadline: long enough to tell slow from unflushed.

        A start-up gets its limit once more (at least 2 s, at most a minute), so
        the time a slow starter needs can be measured; a decision gets its whole
        clock once more, from 0.5 to 3 s.
        """
        clock = self.settings.clock.time
        if startup:
            return min(60.0, max(2.0, clock.startup_ms / 1000))
        return min(3.0, max(0.5, (clock.move_ms + clock.bank_ms) / 1000))

    async def replace(self, seat: int) -> BotChannel | None:
        """The warm process broke at the next start: a fresh one, as the pool does.

        A clean exit (code 0) after ``end`` is allowed by the protocol; anything
        else (an exit code, a signal, a process that closed its output and hangs)
        fails warm reuse, and the check goes on with the fresh process.
        """
        assert self.transcript is not None
        if self.process_games == 0:
            return None  # a process that never played: its failure is the startup's
        code = self.transcript.process.process.returncode
        if code == 0:
            self.exits_after_game = True
        else:
            status = "still running" if code is None else f"exit code {code}"
            self.verdicts.fail(
                "warm reuse", f"after {self.process_games} game(s) it failed at the next start ({status})"
            )
        return await self.fresh_process()

    async def play(self, entry: CheckGame, seed: int) -> None:
        """Play one game and charge whatever went wrong to the check it breaks."""
        if self.blocked:
            self.verdicts.skip_unjudged([entry.check], self.blocked)
            return
        transcript = self.transcript
        assert transcript is not None
        exited = transcript.process.process.returncode is not None
        if transcript.process.healthy and exited and self.process_games > 0:
            await self.replace(entry.seat)  # it exited after its last game: judged there
        elif not transcript.process.healthy or exited or (self.fresh_each_game and self.process_games > 0):
            # Stopped by the referee after a failure, or a process that cannot start a second game.
            try:
                transcript = await self.fresh_process()
            except BotError as error:
                self.verdicts.fail("restart", f"a fresh process did not start: {error.kind}: {error.reason}")
                self.blocked = needs("restart", "a fresh process of the bot does not start")
                self.verdicts.skip_unjudged([entry.check], self.blocked)
                return
        transcript.late_lines.clear()
        transcript.late_ms = None
        if self.process_games:
            self.warm_starts += 1
        channels: list[BotChannel] = [RandomSeat(f"random{i}") for i in range(entry.players)]
        channels[entry.seat] = transcript
        spec = MatchSpec(game=self.game, seed=seed, variants=entry.variants, match=f"check-{self.game}-{seed}")
        before = transcript.process.stderr.total
        record = await run_match(spec, channels, self.settings, replace=self.replace, initial_state=entry.state)
        self.games += 1
        written = transcript.process.stderr.total - before
        self.stderr_max = max(self.stderr_max, written)
        failed = [t for t in record.result.terminations if t.seat == entry.seat]
        kind = failed[0].kind if failed and failed[0].kind in CLOCK_COSTLY else ""
        self.timeouts_in_a_row = self.timeouts_in_a_row + 1 if kind and kind == self.last_costly else int(bool(kind))
        self.last_costly = kind
        if failed:
            termination = failed[0]
            did = f"{termination.kind}: {termination.reason}"
            if termination.request:
                did += f" (at a {transcript.decision} decision; game: {entry.players} players, {entry.note})"
            if termination.request == 0 and self.process_games > 0:
                self.fresh_each_game = True
            self.blocked = self.verdicts.charge(
                entry.check, termination.kind, did, termination.request, transcript, self.process_games
            )
            if not self.blocked and self.timeouts_in_a_row >= TIMEOUTS_IN_A_ROW:
                self.blocked = (
                    f"not run: the last {self.timeouts_in_a_row} games ended on a {kind}, so each later game "
                    f'would cost its whole clock again (see "{"time" if kind == "timeout" else entry.check}")'
                )
            return
        self.process_games += 1  # counted once the game went well: a failed process is replaced
        self.verdicts.result(entry.check).detail = entry.note
        await self.listen_after_end(transcript)

    async def listen_after_end(self, transcript: Transcript) -> None:
        """Nothing may come after ``end``: a line now is an answer nobody asked for."""
        with trio.move_on_after(0.05):
            try:
                line = await transcript.process.readline()
            except BotError:
                return  # it exited after end: valid, it is started again
            except ProtocolViolation as exc:
                line = str(exc).encode()
            self.verdicts.fail("nothing unasked", f"sent {line[:120]!r} after end, with no request open")
            await transcript.process.kill()


async def check_bot(
    bot: BotSpec,
    game: str,
    settings: RefereeSettings,
    *,
    progress: Callable[[str], None] = lambda name: None,
) -> CheckReport:
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
        build.fix = f'{FIXES["build"]} (PROTOCOL.md, section "{CHECKS["build"][1]}")'
        return CheckReport(
            bot=bot.name,
            game=game,
            passed=False,
            checks=[build],
            thinking=thinking_over([]),
            startup=startup_over([], settings.clock.time.startup_ms),
            games=0,
            seconds=round(trio.current_time() - began, 2),
        )
    folder = Path(bot.cwd)  # the folder it runs from: its built copy when it has a build
    files_before = folder_snapshot(folder)
    async with open_pool(settings) as pool:
        run = CheckRun(bot, game, settings, pool)
        await _play_every_game(run, folder, progress)
    files_after = folder_snapshot(folder)
    verdicts = run.verdicts
    if files_before is None or files_after is None:
        watched = verdicts.result("own folder untouched")
        watched.status, watched.detail = "skip", f"{folder} holds over {WATCHED_FILES} files: not watched"
    elif changed := changed_files(files_before, files_after):
        verdicts.fail("own folder untouched", f"changed {', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''}")
    times = run.transcript.thinking_ms if run.transcript is not None else []
    thinking = thinking_over(times)
    if times:
        verdicts.judge_time(thinking, settings.clock.time.move_ms)
        verdicts.note_stderr(run.stderr_max)
    else:  # not one decision answered to judge them by
        verdicts.skip_unjudged(
            JUDGED_OVER_THE_RUN, run.blocked or "not judged: the bot answered no request in any game"
        )
    checks = list(verdicts.results.values())
    return CheckReport(
        bot=bot.name,
        game=game,
        passed=all(result.status != "fail" for result in checks),
        checks=checks,
        thinking=thinking,
        startup=startup_over(
            run.transcript.startup_ms if run.transcript is not None else [], settings.clock.time.startup_ms
        ),
        games=run.games,
        seconds=round(trio.current_time() - began, 2),
    )


async def _play_every_game(run: CheckRun, folder: Path, progress: Callable[[str], None]) -> None:
    """The games of the check, in order: start-up, a whole game, the sizes and variants, the forced
    positions, then a fresh process and its exit."""
    verdicts = run.verdicts
    for name in ("build", "startup", "whole game", *CHECKS):
        verdicts.result(name)
    progress("startup")
    try:
        await run.fresh_process()
    except BotError as error:
        verdicts.fail("startup", f"{error.kind}: {error.reason}")
        run.blocked = needs("startup", "the bot does not start")
    progress("whole game")
    rules = run.rules
    await run.play(CheckGame(check="whole game", players=rules.min_players, seat=0, note="seat 0"), seed=1)
    for i, entry in enumerate(variant_games(rules)):
        progress(entry.check)
        await run.play(entry, seed=10 + i)
    targets = rules.checkbot_targets()
    verdicts.forced.update(target.name for target in targets)
    for i, target in enumerate(targets):
        progress(target.name)
        if run.blocked:  # the seeded search costs seconds: not made for a game that is not played
            verdicts.skip_unjudged([target.name], run.blocked)
            continue
        forced = find_position(rules, target)
        if forced is None:
            verdicts.result(target.name).status = "skip"
            verdicts.result(target.name).detail = "no such position found in the seeded search"
            continue
        entry = CheckGame(
            check=target.name,
            players=forced.players,
            seat=forced.seat,
            variants=forced.variants,
            state=forced.state,
            note=f"{target.what}: seed {forced.seed}, after {forced.steps} decisions, seat {forced.seat}",
        )
        await run.play(entry, seed=100 + i)
    _note_warm_reuse(run)
    progress("restart")
    await _check_restart(run)
    progress("exits when input closes")
    await _check_exit(run, folder)


def _note_warm_reuse(run: CheckRun) -> None:
    """Say how warm reuse passed, or that no game showed it."""
    warm = run.verdicts.result("warm reuse")
    if warm.status != "pass":
        return
    if run.blocked and not run.warm_starts and not run.exits_after_game:
        warm.status, warm.detail = "skip", run.blocked
    elif run.exits_after_game:
        warm.detail = "exits after each game (valid: it was started again)"
    elif run.warm_starts:
        warm.detail = f"{run.warm_starts} games started on a process that had played before"
    else:
        warm.status, warm.detail = "skip", "not judged: no game ended normally, so no process was reused"


async def _check_restart(run: CheckRun) -> None:
    if run.blocked:
        run.verdicts.skip_unjudged(["restart"], run.blocked)
        return
    try:
        await run.fresh_process()
    except BotError as error:
        run.verdicts.fail("restart", f"a fresh process did not start: {error.kind}: {error.reason}")
        return
    rules = run.rules
    await run.play(CheckGame(check="restart", players=rules.max_players, seat=1, note="a new process, seat 1"), seed=2)


async def _check_exit(run: CheckRun, folder: Path) -> None:
    """Close the bot's input: it must exit within the grace time and leave no process working in its folder."""
    result = run.verdicts.result("exits when input closes")
    transcript = run.transcript
    if run.blocked or transcript is None:
        run.verdicts.skip_unjudged([result.name], run.blocked or needs("startup", "the bot does not start"))
        return
    if not transcript.process.healthy or transcript.process.process.returncode is not None:
        # The last process was stopped after a failure: a fresh one, whose input closes at once.
        try:
            transcript = await run.fresh_process()
        except BotError as error:
            run.verdicts.skip_unjudged([result.name], f"not run: a fresh process did not start ({error.reason})")
            return
    process = transcript.process.process
    stubborn = ignoring_sigterm(folder, process.pid)
    grace = run.settings.grace_ms / 1000
    if process.stdin is not None:
        with trio.move_on_after(grace):
            await process.stdin.aclose()
    with trio.move_on_after(grace):
        await process.wait()
    if process.returncode is None:
        run.verdicts.fail("exits when input closes", f"still running {grace:g} s after its input closed")
        return
    if held := await held_output(transcript.process):
        # A bot that flushes each line has nothing left to say after end; this was
        # in its buffer: written earlier, delivered only when the buffer filled or
        # the process exited (its answers arrive in bursts, or late).
        run.verdicts.fail(
            "flushes each line",
            f"{len(held)} bytes came out only when its input closed and it exited ({held[:80]!r}...): "
            "lines it wrote earlier were still in its output buffer",
        )
    if stubborn:
        # The sandbox's PID namespace ends them with the bot; without one they would stay.
        run.verdicts.fail(
            "exits when input closes",
            f"runs {len(stubborn)} process(es) that ignore SIGTERM, which would outlive it: {', '.join(stubborn)}",
        )
        return
    await trio.sleep(0.05)
    left = bot_processes(folder, process.pid)
    if left:
        run.verdicts.fail("exits when input closes", f"exited, but left {len(left)} process(es) running in its folder")
    else:
        result.detail = f"exit code {process.returncode}"
