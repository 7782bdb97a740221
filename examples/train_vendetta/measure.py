"""The trained policy against random_py in a real famiglia tournament: 200 four-player games.

Usage (from the repository root, after train.py):

    python examples/train_vendetta/measure.py [--db PATH]

Runs ``famiglia tournament run examples/train_vendetta/tournament.toml`` (the
trained bot and three random_py entrants at every table, seats balanced) into
a new results database, then reads ``famiglia standings`` and ``famiglia
crosstable`` and says how often the trained bot won and finished ahead of
each random player. A random player wins a quarter of the games and finishes
ahead of another half of the time. The last line reads
``trained: won W of G games (P%), ahead of random_py in A of B pairings (Q%)``.
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

HERE = Path(__file__).resolve().parent
TOURNAMENT = HERE / "tournament.toml"


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a mistake in the command is one line (what is wrong), not the usage first."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"measure.py: {message} (--help lists the options)\n")


def famiglia(*args: str) -> str:
    """One famiglia command, run by this interpreter (the checkout's packages first); its output."""
    done = subprocess.run([sys.executable, "-m", "tournaments.cli", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"famiglia {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--db", type=Path, help="results database (default: a new one in a temporary folder)")
    args = parser.parse_args(argv)
    if not (HERE / "bot" / "weights.json").is_file():
        sys.exit("examples/train_vendetta/bot/weights.json is missing: run examples/train_vendetta/train.py first")
    with tempfile.TemporaryDirectory() as scratch:
        db = args.db or Path(scratch) / "trained-vs-random.sqlite"
        if db.exists():
            sys.exit(f"{db} exists: give a new --db (a tournament resumes an old one instead of playing again)")
        print(famiglia("tournament", "run", str(TOURNAMENT), "--db", str(db)), end="")
        standings = list(csv.DictReader(io.StringIO(famiglia("standings", "--db", str(db), "--format", "csv"))))
        pairs = list(csv.DictReader(io.StringIO(famiglia("crosstable", "--db", str(db), "--format", "csv"))))
    for row in standings:
        print(f"{row['entrant']}: won {row['wins']} of {row['games']} games, average rank {row['average_rank']}")
    trained = next(row for row in standings if row["entrant"] == "trained")
    against = [row for row in pairs if row["entrant"] == "trained"]
    ahead = sum(int(row["ahead"]) for row in against)
    met = sum(int(row["games"]) for row in against)
    for row in against:
        print(f"trained finished ahead of {row['opponent']} in {row['ahead']} of {row['games']} games")
    games, wins = int(trained["games"]), int(trained["wins"])
    print(
        f"trained: won {wins} of {games} games ({wins / max(1, games):.0%}), "
        f"ahead of random_py in {ahead} of {met} pairings ({ahead / max(1, met):.0%})"
    )


if __name__ == "__main__":
    main()
