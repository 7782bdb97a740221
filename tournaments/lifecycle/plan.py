"""From a tournament file to the full list of games to play."""

from __future__ import annotations

import math
import secrets

import msgspec

from tournaments.config.tournament import TournamentConfig
from tournaments.hosting.schedule import (
    HeadToHeadPair,
    ScheduledGame,
    deal_seed,
    expand,
    gauntlet_tables,
    head_to_head,
    head_to_head_deals,
    round_robin_tables,
    tables_for_games_per_entrant,
    williams_design,
)

__all__ = ["build_schedule", "deal_differences", "head_to_head_pairs"]


def build_schedule(config: TournamentConfig, deal_key: bytes | None = None) -> list[ScheduledGame]:
    """Every game of the tournament, numbered in play order.

    Deal seeds are keyed with ``deal_key`` (the store's, ``Store.deal_key``), so
    they cannot be computed from the tournament file; which tables meet follows
    from the file's seed alone. None draws a fresh random key (deals nobody can
    repeat); ``b""`` is the public derivation of stores made before deal keys.

    Each table is played once per row of a Williams design on one deal seed, so
    seats and deal luck balance out. With several table sizes, each size gets its
    own block of tables and seeds. ValueError when the requested counts cannot
    be balanced (its message names the nearest counts that can).
    """
    key = secrets.token_bytes(32) if deal_key is None else deal_key
    n = len(config.entrants)
    games: list[ScheduledGame] = []
    if config.format.kind == "head-to-head":
        for pair in head_to_head_pairs(config, key):
            for seating in (pair.seating_a, pair.seating_b):
                games.append(
                    ScheduledGame(index=len(games), table=pair.deal, row=pair.row, seed=pair.seed, seating=seating)
                )
        return games
    for block, k in enumerate(config.format.table_sizes):
        rows = len(williams_design(k))
        # Public: it picks and orders the tables, not the deals.
        block_seed = deal_seed(config.seed, 1_000_000 + block)
        if config.format.kind == "gauntlet":
            assert config.format.hero is not None
            hero = [e.name for e in config.entrants].index(config.format.hero)
            wanted = config.format.games_per_entrant or rows * math.comb(n - 1, k - 1)
            tables = gauntlet_tables(n, k, hero, max(1, math.ceil(wanted / rows)), block_seed)
        elif config.format.games_per_entrant is not None:
            count = tables_for_games_per_entrant(n, k, config.format.games_per_entrant)
            tables = round_robin_tables(n, k, count, block_seed)
        else:
            tables = round_robin_tables(n, k, None, block_seed) * config.format.repetitions
        for game in expand(tables, None, block_seed, key):
            games.append(msgspec.structs.replace(game, index=len(games), table=game.table + 10_000 * block))
    return games


def head_to_head_pairs(config: TournamentConfig, deal_key: bytes) -> list[HeadToHeadPair]:
    """The duplicate pairs of a head-to-head test, up to the game budget; deals keyed with ``deal_key``."""
    names = [e.name for e in config.entrants]
    assert config.format.a is not None and config.format.b is not None
    k = config.format.table_sizes[0]
    deals = head_to_head_deals(config.format.max_games, k)
    return head_to_head(
        len(names), k, names.index(config.format.a), names.index(config.format.b), deals, config.seed, deal_key
    )


def deal_differences(mine: TournamentConfig, theirs: TournamentConfig) -> list[str]:
    """The settings that would deal ``mine`` other cards than ``theirs`` under one deal key, as "key (a here, b there)".

    A deal is the key with the seed and the table's number in its block (one
    block per table size, a head-to-head numbers its deals), dealt by the
    game's rules under its variants: entrants, clocks and counts may differ
    and the same tables still get the same cards.
    """
    fields = {
        "game": (mine.game, theirs.game),
        "variants": (mine.variants, theirs.variants),
        "seed": (mine.seed, theirs.seed),
        "format": (mine.format.kind, theirs.format.kind),
        "table_sizes": (mine.format.table_sizes, theirs.format.table_sizes),
    }
    return [f"{key} ({here!r} here, {there!r} there)" for key, (here, there) in fields.items() if here != there]
