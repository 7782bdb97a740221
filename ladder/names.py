"""What an entrant may be called: the one rule ``add-entrant`` and self-registration share."""

from __future__ import annotations

import re

__all__ = ["NAME_RULE", "valid_name"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
NAME_RULE = "a name is 1 to 40 letters, digits, '_', '.' or '-', starting with a letter or digit"


def valid_name(name: str) -> bool:
    # Names become URL paths and file-system-safe labels, so the rule is narrow on purpose.
    return _NAME.fullmatch(name) is not None
