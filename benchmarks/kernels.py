"""Kernel benchmark: citekit's numba kernels side by side with cite-right, rapidfuzz, difflib.

Usage::

    python benchmarks/kernels.py [--repeats 21] [--peer-python /work/peers/bin/python]

Every contender runs on the same token ids in the same run; the script prints medians and
ratios and the hardware. Token ids are drawn from a Zipf-like word distribution
(p(k) ~ 1/k over 50,000 ids) so that frequent "function words" make ties and spurious
matches as in real text. Shapes:

* batch: one query of 30 tokens against 400 candidates of 20-60 tokens (a quarter hold a
  noisy copy of part of the query), Smith-Waterman with traceback and match blocks of
  every candidate. citekit ``align_batch`` on 1 and 2 threads, cite-right 0.4.0's Rust
  ``_core.align_batch_blocks_details`` (run by ``--peer-python`` in a subprocess on the
  same ids, saved to .npy/.json). GCUPS = DP cells (30 x total candidate tokens) / time.
* long: 200 tokens against a 20,000-token target holding a noisy copy; citekit full DP,
  citekit band (``band_width=32``, seeding included and also timed alone), cite-right
  ``align_pair_details``.
* lcs: ``lcs_length`` against rapidfuzz ``LCSseq.similarity`` on 10,000-token lists.
* blocks: ``matching_blocks`` against ``difflib.SequenceMatcher(autojunk=False)`` (what
  citeglow 0.1.2 runs) on a 10,000-token edited copy.
* JIT: in fresh processes, cold compile of ``citekit.kernels.warmup()`` with an empty
  numba cache directory, then the first call with that cache warm, next to numba's own
  one-time start-up (a trivial cached function).

Scores are cross-checked between contenders; the script fails loudly if they differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

# benchmarks/ holds a tokenize.py that would shadow the standard library's `tokenize`
# (imported by numpy) when this script's folder leads sys.path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import difflib
import json
import os
import platform
import subprocess
import tempfile
import textwrap
import time

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VOCABULARY = 50_000


def zipf_words(rng: np.random.Generator, size: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, VOCABULARY + 1)
    return rng.choice(VOCABULARY, size, p=weights / weights.sum()).astype(np.int64)


def noisy_copy(rng: np.random.Generator, tokens: np.ndarray, rate: float) -> np.ndarray:
    copy = tokens.copy()
    changed = rng.random(len(copy)) < rate
    copy[changed] = zipf_words(rng, int(changed.sum()))
    return copy


def median_seconds(function, repeats: int, min_time: float = 2e-3) -> float:
    """Median over `repeats` samples; each sample loops until it lasts min_time."""
    function()
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            function()
        if time.perf_counter() - start >= min_time or loops >= 1 << 16:
            break
        loops *= 2
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            function()
        samples.append((time.perf_counter() - start) / loops)
    return float(np.median(samples))


def make_data(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    query = zipf_words(rng, 30)
    candidates = []
    for k in range(400):
        candidate = zipf_words(rng, int(rng.integers(20, 61)))
        if k % 4 == 0:
            start = int(rng.integers(0, 10))
            piece = noisy_copy(rng, query[start:start + 20], 0.15)
            at = int(rng.integers(0, len(candidate) - len(piece) + 1))
            candidate[at:at + len(piece)] = piece
        candidates.append(candidate)
    long_query = zipf_words(rng, 200)
    long_target = zipf_words(rng, 20_000)
    long_target[7000:7200] = noisy_copy(rng, long_query, 0.1)
    text_a = zipf_words(rng, 10_000)
    text_b = noisy_copy(rng, text_a, 0.03)
    text_b = np.concatenate([text_b[:4000], zipf_words(rng, 300), text_b[4300:]])
    return {
        "query": query, "candidates": candidates, "long_query": long_query,
        "long_target": long_target, "text_a": text_a, "text_b": text_b,
    }


PEER_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    from cite_right import _core

    folder = sys.argv[1]
    repeats = int(sys.argv[2])
    query = np.load(folder + "/query.npy").tolist()
    candidates = json.load(open(folder + "/candidates.json"))
    long_query = np.load(folder + "/long_query.npy").tolist()
    long_target = np.load(folder + "/long_target.npy").tolist()

    def median_seconds(function, min_time=2e-3):
        function()
        loops = 1
        while True:
            start = time.perf_counter()
            for _ in range(loops):
                function()
            if time.perf_counter() - start >= min_time or loops >= 1 << 16:
                break
            loops *= 2
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(loops):
                function()
            samples.append((time.perf_counter() - start) / loops)
        return float(np.median(samples))

    batch = _core.align_batch_blocks_details(query, candidates)
    long = _core.align_pair_details(long_query, long_target)
    print(json.dumps({
        "batch_seconds": median_seconds(
            lambda: _core.align_batch_blocks_details(query, candidates)),
        "batch_scores": [row[0] for row in batch],
        "long_seconds": median_seconds(lambda: _core.align_pair_details(long_query, long_target)),
        "long_score": long[0],
    }))
    """
)


