"""Groundedness (hallucination) metrics over citation results, and convenience calls.

The names and meanings follow the groundedness API of cite-right, so code written
against it keeps working after changing the import to ``citekit``:

* :func:`compute_hallucination_metrics` turns the :class:`~citekit.SpanCitations` of one
  answer into a :class:`HallucinationMetrics` record.
* :func:`is_grounded`, :func:`is_hallucinated`, :func:`check_groundedness` align an
  answer and apply those metrics in one call.
* :func:`annotate_answer` / :func:`format_with_citations` put citation markers
  (``[1]``, ``^1`` or ``[^1]``) after each sentence, and :func:`get_citation_summary`
  describes a result in a few lines.

Confidence of a span
    ``SpanCitations.content_coverage`` — the weighted share of the sentence that its
    evidence covers, the quantity citekit decides the status on (see the status rules in
    the user guide, docs/guide/status.rst) — and, for results that do not carry it (built
    by hand or by other tools), the answer coverage of the best citation
    (``components["answer_coverage"]``). A span without citations has confidence 0. See
    :func:`span_confidence`.
Groundedness score
    The character-weighted mean confidence over the answer, where only grounded spans
    contribute (``supported``, and ``partial`` unless ``include_partial_in_grounded`` is
    off). The hallucination rate is ``1 - groundedness_score``. An empty result counts
    as fully grounded (there is nothing to contradict).

Examples
--------
>>> from citekit.results import AnswerSpan, Citation, SpanCitations
>>> cited = Citation(score=2.0, source_id="report", source_index=0, candidate_index=0,
...                  char_start=0, char_end=17, evidence="Revenue grew 15%.",
...                  components={"answer_coverage": 1.0})
>>> result = [
...     SpanCitations(AnswerSpan("Revenue grew 15%.", 0, 17), (cited,), "supported"),
...     SpanCitations(AnswerSpan("Profits doubled.", 18, 34), (), "unsupported"),
... ]
>>> metrics = compute_hallucination_metrics(result)
>>> round(metrics.groundedness_score, 3), metrics.num_unsupported
(0.515, 1)
>>> format_with_citations("Revenue grew 15%. Profits doubled.", result)
'Revenue grew 15%.[1] Profits doubled.[?]'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from citekit._frozen import refuse_assignment
from citekit._validation import check_bool, check_float, check_str
from citekit.results import STATUSES, AnswerSpan, Citation, FrozenList, SpanCitations

__all__ = [
    "HallucinationConfig",
    "SpanConfidence",
    "HallucinationMetrics",
    "span_confidence",
    "compute_hallucination_metrics",
    "is_grounded",
    "is_hallucinated",
    "check_groundedness",
    "annotate_answer",
    "format_with_citations",
    "get_citation_summary",
]

_MARKER_FORMATS = ("markdown", "superscript", "footnote")


@refuse_assignment
@dataclass(frozen=True)
class HallucinationConfig:
    """Options of :func:`compute_hallucination_metrics`.

    Attributes
    ----------
    weak_citation_threshold : float
        A cited span whose confidence is below this is *weakly supported*. Default 0.4.
    include_partial_in_grounded : bool
        Whether ``partial`` spans count toward the groundedness score (weighted by their
        confidence). Default True.

    Examples
    --------
    >>> HallucinationConfig(weak_citation_threshold=0.5).weak_citation_threshold
    0.5
    >>> HallucinationConfig(weak_citation_threshold=2.0)
    Traceback (most recent call last):
    ...
    ValueError: weak_citation_threshold must be <= 1.0, got 2.0

    It is read-only: assigning a field raises ``FrozenFieldError``, a ``ValueError``.
    """

    weak_citation_threshold: float = 0.4
    include_partial_in_grounded: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "weak_citation_threshold",
            check_float(
                self.weak_citation_threshold, "weak_citation_threshold", minimum=0.0, maximum=1.0
            ),
        )
        check_bool(self.include_partial_in_grounded, "include_partial_in_grounded")

    def model_dump(self) -> dict[str, Any]:
        """The options as a dict (cite-right's name for a configuration's export).

        Examples
        --------
        >>> HallucinationConfig().model_dump()
        {'weak_citation_threshold': 0.4, 'include_partial_in_grounded': True}
        """
        return {
            "weak_citation_threshold": self.weak_citation_threshold,
            "include_partial_in_grounded": self.include_partial_in_grounded,
        }


@dataclass(frozen=True)
class SpanConfidence:
    """Confidence of one answer span.

    Attributes
    ----------
    span : AnswerSpan
    status : str
        ``"supported"``, ``"partial"`` or ``"unsupported"``.
    confidence : float
        :func:`span_confidence` of the span, in ``[0, 1]``.
    is_grounded : bool
        Whether the span counts toward the groundedness score.
    best_citation_score : float or None
        Score of the citation the confidence came from (None without citations).
    source_ids : tuple of str
        Sources cited for the span, in order of first citation.
    unsupported_spans : tuple of (int, int)
        Answer character ranges of this span that no accepted citation covers.

    Examples
    --------
    >>> item = SpanConfidence(AnswerSpan("Hi.", 0, 3), "unsupported", 0.0, False)
    >>> item.source_ids
    ()
    """

    span: AnswerSpan
    status: str
    confidence: float
    is_grounded: bool
    best_citation_score: float | None = None
    source_ids: tuple[str, ...] = ()
    unsupported_spans: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        _freeze_sequences(self, ("source_ids", "unsupported_spans"))


@dataclass(frozen=True)
class HallucinationMetrics:
    """How well one answer is grounded in its sources.

    Ratios are weighted by the characters of each answer span.

    Attributes
    ----------
    groundedness_score : float
        Character-weighted confidence of the grounded spans, in ``[0, 1]``; higher is
        better.
    hallucination_rate : float
        ``1 - groundedness_score``.
    supported_ratio, partial_ratio, unsupported_ratio : float
        Share of the answer's span characters with each status.
    avg_confidence, min_confidence : float
        Mean and minimum span confidence (1.0 for an empty result).
    num_spans, num_supported, num_partial, num_unsupported : int
        Span counts.
    num_weak_citations : int
        Cited spans whose confidence is below the weak threshold.
    span_confidences : tuple of SpanConfidence
        One per span, in answer order.
    unsupported_spans : tuple of AnswerSpan
        Spans with status ``unsupported``.
    weakly_supported_spans : tuple of AnswerSpan
        Cited spans with weak confidence.
    unsupported_char_spans : tuple of (int, int)
        Merged character ranges of the answer not covered by any accepted citation:
        whole unsupported spans plus each span's ``unsupported_spans``.

    Examples
    --------
    >>> compute_hallucination_metrics([]).groundedness_score
    1.0
    """

    groundedness_score: float
    hallucination_rate: float
    supported_ratio: float
    partial_ratio: float
    unsupported_ratio: float
    avg_confidence: float
    min_confidence: float
    num_spans: int
    num_supported: int
    num_partial: int
    num_unsupported: int
    num_weak_citations: int
    span_confidences: tuple[SpanConfidence, ...] = ()
    unsupported_spans: tuple[AnswerSpan, ...] = ()
    weakly_supported_spans: tuple[AnswerSpan, ...] = ()
    unsupported_char_spans: tuple[tuple[int, int], ...] = field(default=())

    def __post_init__(self) -> None:
        _freeze_sequences(
            self,
            ("span_confidences", "unsupported_spans", "weakly_supported_spans",
             "unsupported_char_spans"),
        )


def _freeze_sequences(record: Any, names: tuple[str, ...]) -> None:
    """Keep each of ``names`` as a :class:`~citekit.results.FrozenList` (a tuple that
    equals a list: cite-right documents these collections as lists)."""
    for name in names:
        value = getattr(record, name)
        if type(value) is not FrozenList:
            if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
                raise TypeError(
                    f"{type(record).__name__}.{name} must be a sequence, "
                    f"got {type(value).__name__}"
                )
            object.__setattr__(record, name, FrozenList(value))


def _citation_confidence(citation: Citation) -> float:
    value = float(citation.components.get("answer_coverage", 0.0))
    return min(1.0, max(0.0, value))


def span_confidence(span_citations: SpanCitations) -> float:
    """Confidence that a span is supported, in ``[0, 1]``.

    The span's ``content_coverage`` (weighted share of the span covered by its evidence;
    what citekit's status is decided on) when the pipeline reported it, else
    the best citation's ``components["answer_coverage"]`` (share of the span's tokens the
    alignment matched), clipped to ``[0, 1]``. A span without citations has confidence 0.

    Examples
    --------
    >>> cited = Citation(score=1.0, source_id="s", source_index=0, candidate_index=0,
    ...                  char_start=0, char_end=3, evidence="Hi.",
    ...                  components={"answer_coverage": 0.75})
    >>> span = AnswerSpan("Hi there.", 0, 9)
    >>> span_confidence(SpanCitations(span, (cited,), "partial"))
    0.75
    >>> span_confidence(SpanCitations(span, (cited,), "partial", content_coverage=0.5))
    0.5
    """
    if not isinstance(span_citations, SpanCitations):
        raise TypeError(
            f"span_citations must be a SpanCitations, got {type(span_citations).__name__}"
        )
    if not span_citations.citations:
        return 0.0
    coverage = getattr(span_citations, "content_coverage", None)
    if coverage is not None:
        return min(1.0, max(0.0, float(coverage)))
    return max(_citation_confidence(c) for c in span_citations.citations)


def _check_results(span_citations: Any, name: str = "span_citations") -> list[SpanCitations]:
    if isinstance(span_citations, (str, bytes)) or not isinstance(span_citations, Iterable):
        raise TypeError(
            f"{name} must be a sequence of SpanCitations, got {type(span_citations).__name__}"
        )
    items = list(span_citations)
    for item in items:
        if not isinstance(item, SpanCitations):
            raise TypeError(f"{name} must hold SpanCitations items, got {type(item).__name__}")
    return items


def _source_ids(span_citations: SpanCitations) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c.source_id for c in span_citations.citations))


def _merge_ranges(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[list[int]] = []
    for start, end in sorted(r for r in ranges if r[1] > r[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((s, e) for s, e in merged)


def compute_hallucination_metrics(
    span_citations: Sequence[SpanCitations], *, config: HallucinationConfig | None = None
) -> HallucinationMetrics:
    """Compute groundedness metrics from the citations of one answer.

    Parameters
    ----------
    span_citations : sequence of SpanCitations
        The result of :func:`citekit.align_citations` or ``Pipeline.align``.
    config : HallucinationConfig, optional
        Weak-citation threshold and whether partial spans count as grounded.

    Returns
    -------
    HallucinationMetrics

    Examples
    --------
    >>> weak = Citation(score=0.5, source_id="s", source_index=0, candidate_index=0,
    ...                 char_start=0, char_end=7, evidence="Revenue",
    ...                 components={"answer_coverage": 0.25})
    >>> result = [SpanCitations(AnswerSpan("Revenue fell 3%.", 0, 16), (weak,), "partial")]
    >>> metrics = compute_hallucination_metrics(result)
    >>> metrics.groundedness_score, metrics.num_weak_citations
    (0.25, 1)
    >>> compute_hallucination_metrics(
    ...     result, config=HallucinationConfig(include_partial_in_grounded=False)
    ... ).groundedness_score
    0.0
    """
    items = _check_results(span_citations)
    if config is None:
        config = HallucinationConfig()
    elif not isinstance(config, HallucinationConfig):
        raise TypeError(f"config must be a HallucinationConfig, got {type(config).__name__}")
    if not items:
        return HallucinationMetrics(
            groundedness_score=1.0,
            hallucination_rate=0.0,
            supported_ratio=1.0,
            partial_ratio=0.0,
            unsupported_ratio=0.0,
            avg_confidence=1.0,
            min_confidence=1.0,
            num_spans=0,
            num_supported=0,
            num_partial=0,
            num_unsupported=0,
            num_weak_citations=0,
        )
    status_chars = {status: 0 for status in STATUSES}
    status_counts = {status: 0 for status in STATUSES}
    grounded_weight = 0.0
    confidences: list[SpanConfidence] = []
    weak: list[AnswerSpan] = []
    uncovered: list[tuple[int, int]] = []
    for item in items:
        span = item.answer_span
        length = span.char_end - span.char_start
        confidence = span_confidence(item)
        status_chars[item.status] += length
        status_counts[item.status] += 1
        grounded = item.status == "supported" or (
            item.status == "partial" and config.include_partial_in_grounded
        )
        if grounded:
            grounded_weight += confidence * length
        best_score = None
        if item.citations:
            best = max(item.citations, key=lambda c: (_citation_confidence(c), c.score))
            best_score = best.score
            if confidence < config.weak_citation_threshold:
                weak.append(span)
        if item.status == "unsupported":
            uncovered.append((span.char_start, span.char_end))
        uncovered.extend(item.unsupported_spans)
        confidences.append(
            SpanConfidence(
                span=span,
                status=item.status,
                confidence=confidence,
                is_grounded=grounded,
                best_citation_score=best_score,
                source_ids=_source_ids(item),
                unsupported_spans=item.unsupported_spans,
            )
        )
    total_chars = sum(status_chars.values())
    if total_chars:
        groundedness = grounded_weight / total_chars
        ratios = {status: status_chars[status] / total_chars for status in STATUSES}
    else:  # only empty spans: fall back to counting spans
        groundedness = sum(c.confidence for c in confidences if c.is_grounded) / len(items)
        ratios = {status: status_counts[status] / len(items) for status in STATUSES}
    values = [c.confidence for c in confidences]
    return HallucinationMetrics(
        groundedness_score=groundedness,
        hallucination_rate=1.0 - groundedness,
        supported_ratio=ratios["supported"],
        partial_ratio=ratios["partial"],
        unsupported_ratio=ratios["unsupported"],
        avg_confidence=sum(values) / len(values),
        min_confidence=min(values),
        num_spans=len(items),
        num_supported=status_counts["supported"],
        num_partial=status_counts["partial"],
        num_unsupported=status_counts["unsupported"],
        num_weak_citations=len(weak),
        span_confidences=tuple(confidences),
        unsupported_spans=tuple(c.span for c in confidences if c.status == "unsupported"),
        weakly_supported_spans=tuple(weak),
        unsupported_char_spans=_merge_ranges(uncovered),
    )


# ---------------------------------------------------------------------------------------
# one-call helpers


def _align(
    answer: Any, sources: Any, config: Any, pipeline: Any, align_options: dict[str, Any]
) -> list[SpanCitations]:
    check_str(answer, "answer")
    if pipeline is not None:
        if config is not None or align_options:
            raise ValueError("pass either pipeline or config / alignment options, not both")
        if not callable(getattr(pipeline, "align", None)):
            raise TypeError(
                "pipeline must have an align(answer, sources) method, "
                f"got {type(pipeline).__name__}"
            )
        return list(pipeline.align(answer, sources))
    from citekit.pipeline import align_citations

    return list(align_citations(answer, sources, config=config, **align_options))


def check_groundedness(
    answer: str,
    sources: Sequence[Any],
    *,
    config: Any = None,
    hallucination_config: HallucinationConfig | None = None,
    pipeline: Any = None,
    **align_options: Any,
) -> HallucinationMetrics:
    """Align ``answer`` with ``sources`` and return its groundedness metrics.

    Parameters
    ----------
    answer : str
    sources : sequence of str, SourceDocument or SourceChunk
    config : CitationConfig, optional
        Passed to :func:`citekit.align_citations`.
    hallucination_config : HallucinationConfig, optional
    pipeline : Pipeline, optional
        Use this (already configured) pipeline instead of ``config``.
    **align_options
        Further keyword arguments of :func:`citekit.align_citations` (for example
        ``tokenizer``).

    Returns
    -------
    HallucinationMetrics

    Examples
    --------
    >>> metrics = check_groundedness("Revenue grew 15%.", ["Revenue grew 15% in Q4."])
    >>> metrics.num_supported
    1
    """
    if hallucination_config is not None and not isinstance(
        hallucination_config, HallucinationConfig
    ):
        # checked before aligning, under this function's name for it
        raise TypeError(
            "hallucination_config must be a HallucinationConfig, "
            f"got {type(hallucination_config).__name__}"
        )
    results = _align(answer, sources, config, pipeline, align_options)
    return compute_hallucination_metrics(results, config=hallucination_config)


def is_grounded(
    answer: str,
    sources: Sequence[Any],
    *,
    threshold: float = 0.5,
    config: Any = None,
    hallucination_config: HallucinationConfig | None = None,
    pipeline: Any = None,
    **align_options: Any,
) -> bool:
    """Whether the answer's groundedness score reaches ``threshold``.

    Parameters are those of :func:`check_groundedness`, plus ``threshold`` (default 0.5,
    in ``[0, 1]``).

    Examples
    --------
    >>> is_grounded("Revenue grew 15% in Q4.", ["Annual report: Revenue grew 15% in Q4 2024."])
    True
    >>> is_grounded("The company plans to colonize Mars.", ["Revenue grew 15% in Q4."])
    False
    """
    threshold = check_float(threshold, "threshold", minimum=0.0, maximum=1.0)
    metrics = check_groundedness(
        answer,
        sources,
        config=config,
        hallucination_config=hallucination_config,
        pipeline=pipeline,
        **align_options,
    )
    return metrics.groundedness_score >= threshold


def is_hallucinated(
    answer: str,
    sources: Sequence[Any],
    *,
    threshold: float = 0.5,
    config: Any = None,
    hallucination_config: HallucinationConfig | None = None,
    pipeline: Any = None,
    **align_options: Any,
) -> bool:
    """Whether the answer's hallucination rate exceeds ``threshold``.

    Parameters are those of :func:`check_groundedness`, plus ``threshold`` (default 0.5,
    in ``[0, 1]``).

    Examples
    --------
    >>> is_hallucinated("The company plans to colonize Mars.", ["Revenue grew 15% in Q4."])
    True
    """
    threshold = check_float(threshold, "threshold", minimum=0.0, maximum=1.0)
    metrics = check_groundedness(
        answer,
        sources,
        config=config,
        hallucination_config=hallucination_config,
        pipeline=pipeline,
        **align_options,
    )
    return metrics.hallucination_rate > threshold


def _marker(numbers: Sequence[int], format: str) -> str:
    if format == "superscript":
        return "".join(f"^{n}" for n in numbers)
    if format == "footnote":
        return "".join(f"[^{n}]" for n in numbers)
    return "".join(f"[{n}]" for n in numbers)


def format_with_citations(
    answer: str,
    span_citations: Sequence[SpanCitations],
    *,
    format: str = "markdown",
    include_unsupported: bool = True,
) -> str:
    """Insert citation markers after each cited span of ``answer``.

    Sources are numbered 1, 2, ... in the order they are first cited. The marker goes
    after the span's last non-blank character.

    Parameters
    ----------
    answer : str
        The answer the results were computed for.
    span_citations : sequence of SpanCitations
    format : {"markdown", "superscript", "footnote"}
        ``[1][2]``, ``^1^2`` or ``[^1][^2]``.
    include_unsupported : bool
        Mark spans without citations with ``[?]``.

    Returns
    -------
    str

    Examples
    --------
    >>> cited = Citation(score=1.0, source_id="report", source_index=0, candidate_index=0,
    ...                  char_start=0, char_end=3, evidence="Hi.")
    >>> result = [SpanCitations(AnswerSpan("Hi. ", 0, 4), (cited,), "supported"),
    ...           SpanCitations(AnswerSpan("Bye.", 4, 8), (), "unsupported")]
    >>> format_with_citations("Hi. Bye.", result, format="footnote")
    'Hi.[^1] Bye.[?]'
    >>> format_with_citations("Hi. Bye.", result, format="superscript", include_unsupported=False)
    'Hi.^1 Bye.'
    """
    check_str(answer, "answer")
    items = _check_results(span_citations)
    check_str(format, "format")
    if format not in _MARKER_FORMATS:
        raise ValueError(f"format must be one of {_MARKER_FORMATS}, got {format!r}")
    check_bool(include_unsupported, "include_unsupported")
    for item in items:
        if item.answer_span.char_end > len(answer):
            raise ValueError(
                f"span_citations: span ends at {item.answer_span.char_end}, "
                f"past the end of answer ({len(answer)} characters)"
            )
    numbers: dict[str, int] = {}
    for item in items:
        for citation in item.citations:
            numbers.setdefault(citation.source_id, len(numbers) + 1)
    insertions: list[tuple[int, str]] = []
    for item in items:
        span = item.answer_span
        if item.citations:
            marker = _marker(sorted({numbers[c.source_id] for c in item.citations}), format)
        elif include_unsupported:
            marker = "[?]"
        else:
            continue
        position = span.char_end
        while position > span.char_start and answer[position - 1].isspace():
            position -= 1
        insertions.append((position, marker))
    pieces, previous = [], 0
    for position, marker in sorted(insertions, key=lambda entry: entry[0]):
        pieces.append(answer[previous:position])
        pieces.append(marker)
        previous = position
    pieces.append(answer[previous:])
    return "".join(pieces)


def annotate_answer(
    answer: str,
    sources: Sequence[Any],
    *,
    config: Any = None,
    pipeline: Any = None,
    format: str = "markdown",
    include_unsupported: bool = True,
    **align_options: Any,
) -> str:
    """Align ``answer`` with ``sources`` and add inline citation markers.

    See :func:`format_with_citations` for ``format`` and ``include_unsupported`` and
    :func:`check_groundedness` for the other parameters.

    Examples
    --------
    >>> from citekit.results import SourceDocument
    >>> annotate_answer("Revenue grew 15%. Profits doubled.",
    ...                 [SourceDocument(id="report", text="Revenue grew 15% in Q4.")])
    'Revenue grew 15%.[1] Profits doubled.[?]'
    """
    results = _align(answer, sources, config, pipeline, align_options)
    return format_with_citations(
        answer, results, format=format, include_unsupported=include_unsupported
    )


def get_citation_summary(span_citations: Sequence[SpanCitations]) -> str:
    """Describe a result in a few human-readable lines.

    Examples
    --------
    >>> cited = Citation(score=1.0, source_id="report", source_index=0, candidate_index=0,
    ...                  char_start=0, char_end=3, evidence="Hi.")
    >>> print(get_citation_summary([
    ...     SpanCitations(AnswerSpan("Hi.", 0, 3), (cited,), "supported"),
    ...     SpanCitations(AnswerSpan("Bye.", 4, 8), (), "unsupported")]))
    Citation Summary:
    - 1 of 2 spans fully supported
    - 1 spans unsupported
    - Sources cited: report
    >>> get_citation_summary([])
    'Citation Summary: No spans to analyze'
    """
    items = _check_results(span_citations)
    if not items:
        return "Citation Summary: No spans to analyze"
    counts = {status: sum(item.status == status for item in items) for status in STATUSES}
    lines = ["Citation Summary:", f"- {counts['supported']} of {len(items)} spans fully supported"]
    if counts["partial"]:
        lines.append(f"- {counts['partial']} spans partially supported")
    if counts["unsupported"]:
        lines.append(f"- {counts['unsupported']} spans unsupported")
    conflicts = sum(len(c.conflicts) for item in items for c in item.citations)
    if conflicts:
        lines.append(f"- {conflicts} conflicting values (numbers, amounts, dates)")
    sources = sorted({c.source_id for item in items for c in item.citations})
    if sources:
        lines.append(f"- Sources cited: {', '.join(sources)}")
    return "\n".join(lines)
