"""Text a bot controls, as Rich markup that prints it literally: shown, never obeyed.

A bot chooses its name, the reasons its terminations quote, its log lines; a
tournament file or a bot.toml may be a bot author's too. Wherever famiglia
prints such text through Rich (the command line, the human seat at a terminal),
it goes through ``shown`` first. Here, below both, so that neither imports the
other for it.
"""

from __future__ import annotations

from rich.markup import escape

from protocol.untrusted import MAX_REASON_CHARS, terminal_text

__all__ = ["NAME_CHARS", "TEXT_CHARS", "shown"]

NAME_CHARS = 100
"""The most characters of a bot's or an entrant's name shown in one place."""
TEXT_CHARS = 2 * MAX_REASON_CHARS
"""The most characters of other bot text shown at once (a log line, an answer, a detail, an error):
room for a whole termination reason and what is said around it."""


def shown(text: str, limit: int = TEXT_CHARS) -> str:
    """Text a bot (or a file a bot may have written) controls, as Rich markup that prints it literally.

    The one place where famiglia turns such text into terminal text (the command line, the human seat):
    ``protocol.untrusted.terminal_text`` makes every control character visible and
    bounds the length to ``limit`` (saying what was cut), then Rich's markup is
    escaped, so ``[link=...]`` shows as those characters instead of becoming a link.

    The convention: the result is markup, to be printed where Rich reads markup
    (``console.print`` with its default ``markup=True``, a Table's cells, titles and
    headers, a rule's title) and nowhere else, since printed with ``markup=False`` its
    escaping backslashes would show. Build a line of trusted markup and ``shown``
    pieces in one f-string; never call it twice on the same text.
    """
    plain = terminal_text(text, limit)
    body = plain.rstrip("\\")
    markup = escape(body)
    if trailing := len(plain) - len(body):
        # Rich reads backslashes as escapes only right before a tag: a trailing run
        # would escape a tag the caller puts after it, and doubled (as escape()
        # doubles one) it shows twice before plain text. Doubled and closed off by
        # an empty span, it shows as written whatever follows.
        markup += "\\" * (2 * trailing) + "[none][/none]"
    return markup
