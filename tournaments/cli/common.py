"""What every command shares: user mistakes become one line on stderr and exit 2."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
from rich.console import Console
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
from typer.core import TyperGroup
from typer.exceptions import Abort

from referee.bots import BotBuildFailed

__all__ = [
    "OneLineErrors",
    "console",
    "err_console",
    "exit_on_interrupt",
    "fail",
    "first_leaf",
    "interrupted",
    "user_errors",
]

# Piped output has no terminal width; Rich would assume 80 columns and truncate
# names in wide tables, so give it room instead. Nor is a line of text wrapped
# there (soft wrap): a message naming a long path stays one line for a script.
console = Console() if sys.stdout.isatty() else Console(width=160, soft_wrap=True)
err_console = Console(stderr=True) if sys.stderr.isatty() else Console(stderr=True, width=160, soft_wrap=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one line saying what is wrong and stop."""
    err_console.print(f"famiglia: error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a caller mistake (the ValueError family) or a fault of the machine
    (disk full, a folder not writable: OSError) into one line and an exit code.

    Errors raised inside Trio nurseries arrive wrapped in exception groups;
    a group made only of such errors is reported by its first one.
    """
    try:
        yield
    except (ValueError, BotBuildFailed) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(_describe(exc), code=1)
    except BaseExceptionGroup as group:
        if group.subgroup(KeyboardInterrupt) is not None:
            raise
        expected, rest = group.split((ValueError, BotBuildFailed, OSError))
        if expected is None or rest is not None:
            raise
        first = first_leaf(expected)
        fail(_describe(first), code=1 if isinstance(first, OSError) else 2)


def first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception of a group that is not itself a group."""
    leaf: BaseException = group
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    return leaf


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    return str(exc)


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C, alone or inside Trio's exception groups."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(KeyboardInterrupt) is not None
    return False


@contextmanager
def exit_on_interrupt(message: str) -> Iterator[None]:
    """Ctrl-C becomes ``message`` on one line and exit code 130, not a traceback."""
    try:
        yield
    except BaseException as exc:
        if not interrupted(exc):
            raise
        err_console.print(message, markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(130) from None


class OneLineErrors(TyperGroup):
    """The root command group: a mistyped command line is one line too, not usage, hint and error.

    ``famiglia play vendetta --move-ms abc`` says what is wrong with which option
    and where the help is, on one line, exit 2, like every other user mistake.
    Asking for nothing (``famiglia tournament``) still prints the help.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        def run(standalone: bool) -> Any:
            return super(OneLineErrors, self).main(
                args, prog_name, complete_var, standalone, windows_expand_args, **extra
            )

        if not standalone_mode:
            return run(False)
        try:
            code = run(False)
        except NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except UsageError as exc:
            where = f"; see {exc.ctx.command_path} --help" if exc.ctx is not None else ""
            message = " ".join(exc.format_message().split()).rstrip(".")
            err_console.print(f"famiglia: error: {message}{where}", markup=False, highlight=False, soft_wrap=True)
            sys.exit(exc.exit_code)
        except ClickException as exc:
            err_console.print(f"famiglia: error: {exc.format_message()}", markup=False, highlight=False, soft_wrap=True)
            sys.exit(exc.exit_code)
        except Abort:
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)
