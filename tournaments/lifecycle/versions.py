"""Which version of each entrant's bot a run plays: its content fingerprint, found or recorded in the store.

An entrant is a name; the code behind it can be edited in place between two
runs. A run fingerprints each entrant's bot when it starts
(``referee.pinning.bot_fingerprint``; ``Store.settle_versions`` compares it with
what the store has seen), so a result always belongs to the code that earned it;
during the run every bot process start checks its pin (``referee.pinning.check_pin``).
A command line's own words are compared by ``tournaments.lifecycle.growth``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import msgspec

from referee.bots import BotSpec
from referee.pinning import bot_fingerprint
from tournaments.config.tournament import TournamentConfig
from tournaments.store import Store

__all__ = ["bot_fingerprint", "pinned_bots", "settle_versions"]


def pinned_bots(store: Store, config: TournamentConfig, versions: Sequence[int]) -> list[BotSpec]:
    """Each entrant's bot carrying the fingerprint of the version this run records it as (``BotSpec.pin``).

    The fingerprint is the one ``settle_versions`` found or recorded, read back from the store,
    never taken again: what the run checks at every process start is what its games are stored under.
    """
    known = store.bot_versions()
    return [
        msgspec.structs.replace(entrant.bot, pin=known[index][version - 1])
        for index, (entrant, version) in enumerate(zip(config.entrants, versions, strict=True))
    ]


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
