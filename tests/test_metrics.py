"""Tests of the groundedness metrics and convenience calls (citekit.metrics)."""

from __future__ import annotations

import importlib.util
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.metrics import (
    HallucinationConfig,
    HallucinationMetrics,
    annotate_answer,
    check_groundedness,
    compute_hallucination_metrics,
    format_with_citations,
    get_citation_summary,
    is_grounded,
    is_hallucinated,
    span_confidence,
)
from citekit.results import AnswerSpan, Citation, Conflict, SourceDocument, SpanCitations

HAS_PIPELINE = importlib.util.find_spec("citekit.pipeline") is not None


def cite(source_id="s", coverage=1.0, score=1.0, conflicts=()):
    return Citation(
        score=score,
        source_id=source_id,
        source_index=0,
        candidate_index=0,
        char_start=0,
        char_end=2,
        evidence="ab",
        components={"answer_coverage": coverage},
        conflicts=conflicts,
    )


def span(answer, start, end, status, citations=(), unsupported=()):
    return SpanCitations(
        AnswerSpan(answer[start:end], start, end), tuple(citations), status, tuple(unsupported)
    )


ANSWER = "Revenue grew 15%. Costs fell 2%. Mars is red."  # spans of 17, 14, 12 characters


def three_spans():
    return [
        span(ANSWER, 0, 17, "supported", [cite("a", 0.9, 2.0), cite("b", 1.0, 1.5)]),
        span(ANSWER, 18, 32, "partial", [cite("b", 0.3)], unsupported=[(24, 28)]),
        span(ANSWER, 33, 45, "unsupported"),
    ]


# ------------------------------------------------------------------------------ compute


def test_metrics_of_a_known_result():
    m = compute_hallucination_metrics(three_spans())
    total = 17 + 14 + 12
    assert m.groundedness_score == pytest.approx((1.0 * 17 + 0.3 * 14) / total)
    assert m.hallucination_rate == pytest.approx(1 - m.groundedness_score)
    assert (m.supported_ratio, m.partial_ratio, m.unsupported_ratio) == pytest.approx(
        (17 / total, 14 / total, 12 / total)
    )
    assert (m.num_spans, m.num_supported, m.num_partial, m.num_unsupported) == (3, 1, 1, 1)
    assert m.avg_confidence == pytest.approx((1.0 + 0.3 + 0.0) / 3) and m.min_confidence == 0.0
    assert m.num_weak_citations == 1 and [s.text for s in m.weakly_supported_spans] == [
        "Costs fell 2%."
    ]
    assert [s.text for s in m.unsupported_spans] == ["Mars is red."]
    assert m.unsupported_char_spans == ((24, 28), (33, 45))
    first = m.span_confidences[0]
    # the confidence comes from the best-covering citation, whose score is reported
    assert (first.confidence, first.best_citation_score, first.source_ids) == (1.0, 1.5, ("a", "b"))
    assert [c.is_grounded for c in m.span_confidences] == [True, True, False]


def test_partial_spans_can_be_excluded_and_weak_threshold_moves():
    config = HallucinationConfig(weak_citation_threshold=0.95, include_partial_in_grounded=False)
    m = compute_hallucination_metrics(three_spans(), config=config)
    assert m.groundedness_score == pytest.approx(17 / 43)
    assert m.num_weak_citations == 1  # partial (0.3); the supported span's best is 1.0
    assert [c.is_grounded for c in m.span_confidences] == [True, False, False]


def test_empty_and_zero_length_results():
    m = compute_hallucination_metrics([])
    assert (m.groundedness_score, m.hallucination_rate, m.num_spans) == (1.0, 0.0, 0)
    assert m.span_confidences == () and m.unsupported_char_spans == ()
    empty_spans = [span("", 0, 0, "supported", [cite()]), span("", 0, 0, "unsupported")]
    m = compute_hallucination_metrics(empty_spans)
    assert m.groundedness_score == 0.5 and m.supported_ratio == 0.5


