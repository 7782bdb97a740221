"""``famiglia schema GAME``: the JSON Schema of one installed game's messages, a plug-in's too."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tournaments.cli.common import console, fail, user_errors

__all__ = ["schema_command"]


def schema_command(
    game: Annotated[str, typer.Argument(help="an installed game (famiglia play --help lists them)")],
    out: Annotated[Path | None, typer.Option("--out", help="write the schema to this file, not the terminal")] = None,
) -> None:
    """Print the JSON Schema (2020-12) of GAME's messages, both directions: what a bot reads and writes.

    The same generator as protocol/schema.json, for any installed game. Its entry points are
    <Game>RefereeMessage and <Game>BotMessage.
    """
    from referee.private import write_private
    from referee.schema import render
    from tournaments.config.paths import file_target_problem

    with user_errors():
        text = render((game,))
    if out is None:
        console.print(text, end="", highlight=False, markup=False, soft_wrap=True)
        return
    if (problem := file_target_problem(out)) is not None:
        fail(f"--out {out}: {problem}")
    if not out.parent.is_dir():
        fail(f"--out {out}: there is no folder {out.parent}; create it, or name a file in a folder that exists")
    with user_errors():
        write_private(out, text.encode())
    console.print(f"wrote {out}", highlight=False, markup=False)
