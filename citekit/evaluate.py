"""Evaluate citations against human-annotated data.

Reads JSON Lines records in the evaluation schema (one answer, its sources, annotated
*units* of the answer with a support label and gold evidence spans, and gold unsupported
character ranges of the answer), runs any object with an ``align(answer, sources)``
method over them (a :class:`citekit.Pipeline` by default) and scores what it returns.
On the command line: ``citekit evaluate FILE.jsonl`` (see :mod:`citekit.cli`).

How predictions meet the gold annotation
----------------------------------------
The pipeline segments the answer itself; its spans rarely coincide with the annotated
units. A predicted span *speaks for* a unit when at least half of the shorter of the two
lies in their overlap (if no span qualifies, the span with the largest overlap does). The
unit then gets:

status
    the common status of those spans, or ``"partial"`` when they disagree;
support score
    their overlap-weighted mean of :func:`citekit.metrics.span_confidence` (the weighted
    share of the span covered by its evidence, ``SpanCitations.content_coverage``, or,
    when a result does not carry it, the best citation's answer coverage; 0 without
    citations); this is the score ranked by AUROC;
citations
    their citations; when citations record which part of the answer they aligned
    (``answer_char_end > answer_char_start``), only those whose aligned part overlaps the
    unit. The *top citation* is the one whose aligned part overlaps the unit most (ties:
    the pipeline's own ranking).

Metrics (keys of :attr:`EvaluationReport.metrics`; a key is absent when the data has
nothing to measure it on):

* ``label_accuracy``, ``label_macro_f1`` — 3-way status against the gold label, over
  units with a label; the macro average runs over the classes present in the gold labels.
* ``supported_precision`` / ``_recall`` / ``_f1`` — ``supported`` against the rest.
* ``support_auroc`` — ROC AUC of the support score for gold ``supported`` against gold
  ``partial``/``unsupported`` (ties count one half).
* ``evidence_span_*`` — a predicted evidence span is correct when it overlaps a gold span
  of the same source; a gold span is found when some predicted span overlaps it.
  ``evidence_char_*`` — the same at character level. Predicted evidence is every evidence
  span of the unit's citations. For each unit the gold set (``evidence`` or one of
  ``evidence_alternatives``) giving the best F1 is used; counts are summed over units
  with gold evidence (micro average).
* ``evidence_top_coverage`` — mean fraction of the gold evidence characters that the top
  citation's evidence covers; ``evidence_top_covered`` — fraction of units where it
  covers all of them (e.g. "does the top citation contain the answer span" for
  extractive QA).
* ``source_accuracy`` — the top citation comes from a source that holds gold evidence,
  over units with gold evidence in records with at least two sources.
* ``unsupported_char_*`` — predicted unsupported characters of the answer (the union of
  ``SpanCitations.unsupported_spans``, and the whole span when its status is
  ``unsupported``) against the gold ``unsupported_spans``, counting non-space characters
  only, summed over all records of a file that annotates unsupported spans.
* ``seconds_per_record_mean`` / ``_median`` — wall-clock time of ``align`` per record
  (a citekit ``Pipeline`` aligns a tiny input first, untimed, so that loading the kernels
  is not counted).

Examples
--------
>>> from citekit.evaluate import EvalRecord, score_predictions
>>> from citekit.results import AnswerSpan, Citation, SpanCitations
>>> record = EvalRecord.from_dict({
...     "dataset": "toy", "id": "1", "answer": "Revenue grew 15%.",
...     "sources": [{"id": "s", "text": "In 2024 revenue grew 15%."}],
...     "units": [{"start": 0, "end": 17, "text": "Revenue grew 15%.",
...                "label": "supported",
...                "evidence": [{"source_id": "s", "start": 8, "end": 25}]}]})
>>> citation = Citation(score=2.0, source_id="s", source_index=0, candidate_index=0,
...                     char_start=8, char_end=25, evidence="revenue grew 15%.",
...                     components={"answer_coverage": 1.0})
>>> span = SpanCitations(AnswerSpan("Revenue grew 15%.", 0, 17), (citation,), "supported")
>>> report = score_predictions([record], [[span]])
>>> report.metrics["label_accuracy"], report.metrics["evidence_char_f1"]
(1.0, 1.0)
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from citekit._validation import check_bool, check_int, check_str
from citekit.results import STATUSES, Citation, SourceDocument, SpanCitations

__all__ = [
    "GoldEvidence",
    "EvalUnit",
    "EvalRecord",
    "UnitOutcome",
    "EvaluationReport",
    "load_records",
    "run_pipeline",
    "score_predictions",
    "evaluate",
    "roc_auc",
]


# ---------------------------------------------------------------------------------------
# records


def _require(data: Mapping[str, Any], key: str, where: str) -> Any:
    if not isinstance(data, Mapping):
        raise TypeError(f"{where} must be a JSON object, got {type(data).__name__}")
    if key not in data:
        raise ValueError(f"{where} is missing the key {key!r}")
    return data[key]


def _check_span(start: Any, end: Any, length: int, where: str) -> tuple[int, int]:
    start = check_int(start, f"{where}.start", minimum=0)
    end = check_int(end, f"{where}.end", minimum=0)
    if not start <= end <= length:
        raise ValueError(f"{where}: need 0 <= start <= end <= {length}, got {start}, {end}")
    return start, end


@dataclass(frozen=True)
class GoldEvidence:
    """A gold evidence span: ``source_text[start:end]`` of the source ``source_id``.

    Examples
    --------
    >>> GoldEvidence("s", 8, 25).end
    25
    """

    source_id: str
    start: int
    end: int


@dataclass(frozen=True)
class EvalUnit:
    """An annotated piece of the answer: ``answer[start:end] == text``.

    ``label`` is ``"supported"``, ``"partial"``, ``"unsupported"`` or ``None`` (not
    annotated). ``evidence_sets`` holds the gold evidence first and then every
    ``evidence_alternatives`` set; empty sets are dropped.

    Examples
    --------
    >>> unit = EvalUnit(0, 3, "Hi.", "supported", ((GoldEvidence("s", 0, 3),),))
    >>> unit.has_evidence
    True
    """

    start: int
    end: int
    text: str
    label: str | None
    evidence_sets: tuple[tuple[GoldEvidence, ...], ...] = ()

    @property
    def has_evidence(self) -> bool:
        """Whether the unit has at least one non-empty gold evidence set."""
        return bool(self.evidence_sets)


@dataclass(frozen=True)
class EvalRecord:
    """One annotated answer with its sources (see the module docstring for the schema).

    Examples
    --------
    >>> record = EvalRecord.from_dict({"id": "r", "answer": "Hi.", "sources": [],
    ...                                "units": [], "unsupported_spans": []})
    >>> record.id, record.dataset
    ('r', '')
    """

    id: str
    answer: str
    sources: tuple[SourceDocument, ...]
    units: tuple[EvalUnit, ...]
    unsupported_spans: tuple[tuple[int, int], ...] = ()
    dataset: str = ""
    question: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "EvalRecord":
        """Build a record from one decoded JSON line, checking every offset.

        Raises
        ------
        TypeError, ValueError
            When a field has the wrong type or an offset does not index the text
            (the message names the field).
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"data must be a mapping, got {type(data).__name__}")
        record_id = str(_require(data, "id", "record"))
        where = f"record {record_id!r}"
        answer = check_str(_require(data, "answer", where), f"{where}.answer")
        sources = []
        for index, source in enumerate(data.get("sources") or ()):
            name = f"{where}.sources[{index}]"
            source_id = check_str(_require(source, "id", name), f"{name}.id")
            text = check_str(_require(source, "text", name), f"{name}.text")
            sources.append(SourceDocument(id=source_id, text=text))
        lengths = {source.id: len(source.text) for source in sources}

        def evidence_set(items: Iterable[Mapping[str, Any]], name: str) -> tuple[GoldEvidence, ...]:
            out = []
            for item in items:
                source_id = str(_require(item, "source_id", name))
                if source_id not in lengths:
                    raise ValueError(f"{name}: unknown source_id {source_id!r}")
                start, end = _check_span(
                    _require(item, "start", name), _require(item, "end", name),
                    lengths[source_id], name,
                )
                out.append(GoldEvidence(source_id, start, end))
            return tuple(out)

        units = []
        for index, unit in enumerate(data.get("units") or ()):
            name = f"{where}.units[{index}]"
            start, end = _check_span(
                _require(unit, "start", name), _require(unit, "end", name), len(answer), name
            )
            label = unit.get("label")
            if label is not None and label not in STATUSES:
                raise ValueError(f"{name}.label must be one of {STATUSES} or None, got {label!r}")
            sets = [evidence_set(unit.get("evidence") or (), f"{name}.evidence")]
            for alt_index, alternative in enumerate(unit.get("evidence_alternatives") or ()):
                sets.append(evidence_set(alternative, f"{name}.evidence_alternatives[{alt_index}]"))
            units.append(
                EvalUnit(start, end, answer[start:end], label, tuple(s for s in sets if s))
            )
        unsupported = []
        for index, span in enumerate(data.get("unsupported_spans") or ()):
            name = f"{where}.unsupported_spans[{index}]"
            unsupported.append(
                _check_span(
                    _require(span, "start", name), _require(span, "end", name), len(answer), name
                )
            )
        return cls(
            id=record_id,
            answer=answer,
            sources=tuple(sources),
            units=tuple(units),
            unsupported_spans=tuple(unsupported),
            dataset=str(data.get("dataset") or ""),
            question=data.get("question"),
            meta=dict(data.get("meta") or {}),
        )


