"""The ``famiglia`` command line: a thin shell over the library.

Each command group is its own Typer app, composed here with ``add_typer``.
"""

from __future__ import annotations

import typer

from tournaments.cli import replay
from tournaments.cli.play import play

__all__ = ["app", "main"]

app = typer.Typer(
    name="famiglia",
    help="A tournament harness for board-game bots written in any language.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
app.command()(play)
app.add_typer(replay.app, name="replay")


def main() -> None:
    app()
