"""Growing a stored tournament: what a changed file may add to it, and the games it adds.

Run with a file that adds entrants or games (more ``games_per_entrant``,
``repetitions`` or ``max_games``), a store grows: only the new games are
scheduled, numbered after the old ones, each new table seated through its own
Williams rows on a deal of its own (keyed with the store's deal key), and every
old result stays and keeps counting. A change that would make the old results
incomparable with the new ones (the game, its variants, the clocks, the
sandbox, the limits, ...) is refused, naming the setting with both values.
"""

from __future__ import annotations

import math
import os
import random
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import msgspec

from referee.bots import BotSpec
from tournaments.config.tournament import TournamentConfig, flat_settings
from tournaments.hosting.schedule import (
    ScheduledGame,
    deal_seed,
    duplicate_pairs,
    expand,
    extension_tables,
    williams_design,
)
from tournaments.store import StoreError

__all__ = ["GrowthRefused", "align_entrants", "extension_games", "incomparable_changes"]

# Settings whose change makes old and new games different contests. ``name``
# is here too: it names the store's replays, which the old results point to.
_FIXED = ("name", "game", "format", "variants", "table_sizes", "seed", "hero", "a", "b", "illegal_action", "sandbox")


class GrowthRefused(StoreError):
    """The file changes a stored tournament in a way its old results cannot follow."""


def align_entrants(stored: TournamentConfig, wanted: TournamentConfig) -> TournamentConfig:
    """``wanted`` with its entrants in the store's order, entrants new to the store last.

    GrowthRefused when the file leaves out an entrant the store holds.
    """
    by_name = {entrant.name: entrant for entrant in wanted.entrants}
    missing = [entrant.name for entrant in stored.entrants if entrant.name not in by_name]
    if missing:
        raise GrowthRefused(
            f"the file leaves out {', '.join(map(repr, missing))}, whose games are in the store; "
            "an entrant cannot leave a tournament: put it back"
        )
    old = [by_name[entrant.name] for entrant in stored.entrants]
    stored_names = {entrant.name for entrant in stored.entrants}
    return msgspec.structs.replace(wanted, entrants=old + [e for e in wanted.entrants if e.name not in stored_names])


def _flat(config: TournamentConfig) -> dict[str, Any]:
    """The settings by the names a tournament file gives them (``time.move_ms``, ``limits.cpu_s``)."""
    return flat_settings(config)


def incomparable_changes(stored: TournamentConfig, wanted: TournamentConfig) -> list[str]:
    """Each change from the stored tournament that growing cannot take, as "setting = old (now new)".

    ``wanted`` has its entrants aligned to the store's (``align_entrants``).
    """
    old, new = _flat(stored), _flat(wanted)
    changes = []
    fixed = [*_FIXED, *(key for key in old if key.startswith(("time.", "limits.")))]
    for key in fixed:
        if old.get(key) != new.get(key):
            changes.append(f"{key} = {_show(old.get(key))} (the file now says {_show(new.get(key))})")
    if (stored.format.games_per_entrant is None) != (wanted.format.games_per_entrant is None):
        was = "repetitions" if stored.format.games_per_entrant is None else "games_per_entrant"
        changes.append(f"the store counts games by {was}; keep counting by {was}")
    else:
        growing = ("max_games",) if wanted.format.kind == "head-to-head" else ("games_per_entrant", "repetitions")
        for key in growing:
            if old[key] is not None and new[key] is not None and new[key] < old[key]:
                changes.append(f"{key} = {old[key]} (the file now says {new[key]}; played games cannot be taken back)")
    for before, after in zip(stored.entrants, wanted.entrants, strict=False):
        if _same_program(before.bot) != _same_program(after.bot):
            changes.append(
                f"entrant {before.name!r} runs {_command(before)} (the file now says {_command(after)}; "
                "a changed bot is a new entrant: give it a name of its own)"
            )
    return changes


def _same_program(bot: BotSpec) -> BotSpec:
    """``bot`` with its program as the file it resolves to.

    A bot started with "python3" runs on famiglia's own interpreter, whose path
    depends on how famiglia was started (``famiglia`` or ``python -m``; python
    or python3 in the same virtualenv): the same bot either way.
    """
    program = bot.command[0] if bot.command else ""
    if os.path.isabs(program) and os.path.exists(program):
        return msgspec.structs.replace(bot, command=[os.path.realpath(program), *bot.command[1:]])
    return bot


