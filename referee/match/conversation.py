"""Run one match: the engine decides who must act, the bots answer over JSON lines.

``run_match`` talks to each seat through its channel (referee.channel: a real
process from ``referee.process``, a seat played in this process, or a scripted
fake in tests). This module is the conversation: greet every seat, ask for
each decision and apply it, reject an illegal action, time a seat out, tell
everyone the result. Its helpers each have a home of their own in this
package (referee.match says which).

Whatever a bot does wrong becomes a ``BotError``: the seat forfeits (the engine
plays its turns as passes from then on), the reason is recorded, and the other
seats' game goes on.

A step that asks several seats at once (a simultaneous step: the engine's
``decisions()``) is asked all at once: every seat asked gets its own request,
built before any answer is read, and its own clock, in a task of its own
(``ask_together``). When every one has answered, timed out or failed, the
failures are taken first, then the answers are played together in one engine
call (``apply_together``); an illegal one is that seat's alone. Everything is
recorded in seat order, the order in which a replay plays it again.
"""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import trio

from protocol.codec import encode_message
from protocol.messages import (
    PROTOCOL_VERSION,
    Action,
    BotMessage,
    End,
    Outcome,
    Ready,
    Rejected,
    Request,
    Result,
    Start,
    Termination,
)
from referee.channel import BotChannel, ChannelBase, adopt
from referee.errors import BotError, BotIllegalAction, BotProtocolError, internal_error
from referee.games import get_rules
from referee.games.base import TOGETHER, GameState, IllegalAction, RecordingChance, SeededChance
from referee.match.clock import MatchClock, OpenRequest, SeatClock
from referee.match.fair_slice import FairSlice
from referee.match.intake import OutputCost, SeatIntake
from referee.match.recorder import MatchRecorder, NullRecorder, ReplayRecorder
from referee.match.values import MatchRecord, MatchSpec
from referee.replay import REPLAY_FORMAT, Header, SeatInfo, encode_raw
from referee.replay_budget import recorded_action
from referee.settings import DEFAULT_SETTINGS, RefereeSettings

__all__ = ["Replace", "result_of", "run_match"]


Replace = Callable[[int], Awaitable["BotChannel | None"]]
"""Given a seat whose reused process broke before ``ready``, a fresh bot, or None."""


class _Seat:
    """One seat in a match: its bot, the reading of its lines, its clock, and how far it has been told the game."""

    __slots__ = ("active", "bot", "clock", "index", "lines", "seen")

    def __init__(self, index: int, bot: ChannelBase, lines: SeatIntake, clock: SeatClock) -> None:
        self.index = index
        self.bot = bot
        self.lines = lines
        self.clock = clock
        self.active = True
        self.seen = 0  # how much of the match's event log this seat has been sent

    def take_seat(self, bot: ChannelBase) -> None:
        """A fresh process in place of a broken one: its lines and its clock are read from now on."""
        self.bot = bot
        self.lines.take_seat(bot)
        self.clock.take_seat(bot)


