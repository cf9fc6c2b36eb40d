"""Kernel benchmark: citekit's numba kernels side by side with cite-right, rapidfuzz, difflib.

Usage::

    python benchmarks/numba_kernels.py [--rounds 5] [--repeats 9] [--peer-python PATH]
                                       [--skip-jit] [--retrieval DOCS]

``--peer-python`` (or the environment variable ``CITEKIT_PEER_PYTHON``) is the python of
a venv with cite-right 0.4.0 (see ``benchmarks/README.rst``). Without it, or when the path
does not exist, the script says so on stderr and leaves cite-right's rows out (rapidfuzz
and difflib, in this process, still run).

Every contender runs on the same token ids in the same run; the script prints medians and
ratios and the hardware. Token ids are drawn from a Zipf-like word distribution
(p(k) ~ 1/k over 50,000 ids) so that frequent "function words" make ties and spurious
matches as in real text. Shapes:

Because the machine may be shared, the measurements run in rounds that alternate the
peers and citekit; the table gives medians over rounds and the median per-round ratio.

* batch: one query of 30 tokens against 400 candidates of 20-60 tokens (a quarter hold a
  noisy copy of part of the query), Smith-Waterman with traceback and match blocks of
  every candidate. citekit ``align_batch`` on 1 and 2 threads, cite-right 0.4.0's Rust
  ``_core.align_batch_blocks_details`` (run by ``--peer-python`` in a subprocess on the
  same ids, saved to .npy/.json). GCUPS = DP cells (30 x total candidate tokens) / time.
* pairs: 10 answer sentences of 15-40 tokens, each against the same 400 candidates, in
  one ``align_pairs`` call (the pipeline's call) on 1 and 2 threads; cite-right: one
  batch call per sentence.
* long: 200 tokens against a 20,000-token target holding a noisy copy; citekit full DP,
  citekit band (``band_width=32``, seeding included and also timed alone), cite-right
  ``align_pair_details``.
* lcs: ``lcs_length`` against rapidfuzz ``LCSseq.similarity`` on 10,000-token lists.
* blocks: ``matching_blocks`` against ``difflib.SequenceMatcher(autojunk=False)`` (what
  citeglow 0.1.2 runs) on a 10,000-token edited copy.
* retrieval (``--retrieval DOCS``, off by default: building the corpus takes a minute):
  the pipeline's ``top_candidates`` calls for 20 answers against a prepared corpus of
  DOCS benchmark documents (``benchmarks/workload.py``), replayed with per-passage term
  masks (``masks=True``) and with float sums (``masks=False``), each on one thread and on
  numba's default threads (a call's queries shared among them), alternating in rounds;
  results checked identical, time per answer sentence (query).
* JIT: in fresh processes, cold compile of ``citekit.kernels.warmup()`` with an empty
  numba cache directory, then the first call with that cache warm, next to numba's own
  one-time start-up (a trivial cached function).

Scores are cross-checked between contenders; the script fails loudly if they differ.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

import workload

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
    sentences = []
    for _ in range(10):
        sentence = zipf_words(rng, int(rng.integers(15, 41)))
        sentences.append(sentence)
    long_query = zipf_words(rng, 200)
    long_target = zipf_words(rng, 20_000)
    long_target[7000:7200] = noisy_copy(rng, long_query, 0.1)
    text_a = zipf_words(rng, 10_000)
    text_b = noisy_copy(rng, text_a, 0.03)
    text_b = np.concatenate([text_b[:4000], zipf_words(rng, 300), text_b[4300:]])
    return {
        "query": query, "candidates": candidates, "sentences": sentences,
        "long_query": long_query,
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
    sentences = json.load(open(folder + "/sentences.json"))
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

    def all_sentences():
        return [_core.align_batch_blocks_details(s, candidates) for s in sentences]

    print(json.dumps({
        "batch_seconds": median_seconds(
            lambda: _core.align_batch_blocks_details(query, candidates)),
        "batch_scores": [row[0] for row in batch],
        "pairs_seconds": median_seconds(all_sentences),
        "pairs_scores": [row[0] for rows in all_sentences() for row in rows],
        "long_seconds": median_seconds(lambda: _core.align_pair_details(long_query, long_target)),
        "long_score": long[0],
    }))
    """
)


