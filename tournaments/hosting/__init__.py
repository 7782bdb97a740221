"""The hosting floor: what any competition on the referee uses; the ladder imports only this floor.

- ``storage``: one SQLite file made the host's alone (0600), in WAL mode with a busy
  timeout, tightened again when opened up, the one ``Transaction`` (BEGIN
  IMMEDIATE ... COMMIT, ROLLBACK on error), and ``hold_store``, the lock that lets
  one process at a time write it. Under the tournament's results store
  (``tournaments.store``) and the ladder's store (``ladder.store``).
- ``settings``: the settings a host gives, in sections (time, sandbox, format,
  executor), each setting declared once with its default, unit, range and meaning,
  and ``referee_settings`` that turns them into the one clock and limits a match uses.
- ``ranges``: the bounds beyond which a value is a typo, and the words for a value out
  of range, for a tournament file, a ladder file and the command line alike.
- ``faults``: which exceptions stop a run and which leave a game to be played again
  later: the one classification of what an executor's game raised, for a
  tournament's runner and the ladder's loop alike.
- ``executors``: what plays the games, one ``play(spec, seats, replay)`` per game:
  in this process, in worker processes, on a Dask cluster; ``executor_for`` chooses.
- ``schedule``: tables, Williams seatings and deal seeds, pure functions of a seed.
- ``ratings``: live OpenSkill ratings and the final Plackett-Luce fit with intervals.
- ``sprt``: the sequential test that stops a head-to-head once it decides.
- ``viewer``: the self-contained HTML page that replays one game.
- ``markup``: text a bot controls, as Rich markup that prints it literally.
- ``checkbot``: does a bot follow the protocol (``famiglia check-bot``, and the
  ladder's check of every submission).

A tournament is one competition on this floor, the ladder another; neither keeps a copy of it.
"""
