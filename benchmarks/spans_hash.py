"""Digest of every span citekit returns for the end-to-end benchmark's answers: the check
that a refactor changed no result.

Usage::

    python benchmarks/spans_hash.py                  # 100 answers, about 2 minutes
    python benchmarks/spans_hash.py --answers 20 --json spans_hash.json

The data are ``benchmarks/end_to_end.py``'s at 1,000 documents:
``workload.make_documents(1000, seed=2)`` and answer ``i`` =
``workload.make_answer(documents, seed=1000 + i)["answer"]`` for ``i`` in
``range(--answers)``. The corpus is prepared once with ``Pipeline()`` (default
configuration) and every answer aligned against it. Every span's ``to_dict()``, as JSON
with sorted keys (``ensure_ascii=False``, UTF-8), is fed in order to one SHA-256.

Prints one line on stdout: the status counts, the number of conflicts over all citations
and the first 16 hex digits of the digest; equal lines mean equal results. At this
script's first commit, 100 answers gave::

    {'supported': 345, 'unsupported': 125, 'partial': 30} conflicts 837 digest 0d5ac38f19fc138a

The alignment time goes to stderr (it is not part of the result). ``--json OUT`` also
writes the figures to a file. The first citekit call compiles numba's kernels or loads
them from the cache.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import sys
import time

import workload

N_DOCUMENTS = 1000
DOCUMENT_SEED = 2
FIRST_ANSWER_SEED = 1000


def spans_digest(n_answers: int) -> dict:
    """Status counts, conflict count and digest of the spans of ``n_answers`` answers."""
    from citekit import Pipeline

    documents = workload.make_documents(N_DOCUMENTS, seed=DOCUMENT_SEED)
    answers = [
        workload.make_answer(documents, seed=FIRST_ANSWER_SEED + number)["answer"]
        for number in range(n_answers)
    ]
    pipeline = Pipeline()
    corpus = pipeline.prepare(documents)
    digest = hashlib.sha256()
    statuses: collections.Counter[str] = collections.Counter()
    conflicts = 0
    started = time.perf_counter()
    for answer in answers:
        for span in pipeline.align(answer, corpus):
            record = json.dumps(span.to_dict(), sort_keys=True, ensure_ascii=False)
            digest.update(record.encode())
            statuses[span.status] += 1
            conflicts += sum(len(citation.conflicts) for citation in span.citations)
    return {
        "answers": n_answers,
        "documents": N_DOCUMENTS,
        "statuses": dict(statuses),
        "conflicts": conflicts,
        "digest": digest.hexdigest()[:16],
        "align_seconds": time.perf_counter() - started,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--answers", type=int, default=100, metavar="N", help="answers to align (default 100)"
    )
    parser.add_argument("--json", metavar="OUT", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.answers < 1:
        parser.error("--answers must be at least 1")

    figures = spans_digest(args.answers)
    print(figures["statuses"], "conflicts", figures["conflicts"], "digest", figures["digest"])
    print(f"({args.answers} answers aligned in {figures['align_seconds']:.1f} s)", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
