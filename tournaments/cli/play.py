"""``famiglia play``: one match between bots, the result as a table or JSON."""

from __future__ import annotations

import secrets
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from tournaments.cli.common import console, exit_on_interrupt, fail, print_json, user_errors
from tournaments.cli.options import (
    DEFAULT_SANDBOX,
    DEFAULT_TIME,
    BankMs,
    Clock,
    GameWallMs,
    Illegal,
    MarginMs,
    MoveMs,
    Ponder,
    Runtime,
    Sandbox,
    StartupMs,
    illegal_action_policy,
    sandbox_section,
    time_section,
)
from tournaments.config.paths import file_target_problem
from tournaments.hosting.markup import NAME_CHARS, shown
from tournaments.hosting.ranges import seed_problem
from tournaments.hosting.settings import referee_settings
from tournaments.human import HUMAN

# The referee that plays the match (the engines, the sandbox, the human seat) is
# imported when a match is played, not at every start of famiglia (tournaments.cli).
if TYPE_CHECKING:
    from referee.bots import BotSpec
    from referee.channel import BotChannel
    from referee.match import MatchRecord

__all__ = ["HUMAN", "parse_variants", "play", "print_record"]


def _read(prompt: str) -> str:
    """One line typed at the terminal; the prompt as plain text (no markup, no highlighting)."""
    from rich.text import Text

    return console.input(Text(prompt))


def _seats(words: list[str], specs: list[BotSpec]) -> list[BotSpec | BotChannel]:
    """Seat order: a human seat for each ``human`` word, the built bots for the rest."""
    from tournaments.human.seat import HumanSeat

    bots = iter(specs)
    humans = sum(word == HUMAN for word in words)
    seats: list[BotSpec | BotChannel] = []
    for word in words:
        if word == HUMAN:
            name = "you" if humans == 1 else f"you{len(seats)}"
            seats.append(HumanSeat(name, console, read=_read))
        else:
            seats.append(next(bots))
    return seats


def parse_variants(items: list[str]) -> dict[str, str]:
    """``["setup=dealt-only", ...]`` as a dict; ValueError names the bad item."""
    variants: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"--variant {item!r}: write it as KEY=VALUE, e.g. --variant control=majority")
        earlier = variants.setdefault(key.strip(), value.strip())
        if earlier != value.strip():  # which one was meant? neither is dropped in silence
            raise ValueError(
                f"--variant {item!r}: {key.strip()} is already {earlier!r} (--variant {key.strip()}={earlier}); "
                "give each variant once"
            )
    return variants


def print_record(record: MatchRecord) -> None:
    """The ranking of one match as a table, one row per seat, best first.

    A bot chose its name, and a reason may quote what it sent: both are ``shown``,
    since a Table reads markup in its cells.
    """
    from rich.table import Table

    result = record.result
    terminations = {t.seat: f"{shown(t.kind)}: {shown(t.reason)}" for t in result.terminations}
    table = Table(title=f"{record.game} seed {record.seed}: {result.ended_by}, {record.seconds:.2f} s")
    for column in ("rank", "seat", "bot", "score", *result.stats, "ms/decision", "termination"):
        table.add_column(column, justify="left" if column in ("bot", "termination") else "right")
    order = sorted(range(len(record.names)), key=lambda seat: (result.ranks[seat], seat))
    for seat in order:
        timing = record.timings[seat]
        mean = timing.total_ms / timing.decisions if timing.decisions else 0.0
        table.add_row(
            str(result.ranks[seat]) + (" *" if seat in result.winners else ""),
            str(seat),
            shown(record.names[seat], NAME_CHARS),
            str(result.scores[seat]),
            *(str(values[seat]) for values in result.stats.values()),
            f"{mean:.1f}",
            terminations.get(seat, "-"),
        )
    console.print(table)
    if record.sandbox:
        from referee.sandbox import LEVELS, sandbox_summary  # the sandbox's package, imported once a match has run

        ran = record.sandbox.split(" ", 1)[0]
        # As the tournament's first lines say it: what bots get here, and what this host cannot give.
        summary = "".join(f" ({sandbox_summary(level)})" for level in LEVELS if level == ran and level != "none")
        console.print(f"sandbox: {record.sandbox}{summary}", highlight=False, markup=False)
    if record.replay:
        # The user's own path: printed as it is, but not read as markup.
        console.print(f"replay: {record.replay}", highlight=False, markup=False)


