"""``famiglia ladder``: init, add-entrant, invite, serve, submit, and the host's pause, resume, retire, lift, requeue, reset-token, backup (docs/ladder.md).

Only Typer and the shared CLI helpers are imported at the top: the server
(Starlette, Hypercorn, Trio), the client (httpx) and the store come in with
the command that uses them, so ``famiglia`` starts as fast as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tournaments.cli.common import QuickHelp, console, exit_on_interrupt, fail, user_errors
from tournaments.hosting.markup import shown

if TYPE_CHECKING:
    from ladder.store import LadderStore

__all__ = ["app"]

_RETRY_S = 5.0
"""How often a served ladder tries to reach a lost Dask scheduler again (the web pages are served meanwhile)."""

app = typer.Typer(
    help="Host a competition: a server that takes bot submissions and plays them without end.",
    no_args_is_help=True,
    cls=QuickHelp,
)


@app.command("init")
def init_command(
    ladder: Annotated[Path, typer.Argument(help="the ladder file to write (it must not exist)")],
) -> None:
    """Write a commented example ladder file to edit."""
    from ladder.config import EXAMPLE

    if ladder.exists():
        fail(f"{ladder} exists already; choose another name (nothing is overwritten)")
    with user_errors():
        ladder.write_text(EXAMPLE.format(file=ladder.name, stem=ladder.stem), encoding="utf-8")
    console.print(
        f"wrote {shown(str(ladder))}; edit it, then: famiglia ladder add-entrant {shown(str(ladder))} NAME",
        highlight=False,
        soft_wrap=True,
    )


@app.command("add-entrant")
def add_entrant_command(
    ladder: Annotated[Path, typer.Argument(help="the ladder file")],
    name: Annotated[str, typer.Argument(help="the entrant's name: letters, digits, _ . -; at most 40")],
) -> None:
    """Register an entrant and print its secret token, once: the ladder keeps only its hash."""
    from ladder.config import LadderPaths, load_ladder
    from ladder.names import NAME_RULE, valid_name
    from ladder.store import LadderStore, new_token

    if not valid_name(name):
        fail(f"{name!r}: {NAME_RULE}")
    with user_errors():
        load_ladder(ladder)
        store = LadderStore(LadderPaths.beside(ladder).db)
        token = new_token()
        store.add_entrant(name, token)
        store.close()
    console.print(f"registered {name}; its token (shown only now, give it to the entrant):", highlight=False)
    typer.echo(token)


@app.command("invite")
def invite_command(
    ladder: Annotated[Path, typer.Argument(help="the ladder file")],
    uses: Annotated[int, typer.Option(help="how many entrants may register with it", min=1, max=10_000)] = 20,
    days: Annotated[float, typer.Option(help="days until it expires", min=0.01, max=365)] = 14,
    revoke: Annotated[bool, typer.Option("--revoke", help="instead: revoke every live code (one leaked)")] = False,
) -> None:
    """Make an invite code people register themselves with at /register; printed once, kept only as a hash."""
    from ladder.invites import add_invite, revoke_invites
    from ladder.store import new_token

    if revoke:
        with user_errors():
            count = revoke_invites(_store(ladder))
        console.print(f"revoked {count} invite codes; registered entrants stay", highlight=False)
        return
    with user_errors():
        store = _store(ladder)
        code = new_token()
        add_invite(store, code, uses, days)
        store.close()
    console.print(f"an invite code for {uses} entrants, valid {days:g} days (shown only now):", highlight=False)
    typer.echo(code)


@app.command("serve")
def serve_command(
    ladder: Annotated[Path, typer.Argument(help="the ladder file")],
    host: Annotated[str, typer.Option(help="the address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="the port (0: any free one, printed)", min=0, max=65535)] = 8000,
    stop_after: Annotated[
        int | None, typer.Option(help="stop after this many games (trials and benchmarks); default: never", min=1)
    ] = None,
    executor: Annotated[
        str | None,
        typer.Option(help="local (in this process) or dask (a Dask cluster; needs --scheduler); default: the file's"),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(help="the Dask scheduler's address, tcp://HOST:8786 or tls://HOST:8786 (default: the file's)"),
    ] = None,
) -> None:
    """Run the ladder: the web pages, the API and the match loop, until Ctrl-C.

    Games are played in this process, or on a Dask cluster with --executor dask (docs/ladder.md).
    """
    import trio

    from ladder.config import LadderPaths, load_ladder
    from ladder.serve import check_address, serve_ladder
    from tournaments.hosting.executors.choice import check_scheduler, executor_for

    with user_errors():
        config = load_ladder(ladder)
        check_address(host, port)
        paths = LadderPaths.beside(ladder)
        check_scheduler(scheduler, executor or config.executor)
        # A Dask scheduler is reached now, before the server starts; once it plays, a lost one is waited for.
        chosen = executor_for(
            executor or config.executor, concurrency=config.concurrency, scheduler=scheduler or config.scheduler,
            file_section="[ladder]", retry_s=_RETRY_S,
        )  # fmt: skip

    def announce(line: str) -> None:
        console.print(shown(line), highlight=False, soft_wrap=True)

    with exit_on_interrupt("stopped: games in play are played again at the next start"), user_errors():
        played = trio.run(
            lambda: serve_ladder(
                config, paths, host=host, port=port, stop_after=stop_after, announce=announce, executor=chosen
            )
        )
    console.print(f"stopped after {played} games", highlight=False)


@app.command("submit")
def submit_command(
    folder: Annotated[Path, typer.Argument(help="the bot's folder (with bot.toml)")],
    server: Annotated[str, typer.Option(help="the ladder's address, http://HOST:PORT")],
    token: Annotated[str, typer.Option(help="your entrant token", envvar="FAMIGLIA_LADDER_TOKEN")],
) -> None:
    """Upload a new version of your bot; the ladder builds and checks it before it plays."""
    from ladder.client import submit_folder

    with user_errors():
        answer = submit_folder(server, token, folder)
    page = server.rstrip("/") + str(answer.get("page", ""))
    console.print(
        f"submitted version {shown(str(answer.get('version')))} of {shown(str(answer.get('entrant')))}: "
        f"{shown(str(answer.get('state')))}; it plays once check-bot passes it; see {shown(page)}",
        highlight=False,
        soft_wrap=True,
    )


@app.command("challenge")
def challenge_command(
    opponents: Annotated[list[str], typer.Argument(help="the entrants to play against")],
    server: Annotated[str, typer.Option(help="the ladder's address, http://HOST:PORT")],
    token: Annotated[str, typer.Option(help="your entrant token", envvar="FAMIGLIA_LADDER_TOKEN")],
) -> None:
    """Ask for a game of your active version against chosen opponents, played in every seating of one deal."""
    from ladder.client import ask_challenge

    with user_errors():
        answer = ask_challenge(server, token, opponents)
    console.print(
        f"queued {shown(str(answer.get('games')))} games against {shown(', '.join(opponents))}; they play "
        "before the ladder's own",
        highlight=False,
        soft_wrap=True,
    )


def _store(ladder: Path) -> LadderStore:
    from ladder.config import LadderPaths, load_ladder
    from ladder.store import LadderStore

    load_ladder(ladder)
    db = LadderPaths.beside(ladder).db
    if not db.is_file():
        raise ValueError(f"{ladder}: no ladder store beside it yet ({db.name}); add an entrant or serve it first")
    return LadderStore(db)


@app.command("pause")
def pause_command(ladder: Annotated[Path, typer.Argument(help="the ladder file")]) -> None:
    """Deal no new games (games in play finish); submissions are still taken and checked."""
    with user_errors():
        _store(ladder).set_paused(True)
    console.print("paused: no new games until famiglia ladder resume", highlight=False)


@app.command("resume")
def resume_command(ladder: Annotated[Path, typer.Argument(help="the ladder file")]) -> None:
    """Deal games again after a pause."""
    with user_errors():
        _store(ladder).set_paused(False)
    console.print("resumed: games are dealt again", highlight=False)


@app.command("retire")
def retire_command(
    ladder: Annotated[Path, typer.Argument(help="the ladder file")],
    name: Annotated[str, typer.Argument(help="the entrant")],
) -> None:
    """Take an entrant's active version off the ladder; its games stay, a new submission plays again."""
    with user_errors():
        number = _store(ladder).retire(name)
    console.print(f"retired version {number} of {shown(name)}", highlight=False)