def _show(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _command(entrant: Any) -> str:
    return f"{' '.join(entrant.bot.command)!r} in {entrant.bot.cwd}"


def extension_games(
    stored: TournamentConfig, wanted: TournamentConfig, schedule: Sequence[ScheduledGame], key: bytes
) -> list[ScheduledGame]:
    """The games ``wanted`` adds to ``schedule`` (the stored one), numbered after it.

    ``wanted`` is aligned (``align_entrants``) and comparable (no
    ``incomparable_changes``). Round-robins by repetitions add exactly the
    tables that every k-subset of the larger field, repeated, has beyond the
    stored ones; by games per entrant, and gauntlets, each entrant gets the
    tables it lacks, the free seats going to the entrants with the fewest. A
    head-to-head adds deals up to its new budget. Every new table is played
    once per Williams row on a deal of its own.
    """
    next_index = len(schedule)
    if wanted.format.kind == "head-to-head":
        return _more_deals(wanted, schedule, key, next_index)
    n = len(wanted.entrants)
    games: list[ScheduledGame] = []
    for block, k in enumerate(wanted.format.table_sizes):
        block_seed = deal_seed(wanted.seed, 1_000_000 + block)
        rows = len(williams_design(k))
        members: dict[int, tuple[int, ...]] = {}
        for game in schedule:
            if game.table // 10_000 == block:
                members[game.table] = tuple(sorted(game.seating))
        local_count = max((t - 10_000 * block for t in members), default=-1) + 1
        have = [0] * n
        for table in members.values():
            for e in table:
                have[e] += 1
        # Seeded by the tables already there, so each growth step shuffles its own way.
        seed = deal_seed(block_seed, 2_000_000 + local_count)
        if wanted.format.kind == "round-robin" and wanted.format.games_per_entrant is None:
            target = Counter({subset: wanted.format.repetitions for subset in combinations(range(n), k)})
            missing = target - Counter(members.values())
            tables = sorted(missing.elements())
            _shuffle(tables, seed)
        elif wanted.format.kind == "round-robin":
            assert wanted.format.games_per_entrant is not None
            per_entrant = -(-wanted.format.games_per_entrant // rows)
            tables = extension_tables(have, [max(0, per_entrant - h) for h in have], k, seed=seed)
        else:
            hero = [e.name for e in wanted.entrants].index(wanted.format.hero or "")
            wanted_games = wanted.format.games_per_entrant or rows * math.comb(n - 1, k - 1)
            hero_tables = max(have[hero], -(-wanted_games // rows))
            # A fair share of the hero's tables for every member of the field, new members included.
            field_share = hero_tables * (k - 1) // (n - 1)
            need = [hero_tables - h if e == hero else max(0, field_share - h) for e, h in enumerate(have)]
            tables = extension_tables(have, need, k, forced=[hero], seed=seed)
        for game in expand(tables, None, block_seed, key, first_table=local_count):
            games.append(
                msgspec.structs.replace(game, index=next_index + len(games), table=game.table + 10_000 * block)
            )
    return games


def _shuffle(tables: list[tuple[int, ...]], seed: int) -> None:
    random.Random(seed).shuffle(tables)


def _more_deals(
    wanted: TournamentConfig, schedule: Sequence[ScheduledGame], key: bytes, next_index: int
) -> list[ScheduledGame]:
    """A head-to-head's deals beyond the stored ones, up to its budget; opponents drawn evenly."""
    names = [e.name for e in wanted.entrants]
    a, b = names.index(wanted.format.a or ""), names.index(wanted.format.b or "")
    k = wanted.format.table_sizes[0]
    rows = len(williams_design(k))
    deals = max(1, wanted.format.max_games // (2 * rows))
    stored_deals = max((game.table for game in schedule), default=-1) + 1
    if deals <= stored_deals:
        return []
    field = [e for e in range(len(names)) if e not in (a, b)]
    have = [0] * len(field)
    for game in schedule:
        if game.index % 2 == 0 and game.row == 0:  # one game per deal: A's, in the first seating
            for e in game.seating:
                if e in field:
                    have[field.index(e)] += 1
    opponents = extension_tables(
        have,
        [0] * len(field),
        k - 1,
        at_least=deals - stored_deals,
        seed=deal_seed(wanted.seed, 3_000_000 + stored_deals),
    )[: deals - stored_deals]
    pairs = duplicate_pairs(
        a, b, [tuple(field[i] for i in table) for table in opponents], wanted.seed, key, first_deal=stored_deals
    )
    games: list[ScheduledGame] = []
    for pair in pairs:
        for seating in (pair.seating_a, pair.seating_b):
            games.append(
                ScheduledGame(
                    index=next_index + len(games), table=pair.deal, row=pair.row, seed=pair.seed, seating=seating
                )
            )
    return games