def load_records(path: str | os.PathLike[str], *, limit: int | None = None) -> list[EvalRecord]:
    """Read evaluation records from a JSON Lines file.

    Parameters
    ----------
    path : str or path-like
        A ``.jsonl`` file in the evaluation schema; blank lines are skipped.
    limit : int, optional
        Read at most this many records.

    Returns
    -------
    list of EvalRecord

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    TypeError, ValueError
        ``"<path>, line N: ..."`` for a line that is not UTF-8, not a JSON object, or not
        a record of the schema (naming the field).

    Examples
    --------
    >>> import json, os, tempfile
    >>> line = {"id": "r", "answer": "Hi.", "sources": [{"id": "s", "text": "Hi."}],
    ...         "units": [{"start": 0, "end": 3, "label": "supported"}]}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "toy.jsonl")
    ...     with open(path, "w") as handle:
    ...         _ = handle.write(json.dumps(line) + "\\n")
    ...     [record.units[0].text for record in load_records(path)]
    ['Hi.']
    """
    from citekit._rows import numbered_jsonl

    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
    limit = check_int(limit, "limit", minimum=0, allow_none=True)
    records: list[EvalRecord] = []
    if limit == 0:
        return records
    for line_number, data in numbered_jsonl(path):
        try:
            records.append(EvalRecord.from_dict(data))
        except (TypeError, ValueError) as exc:
            # the same "<path>, line N: ..." as the reader's own errors
            raise type(exc)(f"{os.fspath(path)}, line {line_number}: {exc}") from None
        if limit is not None and len(records) >= limit:
            break
    return records