@app.command("lift")
def lift_command(
    ladder: Annotated[Path, typer.Argument(help="the ladder file")],
    name: Annotated[str, typer.Argument(help="the entrant")],
) -> None:
    """Put an entrant's suspended version back in play; its faults are counted afresh from now."""
    with user_errors():
        number = _store(ladder).lift(name)
    console.print(f"lifted the suspension of version {number} of {shown(name)}", highlight=False)


@app.command("requeue")
def requeue_command(
    ladder: Annotated[Path, typer.Argument(help="the ladder file")],
    game: Annotated[int, typer.Argument(help="the game's number", min=1)],
) -> None:
    """Play again a game the harness failed to referee."""
    with user_errors():
        _store(ladder).requeue(game)
    console.print(f"game {game} is queued to be played again", highlight=False)


@app.command("reset-token")
def reset_token_command(
    ladder: Annotated[Path, typer.Argument(help="the ladder file")],
    name: Annotated[str, typer.Argument(help="the entrant whose token is lost or leaked")],
) -> None:
    """Give an entrant a new token, printed once; the old one and its logins stop working, its history stays."""
    from ladder.sessions import replace_token

    with user_errors():
        store = _store(ladder)
        token = replace_token(store, name)
        store.close()
    console.print(f"new token of {shown(name)} (shown only now; the old one no longer works):", highlight=False)
    typer.echo(token)


