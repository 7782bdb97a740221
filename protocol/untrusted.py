"""Text that came from a bot, made safe to quote in a reason, a log line, the store or a terminal.

A bot controls every byte it sends, so anything of it that the harness repeats
(an excerpt of a bad line, a request id it claimed, its last stderr lines) is
cut to a bound and has its non-printable characters escaped: no reason grows
with what a bot sends, and none can move a terminal's cursor or forge a line.
``terminal_text`` is the one door from such text to a terminal: a bot's name,
its log lines, reasons and answers are shown through it, never obeyed.
"""

from __future__ import annotations

__all__ = ["MAX_REASON_CHARS", "MAX_SHOWN_CHARS", "bounded", "quote", "terminal_text"]

MAX_REASON_CHARS = 1000
"""The longest reason recorded for a termination, in characters."""

MAX_SHOWN_CHARS = 200
"""The most characters of one piece of bot text ``terminal_text`` shows unless told otherwise."""


def quote(data: bytes | bytearray | str | int, limit: int = 80) -> str:
    """At most ``limit`` characters of bot data, quoted and escaped, saying how long it was when cut.

    Bytes that are not UTF-8 show as ``\\xNN``; an integer is quoted as its digits.
    """
    if isinstance(data, int):
        # str() refuses integers of more than 4300 digits; msgspec refuses them first.
        digits = str(data) if data.bit_length() <= 10_000 else "a huge integer"
        return digits if len(digits) <= limit else f"{digits[:limit]}... ({len(digits)} digits)"
    if isinstance(data, bytes | bytearray):
        text = bytes(data[:limit]).decode("utf-8", "backslashreplace")
        unit = "bytes"
    else:
        text = data[:limit]
        unit = "characters"
    cut = len(data) > limit
    return f"'{_printable(text)}'" + (f"... ({len(data)} {unit} in all)" if cut else "")


def bounded(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` with non-printable characters escaped and cut to ``limit`` characters."""
    text = _printable(text)
    if len(text) > limit:
        text = text[: limit - 40] + f"... (cut: {len(text)} characters in all)"
    return text


def terminal_text(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` as a terminal can show it without obeying it: every control made visible, at most ``limit`` characters.

    Each character Python does not call printable becomes its escape: the C0
    controls with ESC (``\\x1b``) and the line breaks (``\\n``), DEL, the C1
    controls U+0080-U+009F (``\\x9b``), the bidi overrides and isolates
    (``\\u202e``, ``\\u2066``), and every other format character, separator
    but the space, surrogate, private or unassigned code point. So the text can
    neither retitle, clear or redraw the screen, nor make the terminal type an
    answer into its own input, nor reorder the rest of its line, nor start a line
    of its own. A backslash stays as it is: what is printable is shown unchanged,
    which also makes the function idempotent on text within the limit.

    When the escaped text is longer than ``limit`` characters, its first
    characters up to the limit are kept, never half an escape, followed by a note
    of how many characters the text had; the note is the only thing past ``limit``.

    Markup is not escaped here: the result is plain text, and this module knows no
    renderer. A caller that prints through Rich, which reads ``[...]`` in a string
    as markup, escapes the result for it at one place (the command line's
    ``tournaments.hosting.markup.shown``) and prints it where markup is read, so that
    a bot's ``[link=...]`` shows as those characters.
    """
    if len(text) <= limit and text.isprintable():
        return text
    pieces: list[str] = []
    used = 0
    for c in text:
        piece = c if c.isprintable() else _escape(c)
        if used + len(piece) > limit:
            return "".join(pieces) + f"... (cut: {len(text)} characters in all)"
        pieces.append(piece)
        used += len(piece)
    return "".join(pieces)


def _printable(text: str) -> str:
    """Every character that is not printable (controls, escapes, lone surrogates) as its escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(c: str) -> str:
    """One character as Python writes it in a string literal: ``\\x1b``, ``\\u202e``, ``\\U000e0001``."""
    return c.encode("unicode_escape", "backslashreplace").decode("ascii")
