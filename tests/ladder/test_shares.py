"""Each entrant's share of the ladder (issue 40 item 2): of the games in flight and of recent game time,
bounded whatever its rating's interval. The rules on a ShareBook fed by hand; the same rules on a real
server with real bots: test_shares_served.py."""

from __future__ import annotations

import pytest

from ladder.shares import SLACK, ShareBook, fair_share, fair_time_share, seat_seconds

FIELD = {1: "ann", 2: "bob", 3: "cat", 4: "dan", 5: "hog"}
"""Five versions of five entrants: at 3-seat tables each sits at 3/5 of them when all are dealt alike."""


def test_the_fair_share_is_the_seats_over_the_entrants_and_never_more_than_every_table() -> None:
    assert fair_share(3, 5) == 0.6 and fair_share(3, 3) == 1.0 and fair_share(4, 2) == 1.0


def test_the_fair_share_of_game_time_is_one_over_the_entrants_whatever_the_table_size() -> None:
    # A game's seconds are split among its seats, so the entrants' shares of all game time sum to one:
    # five alike, at 3-seat tables, own a fifth each (not the 3/5 of the tables they sit at).
    book = ShareBook()
    names = ["ann", "bob", "cat", "dan", "eve"]
    for game in range(5):
        table = [names[(game + i) % 5] for i in range(3)]
        book.started(game, table)
        book.ended(game, seat_seconds(3.0, table, [1.0, 1.0, 1.0], [False] * 3))
    assert book.time_shares() == pytest.approx(dict.fromkeys(names, fair_time_share(5)))
    assert book.time_limit(5) == pytest.approx(SLACK / 5)


def test_an_entrant_at_its_share_of_games_in_flight_joins_no_new_table_while_others_can_fill_it() -> None:
    book = ShareBook()
    for game, name in enumerate(FIELD.values()):  # one game each: none is held for want of a record
        book.started(game, [name])
        book.ended(game, {name: 0.5 if name == "hog" else 0.2})  # the hog's, past twice the median, is slow
    book.started(10, ["hog", "ann", "bob"])  # 2 games at once: 1.25 * 3/5 * 2 = 1.5, so one game each
    assert book.flight_limit(3, 5, 2) == 1
    assert not book.within(["hog", "cat", "dan"], 3, 5, 2)
    seatable = book.seatable(FIELD, 3, 2)
    assert 5 not in seatable and len(seatable) == 3  # cat and dan, topped up by ann or bob, never the hog


def test_a_slow_entrants_games_count_against_its_share_of_game_time_and_it_waits() -> None:
    book = ShareBook()
    for game in range(10):  # ten quick games among the four others
        table = [FIELD[1 + game % 4], FIELD[1 + (game + 1) % 4], FIELD[1 + (game + 2) % 4]]
        book.started(game, table)
        book.ended(game, seat_seconds(0.2, table, [0.05, 0.05, 0.05], [False] * 3))
    book.started(99, ["hog", "ann", "bob"])
    # One timeout: the whole clock of its seat, on no seat's meter; ann and bob thought 50 ms each.
    book.ended(99, seat_seconds(11.0, ["hog", "ann", "bob"], [0.0, 0.05, 0.05], [True, False, False]))
    shares = book.time_shares()
    assert shares["hog"] > SLACK * fair_time_share(5)
    assert shares["ann"] < fair_time_share(5)  # sitting beside the hog did not cost ann her share
    assert "hog" not in {FIELD[v] for v in book.seatable(FIELD, 3, 2)}
    assert not book.within(["hog"], 3, 5, 2)


def test_an_entrant_past_its_share_of_time_gets_a_seat_again_once_others_games_outweigh_its_own() -> None:
    book = ShareBook(recent_games=20)
    book.started(0, ["hog", "ann", "bob"])
    book.ended(0, {"hog": 2.0})
    game = 1
    while not book.within(["hog"], 3, 5, 2):
        book.started(game, ["ann", "cat", "dan"])
        book.ended(game, {"ann": 0.2, "cat": 0.2, "dan": 0.1})
        game += 1
        assert game < 100, "the hog's share never came down"
    assert book.time_shares()["hog"] <= SLACK * fair_time_share(5)


def test_the_top_up_takes_the_least_loaded_and_those_past_their_time_share_last() -> None:
    book = ShareBook()
    book.started(0, ["hog"])
    book.ended(0, {"hog": 30.0})  # the hog is far past its share of game time, and in no game now
    book.started(1, ["ann", "bob", "cat", "dan"])
    book.ended(1, {"ann": 1.0, "bob": 1.0, "cat": 1.0, "dan": 1.0})
    book.started(2, ["ann", "bob", "cat"])  # in flight now: ann, bob and cat at their limit of one
    seatable = book.seatable(FIELD, 3, 2)
    # dan alone is within both bounds; two of ann, bob and cat top the table up before the hog does.
    assert 4 in seatable and 5 not in seatable and len(seatable) == 3


def test_a_small_field_still_plays_when_nobody_is_within_its_share() -> None:
    # Three entrants, tables of three: every table seats all of them, so the bound cannot hold.
    field = {1: "ann", 2: "bob", 3: "hog"}
    book = ShareBook()
    book.started(0, ["ann", "bob", "hog"])
    assert sorted(book.seatable(field, 3, 2)) == [1, 2, 3]


def test_a_resubmission_keeps_its_entrants_share_the_book_counts_entrants_not_versions() -> None:
    book = ShareBook()
    book.started(0, ["hog", "ann", "bob"])
    resubmitted = {**FIELD, 6: "hog"}  # the hog's new version beside its old one, still in flight
    del resubmitted[5]
    assert 6 not in book.seatable(resubmitted, 3, 2)


