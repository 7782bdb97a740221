"""What a host asks for, and whether it can work: the tournament file and every setting in it.

- ``paths``: whether a folder or a file can be written where a setting names it.
- ``spellings``: the first release's spellings of settings, moved into their sections.
- ``bot_names``: a bot as a host names it, and what ``~`` or ``human`` there meant.
- ``tournament``: the tournament file, read and checked into a ``TournamentConfig``.
- ``notes``: what a valid file will do that its host may not expect.
- ``capacity``: how many games at once one referee process can hold on this machine.

The settings sections themselves, each setting declared once with its default, unit
and range, are on the hosting floor (``tournaments.hosting.settings`` and
``tournaments.hosting.ranges``): the ladder reads the same sections.

Nothing is gathered here: the command line imports the settings at every start of
famiglia, and must not pay for the file reader (the referee, the games) to do so.
"""
