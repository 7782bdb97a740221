"""Fair clocks: does another seat, or a busy host, decide how long an honest bot thinks?

Usage: python bench/fairness.py [--games N] [--spinners N] [--loops K] [--shared-session] [--think-ms MS]
                                [--level none|standard|strict] [--scenario spin|load|all] [--seed N]

Honest seats are ``bench/bots/think_c``: every decision is ``--think-ms``
(default 10) milliseconds of the bot's own thread CPU time, then a pass, so
each decision is the same work however the machine is loaded and the time the
referee measures shows what others took from it. Games are 3-player Vendetta
(round limit 6: about 22 decisions per seat), one at a time, through
``referee.play.play_match`` with a fresh process per seat (cold seats), at the
sandbox ``--level`` (default standard), each written to a replay in a
temporary folder. A seat's thinking time is what the referee charged it:
``SeatTiming`` (mean and max) and the replay's ``ms`` of every answered
decision (p95); a decision that timed out is not in them, its termination is.
Also printed: the share of decisions measured shorter than the bots' own CPU
work (the referee's clock starts once its write returns, and the bot it wakes
may already be running), and the third seat's own thinking time.

1. A spinning seat (``--scenario spin``): two honest seats and
   ``bench/bots/spinner_c``, which answers at once and at its first request
   starts ``--spinners`` (default 32) processes, each in a session of its own,
   that spin for the rest of the game. Baseline: the same deals with the same
   program starting no spinners (the quiet seat). Clocks ``move_ms`` 200,
   ``bank_ms`` 600. Target of issue 26: no honest seat times out and the honest
   thinking time beside the spinner is within 1.5x of the quiet one's.
2. A loaded host (``--scenario load``): three honest seats while ``--loops``
   (default 24) processes ``while True: pass`` run beside the referee, started
   for each loaded game and killed after it (each in a session of its own, or
   all in one with ``--shared-session``; killed by process group, also on
   Ctrl-C or an error, and by the kernel if the bench itself is killed).
   Baseline: the same deals with no loops. Clocks ``move_ms`` 100, ``bank_ms``
   300. How many seats are lost on time, and the honest thinking time. Where
   the kernel schedules by session (autogroup, printed), loops sharing a
   session weigh as one process together: ``--shared-session`` shows that.

Each deal (``--seed`` + game number) is played by both arms of its scenario,
one right after the other, the arm that goes first alternating, so a change in
the machine's load during the run hits both alike; in the spin scenario the
spinner's seat rotates over the three seats from one deal to the next. Which
clock and freezing policy ran is printed when the referee's settings have them
(``clock``, ``ponder``).

The last line is always
``fairness: <spin> <load>`` where ``<spin>`` is ``spin <timeouts> timeouts <ratio>x thinking``
(honest seats timed out beside the spinner; mean thinking time beside the
spinner over beside the quiet seat) and ``<load>`` is ``load <lost>/<seats> seats lost
(<baseline> without)``; a scenario not run shows as ``spin -`` or ``load -``.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

# Run from a checkout without installing: the repository root holds the packages.
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgspec
import trio
from machine import host_cpu_group_procs, load_average

from protocol.messages import Termination, TimeControl
from referee.bots import BotSpec, load_bot
from referee.match import MatchRecord, MatchSpec
from referee.play import play_match, prepare_bots
from referee.replay import ActionRecord, read_replay
from referee.settings import BotLimits, Clock, RefereeSettings

PLAYERS = 3
ROUND_LIMIT = "6"
"""About 22 decisions per seat (the default, 30 rounds, gives about 110): enough
decisions for a p95 over a few games, few enough that the defaults finish within
about 90 s on a 2-core machine, where a loaded game's honest decisions take
about 0.12 s each."""

TARGET_RATIO = 1.5
"""Issue 26: honest thinking time beside a spinning seat within this factor of beside a quiet one."""

SPIN_TIME = TimeControl(move_ms=200, bank_ms=600)
LOAD_TIME = TimeControl(move_ms=100, bank_ms=300)

MAX_SPINNERS = BotLimits().processes - 1
"""A bot's whole tree may hold ``BotLimits.processes`` processes at the sandbox
levels, the bot itself among them: more spinners could not all start."""

MAX_LOOPS = 1024
"""Far beyond any load worth measuring on one host; a typo of 24000 would fork a
Python process per loop and could take the machine down with the bench."""

MAX_THINK_MS = 1000
"""Beyond this even the idle arm's decisions would overrun the move clocks many times over."""

