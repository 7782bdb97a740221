"""Fuzz the referee's real read path with mutated real answers: every case must end in a named outcome.

Usage: python bench/fuzz.py [--cases N] [--seed S]

Each case is one short Vendetta match (tests/referee/mutations.py) in which seat
1, a bot behind a real pipe read by the referee's LineReader, answers its first
request with a real answer mutated one to three times: bytes flipped or
replaced, truncated, bytes that are not UTF-8 (surrogates, overlong forms, cut
sequences) in and out of strings, escaped lone surrogates, nesting from 1 to
100,000 deep at every level, NaN, Infinity, 1e999, huge integers, duplicate
keys, control characters, splices of two answers. The outcome must be a valid
action or the seat's protocol, illegal or timeout termination; anything else,
an exception out of the referee included, is a crash. Prints the counts by
outcome and by mutation, and the crashes (0 expected); exits 1 if any.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio

from tests.referee.mutations import ALLOWED, check_corpus, mutate, outcome


async def fuzz(cases: int, seed: int) -> int:
    check_corpus()
    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    by_mutation: dict[str, Counter[str]] = {}
    crashes: list[tuple[str, bytes, str]] = []
    began = time.perf_counter()
    for case in range(1, cases + 1):
        name, line = mutate(rng)
        try:
            result = await outcome(line)
        except Exception as exc:  # noqa: BLE001 - a crash of the referee: what this run looks for
            result = f"crash: {type(exc).__name__}"
            crashes.append((name, line, "".join(traceback.format_exception(exc))[-2000:]))
        if result not in ALLOWED and not result.startswith("crash"):
            crashes.append((name, line, f"outcome {result}"))
            result = f"crash: outcome {result}"
        outcomes[result] += 1
        for part in set(name.split("+")):
            by_mutation.setdefault(part, Counter())[result] += 1
        if case % 10_000 == 0:
            print(
                f"  {case} cases, {time.perf_counter() - began:.0f} s, {sum(v for k, v in outcomes.items() if k.startswith('crash'))} crashes",
                flush=True,
            )
    seconds = time.perf_counter() - began
    print(f"fuzz: {cases} cases in {seconds:.0f} s ({seconds / cases * 1000:.1f} ms each), seed {seed}")
    print("outcomes: " + ", ".join(f"{kind} {count}" for kind, count in outcomes.most_common()))
    for mutation, counts in sorted(by_mutation.items()):
        print(f"  {mutation}: " + ", ".join(f"{kind} {count}" for kind, count in counts.most_common()))
    for name, line, text in crashes[:5]:
        print(f"CRASH after {name}: {line[:200]!r}\n{text}")
    print(f"crashes: {len(crashes)}")
    return 1 if crashes else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.exit(trio.run(fuzz, args.cases, args.seed))


if __name__ == "__main__":
    main()
