"""Fact verification: every claim of an answer checked against the sources on its own.

:func:`verify_facts` segments the answer into spans (sentences), decomposes each span
into claims (:mod:`citekit.claims`), and aligns every claim as one answer span of the
citation pipeline (:class:`~citekit.pipeline.Pipeline`), so a claim gets the pipeline's
evidence with exact offsets in the sources, its score components and its conflicting
values (numbers, percentages, amounts, dates, and whatever other kinds the pipeline
reports). Each claim then gets a verdict:

- its **confidence** is the pipeline's ``content_coverage`` of the claim: the weighted
  share of the claim's content that its evidence covers (0 without a citation);
- ``"verified"`` when the confidence reaches ``verified_coverage_threshold`` (0.6) and no
  citation of the claim contradicts one of its values;
- ``"partial"`` otherwise when the confidence reaches ``partial_coverage_threshold`` (0.3);
- ``"unverified"`` otherwise.

:func:`verify_facts_many` verifies several answers against one corpus in one batch of the
pipeline (as :meth:`~citekit.pipeline.Pipeline.align_many` does), with the same results.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from citekit._frozen import refuse_assignment
from citekit._reading import segment_spans
from citekit._validation import check_float, check_str
from citekit.claims import Claim, SimpleClaimDecomposer
from citekit.config import CitationConfig
from citekit.pipeline import Pipeline, check_backend
from citekit.results import (
    AnswerSpan,
    Citation,
    Conflict,
    SpanCitations,
    _check_type,
    _Record,
)

__all__ = [
    "VERDICTS",
    "FactVerificationConfig",
    "ClaimVerification",
    "FactVerificationMetrics",
    "verify_facts",
    "verify_facts_many",
]

VERDICTS = ("verified", "partial", "unverified")


@refuse_assignment
@dataclass(frozen=True)
class FactVerificationConfig(_Record):
    """Thresholds of the claim verdicts (frozen, validated).

    Parameters
    ----------
    verified_coverage_threshold : float, default 0.6
        Confidence (covered share of the claim's content) from which a claim without
        conflicting values is ``"verified"``.
    partial_coverage_threshold : float, default 0.3
        Confidence from which a claim is at least ``"partial"``; below it
        ``"unverified"``. At most ``verified_coverage_threshold``.
    citation_config : CitationConfig, optional
        Configuration of the alignment; by default ``CitationConfig(top_k=3,
        min_answer_coverage=0.2, supported_answer_coverage=verified_coverage_threshold)``
        (:meth:`citation_settings`).

    Examples
    --------
    >>> FactVerificationConfig(verified_coverage_threshold=0.8).citation_settings().top_k
    3
    >>> FactVerificationConfig(partial_coverage_threshold=0.9)
    Traceback (most recent call last):
    ...
    ValueError: FactVerificationConfig.partial_coverage_threshold must be <= \
verified_coverage_threshold (0.6), got 0.9
    """

    verified_coverage_threshold: float = 0.6
    partial_coverage_threshold: float = 0.3
    citation_config: CitationConfig | None = None

    def __post_init__(self) -> None:
        for name in ("verified_coverage_threshold", "partial_coverage_threshold"):
            value = check_float(
                getattr(self, name), f"FactVerificationConfig.{name}", minimum=0.0, maximum=1.0
            )
            object.__setattr__(self, name, value)
        if self.partial_coverage_threshold > self.verified_coverage_threshold:
            raise ValueError(
                "FactVerificationConfig.partial_coverage_threshold must be <= "
                f"verified_coverage_threshold ({self.verified_coverage_threshold}), "
                f"got {self.partial_coverage_threshold}"
            )
        if isinstance(self.citation_config, dict):
            object.__setattr__(
                self, "citation_config", CitationConfig.from_dict(self.citation_config)
            )
        _check_type(self, "citation_config", CitationConfig, allow_none=True)

    def citation_settings(self) -> CitationConfig:
        """The :class:`~citekit.config.CitationConfig` the claims are aligned with.

        Examples
        --------
        >>> FactVerificationConfig().citation_settings().supported_answer_coverage
        0.6
        """
        if self.citation_config is not None:
            return self.citation_config
        return CitationConfig(
            top_k=3,
            min_answer_coverage=0.2,
            supported_answer_coverage=self.verified_coverage_threshold,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-compatible data (``citation_config`` as a dict or ``None``).

        Examples
        --------
        >>> FactVerificationConfig().to_dict()["citation_config"] is None
        True
        """
        config = self.citation_config
        return {
            "verified_coverage_threshold": self.verified_coverage_threshold,
            "partial_coverage_threshold": self.partial_coverage_threshold,
            "citation_config": None if config is None else config.to_dict(),
        }

    def model_dump(self) -> dict[str, Any]:
        """The same as :meth:`to_dict` (cite-right's name).

        Examples
        --------
        >>> FactVerificationConfig().model_dump()["verified_coverage_threshold"]
        0.6
        """
        return self.to_dict()


@dataclass(frozen=True)
class ClaimVerification(_Record):
    """The verdict on one claim, with its evidence.

    Attributes
    ----------
    claim : Claim
        The claim, with its offsets in the answer.
    status : str
        ``"verified"``, ``"partial"`` or ``"unverified"`` (rules in :mod:`citekit.facts`).
    confidence : float
        The covered share of the claim's content, in ``[0, 1]``.
    best_citation : Citation or None
        The claim's best citation by score (``all_citations[0]``).
    all_citations : list of Citation
        The claim's citations in score order; offsets index the source texts, and
        ``answer_char_start`` / ``answer_char_end`` the answer.
    source_ids : list of str
        The ids of the sources cited, in the order of their first citation.
    conflicts : list of Conflict
        Values of the claim that its citations contradict (citekit's addition).

    Examples
    --------
    >>> span = AnswerSpan(text="Hi.", char_start=0, char_end=3)
    >>> ClaimVerification(Claim("Hi.", 0, 3, span), "unverified", 0.0).all_citations
    []
    """

    claim: Claim
    status: str
    confidence: float
    best_citation: Citation | None = None
    all_citations: list[Citation] = field(default_factory=list)
    source_ids: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)

    def __post_init__(self) -> None:
        if isinstance(self.claim, dict):
            object.__setattr__(self, "claim", Claim.from_dict(self.claim))
        _check_type(self, "claim", Claim)
        if self.status not in VERDICTS:
            raise ValueError(
                f"ClaimVerification.status must be one of {VERDICTS}, got {self.status!r}"
            )
        confidence = check_float(
            self.confidence, "ClaimVerification.confidence", minimum=0.0, maximum=1.0
        )
        object.__setattr__(self, "confidence", confidence)
        if isinstance(self.best_citation, dict):
            object.__setattr__(self, "best_citation", Citation.from_dict(self.best_citation))
        _check_type(self, "best_citation", Citation, allow_none=True)
        for name, kind in (("all_citations", Citation), ("conflicts", Conflict)):
            items = [kind.from_dict(v) if isinstance(v, dict) else v for v in getattr(self, name)]
            for position, item in enumerate(items):
                if not isinstance(item, kind):
                    raise TypeError(
                        f"ClaimVerification.{name}[{position}] must be a {kind.__name__}, "
                        f"got {type(item).__name__}"
                    )
            object.__setattr__(self, name, items)
        object.__setattr__(self, "source_ids", [str(s) for s in self.source_ids])

    @property
    def contradicted(self) -> bool:
        """Whether a citation contradicts a value of the claim.

        Examples
        --------
        >>> span = AnswerSpan(text="Hi.", char_start=0, char_end=3)
        >>> ClaimVerification(Claim("Hi.", 0, 3, span), "unverified", 0.0).contradicted
        False
        """
        return bool(self.conflicts)

    def model_dump(self) -> dict[str, Any]:
        """The same as :meth:`to_dict` (cite-right's name)."""
        return self.to_dict()