def play(
    game: Annotated[str, typer.Argument(help="vendetta, sicilianos or an installed game plug-in")],
    bots: Annotated[
        list[str],
        typer.Argument(
            help="a folder with bot.toml, a command line in quotes, or human (you, at this terminal); seat order"
        ),
    ],
    seed: Annotated[
        int | None, typer.Option(help="the deal seed (random if not given; printed after the match; bots never see it)")
    ] = None,
    replay: Annotated[Path | None, typer.Option(help="write the replay here (JSON lines)")] = None,
    variant: Annotated[list[str], typer.Option(help="a rules variant KEY=VALUE; repeat for several")] = [],  # noqa: B006
    move_ms: MoveMs = DEFAULT_TIME.move_ms,
    bank_ms: BankMs = DEFAULT_TIME.bank_ms,
    startup_ms: StartupMs = DEFAULT_TIME.startup_ms,
    margin_ms: MarginMs = DEFAULT_TIME.margin_ms,
    game_wall_ms: GameWallMs = DEFAULT_TIME.game_wall_ms,
    clock: Clock = DEFAULT_TIME.clock,
    ponder: Ponder = DEFAULT_TIME.ponder,
    illegal: Illegal = "forfeit",
    sandbox: Sandbox = DEFAULT_SANDBOX,
    runtime: Runtime = [],  # noqa: B006
    json: Annotated[bool, typer.Option("--json", help="print the result as one JSON object")] = False,
) -> None:
    """Play one match between bots and print the ranking."""
    import trio

    from referee.match import MatchSpec
    from referee.play import check_table, play_match, prepare_bots
    from referee.settings import RefereeSettings
    from tournaments.config.bot_names import load_named_bot

    with user_errors():
        policy = illegal_action_policy(illegal)
        time = time_section(
            move_ms=move_ms, bank_ms=bank_ms, startup_ms=startup_ms, margin_ms=margin_ms, game_wall_ms=game_wall_ms,
            clock=clock, ponder=ponder,
        )  # fmt: skip
    if seed is not None and (problem := seed_problem(seed)) is not None:
        fail(f"--seed {seed}: {problem}")
    if replay is not None and (problem := file_target_problem(replay)) is not None:
        fail(f"--replay {replay}: {problem}")
    if replay is not None and (replay.exists() or replay.is_symlink()):
        fail(f"--replay {replay}: already exists; famiglia never overwrites a replay, so choose another name")
    if not bots:
        fail("give the bots after the game: a folder with bot.toml, or a command line in quotes, one per seat")
    with user_errors():
        contained = sandbox_section(sandbox, runtime)
        variants = parse_variants(variant)
        check_table(game, variants, len(bots))
        specs = prepare_bots(
            [load_named_bot(text) for text in bots if text != HUMAN],
            RefereeSettings(sandbox=contained.level, runtimes=contained.runtimes),
        )
    seats = _seats(bots, specs)
    if seed is None:
        # 63 bits: too many for a bot to try every seed against the cards it sees.
        seed = secrets.randbits(63)
    settings = referee_settings(time, contained, policy)
    # The match id goes to the bots: random, never the seed, which would give them every future draw.
    spec = MatchSpec(game=game, seed=seed, variants=variants, match=f"{game}-{secrets.token_hex(4)}")
    stopped = "interrupted: the match was stopped before its end; no result" + (
        f" (the replay so far is {replay}.partial)" if replay is not None else ""
    )
    with exit_on_interrupt(stopped), user_errors():
        record = trio.run(partial(play_match, spec, seats, settings, replay_path=replay))
    if json:
        print_json(msgspec.json.encode(record).decode())
    else:
        print_record(record)