def run_peer(peer_python: str, data: dict, repeats: int) -> dict | None:
    if not Path(peer_python).exists():
        return None
    with tempfile.TemporaryDirectory() as folder:
        for name in ("query", "long_query", "long_target"):
            np.save(f"{folder}/{name}.npy", data[name])
        with open(f"{folder}/candidates.json", "w") as handle:
            json.dump([c.tolist() for c in data["candidates"]], handle)
        script = Path(folder) / "peer.py"
        script.write_text(PEER_SCRIPT)
        output = subprocess.run(
            [peer_python, str(script), folder, str(repeats)],
            capture_output=True, text=True, check=True,
        )
    return json.loads(output.stdout)


JIT_SCRIPT = textwrap.dedent(
    """
    import sys, time
    mode = sys.argv[1]
    start = time.perf_counter()
    if mode == "numba":
        import numba

        @numba.njit(cache=True)
        def trivial(x):
            return x + 1

        imported = time.perf_counter()
        trivial(1)
    else:
        import citekit.kernels

        imported = time.perf_counter()
        citekit.kernels.warmup()
    done = time.perf_counter()
    print(imported - start, done - imported)
    """
)


def jit_times() -> dict:
    results = {}
    with tempfile.TemporaryDirectory() as cache:
        environment = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
        script = Path(cache) / "jit.py"
        script.write_text(JIT_SCRIPT)
        for label, mode in [("citekit cold", "citekit"), ("citekit warm cache", "citekit"),
                            ("numba trivial, cold", "numba"), ("numba trivial, warm", "numba")]:
            output = subprocess.run([sys.executable, str(script), mode], env=environment,
                                    capture_output=True, text=True, check=True)
            import_seconds, call_seconds = map(float, output.stdout.split())
            results[label] = (import_seconds, call_seconds)
    return results


