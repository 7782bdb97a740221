"""``python -m tournaments.cli`` is the ``famiglia`` command."""

from tournaments.cli import main

main()
