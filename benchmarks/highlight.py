"""citekit.find_answer_highlights vs citeglow 0.1.2, side by side in one run.

Usage::

    python benchmarks/highlight.py [--peers-python /work/peers/bin/python] [--repeats 30]

For each chunk size (1k, 10k, 100k characters) it builds ``--pairs`` seeded (answer,
chunk) pairs with :func:`highlight_corpus.benchmark_pair` (multi-line English prose; the
answer paraphrases one sentence), times one ``find_answer_highlights`` call on default
options per pair ``--repeats`` times in this process (after one untimed warm-up call, so
JIT compilation is not counted) and the same calls of citeglow in a subprocess running
the peers' interpreter, checks that both return identical spans for every pair, and prints
per-size medians (over all calls) and the speed-up ratio. Timing never feeds an assertion.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from highlight_corpus import benchmark_pair  # noqa: E402

SIZES = (1_000, 10_000, 100_000)

_PEER_SCRIPT = r"""
import json, sys, time
from citeglow import find_answer_highlights
cases, repeats = json.load(open(sys.argv[1])), int(sys.argv[2])
results = []
for answer, chunk in cases:
    spans = find_answer_highlights(answer, chunk)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        find_answer_highlights(answer, chunk)
        times.append(time.perf_counter() - start)
    results.append({"spans": [list(s) for s in spans], "times": times})
json.dump(results, sys.stdout)
"""


def time_citekit(cases: list[tuple[str, str]], repeats: int) -> list[dict]:
    from citekit.highlight import find_answer_highlights

    results = []
    for answer, chunk in cases:
        spans = find_answer_highlights(answer, chunk)  # warm-up: JIT / caches not timed
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            find_answer_highlights(answer, chunk)
            times.append(time.perf_counter() - start)
        results.append({"spans": [list(s) for s in spans], "times": times})
    return results


def time_citeglow(cases: list[tuple[str, str]], repeats: int, peers_python: str) -> list[dict]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(cases, handle)
        path = handle.name
    try:
        output = subprocess.run(
            [peers_python, "-c", _PEER_SCRIPT, path, str(repeats)],
            check=True, capture_output=True, text=True,
        ).stdout
    finally:
        os.unlink(path)
    return json.loads(output)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers-python", default="/work/peers/bin/python")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args(argv)

    print(f"{'chunk chars':>11} | {'citekit ms':>10} | {'citeglow ms':>11} | {'speed-up':>8} | same spans")
    for size in SIZES:
        cases = [benchmark_pair(size, seed) for seed in range(args.pairs)]
        ours = time_citekit(cases, args.repeats)
        theirs = time_citeglow(cases, args.repeats, args.peers_python)
        identical = all(a["spans"] == b["spans"] for a, b in zip(ours, theirs))
        lit = sum(1 for result in ours if result["spans"])
        our_median = statistics.median(t for r in ours for t in r["times"]) * 1e3
        their_median = statistics.median(t for r in theirs for t in r["times"]) * 1e3
        print(
            f"{size:>11,} | {our_median:>10.3f} | {their_median:>11.3f} | "
            f"{their_median / our_median:>7.1f}x | {identical} ({lit}/{len(cases)} lit)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
