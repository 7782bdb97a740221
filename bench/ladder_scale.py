"""The ladder at a large public contest's size: a filled store, then what its pages and loops cost.

Usage: python bench/ladder_scale.py [--scale S] [--reps N] [--folder DIR] [--reuse] [--skip-restart] [--skip-fit]

**Fill.** In ``--folder`` (default: a new temporary folder) a ladder file for
3- and 4-seat Vendetta tables and its store, filled to ``--scale`` (default 1)
times 2,000 entrants, 6,000 versions and 2,000,000 finished games:

- entrants through the store's own writer (``LadderStore.insert_entrant``, in
  one transaction), so their names and token hashes are what a registration
  writes;
- versions, tables, games and seats by bulk SQL into the schema the store
  itself created (``LadderStore.__init__``), column for column what
  ``add_version``/``decide``, ``add_table`` and ``finish`` write: the store's own
  writers rate every game with OpenSkill in a transaction of its own, about a
  millisecond a game, which is most of an hour for two million. The secondary
  indexes are dropped for the fill and made again from their own SQL (read
  from ``sqlite_master``) afterwards, and the journal is SQLite's rollback
  journal during the fill, WAL again at its end, as the store keeps it; the
  counts the store keeps beside its rows (``ladder.tallies``) are dropped
  for the fill and made by the store's own migration at the next open,
  which is timed;
- each entrant joins at some point of the contest (a hundred at its start),
  sends 1 to many versions over its remaining time (some rejected, the newest
  accepted one active, a few suspended or retired by the host); a table seats
  versions playing at that time, in every seating of a Williams design, and
  each game's ranks are drawn from the versions' hidden strengths
  (Plackett-Luce, through Gumbel noise) with a small first-seat edge; a
  version's rating after each game follows its strength as OpenSkill's does
  (mu towards it, sigma narrowing with games played); 3 % of versions fault
  in 5 % of their games (timeouts, crashes, illegal actions, protocol errors),
  and a few games failed in the harness;
- every active version has an upload (the sample random_py bot with its own
  marker file, so its own digest), as a restart must ready each one's bot;
  the build cache is a folder of the bench (``FAMIGLIA_BOT_CACHE``).

Then the store is opened once with ``LadderStore`` (its migrations run, timed),
and its size on disk is given with the rows of each table.

**Measure** (medians over ``--reps``, default 7, with the fastest and slowest):

- the leaderboard page ``/`` and ``/api/standings``, through the real
  Starlette app (httpx's ASGI transport), each request with its own query
  string so the anonymous page cache never answers it (target < 100 ms);
- an entrant's page ``/entrants/NAME`` and ``/api/entrants/NAME`` for the
  entrant with the most games and a median one, the board an entrant page
  places its entrant on made afresh for each (target < 200 ms);
- matchmaking: ``Ladder.next_game`` dealing a new table and starting its first
  game, with every active version ready (target < 10 ms); the table it dealt
  is cancelled after each, outside the clock;
- a restart: ``famiglia ladder serve`` on the store (paused, so the store stays
  as filled) from its start until ``/`` answers 200 (target < 10 s), the first
  start (which builds every active version's bot into the cache) told apart;
- the scheduled fit: reading the games as the refitter does and fitting them
  (``fit_standings``), once; the rate it keeps up with is ``fit_every`` games
  per fit's duration, against the games per hour the ladder plays.

The last line is ``ladder scale: board <ms> ms, standings <ms> ms, entrant <ms> ms, deal <ms> ms,
restart <s> s, fit <s> s``. Run it alone on the machine when the figures matter; not part of the tests.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import math
import os
import random
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# Run from a checkout without installing: the repository root holds the packages.
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx
import msgspec
import trio

from ladder.config import LadderPaths, load_ladder
from ladder.health import FAULTS
from ladder.store import LadderStore, new_token
from ladder.submissions import save_upload
from referee.bot_folder import pack_folder
from tournaments.hosting.schedule import williams_design

ENTRANTS, VERSIONS, GAMES = 2_000, 6_000, 2_000_000
TABLE_SIZES = (3, 4)
CONTEST_DAYS = 30
FOUNDERS = 100
"""Entrants there from the contest's first game: a ladder starts with some."""

LADDER_FILE = """[ladder]
name = "scale bench"
game = "vendetta"
table_sizes = [3, 4]
concurrency = 2
[ladder.sandbox]
level = "none"
[ladder.rating]
fit_every = 20
"""


