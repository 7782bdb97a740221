"""The games famiglia can play, by name: the two it ships and any installed plug-in.

A game is a ``GameRules`` instance registered under the Python entry point group
``famiglia.games`` (name = the game's name, value = ``module:attribute``), so a host
adds their own game by installing a package, without changing famiglia
(docs/writing-a-game.md). famiglia registers Vendetta and Sicilianos the same way
in its pyproject.toml, and also knows them without the entry points, so a checkout
that was never installed (or not reinstalled) still finds them.

A plug-in is imported only when its game is asked for. A bad one (it does not
import, gives something that is not a GameRules, or names itself differently)
fails that request with one line naming its distribution; a plug-in that takes a
name already taken is left out, and ``plugin_problems`` says so. Neither ever
stops the other games.
"""

from __future__ import annotations

import importlib
from typing import Any

import msgspec

from referee.games.base import GameRules

__all__ = [
    "BUILT_IN_GAMES",
    "ENTRY_POINT_GROUP",
    "GAME_NAMES",
    "BadGamePlugin",
    "UnknownGame",
    "game_names",
    "get_rules",
    "plugin_problems",
]

ENTRY_POINT_GROUP = "famiglia.games"

# The games famiglia ships: name -> "module:attribute", as in pyproject.toml.
# Each is imported on first use, so a bot importing one engine does not pay for the other.
_BUILT_IN = {
    "vendetta": "referee.games.vendetta:RULES",
    "sicilianos": "referee.games.sicilianos:RULES",
}
BUILT_IN_GAMES = tuple(_BUILT_IN)


class UnknownGame(ValueError):
    """A game name that no installed game answers to."""


class BadGamePlugin(UnknownGame):
    """A plug-in registered for the game asked for cannot give a GameRules."""


class _Entry(msgspec.Struct, frozen=True):
    """Where a game comes from: ``module:attribute`` and the distribution that registered it."""

    target: str
    distribution: str


def _scan() -> tuple[dict[str, _Entry], list[str]]:
    """Every game installed now (built-ins first), and a line per plug-in left out.

    Read afresh on every call: installing a plug-in, or a test putting one on
    sys.path, shows at once.
    """
    # Imported here: importlib.metadata is slow to import, and a bot that imports one
    # engine (every Python sample bot does) never needs it.
    from importlib.metadata import entry_points

    games = {name: _Entry(target, "famiglia") for name, target in _BUILT_IN.items()}
    problems: list[str] = []
    # Sorted, so which of two clashing plug-ins wins never depends on the disk's order.
    found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name, _distribution(ep), ep.value))
    for ep in found:
        entry = _Entry(ep.value, _distribution(ep))
        taken = games.get(ep.name)
        if taken is None:
            games[ep.name] = entry
        elif taken != entry:  # famiglia's own registration of a built-in equals its fallback
            problems.append(
                f"game plug-in {ep.name!r} from distribution {entry.distribution} is left out: "
                f"the name is taken by {taken.distribution}; register it under another name"
            )
    return games, problems


def _distribution(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    return str(dist.name) if dist is not None else "(unknown distribution)"


def game_names() -> tuple[str, ...]:
    """The name of every game installed now: the built-ins, then the plug-ins by name."""
    return tuple(_scan()[0])


def plugin_problems() -> list[str]:
    """One line per plug-in left out because its name is taken (empty when all is well)."""
    return _scan()[1]


def get_rules(name: str) -> GameRules:
    """The rules of the game called ``name``.

    UnknownGame when no game has that name; BadGamePlugin (an UnknownGame) when
    the plug-in registered for it cannot give its rules. Both say it in one line.
    """
    games, _ = _scan() if name not in _BUILT_IN else ({name: _Entry(_BUILT_IN[name], "famiglia")}, [])
    entry = games.get(name)
    if entry is None:
        raise UnknownGame(f"unknown game {name!r}: choose one of {', '.join(games)}")
    module_name, _, attribute = entry.target.partition(":")
    where = f"game plug-in {name!r} from distribution {entry.distribution}"
    try:
        rules: object = importlib.import_module(module_name)
        for part in attribute.split(".") if attribute else ():
            rules = getattr(rules, part)
    except Exception as exc:  # noqa: BLE001 - someone else's code: any failure is reported, in one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise BadGamePlugin(f"{where} does not load {entry.target!r}: {type(exc).__name__}: {first}") from None
    if not isinstance(rules, GameRules):
        raise BadGamePlugin(
            f"{where} gives {type(rules).__name__} from {entry.target!r}, not a GameRules "
            "(subclass referee.games.base.GameRules)"
        )
    if rules.name != name:
        raise BadGamePlugin(
            f"{where} is registered as {name!r} but its rules are named {rules.name!r}; make them agree"
        )
    return rules


def __getattr__(attribute: str) -> Any:
    # GAME_NAMES is read afresh, like game_names(): a plug-in may be installed later.
    if attribute == "GAME_NAMES":
        return game_names()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
