"""``famiglia check-bot``: run one bot through the conformance checks (tournaments.hosting.checkbot)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from tournaments.cli.common import console, err_console, exit_on_interrupt, print_json, user_errors
from tournaments.cli.options import (
    DEFAULT_SANDBOX,
    DEFAULT_TIME,
    BankMs,
    MoveMs,
    Runtime,
    Sandbox,
    StartupMs,
    sandbox_section,
    time_section,
)
from tournaments.hosting.markup import NAME_CHARS, shown
from tournaments.hosting.settings import referee_settings

# The checks themselves (the engines, the referee, the sandbox) are imported
# when a bot is checked, not at every start of famiglia (tournaments.cli).
if TYPE_CHECKING:
    from tournaments.hosting.checkbot.report import CheckReport

__all__ = ["check_bot_command", "print_report", "startup_line"]

_MARK = {"pass": "[green]pass[/]", "fail": "[red]FAIL[/]", "skip": "[yellow]skip[/]"}


def startup_line(report: CheckReport) -> str:
    """The bot's start-up time and the ``--startup-ms`` it needs, against the limit it was checked with."""
    up = report.startup
    if up.processes == 0:
        return f"start-up: no process said ready (limit {up.limit_ms} ms)"
    verdict = "within" if up.slowest_ms <= up.limit_ms else "over"
    return (
        f"start-up: slowest {up.slowest_ms:.0f} ms over {up.processes} fresh process(es), {verdict} the limit of "
        f"{up.limit_ms} ms; it needs --startup-ms {up.needed_ms} (twice its slowest, for a busy machine)"
    )


def print_report(report: CheckReport) -> None:
    """One line per check, what to fix under each failure, then the summary line.

    A detail quotes what the bot did (a reason, a line it sent, the names of files
    it wrote) and the summary names it as its bot.toml does: all of it is ``shown``.
    """
    for result in report.checks:
        detail = f"  [dim]{shown(result.detail)}[/]" if result.detail and result.status != "fail" else ""
        console.print(f"{_MARK[result.status]}  {shown(result.name)}{detail}", highlight=False)
        if result.status == "fail":
            console.print(f"      did:    {shown(result.detail)}", highlight=False, soft_wrap=True)
            console.print(f"      wanted: {shown(result.wanted)}", highlight=False, soft_wrap=True)
            console.print(f"      fix:    {shown(result.fix)}", highlight=False, soft_wrap=True)
    t = report.thinking
    console.print(
        f"thinking time over {t.decisions} decisions: median {t.median_ms} ms, p95 {t.p95_ms} ms, max {t.max_ms} ms",
        highlight=False,
    )
    console.print(startup_line(report), highlight=False)
    counts = {status: sum(r.status == status for r in report.checks) for status in ("pass", "fail", "skip")}
    verdict = "[green]all checks passed[/]" if report.passed else "[red]some checks failed[/]"
    console.print(
        f"{shown(report.bot, NAME_CHARS)} ({shown(report.game)}): {verdict}: {counts['pass']} passed, "
        f"{counts['fail']} failed, {counts['skip']} skipped; {report.games} games in {report.seconds:.1f} s",
        highlight=False,
    )


def check_bot_command(
    bot: Annotated[str, typer.Argument(help="a folder with bot.toml, or a command line in quotes")],
    game: Annotated[str, typer.Option(help="vendetta, sicilianos or an installed game plug-in")] = "vendetta",
    move_ms: MoveMs = DEFAULT_TIME.move_ms,
    bank_ms: BankMs = DEFAULT_TIME.bank_ms,
    startup_ms: StartupMs = DEFAULT_TIME.startup_ms,
    sandbox: Sandbox = DEFAULT_SANDBOX,
    runtime: Runtime = [],  # noqa: B006
    json: Annotated[bool, typer.Option("--json", help="print the report as one JSON object")] = False,
) -> None:
    """Check that a bot follows the protocol in every position of a game, before a tournament admits it.

    Exit code 0: every check passed; 1: a check failed; 2: a mistake in the command.
    """
    import trio

    from referee.games import get_rules
    from tournaments.config.bot_names import load_named_bot
    from tournaments.hosting.checkbot.games import check_bot

    with user_errors():
        get_rules(game)
        # The same bounds as famiglia play: a clock no bot can meet is the user's mistake, not the bot's.
        time = time_section(move_ms=move_ms, bank_ms=bank_ms, startup_ms=startup_ms)
        contained = sandbox_section(sandbox, runtime)
        spec = load_named_bot(bot)
    settings = referee_settings(time, contained, "forfeit")

    def progress(name: str) -> None:
        if not json and err_console.is_terminal:
            err_console.print(f"[dim]checking {shown(name)} ...[/]\x1b[K", highlight=False, end="\r")

    with exit_on_interrupt("interrupted: the check was stopped; no verdict"), user_errors():
        report = trio.run(partial(check_bot, spec, game, settings, progress=progress))
    if json:
        print_json(msgspec.json.encode(report).decode())
    else:
        print_report(report)
    raise typer.Exit(0 if report.passed else 1)
