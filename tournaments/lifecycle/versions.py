"""What an entrant's bot is, by content: the fingerprint a run records with every game.

An entrant is a name; the code behind it can be edited in place between two
runs. A run fingerprints each entrant's bot when it starts (``Store.settle_versions``
compares it with what the store has seen), so a result always belongs to the
code that earned it.

- A bot folder (``bot.toml``): the SHA-256 of the folder packed as its build and a
  Dask worker receive it (``referee.bot_folder.pack_folder``). A build's output is
  made from that content and cached by it (``referee.build``), so the content
  names the output too; what it does not see is a toolchain that builds the same
  sources differently.
- A command line: the files its words name that exist (the script, the jar, the
  binary, a weights file), each word with the SHA-256 of the file's content. The
  interpreter famiglia runs on is left out: it is the host's runtime, and its path
  depends on how famiglia was started. A word that names no file adds nothing:
  the command itself is compared by ``tournaments.lifecycle.growth``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Collection
from pathlib import Path

import msgspec

from referee.bot_folder import pack_folder
from referee.bots import BotSpec, BotSpecError, load_bot
from tournaments.config.tournament import TournamentConfig
from tournaments.store import Store

__all__ = ["bot_fingerprint", "settle_versions"]

_INTERPRETERS = {os.path.realpath(sys.executable), os.path.realpath(getattr(sys, "_base_executable", sys.executable))}


def bot_fingerprint(bot: BotSpec) -> str:
    """The content fingerprint of ``bot`` ("folder:<sha256>" or "files:<sha256>"); BotSpecError if unreadable."""
    folder = Path(bot.cwd)
    try:
        if _is_folder_bot(bot):
            return "folder:" + pack_folder(folder)[0]
        named = [(word, _file_digest(path)) for word, path in _named_files(bot)]
    except OSError as exc:
        raise BotSpecError(f"{bot.name}: its bot could not be read to fingerprint it: {exc.strerror or exc}") from None
    return "files:" + hashlib.sha256(msgspec.json.encode(named)).hexdigest()


def settle_versions(store: Store, config: TournamentConfig, new_versions: Collection[str] = ()) -> list[int]:
    """Fingerprint every entrant's bot and find (or record) the version it plays as; by entrant, in store order.

    ``config`` has its entrants in the store's order (``tournaments.lifecycle.growth.align_entrants``).
    ``new_versions``: entrants whose changed bot is recorded as a new version;
    ValueError for a name that is no entrant's. BotChanged (one line) for a
    changed bot of an entrant with results that is not among them.
    """
    names = [entrant.name for entrant in config.entrants]
    unknown = [name for name in new_versions if name not in names]
    if unknown:
        raise ValueError(
            f"--new-version {unknown[0]!r}: no entrant of this tournament has that name; entrants: {', '.join(names)}"
        )
    # One bot may hold several entries (the demo's extra seats): packed once.
    known: dict[tuple[str, tuple[str, ...]], str] = {}
    for entrant in config.entrants:
        key = (entrant.bot.cwd, tuple(entrant.bot.command))
        if key not in known:
            known[key] = bot_fingerprint(entrant.bot)
    fingerprints = [known[(entrant.bot.cwd, tuple(entrant.bot.command))] for entrant in config.entrants]
    if config.format.kind == "head-to-head":
        _keep_the_pair_under_test(store, config, fingerprints, new_versions)
    return store.settle_versions(fingerprints, new_versions=new_versions)


def _keep_the_pair_under_test(
    store: Store, config: TournamentConfig, fingerprints: list[str], new_versions: Collection[str]
) -> None:
    """ValueError for a new version of a head-to-head's A or B: its sequential test reads one version of each."""
    names = [entrant.name for entrant in config.entrants]
    seen = store.bot_versions()
    for name in (config.format.a, config.format.b):
        if name is None or name not in new_versions:
            continue
        entrant = names.index(name)
        if seen.get(entrant) and fingerprints[entrant] not in seen[entrant]:
            raise ValueError(
                f"--new-version {name!r}: {name} is under test in this head-to-head, whose verdict holds for the "
                "version that played it; test the changed bot in a new results database (--db)"
            )


def _is_folder_bot(bot: BotSpec) -> bool:
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
