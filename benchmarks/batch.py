"""Batch-scoring throughput: records per second, serial vs 2 processes vs Dask.

Usage::

    python benchmarks/batch.py      # 100 documents; 2,000 answers (shared), 400 (own sources)
    python benchmarks/batch.py --docs 100 --answers 2000 --own-answers 400 --repeats 3 \
        --json results.json

Workload: ``benchmarks/workload.py`` (seeded report-style documents of ~7,400 characters and
5-sentence answers that copy, paraphrase, fuse and invent). Two scenarios:

- ``shared corpus``: every answer is aligned against one prepared corpus of ``--docs``
  documents (``score_records(records, corpus=corpus)``), the usual dataset evaluation;
- ``own sources``: every record carries its own 5 documents (a RAG call: the documents the
  answer was generated from), so each record also segments, tokenizes and indexes them.

Backends, each timed end to end on the same records (including process start-up, which is
what a user pays), in ``--repeats`` rounds that run every backend once (so that the load of a
shared machine falls on all of them alike), median reported:

- ``1 process``: ``score_records(n_jobs=1)``;
- ``2 processes``: ``score_records(n_jobs=2)`` (spawned workers, pipeline and corpus sent once);
- ``Dask``: ``score_dask`` on a ``distributed.LocalCluster`` of 2 single-threaded worker
  processes on 127.0.0.1 (the cluster is started before timing; scheduling, serialisation and
  result transfer are timed).

The alignment kernel runs with ONE numba thread everywhere (``Pipeline(n_threads=1)``) so that
"2 processes" means two cores against one; a last row shows the serial run with numba's
default threads for reference. Every backend's results are checked identical to the serial
run. The machine is shared and noisy: compare rows of one run, not across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import workload

from citekit import Pipeline
from citekit.batch import score_dask, score_records


def _median_time(function, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def _rag_records(workload: dict, n_sources: int = 5) -> list[dict]:
    documents = workload["documents"]
    records = []
    for number, answer in enumerate(workload["answers"]):
        cited = sorted({index for origin in answer["sources"] for index in origin})
        # the documents the answer came from, topped up with neighbours to n_sources
        extra = [(number + k) % len(documents) for k in range(len(documents))]
        chosen = list(dict.fromkeys(cited + extra))[:n_sources]
        records.append(
            {
                "id": f"a{number}",
                "answer": answer["answer"],
                "sources": [documents[i] for i in chosen],
            }
        )
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--answers", type=int, default=2000, help="shared-corpus records")
    parser.add_argument(
        "--own-answers", type=int, default=400, help="records carrying their own 5 sources"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)

    documents = workload.make_documents(args.docs, seed=args.seed)
    answers, skipped = [], 0
    for number in range(max(args.answers, args.own_answers)):
        try:
            answers.append(workload.make_answer(documents, seed=args.seed * 10_000 + number))
        except ValueError:
            # the generator's paraphraser fails on a sentence whose only comma is inside a
            # number ("1,200"); such seeds are skipped and counted, not replaced
            skipped += 1
    pipeline = Pipeline(n_threads=1)
    shared = [{"id": f"a{i}", "answer": a["answer"]} for i, a in enumerate(answers)]
    shared = shared[: args.answers]
    own = _rag_records({"documents": documents, "answers": answers})[: args.own_answers]
    corpus = pipeline.prepare(documents)
    # compile (or load from cache) the kernels in this process before timing anything
    score_records(shared[:8], pipeline=pipeline, corpus=corpus, show_progress=False)
    score_records(own[:8], pipeline=pipeline, show_progress=False)
    # what a 2-process run pays before scoring anything: spawn, import, load compiled kernels
    startup, _ = _median_time(
        lambda: score_records(
            shared[:2],
            pipeline=pipeline,
            corpus=corpus,
            n_jobs=2,
            batch_size=1,
            show_progress=False,
        ),
        args.repeats,
    )

    cluster = client = None
    if not args.no_dask:
        import distributed

        cluster = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        )
        client = distributed.Client(cluster)
        # workers import citekit and load compiled kernels once, as a long-lived cluster would
        score_dask(shared[:8], pipeline=pipeline, corpus=corpus, npartitions=2)
        score_dask(own[:8], pipeline=pipeline, npartitions=2)

    threaded = Pipeline()  # numba's default thread count inside the kernel
    rows = []
    scenarios = {"shared corpus": (shared, corpus), "own sources": (own, None)}
    for scenario, (records, scenario_corpus) in scenarios.items():
        backends = {
            "1 process": lambda: score_records(
                records, pipeline=pipeline, corpus=scenario_corpus, show_progress=False
            ),
            "2 processes": lambda: score_records(
                records, pipeline=pipeline, corpus=scenario_corpus, n_jobs=2, show_progress=False
            ),
            f"1 process, {_numba_threads()} numba threads": lambda: score_records(
                records, pipeline=threaded, corpus=scenario_corpus, show_progress=False
            ),
        }
        if client is not None:
            backends["Dask, 2 workers"] = lambda: score_dask(
                records, pipeline=pipeline, corpus=scenario_corpus, npartitions=8
            )
        # rounds: every backend once per round, so that the load of a shared machine
        # falls on all of them alike
        times: dict[str, list[float]] = {name: [] for name in backends}
        results: dict[str, object] = {}
        for _ in range(args.repeats):
            for name, run in backends.items():
                started = time.perf_counter()
                results[name] = run()
                times[name].append(time.perf_counter() - started)
        serial = results["1 process"]
        serial_time = statistics.median(times["1 process"])
        for name, result in results.items():
            if result != serial:
                different = next(a for a, b in zip(result, serial) if a != b)
                raise AssertionError(
                    f"{scenario}/{name}: results differ from the serial run, first at record "
                    f"{different.id!r} ({different.error or 'different citations'})"
                )
            seconds = statistics.median(times[name])
            rows.append(
                {
                    "scenario": scenario,
                    "backend": name,
                    "records": len(records),
                    "seconds": seconds,
                    "all_seconds": times[name],
                    "records_per_s": len(records) / seconds,
                    "speedup": serial_time / seconds,
                }
            )
    if client is not None:
        client.close()
        cluster.close()

    print(
        f"citekit batch throughput: {args.docs} documents, answers of 5 sentences, median of "
        f"{args.repeats}; {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}"
        + (
            f"; {skipped} answer seeds the generator could not build were skipped"
            if skipped
            else ""
        )
    )
    print(f"2-process start-up (2 records, one per worker): {startup:.2f} s")
    print(
        f"{'scenario':14} {'records':>7} {'backend':28} {'records/s':>10} {'seconds':>8} "
        f"{'vs 1 process':>12}"
    )
    for row in rows:
        print(
            f"{row['scenario']:14} {row['records']:7} {row['backend']:28} "
            f"{row['records_per_s']:10.1f} {row['seconds']:8.2f} {row['speedup']:11.2f}x"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(
                {
                    "docs": args.docs,
                    "repeats": args.repeats,
                    "process_startup_s": startup,
                    "skipped_seeds": skipped,
                    "rows": rows,
                },
                handle,
                indent=2,
            )
    return 0


def _numba_threads() -> int:
    import numba

    return numba.config.NUMBA_NUM_THREADS


if __name__ == "__main__":
    raise SystemExit(main())