def run_peer(peer_interpreter: str | None, data: dict, repeats: int) -> dict | None:
    if not peer_interpreter:
        return None
    with tempfile.TemporaryDirectory() as folder:
        for name in ("query", "long_query", "long_target"):
            np.save(f"{folder}/{name}.npy", data[name])
        with open(f"{folder}/candidates.json", "w") as handle:
            json.dump([c.tolist() for c in data["candidates"]], handle)
        with open(f"{folder}/sentences.json", "w") as handle:
            json.dump([c.tolist() for c in data["sentences"]], handle)
        script = Path(folder) / "peer.py"
        script.write_text(PEER_SCRIPT)
        output = subprocess.run(
            [peer_interpreter, str(script), folder, str(repeats)],
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
        environment = {**os.environ, "NUMBA_CACHE_DIR": cache}
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


def measure_ours(data: dict, repeats: int) -> dict:
    """Median seconds of every citekit contender (and its results, to cross-check)."""
    import numba

    from citekit.kernels import align_batch, align_pairs, lcs_length, matching_blocks
    from citekit.kernels import smith_waterman
    from citekit.kernels._band import seeded_band

    seconds = {}
    query, candidates = data["query"], data["candidates"]
    target_ids = np.concatenate(candidates)
    offsets = np.cumsum([0] + [len(c) for c in candidates])
    sentences = data["sentences"]
    sentence_ids = np.concatenate(sentences)
    sentence_offsets = np.cumsum([0] + [len(s) for s in sentences])
    pair_query = np.repeat(np.arange(len(sentences)), len(candidates))
    pair_target = np.tile(np.arange(len(candidates)), len(sentences))
    for n_threads in range(1, min(2, numba.config.NUMBA_NUM_THREADS) + 1):
        seconds[f"batch {n_threads}"] = median_seconds(
            lambda: align_batch(query, target_ids, offsets, return_blocks=True,
                                n_threads=n_threads), repeats)
        seconds[f"pairs {n_threads}"] = median_seconds(
            lambda: align_pairs(sentence_ids, sentence_offsets, target_ids, offsets, pair_query,
                                pair_target, return_blocks=True, n_threads=n_threads), repeats)
    long_query, long_target = data["long_query"], data["long_target"]
    seconds["long full"] = median_seconds(lambda: smith_waterman(long_query, long_target),
                                          repeats)
    seconds["long full blocks"] = median_seconds(
        lambda: smith_waterman(long_query, long_target, return_blocks=True), repeats)
    seconds["long band"] = median_seconds(
        lambda: smith_waterman(long_query, long_target, band_width=32), repeats)
    seconds["long seed"] = median_seconds(lambda: seeded_band(long_query, long_target, 32),
                                          repeats)
    list_a, list_b = data["text_a"].tolist(), data["text_b"].tolist()
    seconds["lcs lists"] = median_seconds(lambda: lcs_length(list_a, list_b), repeats)
    seconds["lcs arrays"] = median_seconds(lambda: lcs_length(data["text_a"], data["text_b"]),
                                           repeats)
    seconds["blocks"] = median_seconds(lambda: matching_blocks(list_a, list_b), repeats)
    results = {
        "batch_scores": align_batch(query, target_ids, offsets).score.tolist(),
        "pairs_scores": align_pairs(sentence_ids, sentence_offsets, target_ids, offsets,
                                    pair_query, pair_target).score.tolist(),
        "long": smith_waterman(long_query, long_target),
        "long band": smith_waterman(long_query, long_target, band_width=32),
    }
    return {"seconds": seconds, "results": results}


def measure_references(data: dict, repeats: int) -> dict:
    from rapidfuzz.distance import LCSseq

    list_a, list_b = data["text_a"].tolist(), data["text_b"].tolist()

    def run_difflib():
        return difflib.SequenceMatcher(None, list_a, list_b, autojunk=False).get_matching_blocks()

    return {
        "rapidfuzz": median_seconds(lambda: LCSseq.similarity(list_a, list_b), repeats),
        "difflib": median_seconds(run_difflib, max(3, repeats // 4)),
    }


def check_results(data: dict, ours: dict, peer: dict | None) -> None:
    from rapidfuzz.distance import LCSseq

    from citekit.kernels import lcs_length, matching_blocks

    results = ours["results"]
    assert results["long"] == results["long band"], "the band missed the planted copy"
    list_a, list_b = data["text_a"].tolist(), data["text_b"].tolist()
    assert lcs_length(list_a, list_b) == LCSseq.similarity(list_a, list_b)
    expected = difflib.SequenceMatcher(None, list_a, list_b, autojunk=False)
    assert matching_blocks(list_a, list_b) == [tuple(b) for b in expected.get_matching_blocks()]
    if peer:
        assert peer["batch_scores"] == results["batch_scores"], "batch scores differ"
        assert peer["pairs_scores"] == results["pairs_scores"], "pair scores differ"
        assert peer["long_score"] == results["long"].score, "long score differs"


def measure_retrieval(n_documents: int, rounds: int, repeats: int) -> None:
    """Per-query time of ``top_candidates`` with and without term masks (see the module
    docstring), printed with the median ratio of per-round minima."""
    import numba

    import citekit
    from citekit.kernels import _retrieval as _bag
    from citekit.pipeline import Pipeline

    citekit.warmup()
    documents = workload.make_documents(n_documents, seed=2)
    pipe = Pipeline()
    corpus = pipe.prepare(documents)
    calls = []
    recorded = _bag.top_candidates

    def record(*args, **kwargs):
        calls.append((args, {key: value for key, value in kwargs.items() if key != "scratch"}))
        return recorded(*args, **kwargs)

    _bag.top_candidates = record
    try:
        for seed in range(20):
            pipe.align(workload.make_answer(documents, seed=1000 + seed)["answer"], corpus)
    finally:
        _bag.top_candidates = recorded
    n_queries = sum(args[5].shape[0] - 1 for args, _ in calls)
    scratch = _bag._Scratch()

    def replay(masks, n_threads=None):
        return [
            recorded(*args, **{**kwargs, "n_threads": n_threads}, masks=masks, scratch=scratch)
            for args, kwargs in calls
        ]

    threads = numba.get_num_threads()
    reference = replay(False, 1)
    for variant in (replay(True, 1), replay(True), replay(False)):
        for got, expected in zip(variant, reference):
            for a, b in zip(got, expected):
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), "results differ"
    variants = [(False, 1), (True, 1), (False, None), (True, None)]
    minima = {variant: [] for variant in variants}
    for _ in range(rounds):
        for masks, n_threads in variants:
            samples = []
            for _ in range(repeats):
                start = time.perf_counter()
                replay(masks, n_threads)
                samples.append(time.perf_counter() - start)
            minima[(masks, n_threads)].append(min(samples))
    per_query = {v: 1e6 * float(np.median(m)) / n_queries for v, m in minima.items()}

    def ratio(slow, fast):
        return float(np.median([a / b for a, b in zip(minima[slow], minima[fast])]))

    print(f"retrieval: {corpus.n_passages} passages, {n_queries} queries, "
          f"k = {calls[0][0][6]}; us/query on 1 thread: float sums "
          f"{per_query[(False, 1)]:.1f}, term masks {per_query[(True, 1)]:.1f} (masks "
          f"{ratio((False, 1), (True, 1)):.2f}x); with the default threads ({threads}, each "
          f"call's queries shared): float sums {per_query[(False, None)]:.1f}, term masks "
          f"{per_query[(True, None)]:.1f} (threads {ratio((True, 1), (True, None)):.2f}x "
          f"with masks); medians of per-round minima, {rounds} rounds; results identical")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9, help="samples per round")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds alternating peers and citekit (the machine may be shared)")
    workload.add_peer_python_option(parser)
    parser.add_argument("--skip-jit", action="store_true")
    parser.add_argument("--retrieval", type=int, default=0, metavar="DOCS",
                        help="also time top_candidates on a DOCS-document workload corpus")
    arguments = parser.parse_args()
    peer_interpreter = workload.peer_python(parser, arguments.peer_python, required=False)

    from citekit.kernels import warmup

    print(hardware())
    warmup()
    data = make_data()
    rounds = []
    for _ in range(arguments.rounds):
        peer = run_peer(peer_interpreter, data, arguments.repeats)
        references = measure_references(data, arguments.repeats)
        ours = measure_ours(data, arguments.repeats)
        check_results(data, ours, peer)
        rounds.append((peer, references, ours["seconds"]))
    print(f"load average at end: {os.getloadavg()}")

    def median_of(pick):
        return float(np.median([pick(r) for r in rounds]))

    def ratio_of(reference, ours):
        return float(np.median([reference(r) / ours(r) for r in rounds]))

    has_peer = rounds[0][0] is not None
    batch_cells = len(data["query"]) * sum(len(c) for c in data["candidates"])
    pairs_cells = sum(len(s) for s in data["sentences"]) * sum(len(c) for c in data["candidates"])
    long_cells = len(data["long_query"]) * len(data["long_target"])
    table = []

    def add(shape, contender, ours, cells=None, reference=None):
        seconds = median_of(ours)
        gcups = f"{cells / seconds / 1e9:.2f}" if cells else ""
        ratio = f"{ratio_of(reference, ours):.1f}x" if reference else ""
        table.append((shape, contender, f"{seconds * 1e3:.3f}", gcups, ratio))

    threads = [k.split()[1] for k in rounds[0][2] if k.startswith("batch ")]
    peer_of = (lambda key: (lambda r: r[0][key])) if has_peer else (lambda key: None)
    shape = "batch: 30 x 400 candidates (20-60), blocks"
    if has_peer:
        add(shape, "cite-right 0.4.0 Rust _core", peer_of("batch_seconds"), batch_cells,
            peer_of("batch_seconds"))
    for n in threads:
        add(shape, f"citekit align_batch, {n} thread(s)", lambda r, n=n: r[2][f"batch {n}"],
            batch_cells, peer_of("batch_seconds"))
    shape = "pairs: 10 sentences (15-40) x 400, blocks"
    if has_peer:
        add(shape, "cite-right 0.4.0, 10 batch calls", peer_of("pairs_seconds"), pairs_cells,
            peer_of("pairs_seconds"))
    for n in threads:
        add(shape, f"citekit align_pairs, {n} thread(s)", lambda r, n=n: r[2][f"pairs {n}"],
            pairs_cells, peer_of("pairs_seconds"))
    shape = "long: 200 x 20,000"
    if has_peer:
        add(shape, "cite-right 0.4.0 align_pair_details", peer_of("long_seconds"), long_cells,
            peer_of("long_seconds"))
    add(shape, "citekit smith_waterman, full DP", lambda r: r[2]["long full"], long_cells,
        peer_of("long_seconds"))
    add(shape, "citekit full DP + blocks", lambda r: r[2]["long full blocks"], long_cells,
        peer_of("long_seconds"))
    add(shape, "citekit band_width=32 (seeded)", lambda r: r[2]["long band"], None,
        peer_of("long_seconds"))
    add(shape, "  of which seeding the band", lambda r: r[2]["long seed"])
    shape = "lcs_length: 10,000 tokens (lists)"
    add(shape, "rapidfuzz LCSseq.similarity", lambda r: r[1]["rapidfuzz"], None,
        lambda r: r[1]["rapidfuzz"])
    add(shape, "citekit lcs_length", lambda r: r[2]["lcs lists"], None,
        lambda r: r[1]["rapidfuzz"])
    add(shape + ", int64 arrays", "citekit lcs_length", lambda r: r[2]["lcs arrays"], None,
        lambda r: r[1]["rapidfuzz"])
    shape = "matching_blocks: 10,000 tokens"
    add(shape, "difflib (citeglow 0.1.2's core)", lambda r: r[1]["difflib"], None,
        lambda r: r[1]["difflib"])
    add(shape, "citekit matching_blocks", lambda r: r[2]["blocks"], None,
        lambda r: r[1]["difflib"])

    header = ("shape", "contender", "median ms", "GCUPS", "speed-up")
    widths = [max(len(row[c]) for row in table + [header]) for c in range(5)]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for row in table:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))
    print("(medians over rounds of per-round medians; speed-up = median of per-round ratios "
          "to the first contender of the shape)")

    if arguments.retrieval:
        print()
        measure_retrieval(arguments.retrieval, arguments.rounds, arguments.repeats)

    if not arguments.skip_jit:
        print()
        for label, (import_seconds, call_seconds) in jit_times().items():
            print(f"JIT {label}: import {import_seconds:.2f} s, first call {call_seconds:.2f} s")


if __name__ == "__main__":
    main()
