"""The rules engines famiglia ships, by name."""

from __future__ import annotations

import importlib

from referee.games.base import GameRules

__all__ = ["GAME_NAMES", "UnknownGame", "get_rules"]

# name -> module that defines ``RULES`` (a GameRules instance). Imported on first use
# so that a bot importing one engine does not pay for the other.
_MODULES = {
    "vendetta": "referee.games.vendetta",
    "sicilianos": "referee.games.sicilianos",
}
GAME_NAMES = tuple(_MODULES)


class UnknownGame(ValueError):
    """A game name famiglia does not ship."""


def get_rules(name: str) -> GameRules:
    """The rules of the game called ``name``."""
    module_name = _MODULES.get(name)
    if module_name is None:
        raise UnknownGame(f"unknown game {name!r}: choose one of {', '.join(GAME_NAMES)}")
    rules: GameRules = importlib.import_module(module_name).RULES
    return rules
