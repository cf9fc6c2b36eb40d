"""citekit.find_answer_highlights vs citeglow 0.1.2, side by side in one run.

Usage::

    python benchmarks/highlight.py [--peer-python PATH] [--repeats 10] [--rounds 3] [--pairs 5]

``--peer-python`` (or the environment variable ``CITEKIT_PEER_PYTHON``) is the python of
a venv with citeglow 0.1.2 (see ``benchmarks/README.rst``). The script needs it: every
row compares the two libraries' spans and times, so without it, or when the path does not
exist, it exits with status 2 and a line saying how to pass it.

For each answer length (a paraphrase of 1 sentence, ~20 words, or of 4 sentences, ~60
words) and chunk size (1k, 10k, 100k characters) it builds ``--pairs`` seeded (answer,
chunk) pairs with ``highlight_corpus.benchmark_pair`` (multi-line English prose). In each
of ``--rounds`` alternating rounds it times ``--repeats`` calls of
``find_answer_highlights`` per pair on default options in this process (after one untimed
call, so JIT compilation is not counted), then the same calls of citeglow in a persistent
subprocess of the peers' interpreter. It checks that both return identical spans for every
pair and prints the median seconds per call over all calls and the speed-up ratio. Timing
never feeds an assertion.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time

from highlight_corpus import benchmark_pair
from workload import add_peer_python_option, peer_python

SIZES = (1_000, 10_000, 100_000)

# the peer runs in its own interpreter and serves timing requests, one JSON line each, so
# that citekit and citeglow rounds can alternate (the machine's load drifts over seconds)
_PEER_SCRIPT = r"""
import json, sys, time
from citeglow import find_answer_highlights
for line in sys.stdin:
    request = json.loads(line)
    results = []
    for answer, chunk in request["cases"]:
        spans = find_answer_highlights(answer, chunk)
        times = []
        for _ in range(request["repeats"]):
            start = time.perf_counter()
            find_answer_highlights(answer, chunk)
            times.append(time.perf_counter() - start)
        results.append({"spans": [list(s) for s in spans], "times": times})
    print(json.dumps(results), flush=True)
"""


def time_citekit(cases: list[tuple[str, str]], repeats: int) -> list[dict]:
    """Spans and per-call seconds of citekit for each case (one untimed call first)."""
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


class CiteglowPeer:
    """citeglow in the peers' interpreter, timing the same calls on request."""

    def __init__(self, peer_interpreter: str) -> None:
        self.process = subprocess.Popen(
            [peer_interpreter, "-c", _PEER_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True,
        )

    def time(self, cases: list[tuple[str, str]], repeats: int) -> list[dict]:
        self.process.stdin.write(json.dumps({"cases": cases, "repeats": repeats}) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_peer_python_option(parser)
    parser.add_argument("--repeats", type=int, default=10, help="timed calls per pair and round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating citekit/citeglow rounds")
    parser.add_argument("--pairs", type=int, default=5, help="seeded pairs per configuration")
    args = parser.parse_args(argv)
    peer_interpreter = peer_python(parser, args.peer_python, required=True)

    peer = CiteglowPeer(peer_interpreter)
    print(f"{'answer':>11} | {'chunk chars':>11} | {'citekit ms':>10} | {'citeglow ms':>11} | "
          f"{'speed-up':>8} | same spans")
    try:
        for answer_sentences, size in [(n, size) for n in (1, 4) for size in SIZES]:
            cases = [benchmark_pair(size, seed, answer_sentences) for seed in range(args.pairs)]
            our_times, their_times, identical = [], [], True
            for _ in range(args.rounds):
                ours = time_citekit(cases, args.repeats)
                theirs = peer.time(cases, args.repeats)
                identical &= all(a["spans"] == b["spans"] for a, b in zip(ours, theirs))
                our_times += [t for result in ours for t in result["times"]]
                their_times += [t for result in theirs for t in result["times"]]
            lit = sum(1 for result in ours if result["spans"])
            our_median = statistics.median(our_times) * 1e3
            their_median = statistics.median(their_times) * 1e3
            print(
                f"{answer_sentences:>2} sentence | {size:>11,} | {our_median:>10.3f} | "
                f"{their_median:>11.3f} | {their_median / our_median:>7.1f}x | "
                f"{identical} ({lit}/{len(cases)} lit)"
            )
    finally:
        peer.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
