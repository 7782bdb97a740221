"""Building a bot before its first game, inside the same sandbox it will play in.

A build command is a stranger's code as much as the bot is (a Makefile runs
anything), so it runs at the bot's sandbox level: no network, the host's files
out of sight, only the bot's own folder writable (``referee.sandbox.prepare_build``).
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import msgspec

from referee.bots import BotBuildFailed, BotSpec, BotSpecError, resolve_program
from referee.sandbox import prepare_build
from referee.sandbox.view import foreign_program, unreadable_by_others
from referee.settings import DEFAULT_SETTINGS, RefereeSettings

__all__ = ["build_bot", "check_sandbox_view"]


def build_bot(spec: BotSpec, settings: RefereeSettings = DEFAULT_SETTINGS, *, timeout_s: float = 300.0) -> BotSpec:
    """Run the bot's build command (if any) in its folder, sandboxed; the spec ready to start."""
    if spec.build is None:
        return spec
    launch = prepare_build(spec, settings)
    try:
        done = subprocess.run(
            launch.argv,
            cwd=spec.cwd,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
            check=False,
            env=settings.bot_environment(),
            pass_fds=launch.pass_fds,
        )
    except FileNotFoundError:
        raise BotBuildFailed(f"{spec.name}: build command {spec.build[0]!r} not found") from None
    except subprocess.TimeoutExpired:
        raise BotBuildFailed(f"{spec.name}: build took longer than {timeout_s:.0f} s") from None
    finally:
        launch.release()
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise BotBuildFailed(f"{spec.name}: build failed (exit {done.returncode}): {' | '.join(tail)[:600]}")
    _drop_set_id_bits(Path(spec.cwd))
    argv = resolve_program(spec.command, Path(spec.cwd), spec.name)
    return msgspec.structs.replace(spec, command=argv, build=None)


def _drop_set_id_bits(folder: Path) -> None:
    """Clear setuid and setgid bits a build left in the bot's folder.

    As root a build keeps uid 0 (without capabilities), and the owner of a
    file may set its setuid bit: a setuid-root program in the bot's folder
    would be a way up for any local user of the host. Symbolic links are not
    followed.
    """
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode) and mode & (stat.S_ISUID | stat.S_ISGID):
                os.chmod(path, stat.S_IMODE(mode) & ~(stat.S_ISUID | stat.S_ISGID), follow_symlinks=False)


def check_sandbox_view(spec: BotSpec, settings: RefereeSettings = DEFAULT_SETTINGS) -> None:
    """BotSpecError when the sandbox could not show a bot its program, or its own uid could not read its files."""
    if settings.sandbox == "none":
        return
    foreign = foreign_program(spec)
    if foreign is not None:
        raise BotSpecError(
            f"{spec.name}: its program {foreign} lies outside its own folder, the system folders and PATH; "
            "the sandbox shows a bot only those: put the program in the bot's folder or on PATH"
        )
    blocked = unreadable_by_others(spec)
    if blocked is not None:
        raise BotSpecError(
            f"{spec.name}: {blocked} is not readable by other users, and the bot runs as a uid of its own; "
            f"chmod -R o+rX {blocked}"
        )
