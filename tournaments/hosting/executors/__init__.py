"""Executors: what plays a competition's games, one ``play`` per game (``base.Executor``).

- ``base``: the interface, ``Competition`` (what every game shares) and ``Seat``.
- ``choice``: ``executor_for``, the one choice by name, with one line per mistake.
- ``inprocess``: Trio referees in this process, up to a number of games at once.
- ``processes``: worker processes on this machine, so every core referees.
- ``local_bots``: each bot built once where it plays on this machine.
- ``dask``: the workers of a Dask distributed cluster, past one machine; ``dask_worker`` is
  its side on the workers, ``bot_packages`` how bots reach them, ``dask_cluster`` how the
  scheduler is reached, ``installed`` which famiglia each side runs.

The tournament's runner and the ladder's loop both play through these. This
package's ``__init__`` imports nothing: a worker process started as
``python -m tournaments.hosting.executors.processes`` ignores Ctrl-C before any import.
"""
