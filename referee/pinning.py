"""What a bot is, by content, and the check that the code a process starts is the code a run pinned.

A run fingerprints each entrant's bot once, when it starts, and records every
game under that version (``tournaments.lifecycle.versions``). Each bot keeps
that fingerprint as its ``BotSpec.pin``, and every start of a bot process
checks it (``check_pin``): a bot edited in place while a run goes on stops
the run (``BotChangedDuringRun``) instead of having the new code's games
recorded as the old version's.

- A bot folder (``bot.toml``): "folder:" and the SHA-256 of the folder packed as
  its build and a Dask worker receive it (``referee.bot_folder.pack_folder``). A
  built bot runs from a copy named by that content (``referee.build``): the build
  checks the pin once and the copy needs none after it.
- A command line: "files:" and the SHA-256 of the files its words name that exist
  (the script, the jar, the binary, a weights file), each with its content's
  SHA-256. The interpreter famiglia runs on is left out: it is the host's runtime,
  and its path depends on how famiglia was started.

Hashing a large bot at every process start would cost a cold-start run dearly:
a fingerprint is remembered with the size, times and inode of every entry it
read, and hashed again only when one of them moved.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from pathlib import Path

import msgspec

from referee.bot_folder import SKIPPED_NAMES, pack_folder, walk_entries
from referee.bots import BotSpec, BotSpecError, load_bot

__all__ = ["BotChangedDuringRun", "bot_fingerprint", "check_pin", "is_folder_bot"]

_INTERPRETERS = {os.path.realpath(sys.executable), os.path.realpath(getattr(sys, "_base_executable", sys.executable))}


class BotChangedDuringRun(BotSpecError):
    """A bot's files changed after its run pinned them: the run stops (a setup fault, like a missing bot)."""

    def __init__(self, name: str, pinned: str, found: str) -> None:
        self.name, self.pinned, self.found = name, pinned, found
        super().__init__(
            f"entrant {name!r}'s bot changed during this run ({_short(pinned)} when the run started, {_short(found)} "
            f"now): its finished games are kept as the version that played them; put its files back and run the "
            f"same command to go on, or run again with --new-version {name} to record the changed bot as a new version"
        )

    def __reduce__(self) -> tuple[type[BotChangedDuringRun], tuple[str, str, str]]:
        # Raised in a worker process, it reaches the host whole.
        return (BotChangedDuringRun, (self.name, self.pinned, self.found))


def _short(fingerprint: str) -> str:
    kind, _, digest = fingerprint.partition(":")
    return f"{kind} {digest[:12]}"


def is_folder_bot(bot: BotSpec) -> bool:
    """Whether ``bot`` is the bot of the folder it runs in (its bot.toml), not a command line run there."""
    if bot.build is not None:
        return True  # only a bot.toml gives a build
    if not (Path(bot.cwd) / "bot.toml").is_file():
        return False
    try:
        manifest = load_bot(bot.cwd, check_program=False)
    except BotSpecError:
        return False
    return manifest.command == bot.command


def bot_fingerprint(bot: BotSpec) -> str:
    """The content fingerprint of ``bot`` ("folder:<sha256>" or "files:<sha256>"); BotSpecError if unreadable."""
    try:
        if is_folder_bot(bot):
            return "folder:" + pack_folder(Path(bot.cwd))[0]
        named = [(word, _file_digest(path)) for word, path in _named_files(bot)]
    except OSError as exc:
        raise BotSpecError(f"{bot.name}: its bot could not be read to fingerprint it: {exc.strerror or exc}") from None
    return "files:" + hashlib.sha256(msgspec.json.encode(named)).hexdigest()


_Signature = tuple[tuple[str, int, int, int, int], ...]
_remembered: dict[tuple[str, tuple[str, ...]], tuple[_Signature, str]] = {}
_remembered_lock = threading.Lock()  # bots start from several threads of one process (trio.to_thread)


def check_pin(bot: BotSpec) -> None:
    """Nothing when ``bot`` has no pin or its files still have the pinned content; else BotChangedDuringRun."""
    if bot.pin is None:
        return
    key = (bot.cwd, tuple(bot.command))
    try:
        signature = _signature(bot)
    except OSError as exc:
        raise BotSpecError(f"{bot.name}: its bot could not be read to check it: {exc.strerror or exc}") from None
    with _remembered_lock:
        known = _remembered.get(key)
    if known is not None and known[0] == signature:
        found = known[1]
    else:
        found = bot_fingerprint(bot)
        with _remembered_lock:
            _remembered[key] = (signature, found)
    if found != bot.pin:
        raise BotChangedDuringRun(bot.name, bot.pin, found)


def _signature(bot: BotSpec) -> _Signature:
    """Size, change times, inode and mode of every entry the fingerprint reads (a superset for a folder)."""
    if is_folder_bot(bot):
        entries = walk_entries(Path(bot.cwd), skip=SKIPPED_NAMES)
    else:
        entries = ((str(path), os.stat(path)) for _, path in _named_files(bot))
    return tuple(
        (path, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino ^ (info.st_mode << 32))
        for path, info in entries
    )


def _named_files(bot: BotSpec) -> list[tuple[str, Path]]:
    """The words of ``bot``'s command that name an existing file (relative to its folder), interpreter left out."""
    found = []
    for word in bot.command:
        path = Path(word) if os.path.isabs(word) else Path(bot.cwd) / word
        if path.is_file() and os.path.realpath(path) not in _INTERPRETERS:
            found.append((word, path))
    return found


def _file_digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
