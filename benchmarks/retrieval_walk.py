"""Where the retrieval time of a large corpus goes: the postings each query walks, the
path it takes, and the time of the retrieval call alone, on the queries of real answers.

Usage::

    python benchmarks/retrieval_walk.py record CORPUS_DIR ANSWERS_JSON QUERIES_NPZ
                                        [--answers 40]
    python benchmarks/retrieval_walk.py analyze CORPUS_DIR QUERIES_NPZ [--k 200]
    python benchmarks/retrieval_walk.py time CORPUS_DIR QUERIES_NPZ [--k 200]
                                        [--repeats 5] [--digest]

``CORPUS_DIR`` is a saved corpus (``Corpus.save``; ``benchmarks/scale.py``'s build child
writes one with its ``answers.json``); it is loaded memory-mapped.

- ``record``: aligns the first ``--answers`` answers with the default pipeline and keeps
  the token batches the candidate stage receives (ids, offsets, content flags) in
  ``QUERIES_NPZ``: the retrieval's exact inputs, so that the other commands need no
  pipeline;
- ``analyze``: per query, the ranking terms found in the corpus, the entries of their
  posting lists (what the walk reads without pruning), the path the kernel's rules give
  it (``maxscore``: 2 to 5 terms and 262,144 entries or more; else ``masks``: up to 16
  terms and 2,048 entries or more; else ``summed``; ``scan`` when the entries exceed
  half the corpus), ``k``, the k-th best rank score ``theta``
  (from the kernel's result) as a share of the query's ranking weight, and what an exact
  MaxScore walk that knew ``theta`` would have to walk: the lists of the terms heavier
  than the lightest ones whose weights sum to less than ``theta`` ("essential" lists);
  medians and percentiles over the queries;
- ``time``: the retrieval call as the candidate stage makes it
  (``IdfIndex.top_k_with_terms(ids, offsets, k, rank_tokens=content, n_threads=1)``),
  every batch ``--repeats`` times, median ms per query; ``--digest`` prints a digest of
  every output array (offsets, passages, scores, held terms, columns), which must not
  change with the retrieval's implementation.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from typing import Any

import numpy as np


def _load(corpus_dir: str) -> Any:
    from citekit.corpus import Corpus

    return Corpus.load(corpus_dir, mmap=True)


def _batches(path: str) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    data = np.load(path)
    return [
        (data[f"ids{i}"], data[f"offsets{i}"], data[f"content{i}"])
        for i in range(int(data["n"]))
    ]


def record(corpus_dir: str, answers_path: str, out: str, n_answers: int) -> None:
    """Keep the retrieval inputs of aligning the first ``n_answers`` answers."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from scale import _QueryRecorder

    from citekit.pipeline import Pipeline

    with open(answers_path, encoding="utf-8") as handle:
        answers = json.load(handle)[:n_answers]
    corpus = _load(corpus_dir)
    pipe = Pipeline()
    with _QueryRecorder() as recorder:
        for answer in answers:
            pipe.align(answer, corpus)
    arrays: dict[str, np.ndarray] = {"n": np.array(len(recorder.batches))}
    for i, (ids, offsets, content) in enumerate(recorder.batches):
        arrays[f"ids{i}"] = np.asarray(ids)
        arrays[f"offsets{i}"] = np.asarray(offsets)
        arrays[f"content{i}"] = np.asarray(content)
    np.savez(out, **arrays)
    print(f"{len(recorder.batches)} batches, "
          f"{sum(len(b[1]) - 1 for b in recorder.batches)} queries -> {out}")


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    return (f"median {statistics.median(ordered):,.3g}  p10 {at(0.1):,.3g}  "
            f"p90 {at(0.9):,.3g}  mean {statistics.fmean(ordered):,.3g}")