@app.command("backup")
def backup_command(
    ladder: Annotated[Path, typer.Argument(help="the ladder file")],
    dest: Annotated[Path, typer.Argument(help="a new folder for the copy (it must not exist)")],
) -> None:
    """Copy the ladder (file, store, replays, uploads) consistently, while it serves; restore by serving the copy."""
    from ladder.backup import backup_ladder

    with user_errors():
        made = backup_ladder(ladder, dest)
    games = ", ".join(f"{count} {state}" for state, count in made.games.items()) or "no games"
    console.print(
        f"backed up to {shown(str(made.config.parent))}: {games}; {made.files} files, {made.bytes / 1e6:.1f} MB. "
        f"Restore: stop the server, then serve {shown(str(made.config))} (docs/ladder.md)",
        highlight=False,
        soft_wrap=True,
    )


@app.command("admin-token")
def admin_token_command(ladder: Annotated[Path, typer.Argument(help="the ladder file")]) -> None:
    """Make the token of the admin page (/admin) and print it once; the token made before stops working."""
    from ladder.config import LadderPaths, load_ladder
    from ladder.store import LadderStore, new_token

    with user_errors():
        load_ladder(ladder)
        # Made here when missing, as add-entrant does: the host may want the page before the first entrant.
        store = LadderStore(LadderPaths.beside(ladder).db)
        token = new_token()
        store.set_admin_token(token)
        store.close()
    console.print("the admin token, for /admin/login and the admin API (shown only now):", highlight=False)
    typer.echo(token)


@app.command("standings")
def standings_command(ladder: Annotated[Path, typer.Argument(help="the ladder file")]) -> None:
    """Every version that played, by the Plackett-Luce fit with 95% intervals (as famiglia standings rates)."""
    from rich.table import Table

    from ladder.views import fit_standings

    with user_errors():
        store = _store(ladder)
        rows = fit_standings(store.rated_games(), store.versions())
    if not rows:
        console.print("no games played yet", highlight=False)
        return
    table = Table(box=None, pad_edge=False)
    for column in ("#", "entrant", "version", "state", "rating", "95% interval", "games"):
        table.add_column(column, justify="left" if column in ("entrant", "state") else "right")
    for row in rows:
        table.add_row(
            str(row.place),
            shown(row.entrant),
            str(row.version),
            row.state,
            f"{row.rating:.0f}",
            f"{row.lower:.0f} to {row.upper:.0f}",
            str(row.games),
        )
    console.print(table)


@app.command("new-season")
def new_season_command(ladder: Annotated[Path, typer.Argument(help="the ladder file")]) -> None:
    """Open the next season once the current one's final is published; past seasons' finals stay viewable."""
    import datetime

    from ladder.config import load_ladder
    from ladder.seasons import SeasonBook

    with user_errors():
        config = load_ladder(ladder)
        number = SeasonBook(_store(ladder)).open_next()
    console.print(f"season {number} is open: submissions and challenges are taken again", highlight=False)
    deadline = config.season.deadline
    if deadline is not None and deadline <= datetime.datetime.now(datetime.UTC):
        console.print(
            f"it has no deadline yet: {deadline.isoformat()} has passed; set [ladder.season] deadline to a "
            "later date-time and restart the server to close it then",
            highlight=False,
        )
