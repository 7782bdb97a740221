"""Whether a tournament has games left to play, in the words every command uses.

A round-robin or a gauntlet is over when every scheduled game is played. A
head-to-head is over as soon as its sequential test stops (it decided, or its
game budget ran out), however many scheduled games are unplayed: those are
not missing, they are not needed. ``standings``, ``games``, the report and
``tournament run`` all say so through these functions, so none of them reads
a decided test as unfinished.
"""

from __future__ import annotations

from tournaments.hosting.sprt import elo_estimate_words
from tournaments.report.standings import Standings, head_to_head_status, head_to_head_verdict, standings
from tournaments.store import Store

__all__ = ["games_words", "has_games_left", "more_games_hint", "state_line", "stopped_test"]


def has_games_left(report: Standings) -> bool:
    """True while games are to be played: a head-to-head's test still running, or any scheduled game unplayed."""
    if report.head_to_head is not None:
        return not report.head_to_head.finished
    return report.games < report.scheduled


def games_words(report: Standings) -> str:
    """The games in words: "26 of 396 games" while some are to play, "26 games; decided: ..." once a test stopped."""
    h2h = report.head_to_head
    if h2h is None or not h2h.finished:
        return f"{report.games} of {report.scheduled} games"
    unneeded = report.scheduled - report.games
    needless = f", the other {unneeded} scheduled games not needed" if unneeded > 0 else ""
    return f"{report.games} games; {_stopped(report)}{needless}"


def _stopped(report: Standings) -> str:
    h2h = report.head_to_head
    assert h2h is not None
    if h2h.decision == "continue":  # out of budget, undecided
        return "the test used its whole budget (max_games) without a verdict"
    return f"decided: {head_to_head_verdict(report)}"


def state_line(report: Standings) -> str:
    """A head-to-head's state in one line (its verdict, the Elo difference, the test's numbers); "" for other formats."""
    h2h = report.head_to_head
    if h2h is None:
        return ""
    if h2h.finished:
        state = _stopped(report)
        left = "no games left to play"
    else:
        state = "running, no verdict yet"
        left = f"{report.scheduled - report.games} games at most left to play"
    return (
        f"head-to-head: {state} after {h2h.pairs} pairs; Elo difference {elo_estimate_words(h2h, _a(report))}; "
        f"LLR {h2h.llr:+.2f}, bounds {h2h.lower_bound:+.2f} .. {h2h.upper_bound:+.2f}; {left}"
    )


def _a(report: Standings) -> str:
    """The name of the head-to-head's A, as the verdict uses it."""
    return report.head_to_head_entrants[0] if report.head_to_head_entrants else "A"


def more_games_hint(report: Standings) -> str:
    """How to narrow the intervals with more games, naming the key this format reads; "" when more cannot help."""
    h2h = report.head_to_head
    if h2h is None:
        return (
            "four times the games halve them: raise games_per_entrant (or, in a round-robin, repetitions) "
            "in the tournament file and run it again to add games to the same results file"
        )
    if h2h.decision != "continue":
        return "the head-to-head has decided, so it plays no more games"
    if h2h.exhausted:
        return "the test ran out of games undecided: raise max_games in the tournament file and run it again"
    return "the head-to-head plays on until its test decides (at most max_games)"


def stopped_test(store: Store) -> Standings | None:
    """The standings of a head-to-head whose test has stopped (nothing left to play); None otherwise."""
    status = head_to_head_status(store)
    if status is None or not status.finished:
        return None
    return standings(store)
