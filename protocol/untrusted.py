"""Text that came from a bot, made safe to quote in a reason, a log line or the store.

A bot controls every byte it sends, so anything of it that the harness repeats
(an excerpt of a bad line, a request id it claimed, its last stderr lines) is
cut to a bound and has its non-printable characters escaped: no reason grows
with what a bot sends, and none can move a terminal's cursor or forge a line.
"""

from __future__ import annotations

__all__ = ["MAX_REASON_CHARS", "bounded", "quote"]

MAX_REASON_CHARS = 1000
"""The longest reason recorded for a termination, in characters."""


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


def _printable(text: str) -> str:
    """Every character that is not printable (controls, escapes, lone surrogates) as its escape."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii") for c in text
    )