class Version(msgspec.Struct, kw_only=True):
    id: int
    entrant: int
    number: int
    state: str
    retired_by: str
    submitted_at: float
    """Where in the contest (0..1) it was sent."""
    plays_until: float
    """Where it stopped being dealt (0..1): when a newer one replaced it, or the end; its send time if it never played."""
    strength: float
    faulty: bool
    mu: float = 25.0
    sigma: float = 25.0 / 3
    games: int = 0


def when(fraction: float, start: float) -> str:
    """The ISO time of a point (0..1) of the contest that began at ``start`` (a timestamp)."""
    moment = start + fraction * CONTEST_DAYS * 86400
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).isoformat(timespec="seconds")


def plan_versions(rng: random.Random, entrants: list[int], count: int) -> list[Version]:
    """Each entrant's versions over the contest: at least one each (2 % none), more for the keen ones."""
    joined = {e: 0.0 if i < FOUNDERS else rng.uniform(0.0, 0.85) for i, e in enumerate(entrants)}
    keen = {e: rng.lognormvariate(0, 1) for e in entrants}
    sent = {e: 0 if rng.random() < 0.02 else 1 for e in entrants}
    weights = list(keen.values())
    for _ in range(max(0, count - sum(sent.values()))):
        sent[rng.choices(entrants, weights)[0]] += 1
    versions: list[Version] = []
    for entrant in entrants:
        skill = rng.gauss(0, 1)
        times = sorted(rng.uniform(joined[entrant], 1.0) for _ in range(sent[entrant]))
        if times and joined[entrant] == 0.0:
            times[0] = 0.0  # a founder's first version plays from the first table
        mine = []
        for number, at in enumerate(times, start=1):
            accepted = rng.random() < 0.9
            mine.append(
                Version(
                    id=len(versions) + len(mine) + 1,
                    entrant=entrant,
                    number=number,
                    state="active" if accepted else "rejected",
                    retired_by="",
                    submitted_at=at,
                    plays_until=at,
                    strength=skill + 0.15 * number + rng.gauss(0, 0.3),
                    faulty=rng.random() < 0.03,
                )
            )
        accepted = [v for v in mine if v.state == "active"]
        for older, newer in itertools.pairwise(accepted):
            older.state, older.retired_by, older.plays_until = "retired", "replaced", newer.submitted_at
        if accepted:
            newest = accepted[-1]
            newest.plays_until = 1.0
            fate = rng.random()
            if fate < 0.02:  # stopped at some point: retired by the host, or suspended
                newest.state, newest.retired_by = ("retired", "host") if fate < 0.01 else ("suspended", "")
                newest.plays_until = rng.uniform(newest.submitted_at, 1.0)
        versions.extend(mine)
    return versions


def seats_of_games(rng: random.Random, versions: list[Version], games: int) -> Iterator[tuple[list[int], float]]:
    """Tables (their members, version ids) in contest order, each with its point of the contest, until
    ``games`` games are dealt: a table seats versions playing at its time."""
    playing = sorted((v for v in versions if v.plays_until > v.submitted_at), key=lambda v: v.submitted_at)
    dealt, turn, chunk = 0, 0, 5_000
    while dealt < games:
        at = dealt / games
        live = [v.id for v in playing if v.submitted_at <= at < v.plays_until]
        end = min(games, dealt + chunk)
        while dealt < end:
            size = TABLE_SIZES[turn % len(TABLE_SIZES)]
            turn += 1
            size = min(size, len(live))
            if size < 2:
                dealt = end  # nobody plays yet at this point of the contest
                break
            members = rng.sample(live, size)
            yield members, dealt / games
            dealt += len(williams_design(size))