# ---------------------------------------------------------------------------------------
# running a pipeline


def _shift_span(item: SpanCitations, offset: int) -> SpanCitations:
    """Move a result computed on a piece of the answer to full-answer offsets."""
    if offset == 0:
        return item
    span = item.answer_span
    citations = tuple(
        dataclasses.replace(
            citation,
            answer_char_start=citation.answer_char_start + offset,
            answer_char_end=citation.answer_char_end + offset,
        )
        for citation in item.citations
    )
    return dataclasses.replace(
        item,
        answer_span=dataclasses.replace(
            span, char_start=span.char_start + offset, char_end=span.char_end + offset
        ),
        citations=citations,
        unsupported_spans=tuple((s + offset, e + offset) for s, e in item.unsupported_spans),
    )


def _default_pipeline() -> Any:
    from citekit.pipeline import Pipeline

    return Pipeline()


def run_pipeline(
    records: Sequence[EvalRecord], pipeline: Any = None, *, per_unit: bool = False
) -> tuple[list[list[SpanCitations]], list[float]]:
    """Align every record; return the predicted spans and seconds per record.

    Parameters
    ----------
    records : sequence of EvalRecord
    pipeline : object with ``align(answer, sources)``, optional
        Defaults to ``citekit.Pipeline()`` (the default configuration).
    per_unit : bool
        Align each annotated unit on its own instead of the whole answer (offsets are
        moved back to the whole answer).

    Returns
    -------
    predictions : list of list of SpanCitations
    seconds : list of float

    Examples
    --------
    >>> from citekit.results import AnswerSpan, SpanCitations
    >>> class NothingSupported:
    ...     def align(self, answer, sources):
    ...         return [SpanCitations(AnswerSpan(answer, 0, len(answer)), (), "unsupported")]
    >>> record = EvalRecord("r", "Hi.", (), (EvalUnit(0, 3, "Hi.", "unsupported"),))
    >>> predictions, seconds = run_pipeline([record], NothingSupported())
    >>> predictions[0][0].status, len(seconds)
    ('unsupported', 1)
    """
    records = _check_records(records)
    check_bool(per_unit, "per_unit")
    if pipeline is None:
        pipeline = _default_pipeline()
    if not callable(getattr(pipeline, "align", None)):
        raise TypeError(
            f"pipeline must have an align(answer, sources) method, got {type(pipeline).__name__}"
        )
    from citekit.pipeline import Pipeline

    if isinstance(pipeline, Pipeline) and records:
        # a process's first call loads the kernels from their disk cache (about a
        # second): not the time of a record
        pipeline.align("Warm up the kernels.", ["Warm up the kernels."])
    predictions: list[list[SpanCitations]] = []
    seconds: list[float] = []
    for record in records:
        began = time.perf_counter()
        if per_unit:
            spans: list[SpanCitations] = []
            for unit in record.units:
                result = pipeline.align(unit.text, list(record.sources))
                spans.extend(_shift_span(item, unit.start) for item in result)
        else:
            spans = list(pipeline.align(record.answer, list(record.sources)))
        seconds.append(time.perf_counter() - began)
        predictions.append(spans)
    return predictions, seconds


