"""The ladder server: games per hour it sustains, with and without a bot that fails every ladder game,
and page latency under many readers.

Usage: python bench/ladder.py [--seconds N] [--readers N] [--concurrency N] [--sandbox LEVEL] [--no-sleeper]

A ladder of four entrants (random_py, greedy_py and c_bot when gcc is
there, random_py again otherwise, and random_py once more as a fourth) at
3-seat Vendetta tables, on the ladder's default clock and health rule, is
started with ``famiglia ladder serve`` as a user would (its own process, on
127.0.0.1), each entrant submits its bot with ``famiglia ladder submit``, and
once all four versions are active:

1. games: the finished games are counted over ``--seconds`` of play
   (default 60), with nobody reading pages: games per hour.
2. sleeper (unless ``--no-sleeper``): a fifth entrant submits
   tests/bots/hostile/ladder_sleeper, which passes check-bot and then sleeps
   through the first decision of every ladder game (it times out). Once it is
   active the finished games are counted over ``--seconds`` again: games per
   hour beside it, how many games it played until suspended (target: at most
   20), and what its games cost (median seconds, against its clock). Then the
   four alone once more over ``--seconds``: the sleeper's run is compared with
   the mean of the runs before and after it (issue 40's target: at least 0.8x),
   as the load of a shared machine drifts between runs.
3. pages: ``--readers`` (default 50) concurrent clients each fetch the
   leaderboard, ``/api/standings`` and an entrant page in a loop for
   ``--seconds`` / 2 while the games go on; the latency of every request
   (median, 95th percentile, worst) and how many games were played meanwhile.

The last lines are
``sleeper: <ratio>x the games/h of the four alone, suspended after <n> games`` and
``ladder: <games_per_hour> games/h, pages p50 <ms> ms p95 <ms> ms under <readers> readers``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_BOTS = ROOT / "sample_bots"
SLEEPER = ROOT / "tests" / "bots" / "hostile" / "ladder_sleeper"


def positive(kind: type, what: str, top: float) -> object:
    def parse(text: str) -> object:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not 0 < value <= top:
            raise argparse.ArgumentTypeError(f"{text!r}: the {what} must be more than 0 and at most {top:g}")
        return value

    return parse


def famiglia(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tournaments.cli", *args],
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        sys.exit(f"famiglia {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return done.stdout


def done_games(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM game WHERE state = 'done'").fetchone()[0])


def active_versions(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM version WHERE state = 'active'").fetchone()[0])


def version_state(db: Path, entrant: str) -> tuple[str, int]:
    """The state and games of ``entrant``'s newest version."""
    with sqlite3.connect(db) as connection:
        row = connection.execute(
            "SELECT v.state, (SELECT COUNT(*) FROM seat s WHERE s.version = v.id) FROM version v "
            "JOIN entrant e ON e.id = v.entrant WHERE e.name = ? ORDER BY v.number DESC LIMIT 1",
            (entrant,),
        ).fetchone()
    return ("none", 0) if row is None else (str(row[0]), int(row[1]))


