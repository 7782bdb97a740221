"""`famiglia report` on a tournament of 1,000 games: how long it takes and how much it writes.

Usage: python bench/report.py [--games N] [--game sicilianos|vendetta] [--baseline-ref REV] [--store DIR]

The tournament is made without any bot process: six entrants at tables of
four, every game played to its end with random legal actions straight through
the engine, and written as the referee writes it (a replay named after its
game, a result row in a SQLite store). Making 1,000 Sicilianos games takes
about half a minute; ``--store DIR`` keeps them in DIR and uses them again on
the next run.

Then ``famiglia report`` runs through its real entry point (a subprocess of
this interpreter), each run into a folder of its own, and the bench prints its
wall time, the megabytes and files it wrote and its largest file:

1. baseline: the report code of ``--baseline-ref`` (default 30e2f59, the
   last commit before issue 29), extracted with ``git archive`` into a
   temporary folder and run from there on the same store (``none`` skips it);
2. report: this checkout's ``famiglia report``, every game's viewer pages, with
   one process per CPU writing them;
3. again: the same report run again into the same folder, as a host refreshing
   it during a tournament does: every page is still current and kept;
4. one job: ``--jobs 1``, every page written by the report's own process;
5. no viewer: this checkout's ``famiglia report --no-viewer``, the page alone.

The files and megabytes of a run are everything in its folder (the report, its
viewer pages and their shared ``assets/``).

The last line is always
``report: <seconds> s (<cpu> s CPU) <megabytes> MB for <games> games, <speedup>x faster (<x>x less CPU)
<smaller>x smaller than <ref>`` (``-`` for the ratios when the baseline did not run). CPU seconds
count the report and every process it started (its page writers); on a shared machine they say
more than the wall time.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Run from a checkout without installing: the repository root holds the packages.
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgspec
from machine import load_average

from protocol.messages import TimeControl
from referee.games import get_rules
from referee.games.base import RecordingChance, SeededChance
from referee.match import MatchRecord, SeatTiming, result_of
from referee.replay import (
    REPLAY_FORMAT,
    ActionRecord,
    ChanceRecord,
    Header,
    ReplayWriter,
    ResultRecord,
    SeatInfo,
    encode_raw,
    tournament_match_id,
)
from tournaments.config.tournament import parse_tournament
from tournaments.hosting.schedule import ScheduledGame
from tournaments.lifecycle.plan import build_schedule
from tournaments.store import Store

# Names a host really gives: two entrants whose names differ by a suffix (the
# report's colours must still tell them apart).
NAMES = ["greedy", "greedy-twin", "random", "cautious", "bold", "sly"]


def make_store(folder: Path, games: int, game: str) -> Path:
    """A store of ``games`` finished games with their replays, made without bots."""
    db = folder / "bench.sqlite"
    if db.exists():
        return db
    config = parse_tournament(
        {
            "tournament": {"name": "bench report", "game": game, "table_size": 4, "replays": "replays",
                           "games_per_entrant": -(-games * 4 // len(NAMES)), "seed": 11},
            "entrant": [{"name": name, "bot": "sample_bots/random_py"} for name in NAMES],
        },
        base=ROOT,
        source="bench",
    )  # fmt: skip
    store = Store(db)
    schedule = build_schedule(config, b"bench")[:games]
    store.begin(config, schedule)
    tournament = store.tournament_id()
    (folder / "replays").mkdir(exist_ok=True)
    started = time.perf_counter()
    for scheduled in schedule:
        path = folder / "replays" / f"game-{scheduled.index:06d}.jsonl"
        names = [NAMES[e] for e in scheduled.seating]
        match = tournament_match_id(tournament, scheduled.index)
        record = play_one(path, game, config.variants, names, scheduled, match)
        store.record(scheduled, record)
    store.close()
    print(f"made {games} {game} games in {time.perf_counter() - started:.1f} s: {folder}", flush=True)
    return db


def play_one(
    path: Path, game: str, variants: dict[str, str], names: list[str], scheduled: ScheduledGame, match: str
) -> MatchRecord:
    """One game of random legal actions, written as the referee writes its replay."""
    rules = get_rules(game)
    config = rules.config(variants)
    chance = RecordingChance(SeededChance(scheduled.seed))
    state = rules.new_game(len(names), config, chance)
    writer = ReplayWriter(path)
    writer.write(
        Header(
            format=REPLAY_FORMAT, match=match, game=game, variants=rules.variants(config), config=encode_raw(config),
            seats=[SeatInfo(name=name, command=["bot"]) for name in names], seed=scheduled.seed, time=TimeControl(),
            illegal_action="forfeit", started="2026-11-26T00:00:00+00:00",
        )
    )  # fmt: skip
    written = 0
    rng = random.Random(scheduled.seed)
    decisions = [0] * len(names)
    thought = [0.0] * len(names)
    # Each entrant thinks at a pace of its own, so the report's thinking-time picture has something to show.
    pace = [1.0 + 3.0 * NAMES.index(name) if name in NAMES else 1.0 for name in names]
    request = 0
    while (decision := state.decision()) is not None:
        request += 1
        action = state.random_action(rng)
        events = state.apply(decision.seat, action)
        if len(chance.draws) > written:  # the referee writes the draws before the action that used them
            writer.write(ChanceRecord(draws=chance.draws[written:]))
            written = len(chance.draws)
        ms = pace[decision.seat] * (0.5 + rng.random())
        decisions[decision.seat] += 1
        thought[decision.seat] += ms
        writer.write(
            ActionRecord(seat=decision.seat, request=request, decision=decision.kind, action=encode_raw(action),
                         ms=ms, events=encode_raw(events))
        )  # fmt: skip
    result = result_of(state.outcome())
    writer.write(ResultRecord(result=result))
    writer.finish()
    timings = [
        SeatTiming(decisions=d, total_ms=ms, max_ms=max(ms, 1.0), bank_left_ms=0.0)
        for d, ms in zip(decisions, thought, strict=True)
    ]
    return MatchRecord(
        match=match, game=game, seed=scheduled.seed, variants=dict(variants), names=names, result=result,
        timings=timings, seconds=0.1, replay=str(path),
    )  # fmt: skip


class Run(msgspec.Struct, frozen=True):
    label: str
    seconds: float
    cpu: float
    """CPU seconds of the report and every process it started: the figure a busy machine disturbs least."""
    files: int
    size: int
    largest: int
    ok: bool

    def line(self) -> str:
        if not self.ok:
            return f"{self.label:>10}: failed"
        return (
            f"{self.label:>10}: {self.seconds:6.1f} s ({self.cpu:6.1f} s CPU) {self.size / 1e6:8.1f} MB "
            f"{self.files:6d} files, largest {self.largest / 1e3:.0f} KB"
        )


def run_report(label: str, db: Path, out: Path, extra: list[str], tree: Path | None) -> Run:
    """``famiglia report`` from this checkout, or from ``tree`` (an older famiglia), timed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from tournaments.cli import main; main()"
    command = [sys.executable, "-c", code, str(tree or ROOT), "report", "--db", str(db), "--out", str(out), *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=tree or ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode != 0:
        print(f"{label}: exit {done.returncode}: {done.stderr.strip()[-600:]}", flush=True)
        return Run(label, seconds, cpu, 0, 0, 0, False)
    sizes = [p.stat().st_size for p in out.parent.rglob("*") if p.is_file()]
    return Run(label, seconds, cpu, len(sizes), sum(sizes), max(sizes, default=0), True)


def extract(ref: str, into: Path) -> Path | None:
    """The tree of commit ``ref`` of this checkout, or None when git cannot give it."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=False)
    if archive.returncode != 0:
        print(f"baseline {ref}: git archive failed: {archive.stderr.decode(errors='replace').strip()}", flush=True)
        return None
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--game", choices=("sicilianos", "vendetta"), default="sicilianos")
    parser.add_argument("--baseline-ref", default="30e2f59", help="the commit to compare with, or none")
    parser.add_argument("--store", type=Path, help="keep the tournament here and use it again on the next run")
    args = parser.parse_args()
    if not 1 <= args.games <= 100_000:
        parser.error(f"--games {args.games}: from 1 to 100000 games")
    if args.store is not None and args.store.exists() and not args.store.is_dir():
        parser.error(f"--store {args.store}: is not a folder")
    print(f"load average before: {load_average()}; {os.cpu_count()} CPUs", flush=True)
    with tempfile.TemporaryDirectory(prefix="famiglia-bench-report-") as tmp:
        work = Path(tmp)
        store_folder = args.store.resolve() if args.store else work / "store"
        store_folder.mkdir(parents=True, exist_ok=True)
        db = make_store(store_folder, args.games, args.game)
        runs: dict[str, Any] = {}
        if args.baseline_ref != "none":
            tree = extract(args.baseline_ref, work / "baseline-tree")
            if tree is not None:
                runs["baseline"] = run_report("baseline", db, work / "baseline" / "r.html", [], tree)
                print(runs["baseline"].line(), flush=True)
                shutil.rmtree(work / "baseline", ignore_errors=True)
        runs["report"] = run_report("report", db, work / "report" / "r.html", [], None)
        print(runs["report"].line(), flush=True)
        runs["again"] = run_report("again", db, work / "report" / "r.html", [], None)
        print(runs["again"].line(), flush=True)
        runs["one job"] = run_report("one job", db, work / "serial" / "r.html", ["--jobs", "1"], None)
        print(runs["one job"].line(), flush=True)
        runs["no viewer"] = run_report("no viewer", db, work / "bare" / "r.html", ["--no-viewer"], None)
        print(runs["no viewer"].line(), flush=True)
    print(f"load average after: {load_average()}", flush=True)
    now, before = runs["report"], runs.get("baseline")
    if before is not None and before.ok and now.ok:
        ratios = (
            f"{before.seconds / now.seconds:.1f}x faster ({before.cpu / max(now.cpu, 1e-9):.1f}x less CPU) "
            f"{before.size / max(now.size, 1):.1f}x smaller"
        )
    else:
        ratios = "- faster (- less CPU) - smaller"
    print(
        f"report: {now.seconds:.1f} s ({now.cpu:.1f} s CPU) {now.size / 1e6:.1f} MB for {args.games} games, "
        f"{ratios} than {args.baseline_ref}"
    )


if __name__ == "__main__":
    main()
