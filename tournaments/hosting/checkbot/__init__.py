"""``famiglia check-bot``: does a bot follow the protocol, in every position the games can reach?

One room per job, each importing only those before it:

- ``report``: what a check found (``CheckReport``, one ``CheckResult`` per check,
  the thinking and start-up figures), plain values the CLI and the ladder read.
- ``transcript``: ``Transcript``, the ``BotChannel`` around the bot's process that
  keeps what it said and how fast.
- ``probes``: what is looked at outside the conversation (the bot's folder, its
  processes in /proc, what its stdout still held).
- ``verdicts``: the checks, what each wants, and which check a failure breaks,
  with its fix.
- ``seats``: the random opponents.
- ``games``: the driver, ``check_bot``: builds the bot and plays every game of the
  check through the referee's own ``run_match``.

What is played comes from the game: its ``GameRules`` check-bot hooks (the
forced positions, found by referee.games.checkbot; the variant sets; the doc
section and fix for its illegal actions), so nothing here names a game.
"""
