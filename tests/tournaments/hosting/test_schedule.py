"""Tests for tournaments.hosting.schedule: Williams designs, balanced tables, expansion, pairings."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.hosting.schedule import (
    HeadToHeadPair,
    ScheduledGame,
    deal_seed,
    expand,
    games_per_entrant,
    gauntlet_tables,
    head_to_head,
    meeting_spread,
    pair_meetings,
    round_robin_tables,
    seat_counts,
    tables_for_games_per_entrant,
    williams_design,
)

# --------------------------------------------------------------------------- Williams


@pytest.mark.parametrize("k", range(2, 9))
def test_williams_rows_are_orders_and_count(k: int) -> None:
    rows = williams_design(k)
    assert len(rows) == (k if k % 2 == 0 else 2 * k)
    assert all(sorted(row) == list(range(k)) for row in rows)


@pytest.mark.parametrize("k", range(2, 9))
def test_williams_seat_balance_is_exact(k: int) -> None:
    rows = williams_design(k)
    per_seat = len(rows) // k
    for seat in range(k):
        assert Counter(row[seat] for row in rows) == {m: per_seat for m in range(k)}


@pytest.mark.parametrize("k", range(2, 9))
def test_williams_carry_over_balance(k: int) -> None:
    rows = williams_design(k)
    pairs = Counter((row[s], row[s + 1]) for row in rows for s in range(k - 1))
    expected = 1 if k % 2 == 0 else 2
    assert set(pairs) == {(x, y) for x in range(k) for y in range(k) if x != y}
    assert set(pairs.values()) == {expected}


def test_williams_three_is_all_six_orders() -> None:
    assert sorted(map(tuple, williams_design(3))) == sorted(itertools.permutations(range(3)))


def test_williams_rejects_empty_table() -> None:
    with pytest.raises(ValueError, match="at least one seat"):
        williams_design(0)


# --------------------------------------------------------------------------- round-robin


def test_all_subsets_when_tables_not_given() -> None:
    tables = round_robin_tables(6, 3, None, seed=1)
    assert sorted(tables) == list(itertools.combinations(range(6), 3))


def test_count_above_all_subsets_repeats_them_and_balances_the_rest() -> None:
    # C(5,3) = 10; 15 tables = every subset once + 5 balanced tables.
    tables = round_robin_tables(5, 3, 15, seed=2)
    assert len(tables) == 15
    counts = Counter(tables)
    assert all(counts[c] >= 1 for c in itertools.combinations(range(5), 3))
    assert Counter(e for t in tables for e in t) == {e: 9 for e in range(5)}
    low, high = meeting_spread(tables, 5)
    assert high - low <= 1


def test_unbalanced_count_names_nearest_valid_counts() -> None:
    with pytest.raises(ValueError, match=r"nearest valid counts: 13 or 26"):
        round_robin_tables(13, 4, 20, seed=0)
    with pytest.raises(ValueError, match=r"nearest valid counts: 5$"):
        round_robin_tables(5, 3, 4, seed=0)


@pytest.mark.parametrize(
    ("n", "k", "tables", "max_spread"),
    [(5, 3, 5, 1), (13, 4, 13, 1), (13, 4, 26, 2), (20, 5, 20, 2), (20, 5, 40, 2)],
)
def test_balanced_tables_report_pair_spread(n: int, k: int, tables: int, max_spread: int) -> None:
    schedule = round_robin_tables(n, k, tables, seed=7)
    assert len(schedule) == tables
    assert all(len(set(t)) == k and list(t) == sorted(t) for t in schedule)
    per_entrant = tables * k // n
    assert Counter(e for t in schedule for e in t) == {e: per_entrant for e in range(n)}
    low, high = meeting_spread(schedule, n)
    mean = tables * math.comb(k, 2) / math.comb(n, 2)
    print(f"n={n} k={k} tables={tables}: pair meetings {low}..{high} (mean {mean:.2f})")
    assert low <= mean <= high
    assert high - low <= max_spread


def test_round_robin_is_deterministic_given_seed() -> None:
    assert round_robin_tables(20, 5, 20, seed=3) == round_robin_tables(20, 5, 20, seed=3)
    assert round_robin_tables(20, 5, 20, seed=3) != round_robin_tables(20, 5, 20, seed=4)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(3, 14),
    k=st.integers(2, 6),
    per_entrant=st.integers(1, 4),
    seed=st.integers(0, 2**32),
)
def test_balanced_tables_property(n: int, k: int, per_entrant: int, seed: int) -> None:
    k = min(k, n)
    step = k // math.gcd(n, k)
    tables = per_entrant * step * n // k
    schedule = round_robin_tables(n, k, tables, seed=seed)
    assert len(schedule) == tables
    assert all(len(set(t)) == k for t in schedule)
    assert Counter(e for t in schedule for e in t) == {e: per_entrant * step for e in range(n)}
    games = expand(schedule, base_seed=seed)
    counts = seat_counts(games, n)
    assert (counts == counts[0, 0]).all()


def test_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="cannot fill a table"):
        round_robin_tables(3, 4)
    with pytest.raises(ValueError, match="at least 2 seats"):
        round_robin_tables(3, 1)


def test_tables_for_games_per_entrant() -> None:
    # k=4: 4 Williams rows per table. 10 games -> 3 tables each -> 13*3/4 is not whole,
    # so round up to 4 tables each: 13 tables, 16 games per entrant.
    assert tables_for_games_per_entrant(13, 4, 10) == 13
    assert games_per_entrant(13, 4, 13) == 16
    # k=3: 6 rows per table; 12 games -> 2 tables each -> 5*2/3 not whole -> 3 each.
    assert tables_for_games_per_entrant(5, 3, 12) == 5
    assert games_per_entrant(5, 3, 5) == 18
    for n, k, g in [(20, 5, 37), (7, 3, 1), (12, 6, 50)]:
        tables = tables_for_games_per_entrant(n, k, g)
        assert (tables * k) % n == 0
        assert games_per_entrant(n, k, tables) >= g


# --------------------------------------------------------------------------- expansion


def test_expand_whole_schedule_is_seat_balanced_on_shared_deals() -> None:
    n, k = 13, 4
    tables = round_robin_tables(n, k, 26, seed=5)
    games = expand(tables, base_seed=99)
    rows = len(williams_design(k))
    assert len(games) == len(tables) * rows
    assert [g.index for g in games] == list(range(len(games)))
    counts = seat_counts(games, n)
    per_seat = 26 * k // n * rows // k
    assert (counts == per_seat).all()
    by_table: dict[int, list[ScheduledGame]] = {}
    for game in games:
        by_table.setdefault(game.table, []).append(game)
    seeds = set()
    for t, group in by_table.items():
        assert {g.seed for g in group} == {deal_seed(99, t)}
        assert {frozenset(g.seating) for g in group} == {frozenset(tables[t])}
        assert len({g.seating for g in group}) == rows
        seeds.add(group[0].seed)
    assert len(seeds) == len(tables)


def test_expand_mixed_table_sizes_and_explicit_rows() -> None:
    games = expand([(0, 1, 2), (0, 1, 2, 3)], base_seed=1)
    assert [len(g.seating) for g in games] == [3] * 6 + [4] * 4
    fixed = expand([(4, 7)], rows=[[1, 0]], base_seed=1)
    assert [g.seating for g in fixed] == [(7, 4)]
    with pytest.raises(ValueError, match="seat design is for 2"):
        expand([(1, 2, 3)], rows=[[1, 0]])
    with pytest.raises(ValueError, match="not an order"):
        expand([(1, 2)], rows=[[0, 0]])


def test_deal_seed_is_stable_and_fits_sqlite() -> None:
    assert deal_seed(1, 0) == deal_seed(1, 0)
    assert deal_seed(1, 0) != deal_seed(2, 0) != deal_seed(1, 1)
    assert all(0 <= deal_seed(s, t) < 2**63 for s in (-5, 0, 2**70) for t in range(5))


# --------------------------------------------------------------------------- gauntlet


def test_gauntlet_hero_everywhere_and_field_even() -> None:
    n, k, hero = 9, 4, 3
    tables = gauntlet_tables(n, k, hero, tables=16, seed=1)
    assert len(tables) == 16
    assert all(hero in t and len(set(t)) == k for t in tables)
    field = Counter(e for t in tables for e in t if e != hero)
    assert set(field) == set(range(n)) - {hero}
    assert set(field.values()) == {6}  # 16 * 3 / 8
    counts = seat_counts(expand(tables), n)
    assert (counts[hero] == 16).all()  # 16 tables x 4 rows / 4 seats


def test_gauntlet_uneven_field_differs_by_at_most_one() -> None:
    tables = gauntlet_tables(8, 3, 0, tables=5, seed=2)
    field = Counter(e for t in tables for e in t if e != 0)
    assert max(field.values()) - min(field.values()) <= 1
    assert sum(field.values()) == 10


def test_gauntlet_rejects_bad_hero() -> None:
    with pytest.raises(ValueError, match="hero 9"):
        gauntlet_tables(5, 3, 9, tables=3)


# --------------------------------------------------------------------------- head-to-head


def test_head_to_head_pairs_are_identical_but_for_a_and_b() -> None:
    n, k, a, b = 8, 4, 2, 5
    pairs = head_to_head(n, k, a, b, deals=6, seed=11)
    assert len(pairs) == 6 * len(williams_design(k))
    assert [p.index for p in pairs] == list(range(len(pairs)))
    for p in pairs:
        assert isinstance(p, HeadToHeadPair)
        assert p.seating_a[p.seat] == a and p.seating_b[p.seat] == b
        assert b not in p.seating_a and a not in p.seating_b
        others_a = [e for s, e in enumerate(p.seating_a) if s != p.seat]
        others_b = [e for s, e in enumerate(p.seating_b) if s != p.seat]
        assert others_a == others_b
        assert p.seed == deal_seed(11, p.deal)
    seats = Counter(p.seat for p in pairs)
    assert set(seats.values()) == {6}
    opponents = Counter(e for p in pairs if p.row == 0 for e in p.seating_a if e != a)
    assert max(opponents.values()) - min(opponents.values()) <= 1


def test_head_to_head_needs_enough_opponents() -> None:
    with pytest.raises(ValueError, match="needs 3 opponents"):
        head_to_head(4, 4, 0, 1, deals=2)
    with pytest.raises(ValueError, match="different"):
        head_to_head(6, 3, 1, 1, deals=2)


def test_pair_meetings_matrix() -> None:
    m = pair_meetings([(0, 1, 2), (0, 1, 3)], 4)
    assert m[0, 1] == 2 and m[2, 3] == 0 and m[0, 3] == 1
    assert (m == m.T).all() and (np.diag(m) == 0).all()


def _warm_starts(games: list[ScheduledGame], entrants: int) -> int:
    """Processes started to play ``games`` one after another, as referee.seats.WarmPool reuses them.

    A process is reused for any deal it has not played (the pool's guarantee);
    otherwise a new one starts: for a JVM bot, a JVM start.
    """
    played: dict[int, list[set[int]]] = {e: [] for e in range(entrants)}
    started = 0
    for game in games:
        for entrant in game.seating:
            idle = played[entrant]
            fits = [seen for seen in idle if game.seed not in seen]
            if fits:
                fits[-1].add(game.seed)
            else:
                idle.append({game.seed})
                started += 1
    return started


@pytest.mark.parametrize(("n", "k"), [(6, 3), (6, 4), (7, 5), (4, 3)])
def test_warm_processes_start_only_as_many_as_one_deals_seatings_need(n: int, k: int) -> None:
    # An entrant plays each of its deals once per Williams row, each time on a
    # process that has not seen that deal: rows processes are the least it can
    # have, whatever the order. The schedule's order starts no more than that.
    rows = len(williams_design(k))
    tables = round_robin_tables(n, k, None, seed=3)
    games = expand(tables, None, 3, b"key")
    assert _warm_starts(games, n) == n * rows