def test_a_game_that_was_not_played_costs_no_game_time_and_frees_its_seat() -> None:
    book = ShareBook()
    book.started(0, ["hog", "ann", "bob"])
    book.ended(0, None)  # its cluster went away: back to pending, played later
    assert book.time_shares() == {} and book.in_flight() == {}


def test_a_games_seconds_are_its_seats_thinking_and_the_rest_is_the_failing_seats() -> None:
    spent = seat_seconds(12.0, ["hog", "ann", "bob"], [0.5, 0.3, 0.2], [True, False, False])
    assert spent == {"hog": 11.5, "ann": 0.3, "bob": 0.2}
    shared = seat_seconds(1.2, ["ann", "bob", "cat"], [0.1, 0.2, 0.3], [False] * 3)
    assert shared == pytest.approx({"ann": 0.3, "bob": 0.4, "cat": 0.5})
    assert sum(seat_seconds(2.0, ["a", "b"], [3.0, 1.0], [False, True]).values()) == 4.0  # thinking over wall: kept


def test_the_pending_game_least_past_the_shares_is_the_one_with_fewest_games_in_flight() -> None:
    book = ShareBook()
    book.started(0, ["hog", "ann", "bob"])  # the hog's table: every one of its members is in flight
    assert book.load(["hog", "ann", "bob"], 3, 5) > book.load(["cat", "dan", "ann"], 3, 5)
    book.ended(0, {"hog": 11.0, "ann": 0.1, "bob": 0.1})
    assert book.load(["hog", "cat", "dan"], 3, 5) == (1, 0)  # past its share of time: counted first


def test_only_the_last_recent_games_count_and_an_entrant_whose_games_all_left_the_window_has_no_share() -> None:
    book = ShareBook(recent_games=3)
    book.started(0, ["hog"])
    book.ended(0, {"hog": 100.0})
    for game in range(1, 4):
        book.started(game, ["ann", "bob"])
        book.ended(game, {"ann": 1.0, "bob": 3.0})
    assert book.time_shares() == {"ann": 0.25, "bob": 0.75}  # the hog's game fell out of the window
    assert book.seconds_per_game() == {"ann": 1.0, "bob": 3.0}


def test_a_slow_or_unknown_entrant_at_its_share_of_games_in_flight_is_held_a_quick_one_is_not() -> None:
    book = ShareBook()
    for game, name in enumerate(["ann", "bob", "cat", "hog"]):
        book.started(game, [name])
        book.ended(game, {name: 11.0 if name == "hog" else 0.4})
    for game, name in enumerate(["ann", "hog", "new"], start=10):
        book.started(game, [name])  # each at its one game in flight (five entrants, two games at once)
    assert not book.held("ann", 3, 5, 2)  # quick: may go past its share when nothing else can be played
    assert book.held("hog", 3, 5, 2)  # its games run their clock out
    assert book.held("new", 3, 5, 2)  # nothing known of its games yet
    assert not book.held("bob", 3, 5, 2)  # in no game now


def test_the_top_up_never_takes_an_entrant_held_at_its_games_in_flight() -> None:
    book = ShareBook()
    for game, name in enumerate(["ann", "bob", "cat", "dan"] * 3 + ["hog"]):
        book.started(game, [name])
        book.ended(game, {name: 2.5 if name == "hog" else 1.0})  # the hog's game is slow, yet within its time
    assert book.time_shares()["hog"] < book.time_limit(5)
    book.started(10, ["hog", "ann", "bob"])
    book.started(11, ["cat"])
    assert book.flight_limit(3, 5, 3) == 2 and 5 in book.seatable(FIELD, 3, 3)  # three slots: two games each
    # Two slots: one game each. Dan alone is within; quick ann, bob or cat top the table up, never the slow hog.
    seatable = book.seatable(FIELD, 3, 2)
    assert 4 in seatable and 5 not in seatable and len(seatable) == 3
    book.started(12, ["dan"])
    seatable = book.seatable(FIELD, 3, 2)  # everyone is in a game now: still not the hog
    assert 5 not in seatable and len(seatable) == 3


def test_no_table_is_dealt_when_only_held_entrants_could_fill_it() -> None:
    book = ShareBook()
    book.started(0, ["ann", "bob", "hog"])  # nobody's games are known yet: a first game's seats are all held
    assert len(book.seatable({1: "ann", 2: "bob", 3: "hog", 4: "dan"}, 3, 2)) < 3


def test_a_bot_failing_just_under_the_health_threshold_is_held_by_its_share_of_game_time() -> None:
    # Health suspends at half of a window failed: this entrant times out in two games of five, each
    # timeout charged its table's whole wait, so health never acts. Its share of game time must.
    book = ShareBook()
    game = 0
    for round_ in range(5):
        for table in (["hog", "ann", "bob"], ["cat", "dan", "ann"], ["bob", "cat", "dan"]):
            book.started(game, table)
            failed = [name == "hog" and round_ % 5 < 2 for name in table]
            book.ended(game, seat_seconds(11.0 if any(failed) else 0.3, table, [0.05] * 3, failed))
            game += 1
    assert book.time_shares()["hog"] > book.time_limit(5)
    assert "hog" not in {FIELD[v] for v in book.seatable(FIELD, 3, 2)}
    assert not book.within(["hog", "ann", "bob"], 3, 5, 2)
