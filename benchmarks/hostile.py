"""Hostile input sizes: time, peak memory and growth exponent of the cases that once had
cliffs (a crash, an enormous allocation or super-linear time), each at 3-4 sizes.

Usage::

    python benchmarks/hostile.py                 # full sizes (about 5 minutes)
    python benchmarks/hostile.py --quick         # small sizes (about 1 minute)
    python benchmarks/hostile.py --case chunk_cjk --json OUT.json

Cases (``n`` is the size column):

- ``align_repeated_word``: ``align_citations('a ' * n, ['a ' * n])``, one sentence of
  ``n`` equal tokens aligned against itself (once: ValueError, "too long for exact
  tie-breaking in 64-bit keys");
- ``align_short_period``: ``align_citations('a b ' * n, ['a b ' * n])`` (once: n^2 in the
  band's seeding);
- ``align_no_full_stop``: a text of ``n`` characters of words and no sentence end aligned
  against itself (extracted PDFs, logs);
- ``window_beyond_document``: ``align_citations('w1. w2.', [doc, doc],
  config=CitationConfig(window_size_sentences=100_000))``, ``doc`` of ``n`` sentences
  (once: a window of 100,000 sentences was allocated per token);
- ``chunk_cjk``: ``chunk_text(('東京は日本の首都です' * 800)[:n], SimpleTokenizer(), 128)``
  (once: n^3);
- ``highlight_repeated_word``: ``find_answer_highlights('a ' * (n // 100), 'a ' * n)``
  (once: answer x chunk);
- ``nfkc_expansion``: ``align_citations('\\ufdfa\\ufdfa end.', ['\\ufdfa' * n + ' end.'])``,
  each ``\\ufdfa`` expanding to 18 characters under NFKC (once: about 1.7 KB per
  character).

Each (case, size) runs in a fresh child process, after a warm-up call of the same case
at its smallest ``--quick`` size (which loads the kernels the case takes from numba's
cache; the first run of a fresh install compiles them). Time is wall time of the one
call; memory is the child's peak resident set (``ru_maxrss``) minus its resident set just
before the call, so the interpreter, numpy and the compiled kernels are not counted. The
exponent is the least-squares slope of log(time) (or log(memory)) against log(n) over the
sizes; 1 is linear. A child that fails or exceeds ``--timeout`` seconds is reported as
such.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

# case -> (full sizes, quick sizes)
SIZES = {
    "align_repeated_word": ((10_000, 25_000, 50_000, 100_000), (2_000, 4_000, 8_000)),
    "align_short_period": ((10_000, 25_000, 50_000), (2_000, 4_000, 8_000)),
    "align_no_full_stop": ((30_000, 100_000, 300_000), (10_000, 20_000, 40_000)),
    "window_beyond_document": ((10_000, 30_000, 70_000), (2_000, 4_000, 8_000)),
    "chunk_cjk": ((2_000, 8_000, 32_000, 128_000), (1_000, 2_000, 4_000)),
    "highlight_repeated_word": ((100_000, 300_000, 1_000_000), (20_000, 40_000, 80_000)),
    "nfkc_expansion": ((100_000, 500_000, 2_000_000), (20_000, 40_000, 80_000)),
}

# The child: builds the inputs of one case at one size, warms the function up on a tiny
# input, then times the one call. Prints one JSON line.
CHILD = r"""
import json, os, random, resource, sys, time

case, n, warm_n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

import citekit
from citekit import CitationConfig, SimpleTokenizer, align_citations, chunk_text
from citekit import find_answer_highlights


def words_without_full_stop(n_chars):
    rng = random.Random(7)
    vocabulary = ["w%d" % k for k in range(5_000)]
    parts, total = [], 0
    while total < n_chars:
        word = rng.choice(vocabulary)
        parts.append(word)
        total += len(word) + 1
    return " ".join(parts)[:n_chars]


