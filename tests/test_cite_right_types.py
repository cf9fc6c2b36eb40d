"""cite-right's documented types on citekit's records: sequence fields that compare equal
to lists, read-only configuration objects with ``model_dump()``."""

from __future__ import annotations

import copy
import pickle

import pytest

from citekit import HallucinationConfig, TokenizerConfig, compute_hallucination_metrics
from citekit._frozen import FrozenFieldError
from citekit.results import (
    AnswerSpan,
    Citation,
    EvidenceSpan,
    FrozenList,
    SpanCitations,
    _unchecked,
)


def _citation(**extra):
    values = dict(score=2.0, source_id="s", source_index=0, candidate_index=0,
                  char_start=0, char_end=7, evidence="Revenue")
    values.update(extra)
    return Citation(**values)


SPAN = AnswerSpan(text="Revenue grew.", char_start=0, char_end=13)


def test_frozen_list_equals_lists_and_tuples_in_order():
    items = FrozenList((1, 2))
    assert items == [1, 2] and [1, 2] == items and items == (1, 2)
    assert items != [2, 1] and [2, 1] != items and items != [1, 2, 3]
    assert not (items == [1]) and not (items != [1, 2])
    assert FrozenList() == [] and FrozenList() != [None]
    assert items != "12" and items != {1: 2}


def test_frozen_list_stays_an_immutable_hashable_tuple():
    items = FrozenList((1, 2))
    assert isinstance(items, tuple) and hash(items) == hash((1, 2))
    assert repr(items) == "(1, 2)"
    with pytest.raises(AttributeError):
        items.append(3)  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        items[0] = 5  # type: ignore[index]
    for copied in (pickle.loads(pickle.dumps(items)), copy.deepcopy(items)):
        assert type(copied) is FrozenList and copied == [1, 2]


def test_empty_result_citations_equal_an_empty_list():
    result = SpanCitations(answer_span=SPAN, citations=(), status="unsupported")
    assert result.citations == [] and type(result.citations) is FrozenList
    assert result.unsupported_spans == []


def test_citations_and_evidence_spans_equal_lists_of_their_items():
    spans = [EvidenceSpan(0, 7, "Revenue")]
    cite = _citation(evidence_spans=spans)
    assert cite.evidence_spans == spans and cite.conflicts == []
    result = SpanCitations(SPAN, [cite], "supported")
    assert result.citations == [cite] and result.citations[0] is cite
    # the records still round-trip through dicts and pickles
    assert SpanCitations.from_dict(result.to_dict()) == result
    assert pickle.loads(pickle.dumps(result)).citations == [cite]


def test_records_built_without_checks_hold_frozen_lists():
    # the pipeline builds its records through _unchecked with plain tuples
    cite = _unchecked(Citation, score=2.0, source_id="s", source_index=0, candidate_index=0,
                      char_start=0, char_end=7, evidence="Revenue",
                      evidence_spans=(EvidenceSpan(0, 7, "Revenue"),))
    result = _unchecked(SpanCitations, answer_span=SPAN, citations=(cite,), status="supported")
    assert type(result.citations) is FrozenList and result.citations == [cite]
    assert type(cite.evidence_spans) is FrozenList and type(cite.conflicts) is FrozenList
    assert result.unsupported_spans == []


def test_metric_collections_equal_lists():
    unsupported = SpanCitations(SPAN, (), "unsupported")
    metrics = compute_hallucination_metrics([unsupported])
    assert metrics.unsupported_spans == [SPAN]
    assert metrics.weakly_supported_spans == []
    assert metrics.span_confidences == [metrics.span_confidences[0]]
    assert metrics.span_confidences[0].source_ids == []
    assert metrics.unsupported_char_spans == [(0, 13)]
    assert compute_hallucination_metrics([]).span_confidences == []


def test_metric_records_refuse_a_non_sequence():
    from citekit.metrics import SpanConfidence

    with pytest.raises(TypeError, match="SpanConfidence.source_ids must be a sequence"):
        SpanConfidence(SPAN, "unsupported", 0.0, False, source_ids=3)  # type: ignore[arg-type]
    assert SpanConfidence(SPAN, "unsupported", 0.0, False, source_ids=["a"]).source_ids == ["a"]


@pytest.mark.parametrize(
    "config, field, value",
    [
        (HallucinationConfig(), "weak_citation_threshold", 0.1),
        (TokenizerConfig(), "casefold", False),
    ],
)
def test_configs_refuse_assignment_with_a_value_error(config, field, value):
    with pytest.raises(ValueError, match=f"cannot assign to field '{field}'") as raised:
        setattr(config, field, value)
    assert isinstance(raised.value, (FrozenFieldError, AttributeError))
    with pytest.raises(FrozenFieldError, match=f"cannot delete field '{field}'"):
        delattr(config, field)
    assert getattr(config, field) != value
    assert pickle.loads(pickle.dumps(config)) == config


def test_model_dump_round_trips():
    config = HallucinationConfig(weak_citation_threshold=0.25, include_partial_in_grounded=False)
    assert config.model_dump() == {
        "weak_citation_threshold": 0.25, "include_partial_in_grounded": False}
    assert HallucinationConfig(**config.model_dump()) == config
    tokens = TokenizerConfig(nfkc=False)
    assert tokens.model_dump() == {
        "normalize_numbers": True, "normalize_percent": True, "normalize_currency": True,
        "nfkc": False, "casefold": True}
    assert TokenizerConfig(**tokens.model_dump()) == tokens
