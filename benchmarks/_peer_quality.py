"""Run a peer library over an evaluation file and dump its raw predictions as JSON.

This script runs in the PEERS' interpreter (the python of the venv holding cite-right
0.4.0 and citeglow 0.1.2, see ``benchmarks/README.rst``), not in citekit's:
``benchmarks/quality.py`` starts it, caches what it prints under ``benchmarks/results/``
and scores the cached predictions with citekit's own metric code
(:mod:`citekit.evaluate`), so that every library is measured the same way.

Usage::

    "$CITEKIT_PEER_PYTHON" benchmarks/_peer_quality.py cite-right FILE.jsonl OUT.json
    "$CITEKIT_PEER_PYTHON" benchmarks/_peer_quality.py citeglow FILE.jsonl OUT.json

Output (one JSON document)::

    {"peer": ..., "version": ..., "file": ..., "records": [
        {"id": ..., "seconds": float, "spans": [...]}]}

``spans`` is raw output, not a status decision:

* cite-right: ``align_citations(answer, [SourceDocument(id, text), ...])`` with its default
  ``CitationConfig``, each ``SpanCitations`` dumped as plain data (answer span, status,
  citations with evidence spans and score components).
* citeglow: it has no answer segmentation and no status; it highlights, in ONE chunk of
  source text, the passage that overlaps a given answer. We split the answer into
  sentences at sentence punctuation followed by white space and at line breaks (the
  simplest rule, see ``_split_sentences``) and call ``find_answer_highlights(sentence,
  source_text)`` for every (sentence, source) pair with citeglow's defaults; each span
  stores its answer range and the highlights per source index. The status is derived
  by ``benchmarks/quality.py``.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def _split_sentences(text: str) -> list[tuple[int, int]]:
    """Half-open ranges of the non-blank sentences of ``text``."""
    ranges: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        ranges.append((start, match.start()))
        start = match.end()
    ranges.append((start, len(text)))
    trimmed = []
    for begin, end in ranges:
        while begin < end and text[begin].isspace():
            begin += 1
        while end > begin and text[end - 1].isspace():
            end -= 1
        if begin < end:
            trimmed.append((begin, end))
    return trimmed


def _run_cite_right(record: dict[str, Any]) -> list[dict[str, Any]]:
    from cite_right import SourceDocument, align_citations

    sources = [SourceDocument(id=s["id"], text=s["text"]) for s in record["sources"]]
    results = align_citations(record["answer"], sources)
    spans = []
    for item in results:
        spans.append(
            {
                "answer_span": {
                    "text": item.answer_span.text,
                    "char_start": item.answer_span.char_start,
                    "char_end": item.answer_span.char_end,
                },
                "status": item.status,
                "citations": [
                    {
                        "score": c.score,
                        "source_id": c.source_id,
                        "source_index": c.source_index,
                        "candidate_index": c.candidate_index,
                        "char_start": c.char_start,
                        "char_end": c.char_end,
                        "evidence": c.evidence,
                        "evidence_spans": [
                            {
                                "char_start": e.char_start,
                                "char_end": e.char_end,
                                "evidence": e.evidence,
                            }
                            for e in c.evidence_spans
                        ],
                        "components": {k: float(v) for k, v in c.components.items()},
                    }
                    for c in item.citations
                ],
            }
        )
    return spans


def _run_citeglow(record: dict[str, Any]) -> list[dict[str, Any]]:
    from citeglow import find_answer_highlights

    answer = record["answer"]
    spans = []
    for start, end in _split_sentences(answer):
        sentence = answer[start:end]
        highlights = []
        for index, source in enumerate(record["sources"]):
            for h_start, h_end in find_answer_highlights(sentence, source["text"]):
                highlights.append([index, int(h_start), int(h_end)])
        spans.append({"char_start": start, "char_end": end, "highlights": highlights})
    return spans


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("cite-right", "citeglow"):
        print(__doc__, file=sys.stderr)
        return 2
    peer, path, out_path = argv
    if peer == "cite-right":
        import cite_right

        run, version = _run_cite_right, cite_right.__version__
    else:
        from importlib.metadata import version as dist_version

        run, version = _run_citeglow, dist_version("citeglow")
    output_records = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            began = time.perf_counter()
            spans = run(record)
            seconds = time.perf_counter() - began
            output_records.append({"id": record["id"], "seconds": seconds, "spans": spans})
    document = {"peer": peer, "version": version, "file": path, "records": output_records}
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
