"""Pure scheduling: Williams seat designs, round-robin, gauntlet and head-to-head tables.

Everything here is a pure function of its arguments (and a seed): no clocks, no global
RNG, no I/O. A *table* is a sorted tuple of entrant indices; a Williams *row* says which
table member sits in which seat; `expand` turns tables into the games to play, every row
of a table on the same deal seed, so each entrant meets the same deal from every seat.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    # Imported where used: a tournament worker process imports this module for
    # ScheduledGame alone, and numpy would add ~50 ms to every worker's start.
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "HeadToHeadPair",
    "ScheduledGame",
    "deal_seed",
    "duplicate_pairs",
    "expand",
    "extension_tables",
    "games_per_entrant",
    "gauntlet_tables",
    "head_to_head",
    "head_to_head_deals",
    "meeting_spread",
    "pair_meetings",
    "round_robin_tables",
    "seat_counts",
    "tables_for_games_per_entrant",
    "williams_design",
]


class ScheduledGame(msgspec.Struct, frozen=True):
    """One game to play: a table seated by one Williams row on the table's deal seed."""

    index: int
    table: int
    row: int
    seed: int
    seating: tuple[int, ...]


class HeadToHeadPair(msgspec.Struct, frozen=True):
    """Two duplicate games: A and B in the same seat, on the same deal, against the same opponents."""

    index: int
    deal: int
    row: int
    seed: int
    seat: int
    seating_a: tuple[int, ...]
    seating_b: tuple[int, ...]


# --------------------------------------------------------------------------- Williams


