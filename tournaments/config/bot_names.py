"""A bot as a host names it (``famiglia play``, ``check-bot``, a tournament's ``bot``), and what a mistaken name meant.

``referee.bots.load_bot`` reads a folder or a command line. Two names it cannot
read are a host's mistake with a known fix, said here in their own words
instead of "not a folder with bot.toml, nor a command found on PATH":

- ``~``: no shell reads a bot's path or command, and docs/bots.md says so: no
  ``$VARIABLES``, no ``~``. ``~/bots/mine`` would be a folder named ``~`` in the
  working folder, and ``python3 ~/bot.py`` would hand the bot's interpreter a
  literal ``~``. Refused, naming the full path to write instead; not expanded,
  which would make ``~`` work in some places famiglia reads a command and not in
  others (a bot.toml's ``command``, a bot's own arguments).
- ``human``: the person at the terminal is a seat only ``famiglia play`` gives;
  a tournament or check-bot plays bots.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from referee.bots import BotSpec, BotSpecError, load_bot
from tournaments.human import HUMAN

__all__ = ["load_named_bot", "tilde_problem"]


def load_named_bot(text: str, *, base: Path | None = None) -> BotSpec:
    """``load_bot(text, base=base)``; BotSpecError in words of their own for ``~`` and ``human``."""
    if (problem := tilde_problem(text, base)) is not None:
        raise BotSpecError(problem)
    try:
        return load_bot(text, base=base)
    except BotSpecError:
        if text.strip() == HUMAN:
            raise BotSpecError(
                f"{HUMAN!r} is you at this terminal, a seat only `famiglia play` gives "
                f"(famiglia play vendetta {HUMAN} BOT BOT); here give a bot: a folder with bot.toml, "
                "or a command line in quotes"
            ) from None
        raise


def tilde_problem(text: str, base: Path | None = None) -> str | None:
    """Why ``text`` cannot mean what it says: a word of it starts with ``~``, which nothing expands; else None.

    A word naming something that is there (a folder called ``~`` in ``base``) is taken as it is.
    """
    try:
        words = shlex.split(text)
    except ValueError:
        return None  # load_bot says what is wrong with its quotes
    root = base if base is not None else Path.cwd()
    for index, word in enumerate(words):
        if not word.startswith("~") or (root / word).exists():
            continue
        said = f"{text!r}: ~ is not expanded here (no shell reads a bot's path or command); write the full path"
        head, slash, rest = word.partition("/")
        home = os.path.expanduser(head)
        if home == head:  # ~user of no such user: no full path to offer
            return said
        expanded = home + slash + rest
        if word in text:  # as the host wrote it, quotes and spaces kept
            full = text.replace(word, expanded, 1)
        else:
            full = shlex.join([expanded if at == index else each for at, each in enumerate(words)])
        return f"{said}, {full!r}"
    return None