MAX_GAMES = 10_000
MAX_SEED = 2**53 - 1 - MAX_GAMES
"""Deal seeds go into the replays as JSON numbers: every ``--seed`` + game number stays exact in any JSON reader."""

LOOP_PROGRAM = """
import ctypes, os, sys

loops, bench, sessions = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
if len(sys.argv) > 4:  # the host's cpu group, out of the referee's own: the loops are the host's work
    with open(sys.argv[4], "w") as procs:
        procs.write(str(os.getpid()))


def die_with(parent):
    # SIGKILL when the parent goes (PR_SET_PDEATHSIG): a bench killed with
    # SIGKILL, whose finally never runs, still takes its loops with it, and so
    # does a launcher killed before it could say which loops it started.
    libc.prctl(1, 9, 0, 0, 0)
    if os.getppid() != parent:  # it went before the request was made
        os._exit(0)


die_with(bench)
leader = os.getpid()
children = []
for _ in range(loops - 1):
    child = os.fork()
    if child == 0:
        if sessions == "each":
            os.setsid()
        die_with(leader)
        os.close(1)
        break
    children.append(child)
else:
    os.write(1, ("up " + " ".join(map(str, children)) + "\\n").encode())
    os.close(1)
while True:
    pass
"""
"""The busy loops: one process in a new session (the launcher, a loop itself)
forks the others, each into a session of its own too unless they share the
launcher's, and names them once every loop exists ("up" and their pids)."""


def bounded_count(least: int, most: int, what: str) -> Callable[[str], int]:
    """An argparse type for a whole number from ``least`` to ``most`` (a usage error otherwise)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not least <= value <= most:
            raise argparse.ArgumentTypeError(f"{text!r}: {what} must be from {least} to {most}")
        return value

    return parse


@dataclass
class Arm:
    """What one arm of a scenario measured over its games."""

    label: str
    honest_seats_played: int = 0
    decisions: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    times_ms: list[float] = field(default_factory=list)
    timeouts: int = 0
    other_honest: list[Termination] = field(default_factory=list)
    third_seat: list[Termination] = field(default_factory=list)
    third_decisions: int = 0
    third_total_ms: float = 0.0
    third_max_ms: float = 0.0
    seconds: float = 0.0
    games: int = 0
    short_spinners: list[str] = field(default_factory=list)
    sandbox: str = ""

    def add(self, record: MatchRecord, replay: Path, honest: set[int]) -> None:
        self.games += 1
        self.seconds += record.seconds
        self.sandbox = record.sandbox
        self.honest_seats_played += len(honest)
        for seat in honest:
            timing = record.timings[seat]
            self.decisions += timing.decisions
            self.total_ms += timing.total_ms
            self.max_ms = max(self.max_ms, timing.max_ms)
        # The seat under test is timed too: what its own processes cost it is part of the picture.
        for seat in set(range(PLAYERS)) - honest:
            timing = record.timings[seat]
            self.third_decisions += timing.decisions
            self.third_total_ms += timing.total_ms
            self.third_max_ms = max(self.third_max_ms, timing.max_ms)
        self.times_ms += [
            item.ms for item in read_replay(replay) if isinstance(item, ActionRecord) and item.seat in honest
        ]
        for termination in record.result.terminations:
            if termination.seat not in honest:
                self.third_seat.append(termination)
            elif termination.kind == "timeout":
                self.timeouts += 1
            else:
                self.other_honest.append(termination)
        # spinner_c says on stderr when a limit let it start fewer spinners than asked.
        for seat in set(range(PLAYERS)) - honest:
            stderr = replay.with_name(f"{replay.name}.seat{seat}.stderr")
            notes = stderr.read_text(errors="replace").splitlines() if stderr.exists() else []
            self.short_spinners += [note for note in notes if note.startswith("spinner_c: started")][-1:]

    @property
    def mean_ms(self) -> float:
        return self.total_ms / self.decisions if self.decisions else float("nan")

    @property
    def p95_ms(self) -> float:
        if len(self.times_ms) < 2:
            return self.times_ms[0] if self.times_ms else float("nan")
        return statistics.quantiles(self.times_ms, n=20, method="inclusive")[-1]

    def below(self, think_ms: float) -> float:
        """The share of decisions the referee measured shorter than the bot's own CPU work."""
        return sum(1 for t in self.times_ms if t < think_ms) / len(self.times_ms) if self.times_ms else 0.0

    def line(self, think_ms: float) -> str:
        text = (
            f"{self.label:<12s} {self.games} games, {self.decisions} honest decisions: thinking ms "
            f"mean {self.mean_ms:.2f} p95 {self.p95_ms:.2f} max {self.max_ms:.2f} "
            f"({self.below(think_ms):.0%} measured below the bots' own {think_ms:g} ms of CPU); "
            f"honest seats timed out {self.timeouts} of {self.honest_seats_played}, "
            f"other honest terminations {len(self.other_honest)}; "
        )
        if self.third_decisions or self.third_seat:
            text += (
                f"third seat: mean {ratio(self.third_total_ms, self.third_decisions):.2f} ms "
                f"max {self.third_max_ms:.2f} ms, {len(self.third_seat)} terminations; "
            )
        text += f"{self.seconds / max(1, self.games):.2f} s/game"
        if self.short_spinners:
            text += f"; the spinner started fewer spinners than asked in {len(self.short_spinners)} games"
        return text

    def details(self) -> Iterator[str]:
        """The reasons of the first few unexpected terminations: a figure should say where it came from."""
        shown = self.other_honest + self.third_seat
        for termination in shown[:4]:
            yield f"{'':12s} seat {termination.seat} {termination.kind}: {termination.reason}"
        for note in self.short_spinners[:1]:
            yield f"{'':12s} {note}"


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")