def analyze(corpus_dir: str, queries: str, k: int) -> None:
    """Print the walk's figures per query (see the module docstring)."""
    from citekit.kernels._retrieval import top_candidates
    from citekit.kernels._retrieval_maxscore import (
        _AUTO_MAXSCORE_TERMS,
        _MIN_MAXSCORE_ENTRIES,
    )

    corpus = _load(corpus_dir)
    index = corpus.index
    n_passages = index.n_passages
    pointers, passages = index._walk_postings
    rows: dict[str, list[float]] = {
        key: [] for key in (
            "terms", "entries", "theta_share", "essential_entries", "essential_terms",
            "candidates_share",
        )
    }
    paths: dict[str, int] = {}
    for ids, offsets, content in _batches(queries):
        _, _, columns, weights, flags, term_offsets, _ = index._terms(
            np.ascontiguousarray(ids, dtype=np.int64),
            np.ascontiguousarray(offsets, dtype=np.int64), np.asarray(content, dtype=bool),
        )
        out_offsets, _, rank_scores, _ = top_candidates(
            pointers, passages, n_passages, columns, weights, term_offsets, k,
            term_ranks=flags, rows=index.rows, scratch=index._scratch, n_threads=1,
        )
        for query in range(term_offsets.shape[0] - 1):
            lo, hi = term_offsets[query], term_offsets[query + 1]
            ranking = [t for t in range(lo, hi) if columns[t] >= 0 and flags[t]]
            if not ranking:
                continue
            lengths = np.array([pointers[columns[t] + 1] - pointers[columns[t]]
                                for t in ranking])
            term_weights = weights[ranking]
            entries = int(lengths.sum())
            n_terms = len(ranking)
            if 2 <= n_terms <= _AUTO_MAXSCORE_TERMS and entries >= _MIN_MAXSCORE_ENTRIES:
                path = "maxscore"
            else:
                path = "masks" if n_terms <= 16 and entries >= 2048 else "summed"
                path += ", scan" if 2 * entries > n_passages else ", listed"
            paths[path] = paths.get(path, 0) + 1
            got = out_offsets[query + 1] - out_offsets[query]
            theta = rank_scores[out_offsets[query + 1] - 1] if got >= k else 0.0
            total = float(term_weights.sum())
            # the lightest terms whose weights sum to less than theta never admit
            order = np.argsort(term_weights, kind="stable")
            running = 0.0
            essential = n_terms
            for position, term in enumerate(order):
                if running + term_weights[term] >= theta:
                    break
                running += term_weights[term]
                essential = n_terms - position - 1
            heavy = order[n_terms - essential:]
            rows["terms"].append(n_terms)
            rows["entries"].append(entries)
            rows["theta_share"].append(theta / total)
            rows["essential_terms"].append(essential)
            rows["essential_entries"].append(int(lengths[heavy].sum()))
            rows["candidates_share"].append(int(lengths[heavy].sum()) / max(1, entries))
    print(f"{corpus.n_sources:,} sources, {n_passages:,} passages, k = {k}, "
          f"{len(rows['terms'])} queries")
    print("paths: " + ", ".join(f"{name} {count}" for name, count in sorted(paths.items())))
    for key, values in rows.items():
        print(f"{key:>20}: {_quantiles(values)}")


def _digest(hasher: Any, *arrays: np.ndarray) -> None:
    for array in arrays:
        hasher.update(np.ascontiguousarray(array).tobytes())


def time_calls(corpus_dir: str, queries: str, k: int, repeats: int, digest: bool) -> None:
    """Time the candidate stage's retrieval call on every recorded batch."""
    corpus = _load(corpus_dir)
    index = corpus.index
    batches = _batches(queries)
    n_queries = sum(offsets.shape[0] - 1 for _, offsets, _ in batches)
    hasher = hashlib.sha256()
    for ids, offsets, content in batches:  # (warm-up: kernels, scratch, pages)
        top, held, columns = index.top_k_with_terms(
            ids, offsets, k, rank_tokens=content, n_threads=1
        )
        _digest(hasher, top.offsets, top.passages, top.scores, held, columns)
    totals = []
    for _ in range(repeats):
        start = time.perf_counter()
        for ids, offsets, content in batches:
            index.top_k_with_terms(ids, offsets, k, rank_tokens=content, n_threads=1)
        totals.append(time.perf_counter() - start)
    per_query = [total * 1000 / n_queries for total in totals]
    print(f"{n_queries} queries: ms per query median {statistics.median(per_query):.3f} "
          f"(runs: {', '.join(f'{value:.3f}' for value in per_query)}); "
          f"load average {os.getloadavg()[0]:.2f}")
    if digest:
        print("digest", hasher.hexdigest()[:16])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    recording = commands.add_parser("record")
    recording.add_argument("corpus")
    recording.add_argument("answers")
    recording.add_argument("out")
    recording.add_argument("--answers", dest="n_answers", type=int, default=40)
    analyzing = commands.add_parser("analyze")
    analyzing.add_argument("corpus")
    analyzing.add_argument("queries")
    analyzing.add_argument("--k", type=int, default=200)
    timing = commands.add_parser("time")
    timing.add_argument("corpus")
    timing.add_argument("queries")
    timing.add_argument("--k", type=int, default=200)
    timing.add_argument("--repeats", type=int, default=5)
    timing.add_argument("--digest", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "record":
        record(args.corpus, args.answers, args.out, args.n_answers)
    elif args.command == "analyze":
        analyze(args.corpus, args.queries, args.k)
    else:
        time_calls(args.corpus, args.queries, args.k, args.repeats, args.digest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