def test_confidence_is_clipped_and_missing_coverage_is_zero():
    over = Citation(
        score=1.0,
        source_id="s",
        source_index=0,
        candidate_index=0,
        char_start=0,
        char_end=1,
        evidence="x",
        components={"answer_coverage": 1.7},
    )
    bare = Citation(
        score=3.0,
        source_id="s",
        source_index=0,
        candidate_index=0,
        char_start=0,
        char_end=1,
        evidence="x",
    )
    assert span_confidence(span("ab", 0, 2, "supported", [over])) == 1.0
    assert span_confidence(span("ab", 0, 2, "partial", [bare])) == 0.0
    assert span_confidence(span("ab", 0, 2, "unsupported")) == 0.0
    # the span-level content coverage, when reported, is the confidence
    reported = SpanCitations(AnswerSpan("ab", 0, 2), (over,), "partial", content_coverage=0.4)
    assert span_confidence(reported) == 0.4
    assert compute_hallucination_metrics([reported]).groundedness_score == 0.4
    with pytest.raises(TypeError, match="span_citations"):
        span_confidence("ab")


def test_argument_errors_name_the_argument():
    with pytest.raises(TypeError, match="span_citations"):
        compute_hallucination_metrics("text")
    with pytest.raises(TypeError, match="span_citations"):
        compute_hallucination_metrics([1, 2])
    with pytest.raises(TypeError, match="config"):
        compute_hallucination_metrics([], config={"weak_citation_threshold": 0.1})
    with pytest.raises(ValueError, match="weak_citation_threshold"):
        HallucinationConfig(weak_citation_threshold=-0.1)
    with pytest.raises(TypeError, match="include_partial_in_grounded"):
        HallucinationConfig(include_partial_in_grounded="yes")


@st.composite
def results(draw):
    answer = draw(st.text(max_size=40))
    cuts = sorted(draw(st.lists(st.integers(0, len(answer)), min_size=1, max_size=6, unique=True)))
    items = []
    for start, end in zip(cuts, cuts[1:]):
        status = draw(st.sampled_from(["supported", "partial", "unsupported"]))
        citations = [] if status == "unsupported" else [cite(coverage=draw(st.floats(0, 1)))]
        items.append(span(answer, start, end, status, citations))
    return answer, items


@settings(max_examples=80)
@given(results())
def test_metric_ranges_and_ratio_sums(data):
    _, items = data
    m = compute_hallucination_metrics(items)
    assert isinstance(m, HallucinationMetrics)
    assert 0.0 <= m.groundedness_score <= 1.0 + 1e-12
    assert m.hallucination_rate == pytest.approx(1.0 - m.groundedness_score)
    assert m.supported_ratio + m.partial_ratio + m.unsupported_ratio == pytest.approx(1.0)
    assert m.num_supported + m.num_partial + m.num_unsupported == m.num_spans == len(items)
    for start, end in m.unsupported_char_spans:
        assert 0 <= start < end


# ------------------------------------------------------------------------------ markers


def test_markers_in_every_format():
    items = three_spans()
    assert (
        format_with_citations(ANSWER, items)
        == "Revenue grew 15%.[1][2] Costs fell 2%.[2] Mars is red.[?]"
    )
    assert format_with_citations(ANSWER, items, format="superscript") == (
        "Revenue grew 15%.^1^2 Costs fell 2%.^2 Mars is red.[?]"
    )
    assert format_with_citations(ANSWER, items, format="footnote", include_unsupported=False) == (
        "Revenue grew 15%.[^1][^2] Costs fell 2%.[^2] Mars is red."
    )


def test_marker_goes_before_trailing_white_space_and_keeps_unicode():
    answer = "Ünïcode 🙂 works.\n\nNext 文 line.  "
    cut = answer.index("Next")
    items = [
        span(answer, 0, cut, "supported", [cite("x")]),
        span(answer, cut, len(answer), "partial", [cite("y")]),
    ]
    assert format_with_citations(answer, items) == "Ünïcode 🙂 works.[1]\n\nNext 文 line.[2]  "


def test_format_errors():
    with pytest.raises(ValueError, match="format"):
        format_with_citations(ANSWER, three_spans(), format="html")
    with pytest.raises(TypeError, match="format"):
        format_with_citations(ANSWER, three_spans(), format=None)
    with pytest.raises(TypeError, match="answer"):
        format_with_citations(b"bytes", [])
    with pytest.raises(TypeError, match="include_unsupported"):
        format_with_citations(ANSWER, [], include_unsupported=1)
    with pytest.raises(ValueError, match="span_citations"):
        format_with_citations("short", three_spans())
    assert format_with_citations("", []) == ""