def build(size):
    if case == "align_repeated_word":
        return lambda: align_citations("a " * size, ["a " * size])
    if case == "align_short_period":
        return lambda: align_citations("a b " * size, ["a b " * size])
    if case == "align_no_full_stop":
        text = words_without_full_stop(size)
        return lambda: align_citations(text, [text])
    if case == "window_beyond_document":
        doc = " ".join("w%d." % k for k in range(size))
        config = CitationConfig(window_size_sentences=100_000)
        return lambda: align_citations("w1. w2.", [doc, doc], config=config)
    if case == "chunk_cjk":
        text = ("東京は日本の首都です" * (size // 10 + 1))[:size]
        return lambda: chunk_text(text, SimpleTokenizer(), 128)
    if case == "highlight_repeated_word":
        return lambda: find_answer_highlights("a " * max(size // 100, 1), "a " * size)
    if case == "nfkc_expansion":
        return lambda: align_citations("\ufdfa\ufdfa end.", ["\ufdfa" * size + " end."])
    raise SystemExit("unknown case " + case)


def resident_mb():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


build(warm_n)()  # compile or load the kernels the case takes, fill caches
call = build(n)
before = resident_mb()
start = time.perf_counter()
try:
    result = call()
    error = None
except Exception as exception:  # reported, not raised: the table shows it
    error = "%s: %s" % (type(exception).__name__, str(exception)[:120])
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "memory_mb": max(peak - before, 0.0), "error": error}))
"""


def run_one(case: str, size: int, timeout: float) -> dict:
    """Run one (case, size) in a child process; its figures, or the error it met."""
    environment = dict(os.environ, HF_HUB_OFFLINE="1")
    try:
        completed = subprocess.run(
            [sys.executable, "-c", CHILD, case, str(size), str(min(SIZES[case][1]))],
            capture_output=True, text=True, timeout=timeout, env=environment,
        )
    except subprocess.TimeoutExpired:
        return {"seconds": None, "memory_mb": None, "error": f"timeout ({timeout:g} s)"}
    lines = completed.stdout.strip().splitlines()
    if completed.returncode != 0 or not lines:
        last = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return {"seconds": None, "memory_mb": None,
                "error": f"exit {completed.returncode}: {last[:120]}"}
    return json.loads(lines[-1])


def growth_exponent(sizes: list[int], values: list[float | None]) -> float | None:
    """Least-squares slope of log(value) against log(size), None if under two points."""
    points = [(math.log(s), math.log(v)) for s, v in zip(sizes, values) if v and v > 0]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--case", choices=sorted(SIZES), action="append",
                        help="run only this case (repeatable)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds one child may take (default 300)")
    parser.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    arguments = parser.parse_args()
    cases = arguments.case or list(SIZES)
    report = {
        "command": "python benchmarks/hostile.py" + (" --quick" if arguments.quick else ""),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{_cpu_name()}, {os.cpu_count()} CPUs, "
                   f"Python {platform.python_version()}",
        "cases": {},
    }
    print(f"{'case':<26}{'n':>10}{'seconds':>10}{'memory MB':>11}  error")
    for case in cases:
        sizes = list(SIZES[case][1 if arguments.quick else 0])
        rows = []
        for size in sizes:
            row = run_one(case, size, arguments.timeout)
            rows.append(dict(row, n=size))
            seconds = "-" if row["seconds"] is None else f"{row['seconds']:.3f}"
            memory = "-" if row["memory_mb"] is None else f"{row['memory_mb']:.1f}"
            print(f"{case:<26}{size:>10}{seconds:>10}{memory:>11}  {row['error'] or ''}",
                  flush=True)
        time_exponent = growth_exponent(sizes, [row["seconds"] for row in rows])
        memory_exponent = growth_exponent(sizes, [row["memory_mb"] for row in rows])
        print(f"{'':<26}{'exponent':>10}{_format(time_exponent):>10}"
              f"{_format(memory_exponent):>11}")
        report["cases"][case] = {
            "rows": rows, "time_exponent": time_exponent, "memory_exponent": memory_exponent,
        }
    if arguments.json:
        with open(arguments.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
            handle.write("\n")


def _cpu_name() -> str:
    """The processor's model name (Linux), else the machine type."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def _format(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    main()