@dataclass(frozen=True)
class FactVerificationMetrics(_Record):
    """The verdicts on all claims of an answer, and their summary.

    Attributes
    ----------
    num_claims, num_verified, num_partial, num_unverified : int
        How many claims, and how many got each verdict.
    verification_rate : float
        ``num_verified / num_claims`` (1.0 without claims).
    avg_confidence, min_confidence : float
        Mean and minimum confidence over the claims (1.0 without claims).
    claim_verifications : list of ClaimVerification
        One per claim, in answer order.
    verified_claims, unverified_claims, partial_claims : list of Claim
        The claims of each verdict, in answer order.

    Examples
    --------
    >>> metrics = FactVerificationMetrics.of([])
    >>> metrics.num_claims, metrics.verification_rate
    (0, 1.0)
    """

    num_claims: int
    num_verified: int
    num_partial: int
    num_unverified: int
    verification_rate: float
    avg_confidence: float
    min_confidence: float
    claim_verifications: list[ClaimVerification] = field(default_factory=list)
    verified_claims: list[Claim] = field(default_factory=list)
    unverified_claims: list[Claim] = field(default_factory=list)
    partial_claims: list[Claim] = field(default_factory=list)

    def __post_init__(self) -> None:
        verifications = [
            ClaimVerification.from_dict(v) if isinstance(v, dict) else v
            for v in self.claim_verifications
        ]
        object.__setattr__(self, "claim_verifications", verifications)
        for name in ("verified_claims", "unverified_claims", "partial_claims"):
            claims = [Claim.from_dict(c) if isinstance(c, dict) else c for c in getattr(self, name)]
            object.__setattr__(self, name, claims)

    @classmethod
    def of(cls, verifications: Sequence[ClaimVerification]) -> "FactVerificationMetrics":
        """The summary of ``verifications`` (in answer order).

        Examples
        --------
        >>> span = AnswerSpan(text="Hi.", char_start=0, char_end=3)
        >>> v = ClaimVerification(Claim("Hi.", 0, 3, span), "partial", 0.5)
        >>> FactVerificationMetrics.of([v]).num_partial
        1
        """
        verifications = list(verifications)
        for position, item in enumerate(verifications):
            if not isinstance(item, ClaimVerification):
                raise TypeError(
                    f"verifications[{position}] must be a ClaimVerification, "
                    f"got {type(item).__name__}"
                )
        by_verdict: dict[str, list[Claim]] = {verdict: [] for verdict in VERDICTS}
        for item in verifications:
            by_verdict[item.status].append(item.claim)
        confidences = [item.confidence for item in verifications]
        n_claims = len(verifications)
        return cls(
            num_claims=n_claims,
            num_verified=len(by_verdict["verified"]),
            num_partial=len(by_verdict["partial"]),
            num_unverified=len(by_verdict["unverified"]),
            verification_rate=len(by_verdict["verified"]) / n_claims if n_claims else 1.0,
            avg_confidence=float(np.mean(confidences)) if n_claims else 1.0,
            min_confidence=min(confidences) if n_claims else 1.0,
            claim_verifications=verifications,
            verified_claims=by_verdict["verified"],
            unverified_claims=by_verdict["unverified"],
            partial_claims=by_verdict["partial"],
        )

    def model_dump(self) -> dict[str, Any]:
        """The same as :meth:`to_dict` (cite-right's name)."""
        return self.to_dict()