@settings(max_examples=80)
@given(results(), st.sampled_from(["markdown", "superscript", "footnote"]))
def test_removing_markers_gives_back_the_answer(data, marker_format):
    answer, items = data
    annotated = format_with_citations(answer, items, format=marker_format)
    if not re.search(r"[\[\]^0-9]", answer):  # markers are made of these characters only
        assert re.sub(r"\[\?\]|\[\^[0-9]+\]|\^[0-9]+|\[[0-9]+\]", "", annotated) == answer
    assert annotated.count("[?]") >= sum(1 for s in items if not s.citations)
    assert (
        format_with_citations(
            answer, [s for s in items if not s.citations], include_unsupported=False
        )
        == answer
    )


def test_summary_mentions_counts_sources_and_conflicts():
    conflict = Conflict("percent", "9%", 0, 2, "15%", 0, 3)
    items = three_spans() + [span(ANSWER, 0, 17, "partial", [cite("c", conflicts=(conflict,))])]
    text = get_citation_summary(items)
    assert text.splitlines() == [
        "Citation Summary:",
        "- 1 of 4 spans fully supported",
        "- 2 spans partially supported",
        "- 1 spans unsupported",
        "- 1 conflicting values (numbers, amounts, dates)",
        "- Sources cited: a, b, c",
    ]
    with pytest.raises(TypeError, match="span_citations"):
        get_citation_summary(None)


# ------------------------------------------------------------------------------ one-call helpers


class FixedPipeline:
    """Returns a fixed result whatever the input (to test the helpers without alignment)."""

    def __init__(self, items):
        self.items = items

    def align(self, answer, sources):
        return list(self.items)


def test_helpers_with_a_given_pipeline():
    pipeline = FixedPipeline(three_spans())
    sources = [SourceDocument("a", "Revenue grew 15%.")]
    metrics = check_groundedness(ANSWER, sources, pipeline=pipeline)
    assert metrics.num_spans == 3
    # groundedness (17 * 1.0 + 14 * 0.3) / 43 = 0.493
    assert is_grounded(ANSWER, sources, pipeline=pipeline, threshold=0.5) is False
    assert is_grounded(ANSWER, sources, pipeline=pipeline, threshold=0.45) is True
    assert is_hallucinated(ANSWER, sources, pipeline=pipeline, threshold=0.9) is False
    assert annotate_answer(ANSWER, sources, pipeline=pipeline, format="superscript").endswith(
        "red.[?]"
    )


def test_helper_argument_errors():
    pipeline = FixedPipeline([])
    with pytest.raises(ValueError, match="threshold"):
        is_grounded("a", [], pipeline=pipeline, threshold=1.5)
    with pytest.raises(TypeError, match="threshold"):
        is_hallucinated("a", [], pipeline=pipeline, threshold="high")
    with pytest.raises(TypeError, match="answer"):
        check_groundedness(None, [], pipeline=pipeline)
    with pytest.raises(TypeError, match="pipeline"):
        check_groundedness("a", [], pipeline=object())
    with pytest.raises(ValueError, match="pipeline"):
        check_groundedness("a", [], pipeline=pipeline, config=object())


@pytest.mark.skipif(not HAS_PIPELINE, reason="citekit.pipeline not available")
def test_helpers_with_the_default_pipeline():
    sources = [SourceDocument(id="report", text="Annual report: Revenue grew 15% in Q4 2024.")]
    assert is_grounded("Revenue grew 15% in Q4.", sources)
    assert is_hallucinated("The company plans to colonize Mars next year.", sources)
    annotated = annotate_answer(
        "Revenue grew 15% in Q4. The company plans to colonize Mars.", sources
    )
    assert annotated == "Revenue grew 15% in Q4.[1] The company plans to colonize Mars.[?]"
    metrics = check_groundedness("", sources)
    assert metrics.num_spans == 0 and metrics.groundedness_score == 1.0
    # keyword arguments of align_citations pass through
    from citekit.config import CitationConfig
    from citekit.tokenizers import SimpleTokenizer

    metrics = check_groundedness(
        "Revenue grew 15% in Q4.",
        sources,
        config=CitationConfig(top_k=1),
        tokenizer=SimpleTokenizer(),
    )
    assert metrics.num_supported == 1 and metrics.span_confidences[0].source_ids == ("report",)
    # cite-right's backend keyword is accepted (and passed on); unknown keywords are not
    assert check_groundedness("Revenue grew.", sources, backend="rust") == check_groundedness(
        "Revenue grew.", sources
    )
    with pytest.raises(TypeError):
        check_groundedness("Revenue grew.", sources, no_such_option="rust")