def hardware() -> str:
    lines = []
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in lscpu.splitlines():
            if line.split(":")[0].strip() in ("Model name", "CPU(s)", "Thread(s) per core",
                                              "L2 cache", "L3 cache"):
                lines.append(" ".join(line.split()))
    except OSError:
        lines.append(platform.processor())
    import numba

    lines.append(f"python {platform.python_version()}, numpy {np.__version__}, "
                 f"numba {numba.__version__}")
    lines.append(f"load average at start: {os.getloadavg()}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--peer-python", default="/work/peers/bin/python")
    parser.add_argument("--skip-jit", action="store_true")
    arguments = parser.parse_args()
    repeats = arguments.repeats

    import numba
    from rapidfuzz.distance import LCSseq

    from citekit.kernels import (
        align_batch, lcs_length, matching_blocks, smith_waterman, warmup,
    )
    from citekit.kernels._band import seeded_band

    print(hardware())
    warmup()
    data = make_data()
    rows = []

    def row(shape, contender, seconds, cells=None, reference=None):
        gcups = f"{cells / seconds / 1e9:.2f}" if cells else ""
        ratio = f"{reference / seconds:.1f}x" if reference else ""
        rows.append((shape, contender, f"{seconds * 1e3:.3f}", gcups, ratio))

    # batch
    query = data["query"]
    candidates = data["candidates"]
    target_ids = np.concatenate(candidates)
    offsets = np.cumsum([0] + [len(c) for c in candidates])
    cells = len(query) * len(target_ids)
    peer = run_peer(arguments.peer_python, data, repeats)
    ours = align_batch(query, target_ids, offsets, return_blocks=True)
    threads = {}
    for n_threads in (1, 2):
        if n_threads > numba.config.NUMBA_NUM_THREADS:
            continue
        threads[n_threads] = median_seconds(
            lambda: align_batch(query, target_ids, offsets, return_blocks=True,
                                n_threads=n_threads), repeats)
    reference = peer["batch_seconds"] if peer else None
    shape = f"batch 30 x 400 cands (20-60), traceback+blocks"
    if peer:
        assert peer["batch_scores"] == ours.score.tolist(), "batch scores differ from cite-right"
        row(shape, "cite-right 0.4.0 Rust _core", peer["batch_seconds"], cells, reference)
    for n_threads, seconds in threads.items():
        row(shape, f"citekit align_batch, {n_threads} thread(s)", seconds, cells, reference)

    # long target
    long_query, long_target = data["long_query"], data["long_target"]
    cells = len(long_query) * len(long_target)
    full = smith_waterman(long_query, long_target)
    banded = smith_waterman(long_query, long_target, band_width=32)
    assert full == banded, "band missed the planted copy"
    full_seconds = median_seconds(lambda: smith_waterman(long_query, long_target), repeats)
    band_seconds = median_seconds(
        lambda: smith_waterman(long_query, long_target, band_width=32), repeats)
    seed_seconds = median_seconds(lambda: seeded_band(long_query, long_target, 32), repeats)
    shape = "long 200 x 20,000"
    reference = peer["long_seconds"] if peer else None
    if peer:
        assert peer["long_score"] == full.score, "long score differs from cite-right"
        row(shape, "cite-right 0.4.0 align_pair_details", peer["long_seconds"], cells, reference)
    row(shape, "citekit smith_waterman, full DP", full_seconds, cells, reference)
    row(shape, "citekit smith_waterman, band_width=32", band_seconds, None, reference)
    row(shape, "  of which band seeding", seed_seconds)

    # LCS
    list_a, list_b = data["text_a"].tolist(), data["text_b"].tolist()
    assert lcs_length(list_a, list_b) == LCSseq.similarity(list_a, list_b)
    shape = f"lcs_length {len(list_a)} x {len(list_b)} (lists)"
    rapidfuzz_seconds = median_seconds(lambda: LCSseq.similarity(list_a, list_b), repeats)
    row(shape, "rapidfuzz LCSseq.similarity", rapidfuzz_seconds, None, rapidfuzz_seconds)
    row(shape, "citekit lcs_length", median_seconds(lambda: lcs_length(list_a, list_b), repeats),
        None, rapidfuzz_seconds)
    array_a, array_b = data["text_a"], data["text_b"]
    row(shape.replace("lists", "int64 arrays"), "citekit lcs_length",
        median_seconds(lambda: lcs_length(array_a, array_b), repeats), None, rapidfuzz_seconds)

    # matching blocks
    shape = f"matching_blocks {len(list_a)} x {len(list_b)}"

    def run_difflib():
        return difflib.SequenceMatcher(None, list_a, list_b, autojunk=False).get_matching_blocks()

    assert [tuple(b) for b in run_difflib()] == matching_blocks(list_a, list_b)
    difflib_seconds = median_seconds(run_difflib, max(3, repeats // 4))
    row(shape, "difflib (citeglow 0.1.2's core)", difflib_seconds, None, difflib_seconds)
    row(shape, "citekit matching_blocks",
        median_seconds(lambda: matching_blocks(list_a, list_b), repeats), None, difflib_seconds)

    print(f"load average at end: {os.getloadavg()}")
    widths = [max(len(r[c]) for r in rows + [("shape", "contender", "ms", "GCUPS", "speed-up")])
              for c in range(5)]
    header = ("shape", "contender", "median ms", "GCUPS", "vs peer")
    print()
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)))

    if not arguments.skip_jit:
        print()
        for label, (import_seconds, call_seconds) in jit_times().items():
            print(f"JIT {label}: import {import_seconds:.2f} s, first call {call_seconds:.2f} s")


if __name__ == "__main__":
    main()