def verify_facts(
    answer: str,
    sources: Any,
    *,
    config: FactVerificationConfig | None = None,
    claim_decomposer: Any = None,
    answer_segmenter: Any = None,
    source_segmenter: Any = None,
    tokenizer: Any = None,
    embedder: Any = None,
    backend: str = "auto",
    pipeline: Pipeline | None = None,
) -> FactVerificationMetrics:
    """Verify every claim of ``answer`` against ``sources``.

    Parameters
    ----------
    answer : str
        The generated answer.
    sources : Corpus or sequence of str, SourceDocument, SourceChunk or mapping
        What to verify against; a prepared :class:`~citekit.corpus.Corpus`
        (:meth:`Pipeline.prepare <citekit.pipeline.Pipeline.prepare>`) is reused as is.
    config : FactVerificationConfig, optional
        Verdict thresholds and the alignment configuration.
    claim_decomposer : ClaimDecomposer, optional
        Splits answer spans into claims (default :class:`~citekit.claims.SimpleClaimDecomposer`,
        one claim per span). Its claims must be in order and not overlap.
    answer_segmenter, source_segmenter, tokenizer, embedder : optional
        Stages of the pipeline (see :class:`~citekit.pipeline.Pipeline`).
    backend : {"auto", "python", "rust", "numba"}, default "auto"
        Accepted for cite-right compatibility; every value runs citekit's kernels.
    pipeline : Pipeline, optional
        An already configured pipeline to align with (its configuration, tokenizer,
        segmenters and embedder), instead of ``config.citation_config`` and the stage
        keywords.

    Returns
    -------
    FactVerificationMetrics
        Per-claim verdicts with their evidence, and the summary.

    Raises
    ------
    TypeError, ValueError
        For an answer that is not a str, malformed sources or stages, a decomposer whose
        claims overlap or leave their span, or ``pipeline`` given with stage keywords.

    Examples
    --------
    >>> sources = ["Revenue grew 15% in 2024. The company hired 200 engineers."]
    >>> answer = "Revenue grew 9% in 2024. The company hired 200 engineers."
    >>> metrics = verify_facts(answer, sources)
    >>> [v.status for v in metrics.claim_verifications]
    ['partial', 'verified']
    >>> conflict = metrics.claim_verifications[0].conflicts[0]
    >>> conflict.answer_text, conflict.evidence_text
    ('9%', '15%')
    >>> best = metrics.claim_verifications[1].best_citation
    >>> sources[0][best.char_start:best.char_end]
    'The company hired 200 engineers'
    """
    check_str(answer, "answer")
    return verify_facts_many(
        [answer],
        sources,
        config=config,
        claim_decomposer=claim_decomposer,
        answer_segmenter=answer_segmenter,
        source_segmenter=source_segmenter,
        tokenizer=tokenizer,
        embedder=embedder,
        backend=backend,
        pipeline=pipeline,
    )[0]


