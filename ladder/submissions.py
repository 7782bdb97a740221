"""A queued submission made ready or turned away: unpack, build, check-bot, verdict.

The upload (already inspected by ``ladder.upload``) goes through the same
door as every shipped bot: ``referee.build.build_package`` unpacks it into
the build cache (names and links checked again, set-id bits dropped), runs its
build command in the sandbox, and makes the copy safe for the bots' uids.
Then ``tournaments.hosting.checkbot`` plays it through every check. Only a version
that passes them all is accepted; whatever went wrong is its owner's to read:
the report, the reason (a failed build's first error line), and the build's
whole output, bounded (``referee.build.build_output``), which the verdict
carries for the ladder to keep with the version (``ladder.build_logs``).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import msgspec
import trio

from protocol.untrusted import bounded
from referee.bots import BotBuildFailed, BotSpec, BotSpecError, load_bot, resolve_program
from referee.build import (
    build_cache,
    build_output,
    build_package,
    check_sandbox_view,
    release_build,
    without_cache_path,
)
from referee.private import make_private_dirs, write_private
from referee.settings import RefereeSettings
from tournaments.hosting.checkbot.games import check_bot
from tournaments.hosting.checkbot.report import CheckReport

__all__ = [
    "CHECK_GAMES_BOUND",
    "Verdict",
    "check_seconds",
    "check_submission",
    "ready_bot",
    "save_upload",
    "upload_path",
]

CHECK_GAMES_BOUND = 12
"""How many whole worst-case games (start-up, bank and one decision, each to its wall backstop) one check
may take: more than check-bot plays, so a bot that only sleeps is turned away by check-bot itself, first."""


def check_seconds(settings: RefereeSettings) -> float:
    """The wall time one submission's check may take in all: ``CHECK_GAMES_BOUND`` games each at the clock's
    worst (the cpu clock's wall backstop over start-up, bank and a decision). Defaults: 12 x 5 x 16 s = 16 min."""
    clock = settings.clock
    worst_game_ms = clock.time.startup_ms + clock.time.bank_ms + clock.time.move_ms
    backstop = clock.backstop if clock.mode == "cpu" else 1.0
    return CHECK_GAMES_BOUND * backstop * worst_game_ms / 1000


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    accepted: bool
    reason: str
    """One line: why it was rejected, or what it passed."""
    report: str
    """The check-bot report as JSON; empty when the bot could not even be built."""
    build_output: str | None = None
    """What its build wrote (its first and last 32 KiB when longer); None when no build ran."""


def upload_path(uploads: Path, digest: str) -> Path:
    return uploads / f"{digest}.tar"


def save_upload(uploads: Path, digest: str, data: bytes) -> None:
    """Keep an upload (0600) under its hash before its version is recorded, so a restart finds it."""
    make_private_dirs(uploads)
    write_private(upload_path(uploads, digest), data)


def ready_bot(uploads: Path, digest: str, name: str, settings: RefereeSettings) -> BotSpec:
    """The version's bot ready to start (unpacked and built once per machine, in the cache).

    BotBuildFailed or BotSpecError with a one-line reason. Blocking: run it in a thread.
    """
    package = upload_path(uploads, digest).read_bytes()
    # What referee.bots and referee.build let through of a stranger's bot.toml, said as the entrant's
    # to fix rather than left to the loop's "the ladder could not check it".
    try:
        folder = build_package(digest, package, name, settings)
        built = load_bot(str(folder), check_program=False)
    except BotSpecError:  # a ValueError too: already the entrant's to read
        raise
    except RecursionError:  # tomllib reads nested arrays and tables by recursion
        raise BotSpecError(f"{name}: its bot.toml nests arrays or tables too deeply to be read") from None
    except ValueError as exc:  # a NUL character in the build command: the build cannot be started
        raise BotSpecError(f"{name}: its build command could not be started: {exc}") from None
    if any("\0" in part for part in built.command):
        raise BotSpecError(f"{name}: its command holds a NUL character")
    try:
        argv = resolve_program(built.command, folder, name)
    except OSError as exc:  # a program name too long to look up
        raise BotSpecError(
            f"{name}: its program {built.command[0][:100]!r} cannot be looked up ({exc.strerror})"
        ) from None
    spec = msgspec.structs.replace(built, name=name, command=argv, cwd=str(folder), build=None)
    check_sandbox_view(spec, settings)
    return spec


def _ready_or_released(uploads: Path, digest: str, name: str, settings: RefereeSettings) -> BotSpec:
    """``ready_bot``; a built copy that is not made a ready bot is let go, for the build cache to evict."""
    try:
        return ready_bot(uploads, digest, name, settings)
    except BaseException:
        release_build(build_cache() / f"{digest}-{settings.sandbox}")
        raise


async def _check_within(spec: BotSpec, game: str, settings: RefereeSettings, limit_s: float) -> CheckReport | None:
    """check-bot's report, or None when it did not finish within ``limit_s`` (its bots then stopped)."""
    with trio.move_on_after(limit_s):
        return await check_bot(spec, game, settings)
    return None


async def check_submission(
    uploads: Path, digest: str, name: str, game: str, settings: RefereeSettings, *, limit_s: float | None = None
) -> tuple[Verdict, BotSpec | None]:
    """Build and check one upload; the verdict, and the bot ready to play when it was accepted.

    The check (not the build, bounded by its own sandbox limits) ends after ``limit_s`` of wall time,
    ``check_seconds`` by default: cancelled inside its own Trio run, so its bots are stopped, not abandoned.
    """
    limit = check_seconds(settings) if limit_s is None else limit_s
    try:
        spec = await trio.to_thread.run_sync(_ready_or_released, uploads, digest, name, settings)
    except (BotBuildFailed, BotSpecError) as exc:
        output = await trio.to_thread.run_sync(_output_of, digest, settings)
        reason = f"build: {bounded(without_cache_path(str(exc)))}"
        return Verdict(accepted=False, reason=reason, report="", build_output=_shown(output)), None
    output = await trio.to_thread.run_sync(_output_of, digest, settings)
    # A Trio run of its own in a worker thread: check-bot's seeded position search is plain Python
    # that would hold the server's Trio thread for seconds; in a thread the web app keeps answering.
    # Abandoned on cancel (a server stopping): the check's bots then end with their closed pipes.
    report = await trio.to_thread.run_sync(
        lambda: trio.run(partial(_check_within, spec, game, settings, limit)), abandon_on_cancel=True
    )
    if report is None:
        release_build(Path(spec.cwd))
        reason = (
            f"check-bot: the check took longer than {limit:.0f} s in all, the ladder's bound on one check; "
            "make the bot answer well within its clock"
        )
        return Verdict(accepted=False, reason=reason, report=""), None
    if not report.passed:
        release_build(Path(spec.cwd))  # a refused version's copy is the cache's to evict
    return _verdict(report, output), (spec if report.passed else None)


def _shown(output: str | None) -> str | None:
    """A build's output as its author may read it: the host's build cache named by what it holds."""
    return None if output is None else without_cache_path(output)


def _output_of(digest: str, settings: RefereeSettings) -> str | None:
    """What the version's build wrote; None when none ran, or when the build cache cannot be read now
    (the verdict's reason then says why, and the output is only its owner's help)."""
    try:
        return build_output(digest, settings)
    except (BotSpecError, OSError):
        return None


def _verdict(report: CheckReport, output: str | None) -> Verdict:
    encoded = without_cache_path(msgspec.json.encode(report).decode())  # the host's paths are not the entrant's
    output = _shown(output)
    failed = [check for check in report.checks if check.status == "fail"]
    if not failed:
        said = f"passed check-bot ({report.games} games)"
        return Verdict(accepted=True, reason=said, report=encoded, build_output=output)
    first = failed[0]
    more = f" (and {len(failed) - 1} more failed checks)" if len(failed) > 1 else ""
    said = bounded(without_cache_path(f"check-bot: {first.name}: {first.detail}{more}"))
    return Verdict(accepted=False, reason=said, report=encoded, build_output=output)
