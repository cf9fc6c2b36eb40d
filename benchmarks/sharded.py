"""A sharded corpus on a local Dask cluster against the single corpus of the same documents:
build time, time per answer, where a sharded call spends it, and that the results agree.

Usage::

    python benchmarks/sharded.py                          # 4 shards x 1,000 documents
    python benchmarks/sharded.py --shards 2 --docs-per-shard 500 --answers 10
    python benchmarks/sharded.py --processes              # worker processes, not threads
    python benchmarks/sharded.py --spans-hash --processes # spans_hash.py's line, sharded

The documents are ``workload.make_documents(shards * docs_per_shard, seed=2)`` and answer
``i`` is ``workload.make_answer(documents, seed=1000 + i)["answer"]`` (six sentences, as in
``end_to_end.py``). The single corpus is ``Pipeline().prepare(documents)``; the sharded one
``ShardedCorpus.build(documents, shards)`` on a ``LocalCluster`` of ``--workers`` workers
with one thread each (threads of this process unless ``--processes``). Each answer is
aligned once against each, alternating; the figures are medians over the answers.

A sharded call makes two round trips to the workers (the shards' candidates, then the
cited sources' arrays); the script reports the time of each and of the citation stages
run here over the cited sources, then aligns every answer in one ``align_many`` call
against each, and checks that every span equals the single corpus's.
With ``--spans-hash`` it prints instead ``spans_hash.py``'s line (status counts,
conflicts, digest) for its 100 answers against its 1,000 documents in ``--shards`` shards,
aligned one call each and then in one ``align_many`` call: equal to that script's line
when the sharded results equal the single corpus's.

The first run compiles numba's kernels (minutes); run it twice.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import statistics
import sys
import time

import workload


def _spans(result) -> list[str]:
    return [json.dumps(span.to_dict(), sort_keys=True) for span in result]


def _hash_line(results) -> str:
    """``spans_hash.py``'s line of ``results``."""
    digest = hashlib.sha256()
    statuses: collections.Counter[str] = collections.Counter()
    conflicts = 0
    for result in results:
        for span in result:
            digest.update(json.dumps(span.to_dict(), sort_keys=True, ensure_ascii=False).encode())
            statuses[span.status] += 1
            conflicts += sum(len(citation.conflicts) for citation in span.citations)
    return f"{dict(statuses)} conflicts {conflicts} digest {digest.hexdigest()[:16]}"


def spans_hash(sharded_corpus_of) -> None:
    """Print ``spans_hash.py``'s line for the sharded corpus ``sharded_corpus_of(documents)``,
    aligning one answer per call, then all in one call."""
    import spans_hash as reference

    documents = workload.make_documents(reference.N_DOCUMENTS, seed=reference.DOCUMENT_SEED)
    answers = [workload.make_answer(documents, seed=reference.FIRST_ANSWER_SEED + n)["answer"]
               for n in range(100)]
    sharded = sharded_corpus_of(documents)
    started = time.perf_counter()
    print(_hash_line([sharded.align(answer) for answer in answers]),
          f"(one call per answer: {time.perf_counter() - started:.1f} s)")
    started = time.perf_counter()
    print(_hash_line(sharded.align_many(answers)),
          f"(one align_many call: {time.perf_counter() - started:.1f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--docs-per-shard", type=int, default=1000)
    parser.add_argument("--answers", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--processes", action="store_true",
                        help="workers in their own processes (default: threads of this one)")
    parser.add_argument("--spans-hash", action="store_true",
                        help="print spans_hash.py's line from the sharded corpus instead")
    args = parser.parse_args(argv)

    import distributed

    from citekit import Pipeline
    from citekit.sharded import ShardedCorpus

    if args.spans_hash:
        with distributed.LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=args.processes,
            dashboard_address=":0",
        ) as cluster, distributed.Client(cluster) as client:
            spans_hash(lambda documents: ShardedCorpus.build(
                documents, args.shards, client=client, pipeline=Pipeline()))
        return 0

    documents = workload.make_documents(args.shards * args.docs_per_shard, seed=2)
    answers = [workload.make_answer(documents, seed=1000 + i)["answer"]
               for i in range(args.answers)]
    pipeline = Pipeline()
    started = time.perf_counter()
    corpus = pipeline.prepare(documents)
    single_build = time.perf_counter() - started
    pipeline.align(answers[0], corpus)  # (kernels loaded before timing)

    cluster = distributed.LocalCluster(
        n_workers=args.workers, threads_per_worker=1, processes=args.processes,
        dashboard_address=":0",
    )
    with cluster, distributed.Client(cluster) as client:
        started = time.perf_counter()
        sharded = ShardedCorpus.build(documents, args.shards, client=client, pipeline=pipeline)
        sharded_build = time.perf_counter() - started
        sharded.align(answers[0])

        # the parts of a sharded call, timed by wrapping its steps
        parts: dict[str, list[float]] = {"search": [], "sources": [], "stages": []}

        def timed(name, function):
            def run(*arguments):
                begin = time.perf_counter()
                out = function(*arguments)
                parts[name].append(time.perf_counter() - begin)
                return out
            return run

        sharded._search = timed("search", sharded._search)
        shipped: list[int] = []
        cited_corpus = timed("sources", sharded._cited_corpus)

        def counted(found):
            corpus_and_passages = cited_corpus(found)
            shipped.append(corpus_and_passages[0].n_sources)
            return corpus_and_passages

        sharded._cited_corpus = counted
        original_align_many = pipeline.align_many
        single_times, sharded_times = [], []
        equal = True
        for answer in answers:
            begin = time.perf_counter()
            single = pipeline.align(answer, corpus)
            single_times.append(time.perf_counter() - begin)
            pipeline.align_many = timed("stages", original_align_many)
            begin = time.perf_counter()
            got = sharded.align(answer)
            sharded_times.append(time.perf_counter() - begin)
            pipeline.align_many = original_align_many
            equal &= _spans(got) == _spans(single)
        # every answer in one call: the round trips and the cited sources are shared
        begin = time.perf_counter()
        single_all = pipeline.align_many(answers, corpus)
        single_batch = time.perf_counter() - begin
        begin = time.perf_counter()
        sharded_all = sharded.align_many(answers)
        sharded_batch = time.perf_counter() - begin
        equal &= [_spans(r) for r in sharded_all] == [_spans(r) for r in single_all]

    def ms(values):
        return f"{1000 * statistics.median(values):.1f} ms"

    kind = "processes" if args.processes else "threads"
    print(f"{len(documents)} documents in {sharded.n_shards} shards, {args.workers} worker "
          f"{kind}; {len(answers)} answers of six sentences")
    print(f"build: single {single_build:.2f} s, sharded {sharded_build:.2f} s")
    print(f"per answer: single {ms(single_times)}, sharded {ms(sharded_times)}")
    print(f"  sharded: search round trip {ms(parts['search'])}, cited sources round trip and "
          f"corpus {ms(parts['sources'])}, citation stages {ms(parts['stages'])}")
    print(f"  sources sent to this process per answer (holding a candidate): median "
          f"{statistics.median(shipped):.0f} of {len(documents)}")
    print(f"all {len(answers)} answers in one align_many call: single {single_batch:.2f} s, "
          f"sharded {sharded_batch:.2f} s")
    print(f"results equal: {equal}")
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
