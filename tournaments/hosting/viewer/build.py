"""A replay re-run through its engine, step by step, as the data a viewer page draws.

The page never works out the rules: at every decision the engine's own snapshot
of the position is taken for each view (everything, and each seat's), so what a
page shows is exact by construction and a seat's page holds only what the
engine's view gave that seat. Reading is lenient where a strict reader would
stop (``tournaments.hosting.viewer.reading``): a truncated or edited replay keeps every
step up to the first line that stops making sense, and says which line that is
and why.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from referee.games import UnknownGame, get_rules
from referee.games.base import TOGETHER, ChanceDraw, ChanceMismatch, GameState, IllegalAction, ScriptedChance
from referee.replay import (
    ActionRecord,
    ChanceRecord,
    CutRecord,
    ForfeitRecord,
    LogRecord,
    RejectedRecord,
    ReplayRecord,
    ResultRecord,
)
from referee.replay_budget import describe_cut
from tournaments.hosting.viewer.presentation import NoViewer, presentation_for
from tournaments.hosting.viewer.reading import LeftOut, NotAReplay, Problem, read_lenient

__all__ = [
    "NoGameToDraw",
    "NoViewer",
    "NotAReplay",
    "ViewerData",
    "build_viewer_data",
    "no_cycle_collection",
]

_encoder = msgspec.json.Encoder()


class NoGameToDraw(NotAReplay):
    """Read strictly: the header names a game not installed here, or not the game its records are of.

    Read leniently (a report's pages, the ladder's) such a replay gives a page of
    its header and the notice why nothing follows; ``famiglia replay view``, where
    a host asked for this one replay, says it in one line instead.
    """


_USE_A_COPY = "its header is another game's than its records, or damaged; use an unchanged copy"


class ViewerData(msgspec.Struct, kw_only=True):
    """Everything the pages of one replay need: one list of steps per view.

    ``views["all"]`` and ``views["0"]``, ``views["1"]``, ...: step 0 is the
    position before the first decision, step k the position after decision k.
    """

    game: str
    match: str
    seats: list[str]
    variants: dict[str, str]
    views: dict[str, list[dict[str, Any]]]
    final: dict[str, Any] | None
    problem: Problem | None
    left_out: list[LeftOut] = []
    """What the pages leave out of each seat's log lines and rejected actions (``notes_bytes``)."""
    notes_bytes: int | None = None
    """The most of each seat's log lines and rejected actions the pages hold (None: all of them)."""


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector paused for a block that only builds trees of plain values.

    A game's snapshots are some hundred thousand dicts and lists, each a new
    container the collector counts; it ran a pass every 700 of them and every
    so often scanned the whole growing pile, a sixth of the time of building
    them, to find no cycle. Plain values are freed by their reference counts
    alone; whatever cycle the block leaves is collected once it is over.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def build_viewer_data(path: Path, *, strict: bool = False, notes_bytes: int | None = None) -> ViewerData:
    """Re-run the replay at ``path`` and take every view's snapshot after every decision.

    ``strict``: NoGameToDraw when not one decision can be drawn because the
    header is of a game not installed here or of another game than the records.
    ``notes_bytes``: the most of each seat's log lines and rejected actions the
    pages hold, in bytes of the replay (None: all); the rest is counted in
    ``left_out`` (``tournaments.hosting.viewer.reading``).
    """
    with no_cycle_collection():
        return _build(path, strict, notes_bytes)


