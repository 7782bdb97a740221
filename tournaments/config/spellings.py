"""The first release's spellings of settings, still valid, and where each lives now.

The README's tournament file, and every file written before the settings came in
sections, give ``format`` and ``sandbox`` as one word, ``table_size``, the
format's parameters, ``concurrency``, ``workers`` and ``reuse_processes``
directly in ``[tournament]``, and ``[tournament.limits]``. ``upgrade`` moves each
into its section before the file is checked, and says which name the file
gave, so a problem is reported under that name; ``first_name`` goes the other
way, for messages that speak the README's language.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MOVED", "WORD_SECTIONS", "first_name", "upgrade"]

# Each first spelling in [tournament] and where it lives now: (section, key).
MOVED: dict[str, tuple[str, str]] = {
    **{key: ("format", key) for key in ("table_sizes", "games_per_entrant", "repetitions", "hero", "a", "b",
                                         "elo0", "elo1", "alpha", "beta", "max_games")},
    "table_size": ("format", "table_sizes"),
    "limits": ("sandbox", "limits"),
    **{key: ("executor", key) for key in ("concurrency", "workers", "reuse_processes")},
}  # fmt: skip
# A section first given as one word: the word is now this key of it.
WORD_SECTIONS = {"format": "kind", "sandbox": "level"}
# Stored configurations of the first release held these beside the others, not in [tournament.time].
_STORED_MOVED = {"margin_ms": ("time", "margin_ms"), "game_wall_ms": ("time", "game_wall_ms")}


def upgrade(
    section: dict[str, Any], problems: list[str], *, stored: bool = False
) -> tuple[dict[str, Any], dict[str, str]]:
    """``section`` with each first spelling moved into its section; and {new path: the path the file gave}."""
    out = dict(section)
    spelled: dict[str, str] = {}
    for word, key in WORD_SECTIONS.items():
        if word in out and not isinstance(out[word], dict):
            out[word] = {key: out[word]}
            spelled[f"{word}.{key}"] = word
    moved = {**MOVED, **(_STORED_MOVED if stored else {})}
    if "table_size" in out and "table_sizes" in out:
        problems.append("tournament.table_size: give table_size or table_sizes, not both")
        del out["table_size"]
    for old, (head, key) in moved.items():
        if old not in out:
            continue
        value = out.pop(old)
        if old == "table_size":
            value = [value]
        table = out.get(head, {})
        if not isinstance(table, dict):
            continue  # the section itself is reported
        table = out[head] = dict(table)  # a copy: the caller's tables stay as they were
        if key in table:
            problems.append(f"tournament.{old}: give {old} or [tournament.{head}] {key}, not both")
            continue
        table[key] = value
        spelled[f"{head}.{key}"] = old
    return out, spelled


def first_name(section: str, key: str) -> str:
    """The name the README's file gives a setting of ``section``: its first spelling, else ``section.key``."""
    if WORD_SECTIONS.get(section) == key:
        return section
    if MOVED.get(key) == (section, key):
        return key
    if (section, key) == ("sandbox", "limits"):
        return "limits"
    return f"{section}.{key}"