def fill(folder: Path, scale: float, seed: int = 1) -> Path:
    """A ladder file and its store in ``folder``, filled at ``scale``; the ladder file."""
    rng = random.Random(seed)
    config = folder / "ladder.toml"
    config.write_text(LADDER_FILE, encoding="utf-8")
    paths = LadderPaths.beside(config)
    store = LadderStore(paths.db)
    started = time.perf_counter()
    with store.transaction():
        entrants = [store.insert_entrant(f"entrant-{i:05d}", new_token()) for i in range(round(ENTRANTS * scale))]
    store.close()
    print(f"fill: {len(entrants)} entrants through LadderStore.insert_entrant in {time.perf_counter() - started:.1f} s")
    versions = plan_versions(rng, entrants, round(VERSIONS * scale))
    by_id = {v.id: v for v in versions}
    start = time.time() - CONTEST_DAYS * 86400
    db = sqlite3.connect(paths.db, isolation_level=None)
    db.execute("PRAGMA journal_mode=DELETE")  # a fill's one big transaction: no WAL file of its size
    db.execute("PRAGMA synchronous=OFF")
    db.execute("PRAGMA cache_size=-1000000")
    indexes = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('seat', 'game')"
    ).fetchall()
    triggers = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")]
    db.execute("BEGIN")
    for name, _ in indexes:
        db.execute(f"DROP INDEX {name}")
    for name in triggers:  # the store's tallies: counted afresh by its own migration at the next open
        db.execute(f"DROP TRIGGER {name}")
    tables: list[tuple[int, int, str, None, float]] = []
    game_rows: list[tuple[object, ...]] = []
    seat_rows: list[tuple[object, ...]] = []
    game_id = table = 0
    seat_edge = [0.15, 0.05, 0.0, -0.05]

    def flush() -> None:
        db.executemany("INSERT INTO tables VALUES (?, ?, ?, ?, ?)", tables)
        db.executemany("INSERT INTO game VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?)", game_rows)
        db.executemany("INSERT INTO seat VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", seat_rows)
        tables.clear(), game_rows.clear(), seat_rows.clear()

    total = round(GAMES * scale)
    for members, at in seats_of_games(rng, versions, total):
        table += 1
        tables.append(
            (table, rng.getrandbits(62), json.dumps(members, separators=(",", ":")), None, start + at * 2.6e6)
        )
        for row in williams_design(len(members)):
            game_id += 1
            seating = [members[p] for p in row]
            finished = when(at, start)
            if rng.random() < 0.0001:  # the harness failed it: kept with its error, no seats
                error = "RefereeFailed: the bench's stand-in for a harness failure"
                game_rows.append((game_id, table, json.dumps(seating), "failed", finished, None, None, None, error))
                continue
            drawn = [
                by_id[v].strength + seat_edge[s] - math.log(-math.log(rng.random())) for s, v in enumerate(seating)
            ]
            order = sorted(range(len(seating)), key=lambda s: -drawn[s])
            ranks = [0] * len(seating)
            for place, s in enumerate(order, start=1):
                ranks[s] = place
            replay = str(paths.replays / f"game-{game_id:06d}.jsonl")
            game_rows.append(
                (game_id, table, json.dumps(seating), "done", finished, rng.uniform(0.5, 5), "finished", replay, None)
            )
            for s, v in enumerate(seating):
                version = by_id[v]
                version.games += 1
                version.sigma = max(0.8, (25.0 / 3) / math.sqrt(1 + version.games / 3))
                target = 25.0 + 4 * version.strength
                version.mu += 0.1 * (target - version.mu) + rng.gauss(0, 0.3)
                kind = rng.choice(FAULTS) if version.faulty and rng.random() < 0.05 else None
                reason = f"bench: a {kind} of the stand-in bot" if kind else None
                seat_rows.append((game_id, s, v, ranks[s], 10 - ranks[s], kind, reason, version.mu, version.sigma))
        if len(seat_rows) > 200_000:
            flush()
            print(f"fill: {game_id:,} games", end="\r", flush=True)
    flush()
    db.executemany(
        "INSERT INTO version (id, entrant, number, digest, state, reason, report, submitted, submitted_at, decided, "
        "mu, sigma, retired_by, health_since, suspension) VALUES (?, ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?, ?, ?, 0, ?)",
        [
            (
                v.id,
                v.entrant,
                v.number,
                f"{v.id:064x}",
                v.state,
                "check-bot: passed" if v.state != "rejected" else "check-bot: failed 2 of 40 positions",
                when(v.submitted_at, start),
                start + v.submitted_at * CONTEST_DAYS * 86400,
                when(v.submitted_at, start),
                v.mu,
                v.sigma,
                v.retired_by,
                "suspended: the bench's stand-in suspension" if v.state == "suspended" else "",
            )
            for v in versions
        ],
    )
    marks = ", ".join("?" * len(FAULTS))
    db.execute(  # what LadderStore.finish counts game by game (ladder.health.count_faults)
        "INSERT INTO version_fault SELECT version, termination, COUNT(*) FROM seat "
        f"WHERE termination IN ({marks}) GROUP BY version, termination",
        FAULTS,
    )
    for _, sql in indexes:
        db.execute(sql)
    db.execute("COMMIT")
    db.execute("PRAGMA journal_mode=WAL")  # no ANALYZE: the store never runs one, and its plans are the ones to time
    db.close()
    print(f"fill: {game_id:,} games, {len(versions)} versions in {time.perf_counter() - started:.1f} s")
    uploads(paths, [v for v in versions if v.state == "active"])
    print(f"fill: done in {time.perf_counter() - started:.1f} s")
    return config