def _build(path: Path, strict: bool, notes_bytes: int | None) -> ViewerData:
    """``build_viewer_data``, with the collector paused by the caller."""
    reading = read_lenient(path, notes_bytes=notes_bytes)
    header, records, problem = reading.header, reading.records, reading.problem
    names = [seat.name for seat in header.seats]
    n = len(names)
    view_keys = ["all", *(str(s) for s in range(n))]
    views: dict[str, list[dict[str, Any]]] = {key: [] for key in view_keys}
    data = ViewerData(
        game=header.game, match=header.match, seats=names, variants=dict(header.variants),
        views=views, final=None, problem=problem, left_out=reading.left_out, notes_bytes=notes_bytes,
    )  # fmt: skip
    game = header.game
    try:
        rules = get_rules(game)
        presentation = presentation_for(rules)
        config = msgspec.json.decode(header.config, type=rules.config_type)
    except NoViewer:
        raise  # the game's own viewer is broken: the caller says so, rather than a page of nothing
    except (ValueError, msgspec.DecodeError) as exc:
        if strict and isinstance(exc, UnknownGame):
            raise NoGameToDraw(f"{path}: {exc}; install the game's package to view its replays") from None
        if strict:
            raise NoGameToDraw(
                f"{path}: its header says {game}, but its configuration is not one of {game}'s ({exc}); {_USE_A_COPY}"
            ) from None
        data.problem = Problem(1, f"the header cannot start a game: {exc}")
        return data
    draws: list[ChanceDraw] = [d for _, r in records if isinstance(r, ChanceRecord) for d in r.draws]
    chance = ScriptedChance(draws)
    action_decoder = msgspec.json.Decoder(rules.action_type)
    try:
        state: GameState = rules.new_game(n, config, chance)
    except (ValueError, ChanceMismatch) as exc:
        if strict:
            raise NoGameToDraw(
                f"{path}: its header says {game}, but {game} cannot start from its chance draws ({exc}); {_USE_A_COPY}"
            ) from None
        data.problem = Problem(1, f"the game cannot start from this replay: {exc}")
        return data

    seats: list[int | None] = [None, *range(n)]  # in the order of view_keys
    memories: list[dict[str, Any]] = [{} for _ in view_keys]
    pages = [views[key] for key in view_keys]

    def snap(step: dict[str, Any], events: list[Any]) -> None:
        # Each event is converted to JSON values once, whichever pages show it:
        # a seat's events are the same objects as everything's unless the game
        # rewrote them for that seat (then they are converted on their own).
        converted = {id(event): msgspec.to_builtins(event) for event in events}
        seen = [
            [converted[id(e)] if id(e) in converted else msgspec.to_builtins(e) for e in state.events_for(seat, events)]
            if seat is not None
            else [converted[id(e)] for e in events]
            for seat in seats
        ]
        snapshots = presentation.snapshots(state, seats, seen, memories)
        hidden_forfeit = None if step["forfeit"] is None else {"kind": step["forfeit"]["kind"]}
        for seat, page, shown_events, position in zip(seats, pages, seen, snapshots, strict=True):
            shown = dict(step)
            if seat is not None and step["seat"] != seat:
                # Another seat's action may name its hidden cards, unless the game says
                # its actions are public; a forfeit's reason and log lines always may.
                if not presentation.public_actions:
                    shown["action"] = None
                shown["forfeit"] = hidden_forfeit
            shown["events"] = shown_events
            shown["state"] = position
            shown["logs"] = []
            shown["rejected"] = []
            page.append(shown)

    snap({"seat": None, "decision": "start", "action": None, "ms": None, "substituted": False,
          "together": False, "forfeit": None, "line": 1}, list(state.deal_events))  # fmt: skip
    by_request: dict[tuple[int, int], int] = {}
    notes: list[tuple[int, ReplayRecord]] = []  # log lines and rejections, attached at the end
    result: ResultRecord | None = None
    stop: Problem | None = None
    for number, record in records:
        try:
            match record:
                case ActionRecord():
                    decision = state.decision()
                    if decision is None or decision.seat != record.seat:
                        expected = "the game is over" if decision is None else f"seat {decision.seat} to decide"
                        stop = Problem(number, f"the replay has seat {record.seat} acting, the engine has {expected}")
                        break
                    # From the engine, not the record: a step of simultaneous moves (a replay
                    # written before records said so is marked too).
                    together = state.to_move == TOGETHER
                    try:
                        action = action_decoder.decode(record.action)
                        events = state.apply(record.seat, action)
                    except (IllegalAction, msgspec.DecodeError, msgspec.ValidationError) as exc:
                        stop = Problem(number, f"seat {record.seat}'s action cannot be played: {exc}")
                        break
                    if _encoder.encode(events) != bytes(record.events):
                        stop = Problem(number, "the events recorded differ from what the engine gives on re-run")
                        # The position after the action is still the engine's; it is shown, flagged.
                    by_request[(record.seat, record.request)] = len(views["all"])
                    snap({"seat": record.seat, "decision": record.decision,
                          "action": msgspec.to_builtins(action), "ms": round(record.ms, 1),
                          "substituted": record.substituted, "together": together, "forfeit": None,
                          "line": number}, events)  # fmt: skip
                    if stop is not None:
                        break
                case ForfeitRecord():
                    events = state.forfeit(record.seat)
                    by_request.setdefault((record.seat, record.request), len(views["all"]))
                    snap({"seat": record.seat, "decision": "forfeit", "action": None, "ms": None,
                          "substituted": False, "together": False,
                          "forfeit": {"kind": record.kind, "reason": record.reason},
                          "line": number}, events)  # fmt: skip
                case LogRecord() | RejectedRecord() | CutRecord():
                    notes.append((number, record))
                case ResultRecord():
                    result = record
                case _:
                    pass
        except ChanceMismatch as exc:
            stop = Problem(number, f"the chance draws do not fit the game: {exc}")
            break
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            # An edited record the engine cannot take (a seat that does not exist, ...):
            # the page stops here and says so rather than failing to be written.
            stop = Problem(number, f"the engine cannot take this {record.__class__.__name__}: {exc}")
            break
    if strict and stop is not None and len(views["all"]) == 1:  # not one decision of this game drawn
        raise NoGameToDraw(
            f"{path}: its header says {game}, but line {stop.line}, its first decision, is not one of {game}'s "
            f"({stop.message}); {_USE_A_COPY}"
        )
    _attach_notes(views, notes, by_request)
    if stop is not None:
        data.problem = stop
    elif result is not None:
        outcome = state.outcome() if state.is_over() else None
        if outcome is None or (outcome.ranks, outcome.scores) != (result.result.ranks, result.result.scores):
            data.problem = Problem(records[-1][0], "the recorded result is not what the engine gives on re-run")
        data.final = msgspec.to_builtins(result.result)
    elif data.problem is None:
        last = records[-1][0] if records else 1
        data.problem = Problem(last, "the replay ends here without a result (the match did not finish)")
    return data


def _attach_notes(
    views: dict[str, list[dict[str, Any]]],
    notes: list[tuple[int, ReplayRecord]],
    by_request: dict[tuple[int, int], int],
) -> None:
    """Log lines, rejected actions and cuts go to the step of the same request (else the last step).

    A step has ``cuts`` only when the replay left something of a seat's output out there.
    """
    last = len(views["all"]) - 1
    for _, note in notes:
        assert isinstance(note, LogRecord | RejectedRecord | CutRecord)
        index = by_request.get((note.seat, note.request), last)
        for key, steps in views.items():
            if key != "all" and key != str(note.seat):
                continue  # a bot's log lines and rejected actions are its own
            if isinstance(note, LogRecord):
                steps[index]["logs"].append(note.message)
            elif isinstance(note, CutRecord):
                steps[index].setdefault("cuts", []).append(describe_cut(note))
            else:
                steps[index]["rejected"].append(
                    {"rule": note.rule, "message": note.message, "action": msgspec.json.decode(note.action)}
                )
