"""Score a JSON Lines dataset of answers against a shared set of sources.

Reads answers (lines ``{"id", "answer"}``) and sources (lines ``{"id", "text"}``), prepares
the sources once, aligns every answer (``--jobs auto``, the default, moves to worker processes
only when the run is long enough to repay starting them; ``--jobs N`` forces N), writes one result
line per answer, and prints a per-answer summary. By default it uses the example data that
ships with citekit; pass your own files to score a real dataset::

    python examples/batch_jsonl.py
    python examples/batch_jsonl.py --answers my_answers.jsonl --sources my_sources.jsonl \
        --out my_results.jsonl --jobs 2

The same job from the shell: ``citekit align --answers A.jsonl --sources S.jsonl --out R.jsonl``.
"""

from __future__ import annotations

import argparse
import collections
import os
import tempfile

from citekit import CitationConfig, Pipeline, SourceDocument
from citekit.batch import read_jsonl, score_records, to_records, write_jsonl
from citekit.data import example_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", default=example_path("answers.jsonl"))
    parser.add_argument("--sources", default=example_path("sources.jsonl"))
    parser.add_argument("--out", default=os.path.join(tempfile.mkdtemp(), "results.jsonl"))
    parser.add_argument("--jobs", type=lambda text: text if text == "auto" else int(text),
                        default="auto")
    args = parser.parse_args()

    sources = [
        SourceDocument(
            id=row["id"],
            text=row["text"],
            metadata={k: v for k, v in row.items() if k not in ("id", "text")},
        )
        for row in read_jsonl(args.sources)
    ]
    records = [{"id": row["id"], "answer": row["answer"]} for row in read_jsonl(args.answers)]

    pipeline = Pipeline(CitationConfig.balanced())
    corpus = pipeline.prepare(sources)  # segment, tokenize and index the sources once
    outcomes = score_records(records, pipeline=pipeline, corpus=corpus, n_jobs=args.jobs)
    write_jsonl(outcomes, args.out)

    # one row per answer sentence, as plain dicts (to_dataframe gives the same as a DataFrame)
    rows = to_records(outcomes, level="sentence")
    by_answer: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for row in rows:
        by_answer[row["record_id"]][row["status"]] += 1
    print(f"{'answer':28} supported partial unsupported")
    for record_id, counts in by_answer.items():
        print(
            f"{record_id:28} {counts['supported']:9} {counts['partial']:7} "
            f"{counts['unsupported']:11}"
        )
    failed = [o for o in outcomes if not o.ok]
    for outcome in failed:
        print(f"failed: {outcome.id}: {outcome.error}")
    total = collections.Counter(row["status"] for row in rows)
    print(
        f"\n{len(outcomes) - len(failed)} answers scored, {len(rows)} sentences: "
        f"{dict(total)}; results written to {args.out}"
    )


if __name__ == "__main__":  # required when worker processes may be used
    main()