def uploads(paths: LadderPaths, active: list[Version]) -> None:
    """Each active version's upload, the sample random_py bot with a marker of its own; its digest set."""
    bot = Path(tempfile.mkdtemp(prefix="scale-bot-"))
    shutil.copytree(ROOT / "sample_bots" / "random_py", bot, dirs_exist_ok=True)
    db = sqlite3.connect(paths.db, isolation_level=None)
    db.execute("BEGIN")
    for version in active:
        (bot / "version.txt").write_text(str(version.id), encoding="utf-8")
        digest, package = pack_folder(bot)
        save_upload(paths.uploads, digest, package)
        db.execute("UPDATE version SET digest = ? WHERE id = ?", (digest, version.id))
    db.execute("COMMIT")
    db.close()
    shutil.rmtree(bot)


def describe(config: Path) -> None:
    """The store's migrations at open (timed), its size on disk and its rows, table by table."""
    paths = LadderPaths.beside(config)
    started = time.perf_counter()
    LadderStore(paths.db).close()
    print(f"store: opened (migrations included) in {time.perf_counter() - started:.2f} s")
    db = sqlite3.connect(paths.db)
    sizes = {p.name: p.stat().st_size for p in paths.db.parent.glob(paths.db.name + "*")}
    print(
        f"store: {sum(sizes.values()) / 1e6:,.0f} MB on disk ({', '.join(f'{k} {v / 1e6:,.0f} MB' for k, v in sizes.items())})"
    )
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    counts = {name: db.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0] for name in names}
    print("store: rows " + ", ".join(f"{name} {n:,}" for name, n in counts.items() if n))
    try:
        used = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        print("store: bytes by table and index " + ", ".join(f"{n} {s / 1e6:,.0f} MB" for n, s in used[:8]))
    except sqlite3.OperationalError:
        pass  # SQLite built without dbstat
    db.close()


def said(what: str, ms: list[float], target: float, cpu: list[float]) -> float:
    """One figure's line: the median wall time against its target, and the median CPU time of this process
    (what the wall time would be on a machine with nothing else running)."""
    median = statistics.median(ms)
    verdict = "ok" if median < target else "MISSES"
    print(
        f"{what}: median {median:.1f} ms (min {min(ms):.1f}, max {max(ms):.1f}, {len(ms)} reps; "
        f"CPU {statistics.median(cpu):.1f} ms), target < {target:g} ms: {verdict}"
    )
    return median


async def measure_app(config: Path, reps: int) -> dict[str, float]:
    from ladder.loop import Ladder
    from ladder.web.app import make_app
    from referee.bots import BotSpec

    paths = LadderPaths.beside(config)
    ladder = Ladder(load_ladder(config), paths)
    app = make_app(ladder)
    site = app.state.site
    db = ladder.store.db
    (busiest,) = db.execute(
        "SELECT e.name FROM seat s JOIN version v ON v.id = s.version JOIN entrant e ON e.id = v.entrant "
        "GROUP BY e.id ORDER BY COUNT(*) DESC LIMIT 1"
    ).fetchone()
    names = [r[0] for r in db.execute("SELECT name FROM entrant ORDER BY id")]
    median_name = names[len(names) // 2]
    figures: dict[str, float] = {}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://ladder") as http:

        async def get(what: str, address: str, target: float) -> float:
            times, cpu = [], []
            for rep in range(reps):
                site._board = None  # an entrant page's board made afresh: the worst case, once a second
                started, used = time.perf_counter(), time.process_time()
                answer = await http.get(f"{address}{'&' if '?' in address else '?'}rep={rep}")
                times.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - used) * 1000)
                assert answer.status_code == 200, (address, answer.status_code)
            return said(what, times, target, cpu)

        figures["board"] = await get("leaderboard /", "/", 100)
        figures["standings"] = await get("API /api/standings", "/api/standings", 100)
        for label, name in (("busiest", busiest), ("median", median_name)):
            page = f"entrant page of the {label} entrant ({name})"
            figures[f"entrant {label}"] = await get(page, f"/entrants/{name}", 200)
            await get(f"API /api/entrants of the {label} entrant", f"/api/entrants/{name}", 200)
    ladder.store.set_paused(False)  # a --reuse of a folder whose restarts paused it
    active = ladder.store.versions(states=("active",))
    ladder.bots = {v.id: BotSpec(name=v.entrant, command=["true"], cwd=".") for v in active}

    def deal() -> None:
        started = ladder.next_game()
        assert started is not None

    def cancel() -> None:
        db.execute("UPDATE game SET state = 'cancelled' WHERE state IN ('pending', 'running')")

    times, cpu = [], []
    for _ in range(reps):
        cancel()
        started, used = time.perf_counter(), time.process_time()
        deal()
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - used) * 1000)
    cancel()
    figures["deal"] = said(f"matchmaking: deal a table among {len(active)} active versions", times, 10, cpu)
    ladder.store.close()
    return figures


