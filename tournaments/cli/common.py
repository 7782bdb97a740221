"""What every command shares: user mistakes become one line on stderr and exit 2; bot text is shown, never obeyed.

Bot text becomes terminal text in one place, ``tournaments.hosting.markup.shown``; every message here passes through it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.highlighter import JSONHighlighter
from typer._click import Context
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
from typer.core import TyperGroup, TyperOption
from typer.exceptions import Abort

from tournaments.hosting.markup import shown

__all__ = [
    "OneLineErrors",
    "QuickHelp",
    "console",
    "err_console",
    "exit_on_interrupt",
    "fail",
    "first_leaf",
    "interrupted",
    "print_json",
    "user_errors",
]

# Piped output has no terminal width; Rich would assume 80 columns and truncate
# names in wide tables, so give it room instead. Nor is a line of text wrapped
# there (soft wrap): a message naming a long path stays one line for a script.
# No emoji codes: Rich would turn a bot named ":skull:" into a picture even in
# escaped markup or with markup off; what a bot wrote is shown as it wrote it.
console = Console(emoji=False) if sys.stdout.isatty() else Console(width=160, soft_wrap=True, emoji=False)
err_console = (
    Console(stderr=True, emoji=False)
    if sys.stderr.isatty()
    else Console(stderr=True, width=160, soft_wrap=True, emoji=False)
)


def print_json(text: str) -> None:
    """JSON on stdout, indented and highlighted as ``Console.print_json`` prints it, with nothing a terminal obeys.

    JSON itself escapes only the C0 controls; C1 controls, bidi overrides and the
    other non-printable characters of a bot's name or log line would reach the
    terminal raw. Here they are ``\\uXXXX`` escapes, which is still JSON and
    decodes to the same strings, so a script reading the output loses nothing.
    """
    pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    if not pretty.replace("\n", "").isprintable():
        pretty = "".join(c if c.isprintable() or c == "\n" else _json_escape(c) for c in pretty)
    rendered = JSONHighlighter()(pretty)
    rendered.no_wrap = True
    rendered.overflow = None
    console.print(rendered, soft_wrap=True)


def _json_escape(c: str) -> str:
    """One character as a JSON string escape; past the BMP as its UTF-16 surrogate pair, as JSON spells it."""
    point = ord(c)
    if point <= 0xFFFF:
        return f"\\u{point:04x}"
    point -= 0x10000
    return f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}"


def famiglia_command() -> str:
    """How to run famiglia again from here, for a hint to print: ``famiglia`` when that name on PATH is
    this program, else the path it was started by (``.venv/bin/famiglia`` right after the quick start)."""
    import os
    import shutil

    started = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if not started or started.endswith("__main__.py"):
        return "python -m tournaments.cli"
    found = shutil.which("famiglia")
    if found is not None and os.path.realpath(found) == os.path.realpath(started):
        return "famiglia"
    path = os.path.abspath(started)
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one line saying what is wrong and stop.

    The message may quote a bot (its name, the end of its build's output): it is
    shown through ``shown``, so it stays one line and nothing in it is obeyed.
    """
    err_console.print(f"famiglia: error: {shown(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a caller mistake (the ValueError family) or a fault of the machine
    (disk full, a folder not writable: OSError) into one line and an exit code.

    Errors raised inside Trio nurseries arrive wrapped in exception groups;
    a group made only of such errors is reported by its first one.
    """
    from referee.bots import BotBuildFailed  # here: the bot loader is not needed to print help

    try:
        yield
    except (ValueError, BotBuildFailed) as exc:
        fail(str(exc))
    except BaseExceptionGroup as group:  # before Exception, which groups of Exceptions are too
        if group.subgroup(KeyboardInterrupt) is not None:
            raise
        expected, rest = group.split(lambda exc: isinstance(exc, (ValueError, BotBuildFailed)) or host_fault(exc))
        if expected is None or rest is not None:
            raise
        first = first_leaf(expected)
        fail(_describe(first), code=1 if host_fault(first) else 2)
    except Exception as exc:
        if not host_fault(exc):
            raise
        fail(_describe(exc), code=1)


_STORE_FAULTS = (
    "database or disk is full",
    "disk i/o error",
    "unable to open database file",
    "attempt to write a readonly database",
    "database is locked",
)
"""What SQLite says when the machine failed a store, not famiglia's code (whose faults keep their traceback)."""


def host_fault(exc: BaseException) -> bool:
    """A fault of the machine the command ran on, told in one line with exit 1: an OSError (a full disk, a folder
    not writable), or SQLite's word for one. (``tournaments.hosting.faults.machine_fault`` is the harness's
    own: what stops a run or a server, looked for inside exception groups.)"""
    if isinstance(exc, OSError):
        return True
    return _store_fault(exc) and any(fault in str(exc).lower() for fault in _STORE_FAULTS)


def _store_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's OperationalError, without importing sqlite3 (the CLI starts without it):
    such an error can only have been raised once something imported it."""
    sqlite3 = sys.modules.get("sqlite3")
    return sqlite3 is not None and isinstance(exc, sqlite3.OperationalError)


def first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception of a group that is not itself a group."""
    leaf: BaseException = group
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    return leaf


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    if _store_fault(exc):
        # A write the store could not make is undone whole (SQLite's journal): what it held stays as it was.
        fix = (
            "another famiglia command or server held it too long; run the command again"
            if "locked" in str(exc)
            else "make room on its disk or fix its folder, then run the command again"
        )
        return f"the results store could not be used ({exc}); what it holds is as it was: {fix}"
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


class QuickHelp(TyperGroup):
    """A command group whose ``--help``, when it is not given, is False (not None): ``famiglia play --help`` starts faster.

    Typer passes every option value that is not already a bool through a
    pydantic TypeAdapter, importing pydantic (a tenth of a second) to do so. The
    help flag of a group not asked for help was None, so ``famiglia play --help``
    paid that only to read the root's absent ``--help`` as False. A command that
    runs still has its own options checked by pydantic.
    """

    def get_help_option(self, ctx: Context) -> TyperOption | None:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option


class OneLineErrors(QuickHelp):
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
