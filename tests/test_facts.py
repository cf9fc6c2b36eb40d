"""Claims (citekit.claims) and fact verification (citekit.facts)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit
from citekit import Pipeline, SourceDocument
from citekit.claims import Claim, ClaimDecomposer, SimpleClaimDecomposer
from citekit.config import CitationConfig
from citekit.facts import (
    ClaimVerification,
    FactVerificationConfig,
    FactVerificationMetrics,
    verify_facts,
    verify_facts_many,
)
from citekit.results import AnswerSpan

SOURCES = [
    SourceDocument("report", "Revenue grew 15% in 2024. The company hired 200 engineers."),
    SourceDocument("news", "Heat pumps reduce emissions in cold climates."),
]
ANSWER = (
    "Revenue grew 9% in 2024. The company hired 200 engineers. "
    "Heat pumps reduce emissions. The moon is made of cheese."
)


def span_of(text, start=0):
    return AnswerSpan(text=text, char_start=start, char_end=start + len(text))


# -- claims -----------------------------------------------------------------------------


def test_default_decomposer_keeps_each_span_as_one_claim():
    span = span_of("Revenue grew 15%, and profits doubled.", 7)
    (claim,) = SimpleClaimDecomposer().decompose(span)
    assert (claim.text, claim.char_start, claim.char_end, claim.claim_index) == (
        span.text, 7, 7 + len(span.text), 0
    )
    assert claim.source_span == span
    assert isinstance(SimpleClaimDecomposer(), ClaimDecomposer)


def test_clause_split_at_semicolon_and_comma_conjunction():
    text = "Sales rose 4% ; costs fell sharply, but margins held up, yet nobody cared"
    claims = SimpleClaimDecomposer(split_clauses=True).decompose(span_of(text, 3))
    answer = "..." + text
    assert [c.text for c in claims] == [
        "Sales rose 4%", "costs fell sharply", "margins held up", "nobody cared"
    ]
    assert [c.claim_index for c in claims] == [0, 1, 2, 3]
    for claim in claims:
        assert answer[claim.char_start:claim.char_end] == claim.text


def test_clause_split_needs_enough_words_on_both_sides():
    decomposer = SimpleClaimDecomposer(split_clauses=True)
    assert [c.text for c in decomposer.decompose(span_of("Salt, and pepper are spices."))] == [
        "Salt, and pepper are spices."
    ]
    assert len(decomposer.decompose(span_of("Black salt, and white pepper"))) == 2
    strict = SimpleClaimDecomposer(split_clauses=True, min_claim_tokens=3)
    assert len(strict.decompose(span_of("Black salt, and white pepper"))) == 1


def test_clause_split_needs_a_conjunction_word_after_a_comma():
    decomposer = SimpleClaimDecomposer(split_clauses=True)
    # "android" starts with "and": no boundary
    text = "Phones run android, android runs apps, and apps crash often."
    assert [c.text for c in decomposer.decompose(span_of(text))] == [
        "Phones run android, android runs apps", "apps crash often."
    ]
    assert len(decomposer.decompose(span_of("Sales rose, costs fell sharply."))) == 1


def test_decomposer_trims_white_space_and_drops_blank_spans():
    decomposer = SimpleClaimDecomposer()
    (claim,) = decomposer.decompose(AnswerSpan(text=" Hi there ", char_start=2, char_end=12))
    assert (claim.text, claim.char_start, claim.char_end) == ("Hi there", 3, 11)
    assert decomposer.decompose(span_of(" \n ")) == []


def test_decomposer_rejects_bad_arguments():
    with pytest.raises(TypeError, match="split_clauses"):
        SimpleClaimDecomposer(split_clauses="yes")
    with pytest.raises(ValueError, match="min_claim_tokens"):
        SimpleClaimDecomposer(min_claim_tokens=0)
    with pytest.raises(TypeError, match="span must be an AnswerSpan"):
        SimpleClaimDecomposer().decompose("text")


def test_claim_checks_its_offsets():
    span = span_of("Revenue grew.", 4)
    with pytest.raises(ValueError, match="outside its source_span"):
        Claim("Revenue", 0, 7, span)
    with pytest.raises(ValueError, match="differs"):
        Claim("Revenux", 4, 11, span)
    with pytest.raises(ValueError):
        Claim("Revenue", 4, 10, span)
    with pytest.raises(TypeError, match="source_span"):
        Claim("Revenue", 4, 11, "span")
    with pytest.raises(ValueError, match="claim_index"):
        Claim("Revenue", 4, 11, span, -1)


def test_claim_round_trips_through_dicts():
    claim = SimpleClaimDecomposer().decompose(span_of("Hi there.", 2))[0]
    assert Claim.from_dict(claim.model_dump()) == claim
    assert Claim.from_json(claim.to_json()) == claim


# arbitrary Unicode, with the separators and conjunctions of the clause rules mixed in
_TEXT = st.lists(
    st.one_of(
        st.text(max_size=6),
        st.sampled_from([" ", ";", "；", ",", "，", " and ", ", but ", " OR ", "\n", "e\u0301"]),
    ),
    max_size=12,
).map("".join)


@settings(deadline=None)
@given(prefix=_TEXT, body=_TEXT, split=st.booleans(), min_tokens=st.integers(1, 3))
def test_claims_round_trip_in_the_answer(prefix, body, split, min_tokens):
    answer = prefix + body
    span = AnswerSpan(text=body, char_start=len(prefix), char_end=len(answer))
    claims = SimpleClaimDecomposer(
        split_clauses=split, min_claim_tokens=min_tokens
    ).decompose(span)
    end_of_previous = span.char_start
    for index, claim in enumerate(claims):
        assert answer[claim.char_start:claim.char_end] == claim.text
        assert claim.text and claim.text == claim.text.strip()
        assert end_of_previous <= claim.char_start < claim.char_end <= span.char_end
        assert claim.claim_index == index
        end_of_previous = claim.char_end
    assert bool(claims) == bool(body.strip())
    # nothing of the span but separators and white space is left out
    if not split:
        assert len(claims) <= 1


# -- verification -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def metrics():
    return verify_facts(ANSWER, SOURCES)


def test_verdicts_confidence_and_conflicts(metrics):
    verdicts = [(v.claim.text, v.status) for v in metrics.claim_verifications]
    assert verdicts == [
        ("Revenue grew 9% in 2024.", "partial"),
        ("The company hired 200 engineers.", "verified"),
        ("Heat pumps reduce emissions.", "verified"),
        ("The moon is made of cheese.", "unverified"),
    ]
    revenue, hired, heat, moon = metrics.claim_verifications
    assert revenue.contradicted and not hired.contradicted
    (conflict,) = revenue.conflicts
    assert (conflict.kind, conflict.answer_text, conflict.evidence_text) == ("percent", "9%", "15%")
    assert ANSWER[conflict.answer_char_start:conflict.answer_char_end] == "9%"
    assert revenue.confidence >= 0.6  # covered, but contradicted: not verified
    assert hired.confidence == 1.0 and moon.confidence == 0.0
    assert moon.best_citation is None and moon.all_citations == [] and moon.source_ids == []
    assert heat.source_ids == ["news"] and hired.source_ids == ["report"]


def test_evidence_offsets_index_sources_and_answer(metrics):
    texts = {source.id: source.text for source in SOURCES}
    for verification in metrics.claim_verifications:
        claim = verification.claim
        assert ANSWER[claim.char_start:claim.char_end] == claim.text
        if verification.all_citations:
            assert verification.best_citation == verification.all_citations[0]
        for citation in verification.all_citations:
            text = texts[citation.source_id]
            assert text[citation.char_start:citation.char_end] == citation.evidence
            assert claim.char_start <= citation.answer_char_start
            assert citation.answer_char_end <= claim.char_end


def test_summary_metrics(metrics):
    assert (metrics.num_claims, metrics.num_verified, metrics.num_partial,
            metrics.num_unverified) == (4, 2, 1, 1)
    assert metrics.verification_rate == 0.5
    confidences = [v.confidence for v in metrics.claim_verifications]
    assert metrics.avg_confidence == pytest.approx(sum(confidences) / 4)
    assert metrics.min_confidence == 0.0
    assert [c.text for c in metrics.partial_claims] == ["Revenue grew 9% in 2024."]
    assert [c.text for c in metrics.unverified_claims] == ["The moon is made of cheese."]
    assert len(metrics.verified_claims) == 2
    # lists, as cite-right documents them
    assert metrics.unverified_claims != [] and metrics.claim_verifications[3].all_citations == []


def test_metrics_round_trip_through_plain_data(metrics):
    data = metrics.model_dump()
    assert data["claim_verifications"][0]["conflicts"][0]["answer_text"] == "9%"
    assert FactVerificationMetrics.from_dict(data) == metrics
    assert FactVerificationMetrics.from_json(metrics.to_json()) == metrics


def test_thresholds_change_the_verdicts():
    strict = FactVerificationConfig(verified_coverage_threshold=1.0, partial_coverage_threshold=0.9)
    answer = "Heat pumps reduce emissions a lot in warm places."
    loose = verify_facts(answer, SOURCES).claim_verifications[0]
    tight = verify_facts(answer, SOURCES, config=strict).claim_verifications[0]
    assert 0 < loose.confidence < 0.9
    assert loose.status in ("verified", "partial") and tight.status == "unverified"


def test_clause_claims_are_verified_separately():
    answer = "Revenue grew 15% in 2024, and the company hired 300 engineers."
    metrics = verify_facts(
        answer, SOURCES, claim_decomposer=SimpleClaimDecomposer(split_clauses=True)
    )
    first, second = metrics.claim_verifications
    assert (first.claim.text, first.status) == ("Revenue grew 15% in 2024", "verified")
    assert second.claim.text == "the company hired 300 engineers."
    assert second.status == "partial" and second.conflicts[0].evidence_text == "200"
    whole = verify_facts(answer, SOURCES).claim_verifications
    assert len(whole) == 1 and whole[0].claim.text == answer


def test_many_equals_one_by_one_and_reuses_a_prepared_corpus():
    pipe = Pipeline(FactVerificationConfig().citation_settings())
    corpus = pipe.prepare(SOURCES)
    answers = [ANSWER, "", "Heat pumps reduce emissions.", ANSWER]
    batch = verify_facts_many(answers, corpus, pipeline=pipe)
    assert batch == [verify_facts(answer, SOURCES) for answer in answers]
    assert batch[1].num_claims == 0 and batch[1].verification_rate == 1.0


def test_no_sources_leaves_every_claim_unverified():
    metrics = verify_facts("Revenue grew. Costs fell.", [])
    assert [v.status for v in metrics.claim_verifications] == ["unverified", "unverified"]


def test_custom_decomposer_and_its_errors():
    class Words:
        def decompose(self, span):
            first = span.text.split()[0]
            start = span.char_start + span.text.index(first)
            return [Claim(first, start, start + len(first), span)]

    metrics = verify_facts("Revenue grew. Heat pumps.", SOURCES, claim_decomposer=Words())
    assert [v.claim.text for v in metrics.claim_verifications] == ["Revenue", "Heat"]

    class Overlapping:
        def decompose(self, span):
            return [Claim(span.text, span.char_start, span.char_end, span)] * 2

    with pytest.raises(ValueError, match="not overlap"):
        verify_facts("Revenue grew.", SOURCES, claim_decomposer=Overlapping())

    class Foreign:
        def decompose(self, span):
            return [Claim("x", 40, 41, span_of("x", 40))]

    with pytest.raises(ValueError, match="outside its span"):
        verify_facts("Revenue grew.", SOURCES, claim_decomposer=Foreign())

    class Elsewhere:  # offsets inside the span, text of another answer
        def decompose(self, span):
            return [Claim("Costs", 0, 5, span_of("Costs fell."))]

    with pytest.raises(ValueError, match="text is not the answer's"):
        verify_facts("Revenue grew.", SOURCES, claim_decomposer=Elsewhere())

    class OwnSpan:  # a span record of its own, with the answer's offsets: accepted
        def decompose(self, span):
            own = AnswerSpan(span.text, span.char_start, span.char_end, kind="clause")
            return [Claim(span.text, span.char_start, span.char_end, own)]

    assert verify_facts("Heat pumps.", SOURCES, claim_decomposer=OwnSpan()).num_claims == 1

    class Strings:
        def decompose(self, span):
            return [span.text]

    with pytest.raises(TypeError, match="Claim records"):
        verify_facts("Revenue grew.", SOURCES, claim_decomposer=Strings())
    with pytest.raises(TypeError, match="claim_decomposer"):
        verify_facts("Revenue grew.", SOURCES, claim_decomposer=object())


def test_bad_arguments():
    with pytest.raises(TypeError, match="answer"):
        verify_facts(b"Revenue", SOURCES)
    with pytest.raises(TypeError, match="answers"):
        verify_facts_many("Revenue", SOURCES)
    with pytest.raises(TypeError, match=r"answers\[1\]"):
        verify_facts_many(["ok", 3], SOURCES)
    with pytest.raises(TypeError, match="FactVerificationConfig"):
        verify_facts("Revenue grew.", SOURCES, config=CitationConfig())
    with pytest.raises(ValueError, match="backend"):
        verify_facts("Revenue grew.", SOURCES, backend="gpu")
    with pytest.raises(ValueError, match="either pipeline or tokenizer"):
        verify_facts("Revenue grew.", SOURCES, pipeline=Pipeline(), tokenizer=object())
    with pytest.raises(ValueError, match="config.citation_config"):
        verify_facts(
            "Revenue grew.",
            SOURCES,
            pipeline=Pipeline(),
            config=FactVerificationConfig(citation_config=CitationConfig()),
        )
    with pytest.raises(TypeError, match="pipeline must be a Pipeline"):
        verify_facts("Revenue grew.", SOURCES, pipeline="pipe")


def test_backends_give_the_same_result(metrics):
    assert verify_facts(ANSWER, SOURCES, backend="rust") == metrics


def test_config_validation_and_export():
    config = FactVerificationConfig()
    assert config.citation_settings() == CitationConfig(
        top_k=3, min_answer_coverage=0.2, supported_answer_coverage=0.6
    )
    custom = CitationConfig(top_k=1)
    assert FactVerificationConfig(citation_config=custom).citation_settings() is custom
    data = FactVerificationConfig(citation_config=custom).model_dump()
    assert FactVerificationConfig.from_dict(data).citation_config == custom
    with pytest.raises(ValueError, match="verified_coverage_threshold"):
        FactVerificationConfig(verified_coverage_threshold=1.5)
    with pytest.raises(TypeError, match="partial_coverage_threshold"):
        FactVerificationConfig(partial_coverage_threshold="high")
    with pytest.raises(ValueError, match="must be <="):
        FactVerificationConfig(verified_coverage_threshold=0.2, partial_coverage_threshold=0.3)
    with pytest.raises(TypeError, match="citation_config"):
        FactVerificationConfig(citation_config=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.partial_coverage_threshold = 0.1
    with pytest.raises(ValueError, match="read-only"):
        config.partial_coverage_threshold = 0.1


def test_verification_record_validation():
    claim = SimpleClaimDecomposer().decompose(span_of("Hi."))[0]
    with pytest.raises(ValueError, match="status"):
        ClaimVerification(claim, "supported", 0.5)
    with pytest.raises(ValueError, match="confidence"):
        ClaimVerification(claim, "partial", 1.5)
    with pytest.raises(TypeError, match=r"all_citations\[0\]"):
        ClaimVerification(claim, "partial", 0.5, all_citations=["c"])
    with pytest.raises(TypeError, match=r"verifications\[0\]"):
        FactVerificationMetrics.of(["v"])


@settings(deadline=None, max_examples=25)
@given(
    answer=st.text(
        alphabet=st.one_of(st.characters(), st.sampled_from(list("Revenue grew 15% ;,."))),
        max_size=50,
    )
)
def test_verification_offsets_over_arbitrary_unicode(answer):
    sources = [answer[::-1], "Revenue grew 15% in 2024.", answer]
    metrics = verify_facts(
        answer, sources, claim_decomposer=SimpleClaimDecomposer(split_clauses=True)
    )
    assert metrics.num_claims == len(metrics.claim_verifications)
    for verification in metrics.claim_verifications:
        claim = verification.claim
        assert answer[claim.char_start:claim.char_end] == claim.text
        for citation in verification.all_citations:
            text = sources[citation.source_index]
            assert text[citation.char_start:citation.char_end] == citation.evidence
        for conflict in verification.conflicts:
            assert answer[conflict.answer_char_start:conflict.answer_char_end] == (
                conflict.answer_text
            )


def test_stages_are_used_for_claims_and_alignment():
    class Lines:
        def segment(self, text):
            spans, start = [], 0
            for line in text.split("\n"):
                if line.strip():
                    spans.append((start, start + len(line)))
                start += len(line) + 1
            return spans

    answer = "Revenue grew 15% in 2024. Costs\nHeat pumps reduce emissions."
    metrics = verify_facts(answer, SOURCES, answer_segmenter=Lines())
    assert [v.claim.text for v in metrics.claim_verifications] == [
        "Revenue grew 15% in 2024. Costs", "Heat pumps reduce emissions."
    ]
    assert [v.claim.source_span.sentence_index for v in metrics.claim_verifications] == [0, 1]
    seen = []

    class Counting(citekit.SimpleTokenizer):
        def tokenize(self, text):
            seen.append(text)
            return super().tokenize(text)

    verify_facts("Heat pumps reduce emissions.", SOURCES, tokenizer=Counting())
    assert "Heat pumps reduce emissions." in seen