def sleeper_seconds(db: Path, entrant: str) -> list[float]:
    """The seconds each finished game of ``entrant``'s took."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT g.seconds FROM game g JOIN seat s ON s.game = g.id JOIN version v ON v.id = s.version "
            "JOIN entrant e ON e.id = v.entrant WHERE e.name = ? AND g.state = 'done'",
            (entrant,),
        ).fetchall()
    return [float(row[0]) for row in rows]


def measure(db: Path, seconds: float) -> tuple[int, float]:
    """Games finished over ``seconds`` of play, and the seconds it really was."""
    first, began = done_games(db), time.monotonic()
    time.sleep(seconds)
    return done_games(db) - first, time.monotonic() - began


async def read_pages(url: str, readers: int, seconds: float) -> list[float]:
    import httpx
    import trio

    latencies: list[float] = []
    paths = ["/", "/api/standings", "/entrants/e1"]

    async def reader(client: httpx.AsyncClient, offset: int) -> None:
        i = offset
        while True:
            began = time.perf_counter()
            answer = await client.get(paths[i % len(paths)])
            answer.raise_for_status()
            latencies.append((time.perf_counter() - began) * 1000)
            i += 1

    limits = httpx.Limits(max_connections=readers, max_keepalive_connections=readers)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        with trio.move_on_after(seconds):
            async with trio.open_nursery() as nursery:
                for offset in range(readers):
                    nursery.start_soon(reader, client, offset)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=positive(float, "time to measure", 3600), default=60.0)
    parser.add_argument("--readers", type=positive(int, "number of readers", 1000), default=50)
    parser.add_argument("--concurrency", type=positive(int, "number of games at once", 64), default=2)
    parser.add_argument("--sandbox", choices=("none", "standard", "strict"), default="none")
    parser.add_argument("--no-sleeper", action="store_true", help="skip the run beside a bot that times out")
    options = parser.parse_args()

    import trio

    bots = ["random_py", "greedy_py", "c_bot" if shutil.which("gcc") else "random_py", "random_py"]
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        ladder = folder / "bench.toml"
        ladder.write_text(
            f'[ladder]\nname = "bench"\ngame = "vendetta"\ntable_sizes = [3]\nconcurrency = {options.concurrency}\n'
            f'[ladder.sandbox]\nlevel = "{options.sandbox}"\n[ladder.submissions]\nper_hour = 100\n',
            encoding="utf-8",
        )
        tokens = [famiglia("ladder", "add-entrant", str(ladder), f"e{i}", cwd=folder).split()[-1] for i in range(4)]
        sleeper_token = famiglia("ladder", "add-entrant", str(ladder), "sleeper", cwd=folder).split()[-1]
        server = subprocess.Popen(
            [sys.executable, "-m", "tournaments.cli", "ladder", "serve", str(ladder), "--port", "0"],
            cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            assert server.stdout is not None
            found = re.search(r"on (http://\S+)", server.stdout.readline())
            if found is None:
                sys.exit("the ladder server did not start")
            url = found.group(1)
            for token, bot in zip(tokens, bots, strict=True):
                famiglia("ladder", "submit", str(SAMPLE_BOTS / bot), "--server", url, "--token", token, cwd=folder)
            db = ladder.with_suffix(".sqlite")
            while active_versions(db) < 4:
                time.sleep(0.2)
            played, elapsed = measure(db, options.seconds)
            per_hour = played / elapsed * 3600
            print(f"games: {played} in {elapsed:.1f} s at concurrency {options.concurrency}: {per_hour:.0f} games/h")
            sleeper_line = ""
            if not options.no_sleeper:
                famiglia("ladder", "submit", str(SLEEPER), "--server", url, "--token", sleeper_token, cwd=folder)
                while (state := version_state(db, "sleeper")[0]) in ("queued", "checking"):
                    time.sleep(0.2)
                if state != "active":
                    sys.exit(f"the sleeper was not accepted by check-bot (it is {state}): the bench needs it playing")
                beside, elapsed = measure(db, options.seconds)
                state, games = version_state(db, "sleeper")
                beside_per_hour = beside / elapsed * 3600
                costs = sleeper_seconds(db, "sleeper")
                cost = f"its games took median {statistics.median(costs):.1f} s" if costs else "it finished no game"
                print(
                    f"beside the sleeper: {beside} in {elapsed:.1f} s: {beside_per_hour:.0f} games/h; "
                    f"the sleeper is {state} after {games} games; {cost} (its clock: move 1 s + bank 10 s)"
                )
                # The four alone again: on a shared machine the load drifts, so the sleeper's run is compared
                # with the mean of the runs on either side of it, not with the first alone.
                again, elapsed = measure(db, options.seconds)
                again_per_hour = again / elapsed * 3600
                print(f"the four alone again: {again} in {elapsed:.1f} s: {again_per_hour:.0f} games/h")
                alone = (per_hour + again_per_hour) / 2
                ratio = beside_per_hour / alone if alone else 0.0
                verdict = f"suspended after {games} games" if state == "suspended" else f"NOT suspended ({games} games)"
                sleeper_line = (
                    f"sleeper: {ratio:.2f}x the games/h of the four alone (before and after: {per_hour:.0f}, "
                    f"{again_per_hour:.0f}), {verdict}"
                )
            before = done_games(db)
            latencies = trio.run(read_pages, url, options.readers, options.seconds / 2)
            during = done_games(db) - before
            p50 = statistics.median(latencies)
            p95 = statistics.quantiles(latencies, n=20)[-1]
            print(
                f"pages: {len(latencies)} requests from {options.readers} readers in {options.seconds / 2:.1f} s: "
                f"median {p50:.1f} ms, p95 {p95:.1f} ms, worst {max(latencies):.1f} ms; {during} games meanwhile"
            )
            if sleeper_line:
                print(sleeper_line)
            print(
                f"ladder: {per_hour:.0f} games/h, pages p50 {p50:.0f} ms p95 {p95:.0f} ms under {options.readers} readers"
            )
        finally:
            os.killpg(server.pid, signal.SIGINT)
            server.wait(timeout=60)


if __name__ == "__main__":
    main()