def play(spec: MatchSpec, bots: Sequence[BotSpec], settings: RefereeSettings, replay: Path) -> MatchRecord:
    """One game in a Trio run of its own, so the busy loops can be started and stopped around it."""
    return trio.run(partial(play_match, spec, bots, settings, replay_path=replay))


@contextmanager
def busy_loops(loops: int, shared_session: bool) -> Iterator[None]:
    """``loops`` processes spinning beside the referee for as long as the block runs.

    Each loop is in a session of its own unless ``shared_session``: with the
    kernel's autogroup scheduling (``/proc/sys/kernel/sched_autogroup_enabled``)
    processes in the root cpu group are scheduled by session, so loops sharing
    one session weigh as much as one process together, whatever their number.
    They run in the cpu group this bench was started in, not in the one the
    referee makes for itself and its bots on cgroup v1: they are the host's work.
    """
    host_group = host_cpu_group_procs()
    launcher = subprocess.Popen(
        [sys.executable, "-c", LOOP_PROGRAM, str(loops), str(os.getpid()), "one" if shared_session else "each"]
        + ([host_group] if host_group is not None else []),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    # Process groups to kill: the launcher's session, and each loop's own when it has one.
    groups = [launcher.pid]
    try:
        assert launcher.stdout is not None
        words = launcher.stdout.readline().split()
        if words[:1] != [b"up"]:
            raise RuntimeError(f"the busy loops did not start (exit status {launcher.poll()})")
        if not shared_session:
            groups += [int(word) for word in words[1:]]
        yield
    finally:
        # Loops sharing the session are in the launcher's group even when the
        # launcher is already gone; loops of their own sessions lead their own group.
        for group in reversed(groups):
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        launcher.wait()
        if launcher.stdout is not None:
            launcher.stdout.close()


def spin_scenario(
    think: BotSpec, seat3: BotSpec, args: argparse.Namespace, settings: RefereeSettings, folder: Path
) -> tuple[Arm, Arm]:
    spinner = msgspec.structs.replace(seat3, command=[*seat3.command, str(args.spinners)])
    quiet_seat = msgspec.structs.replace(seat3, command=[*seat3.command, "0"])
    quiet, spinning = Arm("quiet"), Arm(f"{args.spinners} spinners")
    for game in range(args.games):
        third = game % PLAYERS
        honest = set(range(PLAYERS)) - {third}
        spec = MatchSpec(game="vendetta", seed=args.seed + game, variants={"round_limit": ROUND_LIMIT})
        arms = [(quiet, quiet_seat, "quiet"), (spinning, spinner, "spin")]
        for arm, bot, name in arms if game % 2 == 0 else arms[::-1]:
            bots = [bot if seat == third else think for seat in range(PLAYERS)]
            replay = folder / f"{name}-{game}.jsonl"
            arm.add(play(msgspec.structs.replace(spec, match=f"{name}-{game}"), bots, settings, replay), replay, honest)
    return quiet, spinning


def load_scenario(think: BotSpec, args: argparse.Namespace, settings: RefereeSettings, folder: Path) -> tuple[Arm, Arm]:
    idle, loaded = Arm("no load"), Arm(f"{args.loops} loops")
    honest = set(range(PLAYERS))
    for game in range(args.games):
        spec = MatchSpec(game="vendetta", seed=args.seed + game, variants={"round_limit": ROUND_LIMIT})
        for name in ("idle", "loaded") if game % 2 == 0 else ("loaded", "idle"):
            replay = folder / f"{name}-{game}.jsonl"
            named = msgspec.structs.replace(spec, match=f"{name}-{game}")
            if name == "idle":
                idle.add(play(named, [think] * PLAYERS, settings, replay), replay, honest)
            else:
                with busy_loops(args.loops, args.shared_session):
                    record = play(named, [think] * PLAYERS, settings, replay)
                loaded.add(record, replay, honest)
    return idle, loaded


def autogroup() -> str:
    """Whether the kernel schedules the root cpu group's processes by session, which decides what one session weighs."""
    try:
        return {"0": "off", "1": "on"}.get(Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip(), "?")
    except OSError:
        return "absent"


def clock_words(settings: RefereeSettings) -> str:
    """Which clock and freezing policy ran."""
    return f"clock {settings.clock.mode}, ponder {settings.clock.ponder}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--games",
        type=bounded_count(1, MAX_GAMES, "the number of deals"),
        default=6,
        help="deals per scenario (a multiple of 3 rotates the seats evenly)",
    )
    parser.add_argument(
        "--spinners",
        type=bounded_count(1, MAX_SPINNERS, "the number of spinners"),
        default=32,
        help="the spinner's processes",
    )
    parser.add_argument(
        "--loops",
        type=bounded_count(1, MAX_LOOPS, "the number of busy loops"),
        default=24,
        help="busy loops beside the referee",
    )
    parser.add_argument(
        "--think-ms",
        type=bounded_count(1, MAX_THINK_MS, "the thinking time in ms"),
        default=10,
        help="honest CPU ms per decision",
    )
    parser.add_argument(
        "--shared-session",
        action="store_true",
        help="start the busy loops in one session, not one each (autogroup then weighs them as one process)",
    )
    parser.add_argument("--level", choices=["none", "standard", "strict"], default="standard", help="sandbox level")
    parser.add_argument("--scenario", choices=["spin", "load", "all"], default="all", help="which scenario to run")
    parser.add_argument("--seed", type=bounded_count(0, MAX_SEED, "the seed"), default=1, help="first deal seed")
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default=RefereeSettings().clock.mode,
        help="what a decision is charged (default: the referee's)",
    )
    parser.add_argument("--ponder", action="store_true", help="let bots run while they are not asked")
    args = parser.parse_args()

    spin_settings = RefereeSettings(
        clock=Clock(time=SPIN_TIME, mode=args.clock, ponder=args.ponder), sandbox=args.level
    )
    load_settings = RefereeSettings(
        clock=Clock(time=LOAD_TIME, mode=args.clock, ponder=args.ponder), sandbox=args.level
    )
    began = time.perf_counter()
    print(
        f"fairness bench: {os.cpu_count()} cores, sandbox {args.level}, {clock_words(spin_settings)}, "
        f"margin {spin_settings.clock.margin_ms} ms, {args.games} deals per scenario, honest bots think "
        f"{args.think_ms} ms of CPU per decision, load average {load_average()}",
        flush=True,
    )
    think, seat3 = prepare_bots(
        [load_bot("bench/bots/think_c", base=ROOT), load_bot("bench/bots/spinner_c", base=ROOT)], spin_settings
    )
    think = msgspec.structs.replace(think, command=[*think.command, str(args.think_ms)])

    spin_line = "spin -"
    load_line = "load -"
    sandbox = ""
    with tempfile.TemporaryDirectory(prefix="famiglia-fairness-") as tmp:
        folder = Path(tmp)
        if args.scenario in ("spin", "all"):
            quiet, spinning = spin_scenario(think, seat3, args, spin_settings, folder)
            sandbox = spinning.sandbox
            print(
                f"spinning seat: 2 honest seats and a third that answers at once, move_ms {SPIN_TIME.move_ms} "
                f"bank_ms {SPIN_TIME.bank_ms}",
                flush=True,
            )
            for arm in (quiet, spinning):
                print(arm.line(args.think_ms))
                for text in arm.details():
                    print(text)
            mean_ratio = ratio(spinning.mean_ms, quiet.mean_ms)
            met = spinning.timeouts == 0 and mean_ratio <= TARGET_RATIO
            print(
                f"spinner/quiet honest thinking time: mean {mean_ratio:.2f}x, "
                f"p95 {ratio(spinning.p95_ms, quiet.p95_ms):.2f}x; target 0 timeouts and within {TARGET_RATIO:g}x: "
                f"{'met' if met else 'not met'}",
                flush=True,
            )
            spin_line = f"spin {spinning.timeouts} timeouts {mean_ratio:.2f}x thinking"
        if args.scenario in ("load", "all"):
            idle, loaded = load_scenario(think, args, load_settings, folder)
            sandbox = loaded.sandbox
            print(
                f"loaded host: 3 honest seats, {args.loops} busy loops beside the referee "
                f"({'sharing one session' if args.shared_session else 'each in a session of its own'}; "
                f"autogroup scheduling {autogroup()}), move_ms {LOAD_TIME.move_ms} bank_ms {LOAD_TIME.bank_ms}",
                flush=True,
            )
            for arm in (idle, loaded):
                print(arm.line(args.think_ms))
                for text in arm.details():
                    print(text)
            print(
                f"loaded/idle honest thinking time: mean {ratio(loaded.mean_ms, idle.mean_ms):.2f}x, "
                f"p95 {ratio(loaded.p95_ms, idle.p95_ms):.2f}x; seats lost on time: {loaded.timeouts} of "
                f"{loaded.honest_seats_played} under load, {idle.timeouts} of {idle.honest_seats_played} without",
                flush=True,
            )
            load_line = f"load {loaded.timeouts}/{loaded.honest_seats_played} seats lost ({idle.timeouts} without)"
    print(f"sandbox: {sandbox}")
    print(f"{time.perf_counter() - began:.1f} s in all, load average after: {load_average()}")
    print(f"fairness: {spin_line} {load_line}")


def only_interrupts(error: BaseException) -> bool:
    """Whether ``error`` is Ctrl-C alone: a bare KeyboardInterrupt, or a group of Trio's holding nothing else."""
    if isinstance(error, BaseExceptionGroup):
        return error.split(KeyboardInterrupt)[1] is None
    return isinstance(error, KeyboardInterrupt)


if __name__ == "__main__":
    try:
        main()
    except BaseException as error:
        # Ctrl-C is how a run is cut short, not a fault: one line, not the referee's
        # nested tracebacks. The loops and bots are gone by now (finally blocks and
        # the referee's shielded cleanup ran on the way out).
        if not only_interrupts(error):
            raise
        print("fairness bench: interrupted", file=sys.stderr)
        sys.exit(130)
