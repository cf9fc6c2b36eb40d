"""Citation quality of citekit and its peers on human-annotated development data.

Runs citekit's default configuration (``citekit.Pipeline()``) and, through the peers'
own interpreter, cite-right 0.4.0 and citeglow 0.1.2 over every ``*.jsonl`` file of the
evaluation folder, scores all three with the SAME code (:func:`citekit.evaluate.score_predictions`)
and prints the README's Quality table as reStructuredText.

Usage::

    python benchmarks/quality.py                       # table on stdout + files below
    python benchmarks/quality.py --refresh-peers       # re-run the peers instead of the cache
    python benchmarks/quality.py --limit 50            # quick look: first 50 records per file

Options: ``--eval-dir`` (default ``../shared/eval`` next to the repository),
``--peer-python PATH`` (or the environment variable ``CITEKIT_PEER_PYTHON``: the python of
a venv with cite-right 0.4.0 and citeglow 0.1.2, see ``benchmarks/README.rst``; without
it, or when the path does not exist, the script says so on stderr and the table has
citekit and the trivial baseline only), ``--out`` (default
``benchmarks/results/quality.rst``).

Records whose answer cites sources that are not in the data (ExpertQA: 79 of 251
answers come with no passage at all, yet their claims are labelled against the web pages
the answer cited) cannot be checked by any system: every system calls their claims
unsupported. The table reports such a file twice, side by side for all systems: on all
records, and on the records with at least one source (``<file>_with_sources``).

Peer predictions are cached as JSON in ``benchmarks/results/peer_<peer>_<file>.json``
(raw output of ``benchmarks/_peer_quality.py``); all metrics are written to
``benchmarks/results/quality.json``.

How the peers' output becomes citekit records
---------------------------------------------
* cite-right returns ``SpanCitations`` with statuses and citations; they are copied as
  they are. It does not report which answer words are unsupported, so (for it and for
  citeglow) the unsupported answer ranges are derived the same simple way: the words of
  a cited sentence that occur nowhere in the words of its cited evidence.
* citeglow only highlights, in one source text, the passage overlapping a given answer.
  The adapter splits the answer into sentences and highlights every (sentence, source)
  pair. A sentence with a highlight in some source is ``supported`` (citeglow's premise:
  a highlight is where the answer is grounded), otherwise ``unsupported``; each source
  with highlights becomes a citation whose evidence spans are the highlights and whose
  ``answer_coverage`` (the support score ranked by AUROC) is the fraction of the
  sentence's words that occur in the highlighted text.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from workload import add_peer_python_option, peer_python

from citekit.evaluate import (
    EvalRecord,
    load_records,
    run_pipeline,
    score_predictions,
)
from citekit.results import AnswerSpan, Citation, EvidenceSpan, SpanCitations

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
PEERS = ("cite-right", "citeglow")
_WORD = re.compile(r"\w+")

# dataset file stem -> (display name, upstream citation)
DATASETS = {
    "wice_dev": ("WiCE dev", "WiCE (Kamoi et al., 2023), ryokamoi/wice @ ddeb6c18, ODC-BY 1.0"),
    "wice_nst_train_dev": (
        "WiCE non-supported tokens",
        "WiCE non_supported_tokens train+dev, ryokamoi/wice, ODC-BY 1.0",
    ),
    "expertqa_val": (
        "ExpertQA val",
        "ExpertQA (Malaviya et al., 2024), chaitanyamalaviya/ExpertQA @ 1aa7ba81, MIT",
    ),
    "quotesum_dev": (
        "QuoteSum dev",
        "QuoteSum (Schuster et al., 2024), "
        "google-research-datasets/QuoteSum @ f0f555dd, CC BY-SA 4.0",
    ),
    "xquad_en": (
        "XQuAD en",
        "XQuAD (Artetxe et al., 2020), google-deepmind/xquad @ 7d30520c, CC BY-SA 4.0",
    ),
    "begin_wow_dev": (
        "BEGIN WoW dev",
        "BEGIN (Dziri et al., 2022), google/BEGIN-dataset @ 6e65f0d5, CC BY 4.0",
    ),
    "hotpotqa_dev53": (
        "HotpotQA dev (53)",
        "HotpotQA (Yang et al., 2018) dev-distractor, first 53 records, CC BY-SA 4.0",
    ),
}

# suffix of the figures computed on the records that come with at least one source
WITH_SOURCES = "_with_sources"

# the metrics shown per dataset (issue 7's headline metrics first)
HEADLINE = {
    "wice_dev": ["label_macro_f1", "support_auroc", "label_accuracy", "evidence_span_f1"],
    "wice_nst_train_dev": [
        "unsupported_char_f1",
        "unsupported_char_precision",
        "unsupported_char_recall",
    ],
    "expertqa_val": ["label_macro_f1", "supported_f1", "support_auroc"],
    "quotesum_dev": ["source_accuracy", "evidence_char_f1"],
    "xquad_en": ["evidence_top_covered", "evidence_char_f1"],
    "begin_wow_dev": ["support_auroc", "supported_f1"],
    "hotpotqa_dev53": ["evidence_span_recall", "source_accuracy"],
}

METRIC_NAMES = {
    "label_macro_f1": "3-way macro-F1",
    "label_accuracy": "3-way accuracy",
    "support_auroc": "AUROC (support score)",
    "supported_f1": "supported F1",
    "evidence_span_f1": "evidence span F1",
    "evidence_span_recall": "evidence span recall",
    "evidence_char_f1": "evidence char F1",
    "source_accuracy": "source accuracy",
    "evidence_top_covered": "top citation covers the answer",
    "unsupported_char_f1": "unsupported char F1",
    "unsupported_char_precision": "unsupported char precision",
    "unsupported_char_recall": "unsupported char recall",
}


# ---------------------------------------------------------------------------------------
# peers


def _peer_cache(peer: str, stem: str) -> Path:
    return RESULTS / f"peer_{peer}_{stem}.json"


def _peer_raw(peer: str, path: Path, peer_interpreter: str, refresh: bool) -> dict[str, Any]:
    cache = _peer_cache(peer, path.stem)
    if refresh or not cache.exists():
        RESULTS.mkdir(parents=True, exist_ok=True)
        adapter = REPO / "benchmarks" / "_peer_quality.py"
        subprocess.run(
            [peer_interpreter, str(adapter), peer, str(path), str(cache)], check=True
        )
    with open(cache, encoding="utf-8") as handle:
        return json.load(handle)


def _words_not_in_evidence(item: SpanCitations) -> SpanCitations:
    """Mark the words of a cited sentence that none of its evidence contains."""
    if not item.citations:
        return item
    evidence_words = {
        word.group().casefold()
        for citation in item.citations
        for span in citation.evidence_spans
        for word in _WORD.finditer(span.evidence)
    }
    span = item.answer_span
    missing = tuple(
        (span.char_start + word.start(), span.char_start + word.end())
        for word in _WORD.finditer(span.text)
        if word.group().casefold() not in evidence_words
    )
    return SpanCitations(span, item.citations, item.status, missing)


def _cite_right_spans(raw_spans: list[dict[str, Any]]) -> list[SpanCitations]:
    spans = []
    for raw in raw_spans:
        citations = tuple(
            Citation(
                score=c["score"],
                source_id=c["source_id"],
                source_index=c["source_index"],
                candidate_index=c["candidate_index"],
                char_start=c["char_start"],
                char_end=c["char_end"],
                evidence=c["evidence"],
                evidence_spans=tuple(EvidenceSpan(**e) for e in c["evidence_spans"]),
                components=c["components"],
            )
            for c in raw["citations"]
        )
        answer_span = AnswerSpan(**raw["answer_span"])
        spans.append(_words_not_in_evidence(SpanCitations(answer_span, citations, raw["status"])))
    return spans


def _citeglow_spans(raw_spans: list[dict[str, Any]], record: EvalRecord) -> list[SpanCitations]:
    spans = []
    for raw in raw_spans:
        start, end = raw["char_start"], raw["char_end"]
        sentence = record.answer[start:end]
        words = [w.group().casefold() for w in _WORD.finditer(sentence)]
        by_source: dict[int, list[tuple[int, int]]] = {}
        for source_index, h_start, h_end in raw["highlights"]:
            by_source.setdefault(source_index, []).append((h_start, h_end))
        citations = []
        for source_index, highlights in by_source.items():
            text = record.sources[source_index].text
            highlighted = {
                w.group().casefold()
                for h_start, h_end in highlights
                for w in _WORD.finditer(text[h_start:h_end])
            }
            coverage = sum(w in highlighted for w in words) / len(words) if words else 0.0
            low, high = min(h[0] for h in highlights), max(h[1] for h in highlights)
            citations.append(
                Citation(
                    score=coverage,
                    source_id=record.sources[source_index].id,
                    source_index=source_index,
                    candidate_index=0,
                    char_start=low,
                    char_end=high,
                    evidence=text[low:high],
                    evidence_spans=tuple(EvidenceSpan(s, e, text[s:e]) for s, e in highlights),
                    components={"answer_coverage": coverage},
                )
            )
        citations.sort(key=lambda c: (-c.score, c.source_index))
        status = "supported" if citations else "unsupported"
        item = SpanCitations(AnswerSpan(sentence, start, end), tuple(citations), status)
        spans.append(_words_not_in_evidence(item))
    return spans


def _peer_predictions(
    peer: str, raw: dict[str, Any], records: list[EvalRecord]
) -> tuple[list[list[SpanCitations]], list[float]]:
    by_id = {item["id"]: item for item in raw["records"]}
    predictions, seconds = [], []
    for record in records:
        item = by_id[record.id]
        if peer == "cite-right":
            predictions.append(_cite_right_spans(item["spans"]))
        else:
            predictions.append(_citeglow_spans(item["spans"], record))
        seconds.append(item["seconds"])
    return predictions, seconds


# ---------------------------------------------------------------------------------------
# trivial baseline

# the metrics a constant answer can be scored on (evidence and source metrics need real citations)
TRIVIAL_METRICS = frozenset(
    {
        "label_macro_f1",
        "label_accuracy",
        "supported_f1",
        "support_auroc",
        "unsupported_char_f1",
        "unsupported_char_precision",
        "unsupported_char_recall",
    }
)


def _trivial_predictions(records: list[EvalRecord]) -> list[list[SpanCitations]]:
    """Every answer one ``supported`` span with a constant score, every word flagged unsupported.

    Each metric of :data:`TRIVIAL_METRICS` then shows what a constant answer gets: the share of
    gold-supported units for accuracy, 0.5 for AUROC, every word for unsupported-span F1.
    """
    predictions = []
    for record in records:
        answer = record.answer
        placeholder = Citation(
            score=0.0,
            source_id="",
            source_index=0,
            candidate_index=0,
            char_start=0,
            char_end=0,
            evidence="",
        )
        words = tuple((w.start(), w.end()) for w in _WORD.finditer(answer))
        span = SpanCitations(AnswerSpan(answer, 0, len(answer)), (placeholder,), "supported", words)
        predictions.append([span])
    return predictions


# ---------------------------------------------------------------------------------------
# table


def _has_source_text(record: EvalRecord) -> bool:
    """Whether the record comes with some source text to check its answer against."""
    return any(source.text.strip() for source in record.sources)


def _subset_metrics(
    records: list[EvalRecord],
    predictions: list[list[SpanCitations]],
    seconds: list[float] | None,
    keep: list[int],
) -> dict[str, float]:
    """Metrics of the predictions for ``records[i]``, ``i`` in ``keep`` only."""
    return score_predictions(
        [records[i] for i in keep],
        [predictions[i] for i in keep],
        seconds=None if seconds is None else [seconds[i] for i in keep],
    ).metrics


def _rst_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    rule = "  ".join("=" * w for w in widths)

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(cells, widths)).rstrip()

    return "\n".join([rule, line(header), rule, *[line(r) for r in rows], rule])


def render(
    results: dict[str, dict[str, dict[str, float]]], systems: list[str], command: str
) -> str:
    """The Quality section body: table, how it was measured, dataset citations."""
    rows = []
    shown = [
        (key, stem, metric_names)
        for stem, metric_names in HEADLINE.items()
        for key in (stem, stem + WITH_SOURCES)
        if key in results
    ]
    for key, stem, metric_names in shown:
        name = DATASETS.get(stem, (stem, ""))[0]
        if key != stem:
            name += ", answers with sources"
        for position, metric in enumerate(metric_names):
            cells = [name if position == 0 else "", METRIC_NAMES.get(metric, metric)]
            values = [results[key].get(system, {}).get(metric) for system in systems]
            best = max((v for v in values if v is not None), default=None)
            for value in values:
                if value is None:
                    cells.append("n/a")
                else:
                    text = f"{value:.3f}"
                    cells.append(f"**{text}**" if value == best and len(systems) > 1 else text)
            trivial = results[key].get("trivial", {}).get(metric)
            cells.append(
                f"{trivial:.3f}" if trivial is not None and metric in TRIVIAL_METRICS else ""
            )
            rows.append(cells)
    table = _rst_table(["dataset", "metric", *systems, "trivial"], rows)
    cited = "\n".join(
        f"- {DATASETS[stem][0]}: {DATASETS[stem][1]}"
        for stem in HEADLINE
        if stem in results and stem in DATASETS
    )
    return (
        f"{table}\n\nRegenerate with ``{command}`` (default configuration of every library; "
        "whole answer in, answer spans mapped to the annotated units by overlap; metric "
        "definitions in ``citekit.evaluate``). Best value in bold. The support score ranked by "
        "AUROC is each library's own confidence (citekit: the weighted share of the sentence "
        "covered by its evidence, the quantity its status is decided on; cite-right: the best "
        "citation's answer coverage). citeglow "
        "has no status: a sentence counts as supported when citeglow highlights something for "
        "it, and its score is the share of the sentence's words inside the highlights. Peers "
        "report no unsupported words; theirs are the words of a cited sentence absent from its "
        "evidence. *trivial* is a constant answer: every sentence supported with the same "
        "score, every word unsupported. *answers with sources*: the same metrics on the "
        "records that come with at least one source text; the others cite pages that are "
        "not in the data, so every system calls their claims unsupported.\n\n"
        "Development splits of these human-annotated datasets (not redistributed here):\n\n"
        f"{cited}\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-dir", default=str(REPO.parent / "shared" / "eval"))
    add_peer_python_option(parser)
    parser.add_argument("--refresh-peers", action="store_true")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", default=str(RESULTS / "quality.rst"))
    arguments = parser.parse_args(argv)
    peer_interpreter = peer_python(parser, arguments.peer_python, required=False)

    eval_dir = Path(arguments.eval_dir)
    files = sorted(eval_dir.glob("*.jsonl"))
    if not files:
        print(f"no .jsonl files in {eval_dir}", file=sys.stderr)
        return 2
    peers = list(PEERS) if peer_interpreter else []
    systems = ["citekit", *peers]

    from citekit.pipeline import Pipeline

    pipeline = Pipeline()
    results: dict[str, dict[str, dict[str, float]]] = {}
    for path in files:
        records = load_records(path, limit=arguments.limit)
        began = time.perf_counter()
        predictions, seconds = run_pipeline(records, pipeline)
        results[path.stem] = {
            "citekit": score_predictions(records, predictions, seconds=seconds).metrics
        }
        print(f"{path.name}: citekit {time.perf_counter() - began:.1f} s", file=sys.stderr)
        # records whose answer cites nothing that is in the data, if some others do
        sourced = [i for i, record in enumerate(records) if _has_source_text(record)]
        subset = 0 < len(sourced) < len(records)
        if subset:
            results[path.stem + WITH_SOURCES] = {
                "citekit": _subset_metrics(records, predictions, seconds, sourced)
            }
        results[path.stem]["trivial"] = score_predictions(
            records, _trivial_predictions(records)
        ).metrics
        if subset:
            results[path.stem + WITH_SOURCES]["trivial"] = _subset_metrics(
                records, _trivial_predictions(records), None, sourced
            )
        for peer in peers:
            raw = _peer_raw(peer, path, peer_interpreter, arguments.refresh_peers)
            predictions, seconds = _peer_predictions(peer, raw, records)
            results[path.stem][peer] = score_predictions(
                records, predictions, seconds=seconds
            ).metrics
            if subset:
                results[path.stem + WITH_SOURCES][peer] = _subset_metrics(
                    records, predictions, seconds, sourced
                )

    command = "python benchmarks/quality.py"
    if arguments.limit is not None:
        command += f" --limit {arguments.limit}"
    text = render(results, systems, command)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    Path(arguments.out).write_text(text, encoding="utf-8")
    with open(RESULTS / "quality.json", "w", encoding="utf-8") as handle:
        json.dump({"limit": arguments.limit, "results": results}, handle, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