def restart(config: Path, reps: int) -> float:
    """Seconds from ``famiglia ladder serve`` starting to ``/`` answering 200 (the ladder paused), per rep."""
    sys.path.insert(0, str(ROOT / "tests"))
    from ports import free_port  # the tests' way to a free port: the OS's choice

    paths = LadderPaths.beside(config)
    store = LadderStore(paths.db)
    store.set_paused(True)
    store.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FAMIGLIA_BOT_CACHE": str(config.parent / "bot-cache")}
    famiglia = [sys.executable, "-c", "from tournaments.cli import app; app()"]
    times = []
    for rep in range(reps + 1):
        port = free_port()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        server = subprocess.Popen(
            [*famiglia, "ladder", "serve", str(config), "--port", str(port)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/", timeout=30).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if server.poll() is not None:
                    raise SystemExit(f"restart: the server exited ({server.returncode}) before it answered")
                time.sleep(0.05)
            seconds = time.perf_counter() - started
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=120)
        ended = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = ended.ru_utime + ended.ru_stime - used.ru_utime - used.ru_stime
        label = "first start (every active version's bot built into the cache)" if rep == 0 else f"restart {rep}"
        print(f"restart: {label}: serving after {seconds:.2f} s (the server's CPU until stopped: {cpu:.2f} s)")
        if rep:
            times.append(seconds)
    median = statistics.median(times)
    print(f"restart: median {median:.2f} s over {reps}, target < 10 s: {'ok' if median < 10 else 'MISSES'}")
    return median


def fit(config: Path) -> float:
    """One scheduled fit as the refitter makes it: the games read from the store, then fitted."""
    from ladder.store import fit_input
    from ladder.views import fit_standings

    paths = LadderPaths.beside(config)
    store = LadderStore(paths.db)
    started = time.perf_counter()
    rows, versions = fit_input(paths.db)
    read = time.perf_counter() - started
    used = time.process_time()
    try:
        ranked = fit_standings(rows, versions)
    except (ValueError, ArithmeticError) as exc:  # what the refitter survives (ladder.loop)
        print(
            f"fit: {len(rows):,} games read in {read:.1f} s; the fit FAILED after {time.perf_counter() - started - read:.1f} s "
            f"({time.process_time() - used:.1f} s of CPU): {type(exc).__name__}: {exc}"
        )
        return math.nan
    finally:
        store.close()
    total = time.perf_counter() - started
    every = load_ladder(config).rating.fit_every
    print(
        f"fit: {len(rows):,} games read in {read:.1f} s, {len(ranked)} versions fitted in {total - read:.1f} s: "
        f"{total:.1f} s a fit; every {every} games it keeps up with at most {every / total * 3600:,.0f} games/h"
    )
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="times 2,000 entrants, 6,000 versions, 2M games")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--folder", type=Path, help="where the ladder goes (default: a new temporary folder)")
    parser.add_argument("--reuse", action="store_true", help="measure the ladder already in --folder, no fill")
    parser.add_argument("--skip-restart", action="store_true")
    parser.add_argument("--skip-fit", action="store_true")
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="ladder-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["FAMIGLIA_BOT_CACHE"] = str(folder.resolve() / "bot-cache")
    config = folder / "ladder.toml"
    if not args.reuse:
        if LadderPaths.beside(config).db.exists():
            raise SystemExit(f"{folder} holds a ladder already: --reuse it, or give another --folder")
        fill(folder, args.scale)
    describe(config)
    figures = trio.run(measure_app, config, args.reps)
    seconds = restart(config, max(1, args.reps // 2)) if not args.skip_restart else math.nan
    fitted = fit(config) if not args.skip_fit else math.nan
    print(
        f"ladder scale: board {figures['board']:.1f} ms, standings {figures['standings']:.1f} ms, "
        f"entrant {figures['entrant busiest']:.1f} ms, deal {figures['deal']:.2f} ms, "
        f"restart {seconds:.2f} s, fit {fitted:.1f} s"
    )


if __name__ == "__main__":
    main()
