"""The ``famiglia`` command line: a thin shell over the library.

Each command group is its own Typer app, composed here with ``add_typer``.
"""

from __future__ import annotations

import typer

from tournaments.cli import replay, tournament
from tournaments.cli.check_bot import check_bot_command
from tournaments.cli.play import play
from tournaments.cli.reports import crosstable_command, games_command, report_command, standings_command

__all__ = ["app", "main"]

app = typer.Typer(
    name="famiglia",
    help="A tournament harness for board-game bots written in any language.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
app.command()(play)
app.command()(tournament.demo)
app.command("check-bot")(check_bot_command)
app.add_typer(tournament.app, name="tournament")
app.add_typer(replay.app, name="replay")
app.command("standings")(standings_command)
app.command("crosstable")(crosstable_command)
app.command("games")(games_command)
app.command("report")(report_command)


def main() -> None:
    app()