# ---------------------------------------------------------------------------------------
# interval arithmetic (half-open [start, end) ranges)


def _merge(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for start, end in sorted(r for r in ranges if r[1] > r[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def _length(ranges: Sequence[tuple[int, int]]) -> int:
    return sum(e - s for s, e in ranges)


def _intersection_length(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> int:
    """Overlap of two merged, sorted range lists."""
    total, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        low, high = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if high > low:
            total += high - low
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _overlap(a_start: int, a_end: int, b_start: int, b_end: int) -> int:
    return max(0, min(a_end, b_end) - max(a_start, b_start))


def _by_source(spans: Iterable[tuple[str, int, int]]) -> dict[str, list[tuple[int, int]]]:
    grouped: dict[str, list[tuple[int, int]]] = {}
    for source_id, start, end in spans:
        grouped.setdefault(source_id, []).append((start, end))
    return {key: _merge(value) for key, value in grouped.items()}


# ---------------------------------------------------------------------------------------
# statistics


def _safe_div(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def _f1(precision: float, recall: float) -> float:
    return _safe_div(2 * precision * recall, precision + recall)


def roc_auc(scores: Sequence[float], positives: Sequence[bool]) -> float:
    """Area under the ROC curve: the chance that a random positive outranks a negative.

    Computed from average ranks (Mann-Whitney U), so tied scores count one half.

    Parameters
    ----------
    scores : sequence of float
        Higher means "more likely positive".
    positives : sequence of bool
        The gold class of each score.

    Returns
    -------
    float
        ``nan`` when either class is empty.

    Examples
    --------
    >>> roc_auc([0.9, 0.8, 0.3, 0.1], [True, False, True, False])
    0.75
    >>> roc_auc([0.5, 0.5], [True, False])
    0.5
    """
    import numpy as np

    score_array = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(positives, dtype=bool)
    if score_array.ndim != 1 or score_array.shape != labels.shape:
        raise ValueError("scores and positives must be 1-D and of equal length")
    if not np.all(np.isfinite(score_array)):
        raise ValueError("scores must be finite")
    n_positive = int(labels.sum())
    n_negative = labels.size - n_positive
    if n_positive == 0 or n_negative == 0:
        return math.nan
    _, inverse, counts = np.unique(score_array, return_inverse=True, return_counts=True)
    # 1-based rank of each distinct value when ties share the average of their ranks
    last_rank = np.cumsum(counts)
    average_rank = last_rank - (counts - 1) / 2.0
    positive_rank_sum = float(average_rank[inverse][labels].sum())
    u_statistic = positive_rank_sum - n_positive * (n_positive + 1) / 2.0
    return u_statistic / (n_positive * n_negative)


# ---------------------------------------------------------------------------------------
# matching predictions to units


@dataclass(frozen=True)
class UnitOutcome:
    """What the prediction says about one gold unit (kept for failure analysis).

    Examples
    --------
    >>> UnitOutcome("r", 0, "supported", "partial", 0.5, None).correct
    False
    """

    record_id: str
    unit_index: int
    gold_label: str | None
    predicted_status: str
    support_score: float
    top_citation: Citation | None
    citations: tuple[Citation, ...] = ()

    @property
    def correct(self) -> bool:
        """Whether the predicted status equals the gold label."""
        return self.gold_label == self.predicted_status


def _speaking_spans(
    unit: EvalUnit, spans: Sequence[SpanCitations]
) -> list[tuple[SpanCitations, int]]:
    """Predicted spans that speak for ``unit``, with their overlap in characters."""
    overlapping = []
    for item in spans:
        span = item.answer_span
        overlap = _overlap(span.char_start, span.char_end, unit.start, unit.end)
        if overlap > 0:
            shorter = min(span.char_end - span.char_start, unit.end - unit.start)
            overlapping.append((item, overlap, 2 * overlap >= shorter))
    chosen = [(item, overlap) for item, overlap, enough in overlapping if enough]
    if not chosen and overlapping:
        best = max(overlapping, key=lambda entry: entry[1])
        chosen = [(best[0], best[1])]
    return chosen


def _unit_outcome(
    record: EvalRecord, unit_index: int, spans: Sequence[SpanCitations]
) -> UnitOutcome:
    from citekit.metrics import span_confidence

    unit = record.units[unit_index]
    chosen = _speaking_spans(unit, spans)
    if not chosen:
        return UnitOutcome(record.id, unit_index, unit.label, "unsupported", 0.0, None)
    statuses = {item.status for item, _ in chosen}
    status = statuses.pop() if len(statuses) == 1 else "partial"
    total_overlap = sum(overlap for _, overlap in chosen)
    score = sum(span_confidence(item) * overlap for item, overlap in chosen) / total_overlap

    ranked: list[tuple[int, int, Citation]] = []  # (-answer overlap, rank, citation)
    rank = 0
    for item, _ in sorted(chosen, key=lambda entry: -entry[1]):
        for citation in item.citations:
            if citation.answer_char_end > citation.answer_char_start:
                answer_overlap = _overlap(
                    citation.answer_char_start, citation.answer_char_end, unit.start, unit.end
                )
                ranked.append((-answer_overlap, rank, citation))
            else:
                ranked.append((0, rank, citation))
            rank += 1
    if any(key < 0 for key, _, _ in ranked):
        # citations that know their aligned part of the answer: keep those on this unit
        ranked = [entry for entry in ranked if entry[0] < 0]
    ranked.sort(key=lambda entry: (entry[0], entry[1]))
    citations = tuple(citation for _, _, citation in ranked)
    top = citations[0] if citations else None
    return UnitOutcome(record.id, unit_index, unit.label, status, float(score), top, citations)


def _evidence_spans(citations: Iterable[Citation]) -> list[tuple[str, int, int]]:
    return [
        (citation.source_id, span.char_start, span.char_end)
        for citation in citations
        for span in citation.evidence_spans
    ]


def _span_counts(
    predicted: Sequence[tuple[str, int, int]], gold: Sequence[GoldEvidence]
) -> tuple[int, int, int, int]:
    """(correct predicted, predicted, found gold, gold) for span-overlap matching."""

    def hits(a: tuple[str, int, int], b: GoldEvidence) -> bool:
        return a[0] == b.source_id and _overlap(a[1], a[2], b.start, b.end) > 0

    correct = sum(1 for p in predicted if any(hits(p, g) for g in gold))
    found = sum(1 for g in gold if any(hits(p, g) for p in predicted))
    return correct, len(predicted), found, len(gold)


def _char_counts(
    predicted: Mapping[str, list[tuple[int, int]]], gold: Sequence[GoldEvidence]
) -> tuple[int, int, int]:
    """(overlapping chars, predicted chars, gold chars)."""
    gold_by_source = _by_source((g.source_id, g.start, g.end) for g in gold)
    common = sum(
        _intersection_length(ranges, gold_by_source.get(source_id, []))
        for source_id, ranges in predicted.items()
    )
    return (
        common,
        sum(_length(r) for r in predicted.values()),
        sum(_length(r) for r in gold_by_source.values()),
    )


def _best_set(unit: EvalUnit, score: Any) -> tuple[GoldEvidence, ...]:
    return max(unit.evidence_sets, key=score)  # max keeps the first of equal scores


# ---------------------------------------------------------------------------------------
# report


@dataclass
class EvaluationReport:
    """Metrics of one evaluation run (see the module docstring for their definitions).

    Attributes
    ----------
    dataset : str
        Dataset name taken from the records.
    metrics : dict of str to float
        Metric name to value.
    counts : dict of str to int
        How many records / units / characters each metric was computed on.
    units : list of UnitOutcome
        Per-unit predictions, for failure analysis.

    Examples
    --------
    >>> report = EvaluationReport("toy", {"label_accuracy": 0.5}, {"units_labeled": 2})
    >>> print(report.to_table())
    dataset: toy
    metric          value
    --------------  ------
    label_accuracy  0.5000
    units_labeled   2
    """

    dataset: str
    metrics: dict[str, float]
    counts: dict[str, int] = field(default_factory=dict)
    units: list[UnitOutcome] = field(default_factory=list)

    def to_table(self) -> str:
        """Return the metrics and counts as an aligned plain-text table."""
        rows = [(name, f"{value:.4f}") for name, value in self.metrics.items()]
        rows += [(name, str(value)) for name, value in self.counts.items()]
        width = max([len("metric")] + [len(name) for name, _ in rows])
        value_width = max([len("value")] + [len(value) for _, value in rows])
        lines = [f"dataset: {self.dataset or '-'}", f"{'metric':<{width}}  value"]
        lines.append(f"{'-' * width}  {'-' * value_width}")
        lines += [f"{name:<{width}}  {value}" for name, value in rows]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Return ``dataset``, ``metrics`` and ``counts`` as plain data."""
        return {"dataset": self.dataset, "metrics": dict(self.metrics), "counts": dict(self.counts)}


def _check_records(records: Any) -> list[EvalRecord]:
    if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
        raise TypeError(f"records must be a sequence of EvalRecord, got {type(records).__name__}")
    records = list(records)
    for record in records:
        if not isinstance(record, EvalRecord):
            raise TypeError(f"records must hold EvalRecord items, got {type(record).__name__}")
    return records


def _label_metrics(outcomes: Sequence[UnitOutcome], metrics: dict[str, float]) -> None:
    labeled = [o for o in outcomes if o.gold_label is not None]
    if not labeled:
        return
    metrics["label_accuracy"] = sum(o.correct for o in labeled) / len(labeled)
    gold_classes = [s for s in STATUSES if any(o.gold_label == s for o in labeled)]
    per_class_f1 = []
    for status in gold_classes:
        tp = sum(1 for o in labeled if o.gold_label == status and o.predicted_status == status)
        predicted = sum(1 for o in labeled if o.predicted_status == status)
        actual = sum(1 for o in labeled if o.gold_label == status)
        per_class_f1.append(_f1(_safe_div(tp, predicted), _safe_div(tp, actual)))
    metrics["label_macro_f1"] = sum(per_class_f1) / len(per_class_f1)
    tp = sum(
        1 for o in labeled if o.gold_label == "supported" and o.predicted_status == "supported"
    )
    predicted = sum(1 for o in labeled if o.predicted_status == "supported")
    actual = sum(1 for o in labeled if o.gold_label == "supported")
    if actual:
        precision, recall = _safe_div(tp, predicted), _safe_div(tp, actual)
        metrics.update(supported_precision=precision, supported_recall=recall)
        metrics["supported_f1"] = _f1(precision, recall)
    auroc = roc_auc(
        [o.support_score for o in labeled], [o.gold_label == "supported" for o in labeled]
    )
    if not math.isnan(auroc):
        metrics["support_auroc"] = auroc


def _evidence_metrics(
    records: Sequence[EvalRecord],
    outcomes_by_record: Sequence[Sequence[UnitOutcome]],
    metrics: dict[str, float],
    counts: dict[str, int],
) -> None:
    span_totals = [0, 0, 0, 0]
    char_totals = [0, 0, 0]
    top_coverages: list[float] = []
    source_hits: list[bool] = []
    for record, outcomes in zip(records, outcomes_by_record):
        for outcome in outcomes:
            unit = record.units[outcome.unit_index]
            if not unit.has_evidence:
                continue
            predicted = _evidence_spans(outcome.citations)
            predicted_chars = _by_source(predicted)

            def span_f1(gold: tuple[GoldEvidence, ...]) -> float:
                c, p, f, g = _span_counts(predicted, gold)
                return _f1(_safe_div(c, p), _safe_div(f, g))

            def char_f1(gold: tuple[GoldEvidence, ...]) -> float:
                common, p, g = _char_counts(predicted_chars, gold)
                return _f1(_safe_div(common, p), _safe_div(common, g))

            unit_span_counts = _span_counts(predicted, _best_set(unit, span_f1))
            span_totals = [total + value for total, value in zip(span_totals, unit_span_counts)]
            unit_char_counts = _char_counts(predicted_chars, _best_set(unit, char_f1))
            char_totals = [total + value for total, value in zip(char_totals, unit_char_counts)]

            top_chars = _by_source(
                _evidence_spans([outcome.top_citation] if outcome.top_citation else [])
            )

            def top_recall(gold: tuple[GoldEvidence, ...]) -> float:
                common, _, g = _char_counts(top_chars, gold)
                return _safe_div(common, g)

            top_coverages.append(max(top_recall(gold) for gold in unit.evidence_sets))
            if len(record.sources) >= 2:
                gold_sources = {g.source_id for gold in unit.evidence_sets for g in gold}
                top = outcome.top_citation
                source_hits.append(top is not None and top.source_id in gold_sources)
    counts["units_with_evidence"] = len(top_coverages)
    if top_coverages:
        correct, n_predicted, found, n_gold = span_totals
        precision, recall = _safe_div(correct, n_predicted), _safe_div(found, n_gold)
        metrics.update(evidence_span_precision=precision, evidence_span_recall=recall)
        metrics["evidence_span_f1"] = _f1(precision, recall)
        common, n_predicted_chars, n_gold_chars = char_totals
        precision, recall = _safe_div(common, n_predicted_chars), _safe_div(common, n_gold_chars)
        metrics.update(evidence_char_precision=precision, evidence_char_recall=recall)
        metrics["evidence_char_f1"] = _f1(precision, recall)
        metrics["evidence_top_coverage"] = sum(top_coverages) / len(top_coverages)
        metrics["evidence_top_covered"] = sum(c >= 1.0 for c in top_coverages) / len(top_coverages)
    if source_hits:
        counts["units_with_source"] = len(source_hits)
        metrics["source_accuracy"] = sum(source_hits) / len(source_hits)


def _unsupported_metrics(
    records: Sequence[EvalRecord],
    predictions: Sequence[Sequence[SpanCitations]],
    metrics: dict[str, float],
    counts: dict[str, int],
) -> None:
    if not any(record.unsupported_spans for record in records):
        return
    common = predicted_total = gold_total = 0
    for record, spans in zip(records, predictions):
        predicted_ranges = []
        for item in spans:
            if item.status == "unsupported" and not item.unsupported_spans:
                predicted_ranges.append((item.answer_span.char_start, item.answer_span.char_end))
            predicted_ranges.extend(item.unsupported_spans)
        answer = record.answer
        predicted = {i for s, e in _merge(predicted_ranges) for i in range(s, min(e, len(answer)))}
        gold = {i for s, e in record.unsupported_spans for i in range(s, e)}
        predicted = {i for i in predicted if not answer[i].isspace()}
        gold = {i for i in gold if not answer[i].isspace()}
        common += len(predicted & gold)
        predicted_total += len(predicted)
        gold_total += len(gold)
    precision, recall = _safe_div(common, predicted_total), _safe_div(common, gold_total)
    metrics.update(unsupported_char_precision=precision, unsupported_char_recall=recall)
    metrics["unsupported_char_f1"] = _f1(precision, recall)
    counts["unsupported_gold_chars"] = gold_total


def score_predictions(
    records: Sequence[EvalRecord],
    predictions: Sequence[Sequence[SpanCitations]],
    *,
    seconds: Sequence[float] | None = None,
) -> EvaluationReport:
    """Score already computed predictions against the gold annotation.

    Parameters
    ----------
    records : sequence of EvalRecord
    predictions : sequence of sequence of SpanCitations
        ``predictions[i]`` are the spans predicted for ``records[i].answer``.
    seconds : sequence of float, optional
        Time taken per record; adds ``seconds_per_record_mean`` / ``_median``.

    Returns
    -------
    EvaluationReport

    Examples
    --------
    >>> record = EvalRecord("r", "Hi.", (), (EvalUnit(0, 3, "Hi.", "supported"),))
    >>> score_predictions([record], [[]]).metrics["label_accuracy"]
    0.0
    """
    records = _check_records(records)
    if isinstance(predictions, (str, bytes)) or not isinstance(predictions, Iterable):
        raise TypeError(
            "predictions must be a sequence of SpanCitations lists, "
            f"got {type(predictions).__name__}"
        )
    predictions = [list(spans) for spans in predictions]
    if len(predictions) != len(records):
        raise ValueError(f"predictions has {len(predictions)} items for {len(records)} records")
    for spans in predictions:
        for item in spans:
            if not isinstance(item, SpanCitations):
                raise TypeError(f"predictions must hold SpanCitations, got {type(item).__name__}")
    outcomes_by_record = [
        [_unit_outcome(record, index, spans) for index in range(len(record.units))]
        for record, spans in zip(records, predictions)
    ]
    outcomes = [o for per_record in outcomes_by_record for o in per_record]
    metrics: dict[str, float] = {}
    counts: dict[str, int] = {
        "records": len(records),
        "units": len(outcomes),
        "units_labeled": sum(o.gold_label is not None for o in outcomes),
    }
    _label_metrics(outcomes, metrics)
    _evidence_metrics(records, outcomes_by_record, metrics, counts)
    _unsupported_metrics(records, predictions, metrics, counts)
    if seconds is not None:
        seconds = [float(s) for s in seconds]
        if len(seconds) != len(records):
            raise ValueError(f"seconds has {len(seconds)} items for {len(records)} records")
        if seconds:
            metrics["seconds_per_record_mean"] = sum(seconds) / len(seconds)
            metrics["seconds_per_record_median"] = statistics.median(seconds)
    datasets = sorted({record.dataset for record in records if record.dataset})
    return EvaluationReport(",".join(datasets), metrics, counts, outcomes)


def evaluate(
    records: Sequence[EvalRecord], pipeline: Any = None, *, per_unit: bool = False
) -> EvaluationReport:
    """Run ``pipeline`` over ``records`` and score it against the gold annotation.

    Parameters
    ----------
    records : sequence of EvalRecord
        From :func:`load_records`.
    pipeline : object with ``align(answer, sources)``, optional
        Defaults to ``citekit.Pipeline()``.
    per_unit : bool
        Align each annotated unit on its own instead of the whole answer.

    Returns
    -------
    EvaluationReport

    Examples
    --------
    >>> from citekit.results import AnswerSpan, SpanCitations
    >>> class NothingSupported:
    ...     def align(self, answer, sources):
    ...         return [SpanCitations(AnswerSpan(answer, 0, len(answer)), (), "unsupported")]
    >>> records = [EvalRecord("a", "Hi.", (), (EvalUnit(0, 3, "Hi.", "unsupported"),)),
    ...            EvalRecord("b", "Yo.", (), (EvalUnit(0, 3, "Yo.", "supported"),))]
    >>> evaluate(records, NothingSupported()).metrics["label_accuracy"]
    0.5
    """
    predictions, seconds = run_pipeline(records, pipeline, per_unit=per_unit)
    return score_predictions(records, predictions, seconds=seconds)