def verify_facts_many(
    answers: Iterable[str],
    sources: Any,
    *,
    config: FactVerificationConfig | None = None,
    claim_decomposer: Any = None,
    answer_segmenter: Any = None,
    source_segmenter: Any = None,
    tokenizer: Any = None,
    embedder: Any = None,
    backend: str = "auto",
    pipeline: Pipeline | None = None,
) -> list[FactVerificationMetrics]:
    """Verify the claims of several answers against one corpus, in one batch.

    Parameters are those of :func:`verify_facts`, with ``answers`` an iterable of str;
    the sources are prepared once. The results equal calling :func:`verify_facts` on
    each answer.

    Returns
    -------
    list of FactVerificationMetrics
        One per answer, in order.

    Examples
    --------
    >>> pipe = Pipeline()
    >>> corpus = pipe.prepare(["Water boils at 100 degrees.", "Ice melts at 0 degrees."])
    >>> [m.num_verified for m in verify_facts_many(
    ...     ["Ice melts at 0 degrees.", "Water boils at 50 degrees."], corpus, pipeline=pipe)]
    [1, 0]
    """
    if isinstance(answers, str) or not isinstance(answers, Iterable):
        raise TypeError(f"answers must be an iterable of str, got {type(answers).__name__}")
    answers = list(answers)
    for position, answer in enumerate(answers):
        check_str(answer, f"answers[{position}]")
    if config is None:
        config = FactVerificationConfig()
    if not isinstance(config, FactVerificationConfig):
        raise TypeError(f"config must be a FactVerificationConfig, got {type(config).__name__}")
    check_backend(backend)
    decomposer = SimpleClaimDecomposer() if claim_decomposer is None else claim_decomposer
    if not callable(getattr(decomposer, "decompose", None)):
        raise TypeError(
            "claim_decomposer must have a decompose(span) method, "
            f"got {type(decomposer).__name__}"
        )
    stages = {
        "answer_segmenter": answer_segmenter,
        "source_segmenter": source_segmenter,
        "tokenizer": tokenizer,
        "embedder": embedder,
    }
    if pipeline is not None:
        if not isinstance(pipeline, Pipeline):
            raise TypeError(f"pipeline must be a Pipeline, got {type(pipeline).__name__}")
        given = [name for name, stage in stages.items() if stage is not None]
        if config.citation_config is not None:
            given.insert(0, "config.citation_config")
        if given:
            raise ValueError(f"pass either pipeline or {given[0]}, not both")
        base = pipeline
    else:
        base = Pipeline(config.citation_settings(), **stages)

    segmenter = base._answer_segmenter()
    claims = [
        _claims_of(answer, segment_spans(segmenter, answer, name="answer_segmenter"), decomposer)
        for answer in answers
    ]
    # the claims are the answer spans the pipeline aligns: one SpanCitations per claim,
    # with offsets in the answer itself
    claim_pipeline = copy.copy(base)
    claim_pipeline.answer_segmenter = _FixedSpans(
        {
            answer: [(c.char_start, c.char_end) for c in found]
            for answer, found in zip(answers, claims)
        }
    )
    aligned = claim_pipeline.align_many(answers, sources)
    results = []
    for found, spans in zip(claims, aligned):
        if len(spans) != len(found):  # (a pipeline stage dropped a claim: never expected)
            raise RuntimeError("the pipeline returned another number of spans than claims")
        results.append(
            FactVerificationMetrics.of(
                [_verdict(claim, span, config) for claim, span in zip(found, spans)]
            )
        )
    return results