def williams_design(k: int) -> list[list[int]]:
    """Seat orders for a table of k: row[s] is the member (0..k-1) who sits in seat s.

    k rows for even k, 2k rows for odd k (all six orders for k = 3). Every member sits
    in every seat equally often, and every ordered pair (x directly before y) occurs
    equally often over the rows, so "who plays right before me" is balanced too.
    """
    if k < 1:
        raise ValueError(f"a table needs at least one seat, got k={k}")
    # Classic first row 0, 1, k-1, 2, k-2, ...: its successive differences are all
    # distinct mod k, so its cyclic shifts form a Latin square with each ordered
    # neighbour pair exactly once when k is even.
    first = [0]
    for j in range(1, k):
        first.append((j + 1) // 2 if j % 2 == 1 else k - j // 2)
    rows = [[(x + i) % k for x in first] for i in range(k)]
    if k % 2 == 1:
        # For odd k the differences repeat; adding the mirror images restores balance.
        rows += [row[::-1] for row in rows]
    return rows


# --------------------------------------------------------------------------- seeds


def deal_seed(base_seed: int, table: int, key: bytes = b"") -> int:
    """Deal seed of one table: a stable 63-bit hash of (base seed, table index), keyed by ``key``.

    Deal seeds are keyed with the store's secret deal key (tournaments.store):
    anyone may read the tournament file and its seed, but without the key the
    deals cannot be computed. The same key and seed give the same deals, which
    is how a host repeats them on purpose. An empty key is the public hash: for
    things that may be public (which tables meet in which order) and for stores
    made before deal keys existed.
    """
    # A hash instead of base_seed + table so neighbouring tournaments (seed 1 and 2)
    # do not share deals; 63 bits so it fits a signed SQLite INTEGER.
    digest = hashlib.blake2b(f"famiglia-deal:{base_seed}:{table}".encode(), digest_size=8, key=key).digest()
    return int.from_bytes(digest, "big") >> 1


# --------------------------------------------------------------------------- counting


def _check_sizes(n: int, k: int) -> None:
    if k < 2:
        raise ValueError(f"a table needs at least 2 seats, got k={k}")
    if n < k:
        raise ValueError(f"{n} entrants cannot fill a table of {k}; add entrants or use smaller tables")


def _table_step(n: int, k: int) -> int:
    """Smallest table count that gives each entrant the same number of tables."""
    return n // math.gcd(n, k)


def tables_for_games_per_entrant(n: int, k: int, games_per_entrant: int) -> int:
    """Fewest tables giving every entrant at least that many games, each entrant equally many.

    Each table is played once per Williams row, so an entrant at t tables plays
    t * len(williams_design(k)) games; t is rounded up to the next count for which
    t * n / k is a whole number of tables.
    """
    _check_sizes(n, k)
    if games_per_entrant < 1:
        raise ValueError(f"games per entrant must be at least 1, got {games_per_entrant}")
    rows = len(williams_design(k))
    per_entrant = -(-games_per_entrant // rows)
    step = k // math.gcd(n, k)
    per_entrant = -(-per_entrant // step) * step
    return per_entrant * n // k


def games_per_entrant(n: int, k: int, tables: int) -> int:
    """Games each entrant plays in a balanced schedule of that many tables of k."""
    _check_sizes(n, k)
    if (tables * k) % n:
        raise ValueError(_unbalanced_message(n, k, tables))
    return tables * k // n * len(williams_design(k))


def _unbalanced_message(n: int, k: int, tables: int) -> str:
    step = _table_step(n, k)
    lower = tables // step * step
    nearest = [str(c) for c in (lower, lower + step) if c > 0]
    return (
        f"{tables} tables of {k} cannot give each of {n} entrants the same number of tables "
        f"(tables x {k} must be a multiple of {n}); nearest valid counts: {' or '.join(nearest)}"
    )


def pair_meetings(tables: Sequence[Sequence[int]], n: int) -> NDArray[np.int64]:
    """n x n matrix: how many tables each pair of entrants shares (zero diagonal)."""
    import numpy as np

    meetings = np.zeros((n, n), dtype=np.int64)
    for table in tables:
        for a, b in itertools.combinations(table, 2):
            if a != b:
                meetings[a, b] += 1
                meetings[b, a] += 1
    return meetings


def meeting_spread(tables: Sequence[Sequence[int]], n: int, among: Sequence[int] | None = None) -> tuple[int, int]:
    """Fewest and most tables shared by any pair of entrants (optionally among a subset)."""
    members = list(range(n)) if among is None else sorted(set(among))
    if len(members) < 2:
        return (0, 0)
    import numpy as np

    sub = pair_meetings(tables, n)[np.ix_(members, members)]
    upper = sub[np.triu_indices(len(members), 1)]
    return (int(upper.min()), int(upper.max()))


def seat_counts(games: Sequence[ScheduledGame], n: int) -> NDArray[np.int64]:
    """n x max-seats matrix: how often each entrant sat in each seat."""
    import numpy as np

    seats = max((len(g.seating) for g in games), default=0)
    counts = np.zeros((n, seats), dtype=np.int64)
    for game in games:
        for seat, entrant in enumerate(game.seating):
            counts[entrant, seat] += 1
    return counts


# --------------------------------------------------------------------------- balanced tables


def _greedy_tables(quotas: list[int], k: int, tables: int, rng: random.Random) -> list[list[int]]:
    """Fill tables one by one, each member the least-met candidate; exact quotas guaranteed."""
    m = len(quotas)
    remaining = list(quotas)
    meetings = [[0] * m for _ in range(m)]
    result: list[list[int]] = []
    for t in range(tables):
        left = tables - t
        # Quotas can be met by the remaining tables iff nobody needs more tables than
        # are left; entrants at that limit must sit at this table.
        chosen = [e for e in range(m) if remaining[e] == left]
        cost = [0] * m
        for c in chosen:
            row = meetings[c]
            for e in range(m):
                cost[e] += row[e]
        tiebreak = [rng.random() for _ in range(m)]
        while len(chosen) < k:
            best = -1
            best_key = (0, 0, 0.0)
            for e in range(m):
                if remaining[e] <= 0 or e in chosen:
                    continue
                key = (cost[e], -remaining[e], tiebreak[e])
                if best < 0 or key < best_key:
                    best, best_key = e, key
            chosen.append(best)
            row = meetings[best]
            for e in range(m):
                cost[e] += row[e]
        for a, b in itertools.combinations(chosen, 2):
            meetings[a][b] += 1
            meetings[b][a] += 1
        for e in chosen:
            remaining[e] -= 1
        result.append(sorted(chosen))
    return result


def _improve_tables(tabs: list[list[int]], m: int, rng: random.Random, budget: int) -> None:
    """Swap entrants between tables while the sum of squared pair meetings does not grow.

    Swapping keeps every entrant's table count. With the total number of meetings fixed,
    the sum of squares is smallest exactly when all pair counts differ by at most one,
    so the search stops as soon as it reaches that spread.
    """
    if len(tabs) < 2:
        return
    meetings = [[0] * m for _ in range(m)]
    for tab in tabs:
        for a, b in itertools.combinations(tab, 2):
            meetings[a][b] += 1
            meetings[b][a] += 1
    # Histogram of pair counts, kept up to date so the spread is cheap to check.
    hist: dict[int, int] = {}
    for a in range(m):
        for b in range(a + 1, m):
            hist[meetings[a][b]] = hist.get(meetings[a][b], 0) + 1

    def spread() -> int:
        live = [v for v, c in hist.items() if c]
        return max(live) - min(live)

    def bump(a: int, b: int, step: int) -> None:
        old = meetings[a][b]
        hist[old] -= 1
        hist[old + step] = hist.get(old + step, 0) + 1
        meetings[a][b] = old + step
        meetings[b][a] = old + step

    if spread() <= 1:
        return
    sets = [set(tab) for tab in tabs]
    count = len(tabs)
    for _ in range(budget):
        x = rng.randrange(count)
        y = rng.randrange(count - 1)
        if y >= x:
            y += 1
        tx, ty, sx, sy = tabs[x], tabs[y], sets[x], sets[y]
        i = rng.randrange(len(tx))
        j = rng.randrange(len(ty))
        a, b = tx[i], ty[j]
        if a in sy or b in sx:
            continue
        # Members of both tables keep meeting a and b once each; only the others change.
        only_x = [c for c in tx if c != a and c not in sy]
        only_y = [d for d in ty if d != b and d not in sx]
        ma, mb = meetings[a], meetings[b]
        delta = 0
        for c in only_x:
            delta += mb[c] - ma[c] + 1
        for d in only_y:
            delta += ma[d] - mb[d] + 1
        if delta > 0:
            continue
        # Sideways moves (delta == 0) are taken too: they let the search cross plateaus.
        for c in only_x:
            bump(a, c, -1)
            bump(b, c, +1)
        for d in only_y:
            bump(b, d, -1)
            bump(a, d, +1)
        tx[i], ty[j] = b, a
        sx.remove(a)
        sx.add(b)
        sy.remove(b)
        sy.add(a)
        if delta < 0 and spread() <= 1:
            return


def _spread_tables(quotas: list[int], k: int, tables: int, rng: random.Random) -> list[tuple[int, ...]]:
    """Tables of k distinct entrants meeting each entrant's quota, pair meetings near even."""
    if tables == 0:
        return []
    tabs = _greedy_tables(quotas, k, tables, rng)
    # Budget grows with the problem (capped at a few seconds of work); the search
    # usually stops early at spread <= 1.
    _improve_tables(tabs, len(quotas), rng, budget=min(1_000_000, 20_000 + 400 * tables * k))
    return [tuple(sorted(tab)) for tab in tabs]


def _all_subsets_plus(quotas_for: list[int], m: int, k: int, tables: int, rng: random.Random) -> list[tuple[int, ...]]:
    """Whole copies of every k-subset of range(m), then balanced tables for the rest."""
    total = math.comb(m, k)
    full, rest = divmod(tables, total)
    out = [combo for _ in range(full) for combo in itertools.combinations(range(m), k)]
    if rest:
        out += _spread_tables(quotas_for, k, rest, rng)
    return out


def round_robin_tables(n: int, k: int, tables: int | None = None, seed: int = 0) -> list[tuple[int, ...]]:
    """Round-robin tables of k among n entrants, every entrant at the same number of tables.

    tables=None means every k-subset once. A count of C(n, k) or more repeats every
    k-subset as many whole times as fit and fills the remainder with balanced tables;
    a smaller count gives balanced tables only: pair meetings as even as the search
    finds (greedy start, then swaps between tables). tables * k must be a multiple of
    n, else ValueError names the nearest valid counts. The table order is shuffled by
    the seed so a run stopped early has still spread its games over everyone.
    """
    _check_sizes(n, k)
    total = math.comb(n, k)
    count = total if tables is None else tables
    if count < 1:
        raise ValueError(f"a round-robin needs at least one table, got {count}")
    if (count * k) % n:
        raise ValueError(_unbalanced_message(n, k, count))
    rng = random.Random(seed)
    rest = count % total
    # Whole copies of all subsets give everyone the same count, so the remainder does too.
    out = _all_subsets_plus([rest * k // n] * n, n, k, count, rng)
    rng.shuffle(out)
    return out


def _uneven_quotas(m: int, slots: int, rng: random.Random) -> list[int]:
    base, extra = divmod(slots, m)
    lucky = set(rng.sample(range(m), extra))
    return [base + (1 if e in lucky else 0) for e in range(m)]


def _field_tables(m: int, size: int, tables: int, rng: random.Random) -> list[tuple[int, ...]]:
    """Tables of `size` drawn from a field of m, each field member as evenly used as possible."""
    total = math.comb(m, size)
    rest = tables % total
    return _all_subsets_plus(_uneven_quotas(m, rest * size, rng), m, size, tables, rng)


def gauntlet_tables(n: int, k: int, hero: int, tables: int, seed: int = 0) -> list[tuple[int, ...]]:
    """Tables of k, each the hero plus k-1 of the other n-1 entrants.

    The field is used as evenly as the count allows (appearances differ by at most one;
    exactly equal when tables * (k-1) is a multiple of n-1), and field pairs meet as
    evenly as the balanced-table search finds.
    """
    _check_sizes(n, k)
    if not 0 <= hero < n:
        raise ValueError(f"hero {hero} is not an entrant index in 0..{n - 1}")
    if tables < 1:
        raise ValueError(f"a gauntlet needs at least one table, got {tables}")
    field = [e for e in range(n) if e != hero]
    rng = random.Random(seed)
    out = [tuple(sorted((hero, *(field[i] for i in tab)))) for tab in _field_tables(n - 1, k - 1, tables, rng)]
    rng.shuffle(out)
    return out


# --------------------------------------------------------------------------- games


def expand(
    tables: Sequence[Sequence[int]],
    rows: Sequence[Sequence[int]] | None = None,
    base_seed: int = 0,
    key: bytes = b"",
    first_table: int = 0,
) -> list[ScheduledGame]:
    """Every table once per design row, all rows of a table on the table's deal seed.

    Deal seeds are ``deal_seed(base_seed, table, key)``: pass the store's deal key.
    Tables are numbered from ``first_table``: tables added to a tournament that
    has some continue its numbering, so they get deals of their own.

    rows=None uses williams_design(len(table)) for each table (tables may differ in
    size). Games come table by table, so each finished block is a complete duplicate
    set whose deal luck has cancelled.
    """
    designs: dict[int, list[list[int]]] = {}
    if rows is not None:
        given = [list(r) for r in rows]
        if not given:
            raise ValueError("the seat design has no rows")
        designs[len(given[0])] = given
    games: list[ScheduledGame] = []
    for t, table in enumerate(tables, start=first_table):
        k = len(table)
        design = designs.get(k)
        if design is None:
            if rows is not None:
                raise ValueError(f"table {t - first_table} has {k} seats but the seat design is for {len(rows[0])}")
            design = designs[k] = williams_design(k)
        seed = deal_seed(base_seed, t, key)
        for r, row in enumerate(design):
            if sorted(row) != list(range(k)):
                raise ValueError(f"seat design row {r} is not an order of 0..{k - 1}: {list(row)}")
            games.append(
                ScheduledGame(index=len(games), table=t, row=r, seed=seed, seating=tuple(table[m] for m in row))
            )
    return games


def head_to_head_deals(max_games: int, k: int) -> int:
    """Deals a head-to-head of at most ``max_games`` plays at tables of k: whole deals only, at least one.

    A deal is played once per Williams row with A and once with B in A's seat,
    so it costs 2 x rows games; a budget between whole deals is rounded down.
    """
    return max(1, max_games // (2 * len(williams_design(k))))


def head_to_head(n: int, k: int, a: int, b: int, deals: int, seed: int = 0, key: bytes = b"") -> list[HeadToHeadPair]:
    """Duplicate pairs for testing A against B: same deal, seat and opponents for both.

    Opponents follow from ``seed`` alone; deal seeds are keyed with ``key`` (see deal_seed).

    Each deal draws k-1 opponents from the other n-2 entrants (used as evenly as
    possible) and is played once per Williams row, so A and B visit every seat. A pair
    is the game with A plus the game with B swapped into A's seat; an SPRT reads one
    score per pair. Pairs come deal by deal, in the order they should be played.
    """
    _check_sizes(n, k)
    for who, name in ((a, "A"), (b, "B")):
        if not 0 <= who < n:
            raise ValueError(f"{name} = {who} is not an entrant index in 0..{n - 1}")
    if a == b:
        raise ValueError("A and B must be different entrants")
    if n - 2 < k - 1:
        raise ValueError(
            f"a head-to-head at tables of {k} needs {k - 1} opponents besides A and B; there are only {n - 2}"
        )
    if deals < 1:
        raise ValueError(f"a head-to-head needs at least one deal, got {deals}")
    field = [e for e in range(n) if e not in (a, b)]
    rng = random.Random(seed)
    opponent_sets = _field_tables(n - 2, k - 1, deals, rng)
    rng.shuffle(opponent_sets)
    return duplicate_pairs(a, b, [tuple(field[i] for i in opponents) for opponents in opponent_sets], seed, key)


def duplicate_pairs(
    a: int, b: int, opponent_sets: Sequence[Sequence[int]], seed: int, key: bytes = b"", first_deal: int = 0
) -> list[HeadToHeadPair]:
    """A's and B's duplicate pairs: each set of opponents is one deal, played once per Williams row.

    Deals are numbered from ``first_deal`` (their seeds follow from the number),
    so deals added to a test that has some get deals of their own.
    """
    pairs: list[HeadToHeadPair] = []
    for d, opponents in enumerate(opponent_sets, start=first_deal):
        # Member 0 is the entrant under test, so row.index(0) is its seat.
        members_a = (a, *opponents)
        members_b = (b, *members_a[1:])
        design = williams_design(len(members_a))
        deal = deal_seed(seed, d, key)
        for r, row in enumerate(design):
            pairs.append(
                HeadToHeadPair(
                    index=len(pairs),
                    deal=d,
                    row=r,
                    seed=deal,
                    seat=row.index(0),
                    seating_a=tuple(members_a[m] for m in row),
                    seating_b=tuple(members_b[m] for m in row),
                )
            )
    return pairs


# --------------------------------------------------------------------------- growing


def extension_tables(
    have: Sequence[int],
    need: Sequence[int],
    k: int,
    *,
    forced: Sequence[int] = (),
    at_least: int = 0,
    seed: int = 0,
) -> list[tuple[int, ...]]:
    """Tables of k added to a tournament: entrant e at ``need[e]`` more tables at least.

    ``have[e]`` is how many tables e has already; seats the needs leave free go
    to the entrants with the fewest tables (have plus added), so counts level
    out. Entrants in ``forced`` (a gauntlet's hero) sit at every added table.
    As few tables as the needs allow, and no fewer than ``at_least``; pair
    meetings among the added tables as even as the balanced-table search finds.
    """
    n = len(have)
    if len(need) != n:
        raise ValueError(f"{len(need)} needs for {n} entrants")
    _check_sizes(n, k)
    free_seats = k - len(forced)
    if free_seats < 1 or any(not 0 <= e < n for e in forced):
        raise ValueError(f"forced entrants {list(forced)} leave no seat at a table of {k}")
    others = [e for e in range(n) if e not in forced]
    tables = max(at_least, max(need, default=0), -(-sum(need[e] for e in others) // free_seats))
    if tables == 0:
        return []
    rng = random.Random(seed)
    quotas = [tables if e in forced else min(need[e], tables) for e in range(n)]
    tiebreak = [rng.random() for _ in range(n)]
    for _ in range(tables * k - sum(quotas)):
        open_seats = [e for e in others if quotas[e] < tables]
        quotas[min(open_seats, key=lambda e: (have[e] + quotas[e], tiebreak[e]))] += 1
    out = _spread_tables(quotas, k, tables, rng)
    rng.shuffle(out)
    return out
