"""What every command shares: user mistakes become one line on stderr and exit 2."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer
from rich.console import Console

from referee.bots import BotBuildFailed

__all__ = ["console", "err_console", "fail", "user_errors"]

# Piped output has no terminal width; Rich would assume 80 columns and truncate
# names in wide tables, so give it room instead.
console = Console() if sys.stdout.isatty() else Console(width=160)
err_console = Console(stderr=True) if sys.stderr.isatty() else Console(stderr=True, width=160)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one line saying what is wrong and stop."""
    err_console.print(f"famiglia: error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the library's caller-mistake errors (ValueError family) into ``fail``."""
    try:
        yield
    except (ValueError, BotBuildFailed, FileNotFoundError) as exc:
        fail(str(exc))