class _Match:
    """The state of one match in progress; ``run_match`` is its only user."""

    def __init__(
        self,
        spec: MatchSpec,
        bots: Sequence[BotChannel],
        settings: RefereeSettings,
        replay_path: Path | None,
        replace: Replace | None = None,
        initial_state: GameState | None = None,
    ) -> None:
        self.spec = spec
        self.replace = replace
        self.settings = settings
        self.rules = get_rules(spec.game)
        self.config = self.rules.config(spec.variants)
        self.variants = self.rules.variants(self.config)
        n = len(bots)
        self.rules.check_table(n)
        # The draws are kept only for a replay, which records them.
        chance = SeededChance(spec.seed)
        recording: RecordingChance | None = None
        self.record: MatchRecorder = NullRecorder()
        if replay_path is not None:
            recording = RecordingChance(chance)
            self.record = ReplayRecorder(replay_path, recording.draws, settings.replay)
        # A given state (check-bot's forced positions) replaces the seeded deal.
        self.state: GameState = initial_state or self.rules.new_game(n, self.config, recording or chance)
        self.action_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(self.rules.action_type)
        # trio.current_time() without its lookup of the run: the same clock, read directly.
        self.now: Callable[[], float] = trio.lowlevel.current_clock().current_time
        self.clock = MatchClock(settings.clock, self.now)
        self.fair = FairSlice(self.now)
        self.channels = [adopt(bot) for bot in bots]
        self.seats = [self.seat(i, bot) for i, bot in enumerate(self.channels)]
        self.names = [bot.name for bot in self.channels]
        # The deal's events go out with each seat's first request; a given state was dealt long ago.
        self.events: list[msgspec.Struct] = [] if initial_state is not None else list(self.state.deal_events)
        self.terminations: list[Termination] = []
        self.request_id = 0
        self.match_id = spec.match or spec.game  # sent to bots: never the seed
        self.move_ms = settings.clock.time.move_ms
        # A game that never asks several seats at once keeps the decision loop it always had.
        self.step: Callable[[], Awaitable[bool]] = (
            self.play_step if type(self.state).simultaneous() else self.play_decision
        )

    def seat(self, index: int, bot: ChannelBase) -> _Seat:
        """Seat ``bot`` at ``index``: the reading of its lines and its clock share what the referee spends on them."""
        output = OutputCost(self.settings.max_line_bytes)
        lines = SeatIntake(index, bot, self.record, self.settings.max_messages_per_decision, self.fair, output)
        return _Seat(index, bot, lines, self.clock.seat(bot, output))

    def write_header(self, commands: Sequence[list[str]]) -> None:
        self.record.begin(
            Header(
                format=REPLAY_FORMAT,
                match=self.match_id,
                game=self.spec.game,
                variants=self.variants,
                config=encode_raw(self.config),
                seats=[SeatInfo(name=name, command=list(cmd)) for name, cmd in zip(self.names, commands, strict=True)],
                seed=self.spec.seed,
                time=self.settings.clock.time,
                illegal_action=self.settings.illegal_action,
                started=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                clock=self.settings.clock.mode,
            )
        )

    # --- the start -----------------------------------------------------------------

    async def start_seats(self) -> None:
        """Send every seat ``start`` and take its ``ready`` line, under the startup limit.

        All the starts go out first, so the bots get ready together; then each
        seat's ready line is polled for as an answer is (a warm bot says ready
        at once: ``QUICK_ANSWER_S``). Only the seats that need more (a ready
        line not there yet, a log line before it, a process to replace) get a
        task each, all at once: a nursery and its tasks cost the referee as much
        as a few decisions, so a match of warm bots opens none.
        """
        due = self.clock.startup_due()
        more: list[Callable[[], Awaitable[None]]] = []  # the greetings that need a task
        written: list[_Seat] = []
        sending = 0
        with trio.move_on_at(due) as scope:
            for seat in self.seats:
                try:
                    await seat.bot.send(self.start_line(seat))
                    written.append(seat)
                except BotError as error:
                    more.append(partial(self.retry, seat, error))
                sending += 1
        if scope.cancelled_caught:
            # A bot that does not read held its start until the limit: its seat is
            # timed out; the seats after it are greeted afresh, with their own limit,
            # and the seats before it, whose ready lines were not read meanwhile,
            # get a limit of their own from now for them.
            more.append(partial(self.fail, self.seats[sending], self.clock.startup_timeout(), 0))
            more.extend(partial(self.handshake, seat) for seat in self.seats[sending + 1 :])
            due = self.clock.startup_due()
        for seat in written:
            try:
                first = seat.lines.ready_now()
            except BotError as error:
                more.append(partial(self.retry, seat, error))
                continue
            if isinstance(first, Ready):
                seat.lines.logs = 0
                self.clock.ready(seat.clock)
            else:
                more.append(partial(self.take_ready, seat, due, first))
        if more:
            async with trio.open_nursery() as nursery:
                for greeting in more:
                    nursery.start_soon(greeting)

    def start_line(self, seat: _Seat) -> bytes:
        start = Start(
            protocol=PROTOCOL_VERSION,
            game=self.spec.game,
            match=self.match_id,
            seat=seat.index,
            players=len(self.seats),
            names=self.names,
            variants=self.variants,
            config=self.config,
            time=self.settings.clock.time,
        )
        return encode_message(start)

    async def handshake(self, seat: _Seat) -> None:
        """Greet one seat in full (``greet``), with a fresh process if its own has gone (``retry``)."""
        try:
            await self.greet(seat)
        except BotError as error:
            await self.retry(seat, error)

    async def take_ready(self, seat: _Seat, due: float, first: BotMessage | None) -> None:
        """Wait for the ready line of a seat that has its start (``first``: the message read so far)."""
        try:
            await self.await_ready(seat, due, first)
        except BotError as error:
            await self.retry(seat, error)

    async def retry(self, seat: _Seat, error: BotError) -> None:
        """A greeting failed. A warm process that exited after its previous game (a
        bot that plays one game per process) is not a failure: a fresh one is
        started and greeted once more. Any other failure is the seat's."""
        fresh = None
        if error.kind in ("crash", "stall") and self.replace is not None:
            fresh = await self.replace(seat.index)
        if fresh is None:
            await self.fail(seat, error, 0)
            return
        seat.take_seat(adopt(fresh))
        try:
            await self.greet(seat)
        except BotError as again:
            await self.fail(seat, again, 0)

    async def greet(self, seat: _Seat) -> None:
        """Send ``start`` and wait for ``ready`` under the startup limit."""
        due = self.clock.startup_due()
        with trio.move_on_at(due) as scope:
            await seat.bot.send(self.start_line(seat))
        if scope.cancelled_caught:
            raise self.clock.startup_timeout()
        await self.await_ready(seat, due, seat.lines.ready_now())

    async def await_ready(self, seat: _Seat, due: float, first: BotMessage | None) -> None:
        """Read up to the seat's ``ready`` line (``first``, if given, is the first message) until ``due``.

        Under the cpu clock the limit is the CPU the seat's tree uses
        (``Greeting.look``); ``due`` is then the first moment it can have used it.
        """
        lines = seat.lines
        greeting = self.clock.greeting(seat.clock, due)
        while True:
            with trio.move_on_at(greeting.check_at):
                lines.accept_ready(await lines.read_message(0, first))
                break
            first = None  # read_message took it before its first wait
            # A referee kept from running past the deadline (a busy host) still
            # takes a ready line that arrived in time and waits in the pipe.
            if (message := lines.message_now()) is not None:
                lines.accept_ready(message)
                break
            greeting.look()
        self.clock.ready(seat.clock)

    # --- the decisions -------------------------------------------------------------

    async def play(self) -> None:
        """Every decision until the game is over, with the clock's watchdog keeping the deadlines."""
        clock = self.clock
        clock.decider = trio.lowlevel.current_task()
        async with trio.open_nursery() as nursery:
            # Started soon, not awaited: it first runs at this task's first wait
            # (only then can a request be overdue) and reads the open request then.
            nursery.start_soon(clock.watchdog)
            while True:
                step = self.step
                with trio.CancelScope() as clock.loop_scope:
                    while await step():
                        pass
                if not clock.loop_scope.cancelled_caught:
                    break
                await self.timed_out()
            nursery.cancel_scope.cancel()

    async def timed_out(self) -> None:
        """The open request's deadline passed: its seat forfeits on time."""
        open_ = self.clock.take_expired()
        seat = next(seat for seat in self.seats if seat.clock is open_.seat)
        await self.fail(seat, self.clock.overdue(open_), open_.request)

    async def fail(self, seat: _Seat, error: BotError, request: int) -> None:
        """The seat forfeits: record why, let the engine take it out, stop the bot."""
        if not seat.active:
            return
        seat.active = False
        self.terminations.append(Termination(seat=seat.index, kind=error.kind, reason=error.reason, request=request))
        events = self.state.forfeit(seat.index)
        self.record.forfeit(seat.index, request, error.kind, error.reason, events)
        self.events.extend(events)
        await seat.bot.kill()

    async def play_decision(self) -> bool:
        """Ask for and apply one decision; False when the game is over."""
        state = self.state
        decision = state.decision()
        if decision is None:
            return False
        index = decision.seat
        seat = self.seats[index]
        events_so_far = self.events
        self.request_id += 1
        request: Request[Any, Any, Any] = Request(
            id=self.request_id,
            decision=decision.kind,
            view=state.transient_view(index),  # encoded in ask, before the state changes again
            events=state.events_for(index, events_so_far[seat.seen :]),
            options=decision.options,
            constraints=decision.constraints,
            time_ms=self.move_ms,
            bank_ms=round(seat.clock.bank_s * 1000),
        )
        seat.seen = len(events_so_far)
        try:
            action, raw, elapsed = await self.ask(seat, request)
        except BotError as error:
            await self.fail(seat, error, request.id)
            return True
        substituted = False
        try:
            events = state.apply(index, action)
        except IllegalAction as exc:
            if not await self.reject(seat, request.id, raw, exc, elapsed):
                return True
            # The "pass" policy: the seat keeps playing, this turn is a pass.
            action = self.state.pass_action()
            raw, substituted = encode_raw(action), True
            events = self.state.apply(seat.index, action)
        recorded = recorded_action(raw, action)  # a padded action is kept as the engine read it
        self.record.action(index, request.id, decision.kind, recorded, elapsed, events, substituted=substituted)
        events_so_far.extend(events)
        return True

    # --- a simultaneous step ----------------------------------------------------------

    async def play_step(self) -> bool:
        """One step of a game that has simultaneous steps; False when the game is over."""
        if self.state.to_move != TOGETHER or len(self.state.decisions()) < 2:
            return await self.play_decision()
        await self.play_together()
        return True

    async def play_together(self) -> None:
        """Ask every seat the step names at once and play their answers together.

        The requests are all built (and encoded) before any is sent, so none can
        hold another seat's answer. Each seat's answer, timeout or failure is its
        own; the step waits for the last of them, never longer than the slowest
        seat's own deadline.
        """
        state = self.state
        events_so_far = self.events
        asked: list[tuple[_Seat, int, str, bytes]] = []
        for decision in state.decisions():
            index = decision.seat
            seat = self.seats[index]
            self.request_id += 1
            request: Request[Any, Any, Any] = Request(
                id=self.request_id,
                decision=decision.kind,
                view=state.transient_view(index),  # encoded at once, before the next seat's is built
                events=state.events_for(index, events_so_far[seat.seen :]),
                options=decision.options,
                constraints=decision.constraints,
                time_ms=self.move_ms,
                bank_ms=round(seat.clock.bank_s * 1000),
            )
            seat.seen = len(events_so_far)
            asked.append((seat, request.id, decision.kind, encode_message(request)))
        answers: dict[int, tuple[Any, msgspec.Raw, float]] = {}
        failures: dict[int, BotError] = {}
        async with trio.open_nursery() as nursery:
            for seat, request_id, _, data in asked:
                nursery.start_soon(self.ask_together, seat, request_id, data, answers, failures)
        requests = {seat.index: (request_id, kind) for seat, request_id, kind, _ in asked}
        for index in sorted(failures):
            await self.fail(self.seats[index], failures[index], requests[index][0])
        if state.is_over() or not answers:
            return  # the failures ended the game, or the step was played when the last awaited seat forfeited
        actions = {index: answer[0] for index, answer in sorted(answers.items())}
        raws = {index: answer[1] for index, answer in answers.items()}
        substituted: set[int] = set()
        while True:
            try:
                events = state.apply_together(actions)
                break
            except IllegalAction as exc:
                index = exc.seat if exc.seat is not None else min(actions)
                seat = self.seats[index]
                if await self.reject(seat, requests[index][0], raws[index], exc, answers[index][2]):
                    # The "pass" policy: the seat keeps playing, its answer this step is a pass.
                    actions[index] = state.pass_action(index)
                    raws[index] = encode_raw(actions[index])
                    substituted.add(index)
                else:
                    del actions[index]  # it forfeited
                if state.is_over() or not actions:
                    return
        last = max(actions)
        for index, action in actions.items():
            recorded = recorded_action(raws[index], action)
            request_id, kind = requests[index]
            # One engine call made every event: a replay, played one seat at a time, has them
            # all at the step's last answer (the engine holds the others until then).
            self.record.action(
                index,
                request_id,
                kind,
                recorded,
                answers[index][2],
                events if index == last else [],
                substituted=index in substituted,
                together=True,
            )
        events_so_far.extend(events)

    async def ask_together(
        self,
        seat: _Seat,
        request_id: int,
        data: bytes,
        answers: dict[int, tuple[Any, msgspec.Raw, float]],
        failures: dict[int, BotError],
    ) -> None:
        """Ask one seat of a simultaneous step under its own deadline; its answer or its failure, by seat.

        As ``ask``, without the single open request the watchdog keeps: this
        task keeps its seat's deadline (``MatchClock.look``), so each seat asked
        has its own clock running while the others think.
        """
        lines, clock = seat.lines, self.clock
        open_ = clock.open_together(seat.clock, request_id)
        try:
            if lines.reader is not None and not lines.quiet():
                await lines.check_unasked(request_id)
            with trio.move_on_at(open_.deadline) as sending:
                await seat.bot.send(data)
            if sending.cancelled_caught:  # a bot that does not read: held up its request until its deadline
                open_.expired = True
                raise clock.overdue(open_)
            open_.sent(self.now())
            message = await self.answer_by_deadline(seat, open_)
            end = self.now()
            self.fair.restart()
            elapsed = clock.close(open_, end)
            answer = lines.take_answer(message, request_id)
            try:
                action = self.action_decoder.decode(answer.action)
            except msgspec.DecodeError as exc:
                raise BotProtocolError(f"action for request {request_id} has the wrong shape: {exc}") from None
            except Exception as exc:  # noqa: BLE001 - a bug of ours met by these bytes: the seat's error
                raise internal_error(exc) from None
        except BotError as error:
            failures[seat.index] = error
            return
        answers[seat.index] = (action, answer.action, elapsed)

    async def answer_by_deadline(self, seat: _Seat, open_: OpenRequest) -> Ready | Action[msgspec.Raw]:
        """The seat's next message other than a log line, read before its request's deadline; BotTimedOut after it."""
        lines = seat.lines
        while True:
            with trio.move_on_at(open_.deadline):
                return await lines.read_message(open_.request)
            # A referee kept from running past the deadline (a busy host) still takes
            # an answer that arrived in time and waits in the pipe.
            if (message := lines.message_now()) is not None:
                return message
            self.clock.look(open_)

    async def ask(self, seat: _Seat, request: Request[Any, Any, Any]) -> tuple[Any, msgspec.Raw, float]:
        """Send a request and wait for its answer: (decoded action, raw action, seconds charged).

        Runs inside the decision loop's scope (``play``): when the deadline
        passes, the watchdog cancels that scope and ``timed_out`` records it.
        """
        data = encode_message(request)
        lines, clock = seat.lines, self.clock
        # Read open, send, read, close: the clock reads the seat's meter before the write
        # (while a frozen tree is still frozen) and charges the decision at the close.
        open_ = clock.open_request(seat.clock, request.id)
        try:
            if lines.reader is not None and not lines.quiet():
                await lines.check_unasked(request.id)
            await seat.bot.send(data)
            # The clock starts once the request is in the pipe: a slow write is the
            # bot not reading, and is covered by the same deadline.
            open_.sent(self.now())
            # The answer may be there already, or come within microseconds from a bot
            # that answers at once: then no wait, and no pass through Trio's scheduler
            # unless this match has held the thread for its slice.
            first = lines.answer_now() if lines.reader is not None else None
            if isinstance(first, Action) and not lines.early:
                message: Ready | Action[msgspec.Raw] = first
                end = self.now()
                # After a wait in the kernel as after none: the slice goes on (that wait let
                # no other task run, there was none), and the slice yields only to another.
                if end >= self.fair.due:
                    await self.fair.keep(end)
            else:
                message = await lines.read_message(request.id, first)
                end = self.now()
                self.fair.restart()
        except BotError:
            # Overdue as well (the watchdog ran first in the same tick): the timeout counts.
            if open_.expired:
                await trio.lowlevel.checkpoint_if_cancelled()
            clock.abandon()
            raise
        if open_.expired:
            # The watchdog found the request overdue before this task read the
            # answer (both ready in the same tick): a timeout, raised as Cancelled.
            await trio.lowlevel.checkpoint_if_cancelled()
        elapsed = clock.close(open_, end)
        answer = lines.take_answer(message, request.id)
        try:
            action = self.action_decoder.decode(answer.action)
        except msgspec.DecodeError as exc:
            raise BotProtocolError(f"action for request {request.id} has the wrong shape: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a bug of ours met by these bytes: the seat's error, not the match's
            raise internal_error(exc) from None
        return action, answer.action, elapsed

    async def reject(self, seat: _Seat, request: int, raw: msgspec.Raw, exc: IllegalAction, elapsed: float) -> bool:
        """An illegal action: record it and tell the bot. True if the seat plays on."""
        policy = self.settings.illegal_action
        self.record.rejected(seat.index, request, raw, exc.rule_id, exc.detail, elapsed)
        notice = Rejected(id=request, rule=exc.rule_id, message=str(exc), penalty=policy)
        with trio.move_on_after(self.settings.grace_ms / 1000):
            try:
                await seat.bot.send(encode_message(notice))
            except BotError:
                pass
        if policy == "forfeit":
            await self.fail(seat, BotIllegalAction(f"illegal action: {exc}", exc.rule_id), request)
            return False
        return True

    # --- the end -------------------------------------------------------------------

    async def finish(self) -> Result:
        result = result_of(self.state.outcome(), self.terminations)
        ends: list[tuple[_Seat, bytes]] = []
        unasked: list[_Seat] = []
        for seat in self.seats:
            if not seat.active:
                continue
            # Output after the seat's last answer other than log lines is never
            # read as part of this game; the process is then not reused, so it
            # cannot reach the next game either.
            if seat.lines.reader is not None and not seat.lines.quiet():
                try:
                    await seat.lines.check_unasked(0)
                except BotError:
                    unasked.append(seat)
            end = End(
                match=self.match_id,
                seat=seat.index,
                result=result,
                events=self.state.events_for(seat.index, self.events[seat.seen :]),
            )
            ends.append((seat, encode_message(end)))

        # One grace period for all the seats, told one after the other: a write
        # the pipe takes at once is not a checkpoint, so only a bot that does
        # not read can hold the others up, and only until the shared deadline.
        # A cancel scope costs as much as a few decisions: one is opened for all
        # the seats, and another after each seat whose write it ended (the seats
        # after it are still told what their pipes take at once).
        deadline = trio.current_time() + self.settings.grace_ms / 1000
        told = 0
        while told < len(ends):
            with trio.move_on_at(deadline):
                for seat, line in ends[told:]:
                    try:
                        await seat.bot.send(line)
                    except BotError:
                        pass
                    told += 1
            told += told < len(ends)  # the seat whose write ran out of time
        # A seat frozen after its last answer in the middle of writing a line has been let go on by its
        # End: that line is this game's, read within the same grace (else its process is not reused).
        for seat, _ in ends:
            if seat not in unasked and seat.lines.reader is not None and seat.lines.reader.partial:
                with trio.move_on_at(deadline):
                    try:
                        await seat.lines.finish_line()
                    except BotError:
                        unasked.append(seat)
        for seat in unasked:
            await seat.bot.kill()
        for seat in self.seats:
            seat.lines.keep_schedule()
        return result


def result_of(outcome: Outcome, terminations: Sequence[Termination] = ()) -> Result:
    """The ``result`` message of a finished game: the engine's outcome and the seats' terminations."""
    return Result(**msgspec.structs.asdict(outcome), terminations=list(terminations))


async def run_match(
    spec: MatchSpec,
    bots: Sequence[BotChannel],
    settings: RefereeSettings = DEFAULT_SETTINGS,
    *,
    replay_path: Path | None = None,
    commands: Sequence[list[str]] | None = None,
    replace: Replace | None = None,
    initial_state: GameState | None = None,
) -> MatchRecord:
    """Play one match between ``bots`` (seat order) and return its record.

    The caller owns the bots (their processes and cleanup); this function only
    talks to them. ``replace`` may swap in a fresh bot for a reused process that
    broke before ``ready`` (see ``referee.seats``). ``ValueError`` for a bad spec (unknown game or variant, a
    table size the game does not allow) before anything is sent.

    ``initial_state`` starts the match from a position built by the caller (the
    conformance check's forced decisions) instead of ``spec.seed``'s deal; its
    table size must match ``bots``, and no replay can be written (its deal is not
    in the chance record). A bot whose channel has ``untimed = True`` (a person
    at the terminal) has no clock; every other seat's clock runs as usual.
    """
    if initial_state is not None and (replay_path is not None or initial_state.n_players != len(bots)):
        raise ValueError("run_match: a given initial state needs one bot per seat and no replay path")
    match = _Match(spec, bots, settings, replay_path, replace, initial_state)
    began = trio.current_time()
    match.clock.begin(began)
    match.write_header(commands if commands is not None else [[] for _ in bots])
    record = match.record
    try:
        await match.start_seats()
        await match.play()
        result = await match.finish()
        seconds = trio.current_time() - began
        record.result(result, seconds)
        await record.aclose()
    except BaseException:
        record.abort()
        raise
    return MatchRecord(
        match=match.match_id,
        game=spec.game,
        seed=spec.seed,
        variants=match.variants,
        names=match.names,
        result=result,
        timings=[seat.clock.timing() for seat in match.seats],
        seconds=round(seconds, 3),
        replay=str(replay_path) if replay_path is not None else None,
        sandbox=_sandbox_summary(match.channels),
    )


def _sandbox_summary(bots: Sequence[ChannelBase]) -> str:
    """How the seats were contained: one description, or one per group of seats when they differ."""
    seats: dict[str, list[int]] = {}
    for seat, bot in enumerate(bots):
        if text := bot.sandbox:
            seats.setdefault(text, []).append(seat)
    if len(seats) <= 1:
        return next(iter(seats), "")
    return "; ".join(
        f"seat{'s' if len(group) > 1 else ''} {', '.join(map(str, group))}: {text}" for text, group in seats.items()
    )
