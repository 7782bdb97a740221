"""The ``famiglia`` command line: a thin shell over the library.

Each command group is its own Typer app, composed here with ``add_typer``.

Importing this package builds the whole command tree, which every start of
``famiglia`` does, ``--help`` included; so the command modules import only what
their options need (Typer, the settings their defaults come from) at the top,
and the library behind a command (numpy, scipy, OpenSkill, Jinja, the referee,
Trio where it can) inside the function that runs it.
tests/tournaments/cli/test_cli_startup.py checks that this stays so.
"""

from __future__ import annotations

import sys

try:
    from typing import Annotated

    import typer

    from ladder.cli import app as ladder_app
    from tournaments.cli import replay, tournament, worker
    from tournaments.cli.check_bot import check_bot_command
    from tournaments.cli.common import OneLineErrors
    from tournaments.cli.play import play
    from tournaments.cli.reports import crosstable_command, games_command, report_command, standings_command
    from tournaments.cli.schema import schema_command
    from tournaments.hosting.finals import FinalPlan, FinalResult, use_final_runner
except KeyboardInterrupt:
    # Ctrl-C while famiglia is still starting (these imports take a second on a
    # busy machine): no command has begun, so there is nothing to undo or say but that.
    print("interrupted while starting: nothing was done", file=sys.stderr)
    raise SystemExit(130) from None

__all__ = ["app", "main"]

app = typer.Typer(
    name="famiglia",
    help="A tournament harness for board-game bots written in any language.",
    no_args_is_help=True,
    cls=OneLineErrors,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    # Plain help: the Rich panels of Typer 0.29 print "<bool>" beside every flag.
    rich_markup_mode=None,
)


def famiglia_version() -> str:
    """The installed distribution's version (what pip installed), or "unknown"."""
    # Here, not at the top: importlib.metadata costs tens of milliseconds at every start.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("famiglia")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"famiglia {famiglia_version()}")
        raise typer.Exit()


@app.callback()
def _options(
    _version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="print the version and exit"),
    ] = False,
) -> None:
    """A tournament harness for board-game bots written in any language."""


app.command()(play)
app.command()(tournament.demo)
app.command("check-bot")(check_bot_command)
app.command("schema")(schema_command)
app.add_typer(tournament.app, name="tournament")
app.add_typer(replay.app, name="replay")
app.add_typer(worker.app, name="worker")
app.command("standings")(standings_command)
app.command("crosstable")(crosstable_command)
app.command("games")(games_command)
app.command("report")(report_command)
app.add_typer(ladder_app, name="ladder")


async def _play_final(plan: FinalPlan) -> FinalResult:
    # The ladder's season final is a tournament: the wing plays it (tournaments.finals), handed to the
    # ladder here, where both are composed, since neither may import the other.
    from tournaments.finals import play_final

    return await play_final(plan)


use_final_runner(_play_final)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:  # while Typer builds the commands, before any of them runs
        print("interrupted while starting: nothing was done", file=sys.stderr)
        raise SystemExit(130) from None