class _FixedSpans:
    """An answer segmenter that gives the claims' spans of the answers it knows."""

    def __init__(self, spans: dict[str, list[tuple[int, int]]]) -> None:
        self.spans = spans

    def segment(self, text: str) -> list[tuple[int, int]]:
        return self.spans[text]


def _claims_of(answer: str, spans: np.ndarray, decomposer: Any) -> list[Claim]:
    """The claims of ``answer`` whose segments are ``spans``, checked: inside their span,
    non-empty, in order, not overlapping."""
    claims: list[Claim] = []
    end_of_previous = 0
    for sentence_index, (start, end) in enumerate(spans.tolist()):
        span = AnswerSpan(answer[start:end], start, end, sentence_index=sentence_index)
        found = decomposer.decompose(span)
        if not isinstance(found, (list, tuple)):
            raise TypeError(
                f"claim_decomposer.decompose must return a list of Claim, got "
                f"{type(found).__name__}"
            )
        for claim in found:
            if not isinstance(claim, Claim):
                raise TypeError(
                    f"claim_decomposer.decompose must return Claim records, got "
                    f"{type(claim).__name__}"
                )
            if not start <= claim.char_start <= claim.char_end <= end:
                raise ValueError(
                    f"claim_decomposer returned a claim outside its span ({start}, {end}): "
                    f"({claim.char_start}, {claim.char_end})"
                )
            if answer[claim.char_start:claim.char_end] != claim.text:
                raise ValueError(
                    "claim_decomposer returned a claim whose text is not the answer's at "
                    f"({claim.char_start}, {claim.char_end})"
                )
            if claim.char_start == claim.char_end or claim.char_start < end_of_previous:
                raise ValueError(
                    f"claim_decomposer's claims must be non-empty, ordered and not overlap; "
                    f"got ({claim.char_start}, {claim.char_end}) after {end_of_previous}"
                )
            end_of_previous = claim.char_end
            claims.append(claim)
    return claims


def _verdict(
    claim: Claim, result: SpanCitations, config: FactVerificationConfig
) -> ClaimVerification:
    """The verdict on ``claim`` from its aligned span."""
    citations = list(result.citations)
    confidence = (result.content_coverage or 0.0) if citations else 0.0
    conflicts: list[Conflict] = []
    for citation in citations:
        conflicts.extend(c for c in citation.conflicts if c not in conflicts)
    if confidence >= config.verified_coverage_threshold and not conflicts:
        status = "verified"
    elif confidence >= config.partial_coverage_threshold:
        status = "partial"
    else:
        status = "unverified"
    return ClaimVerification(
        claim=claim,
        status=status,
        confidence=confidence,
        best_citation=citations[0] if citations else None,
        all_citations=citations,
        source_ids=list(dict.fromkeys(c.source_id for c in citations)),
        conflicts=conflicts,
    )
