"""One match: the referee's conversation with the seats, its clocks, its reading of their lines, its record.

- ``conversation``: ``run_match``: greet every seat, ask for each decision and
  apply it, time a seat out, tell everyone the result.
- ``values``: what a match takes and gives (``MatchSpec``, ``MatchRecord``, ``SeatTiming``).
- ``clock``: each seat's bank and meters, each request's deadline and charge,
  the watchdog that keeps the deadlines.
- ``intake``: a seat's lines, read and judged, with the quick-answer polls.
- ``fair_slice``: one match yields the Trio thread once it has held it for its slice.
- ``trio_peek``: every read of Trio's private run loop, behind Trio's version.
- ``recorder``: the replay, written as the game is played.

The modules stack one way: trio_peek <- intake, fair_slice, clock; recorder <-
intake; values <- clock; all of them <- conversation. Nothing here imports this face.
"""

from referee.match.conversation import Replace, result_of, run_match
from referee.match.values import MatchRecord, MatchSpec, SeatTiming

__all__ = ["MatchRecord", "MatchSpec", "Replace", "SeatTiming", "result_of", "run_match"]
