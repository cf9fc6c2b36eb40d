"""Polarity conflicts (citekit._citations.polarity): the scope rule against its reference,
the negators of seven languages through align_citations, and the properties: a negator
inserted on one side of an exact copy makes it not supported with one negation conflict,
the same negator on both sides keeps it supported."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit import align_citations
from citekit._citations.polarity import (
    CLAUSE_WORDS,
    NEGATION,
    NEGATOR_WORDS,
    negation_conflict,
    polarity_marks,
)
from naive import naive_negated, naive_polarity_marks


def _negations(span):
    return [c for citation in span.citations for c in citation.conflicts if c.kind == NEGATION]


def _check_offsets(answer, sources, spans):
    for span in spans:
        for citation in span.citations:
            for conflict in citation.conflicts:
                assert answer[conflict.answer_char_start:conflict.answer_char_end] == (
                    conflict.answer_text)
                source = sources[citation.source_index]
                assert source[conflict.evidence_char_start:conflict.evidence_char_end] == (
                    conflict.evidence_text)


# (answer, source): the source negates what the answer states, or the other way round
CONTRADICTIONS = [
    # the English cases
    ("Revenue grew in 2024.", "Revenue did not grow in 2024."),
    ("The drug was not approved in Europe in 2021.", "The drug was approved in Europe in 2021."),
    ("Smoking causes lung cancer in mice.",
     "There is no evidence that smoking causes lung cancer in mice."),
    ("All of the 40 patients developed side effects.",
     "None of the 40 patients developed side effects."),
    ("The tablets are taken with food.", "The tablets are taken without food."),
    ("The committee has ever approved such a plan.",
     "The committee has never approved such a plan."),
    ("The company has plans to expand into Asia.",
     "The company has no plans to expand into Asia."),
    ("The bridge is safe for heavy trucks.", "The bridge isn't safe for heavy trucks."),
    ("The trial met its primary endpoint in 2019.",
     "The trial failed to meet its primary endpoint in 2019."),
    # German
    ("Der Patient hat das Medikament vertragen.",
     "Der Patient hat das Medikament nicht vertragen."),
    ("Die Firma hat ihre Prognose geändert.", "Die Firma hat ihre Prognose nie geändert."),
    ("Die Studie fand Nebenwirkungen bei Kindern.",
     "Die Studie fand keine Nebenwirkungen bei Kindern."),
    # French
    ("Le médicament a été approuvé en France.", "Le médicament n'a pas été approuvé en France."),
    ("Le pont est ouvert aux camions lourds.", "Le pont n'est jamais ouvert aux camions lourds."),
    # Spanish
    ("El fármaco fue aprobado en España.", "El fármaco no fue aprobado en España."),
    ("La empresa publicó sus resultados trimestrales.",
     "La empresa nunca publicó sus resultados trimestrales."),
    # Russian
    ("Препарат был одобрен в России.", "Препарат не был одобрен в России."),
    ("Компания публиковала квартальные результаты.",
     "Компания никогда публиковала квартальные результаты."),
    # Chinese
    ("该药物在中国获得批准。", "该药物在中国没有获得批准。"),
    ("该公司发布了季度业绩报告。", "该公司未发布季度业绩报告。"),
    # Hindi
    ("दवा को भारत में मंजूरी मिली।", "दवा को भारत में मंजूरी नहीं मिली।"),
]


@pytest.mark.parametrize("answer, source", CONTRADICTIONS)
def test_a_negation_on_one_side_is_a_conflict(answer, source):
    spans = align_citations(answer, [source])
    assert len(spans) == 1 and spans[0].citations
    assert spans[0].status != "supported"
    assert len(_negations(spans[0])) == 1
    _check_offsets(answer, [source], spans)
    # the other way round too
    spans = align_citations(source, [answer])
    assert spans[0].status != "supported" and len(_negations(spans[0])) == 1
    _check_offsets(source, [answer], spans)


@pytest.mark.parametrize("answer, source", CONTRADICTIONS)
def test_the_same_text_agrees(answer, source):
    for text in (answer, source):
        (span,) = align_citations(text, [text])
        assert span.status == "supported" and not _negations(span)


@pytest.mark.parametrize("answer, source", [
    # both sides negated, by other words: they agree
    ("Revenue did not grow in 2024.", "Revenue didn't grow in 2024."),
    ("The drug was never approved in Europe.", "The drug was not approved in Europe."),
    # not a negation
    ("Sales and profits grew in 2024.", "Not only sales but also profits grew in 2024."),
    ("The flight lasted two hours in 2024.",
     "The flight lasted no longer than two hours in 2024."),
    ("Cost was a concern for the 40 patients.",
     "Cost was, not least, a concern for the 40 patients."),
    ("Das Medikament senkt den Blutdruck bei Erwachsenen.",
     "Das Medikament senkt nicht nur den Blutdruck bei Erwachsenen."),
    ("该公司的业绩非常好。", "该公司的业绩非常好。"),
    # the negation is in another clause than the aligned content
    ("The drug was approved in Europe in 2021.",
     "The drug was approved in Europe in 2021, but not in the United States."),
    ("Revenue grew in 2024.", "Revenue grew in 2024; costs did not."),
])
def test_no_conflict_where_polarity_agrees(answer, source):
    (span,) = align_citations(answer, [source])
    assert span.citations and not _negations(span), span


def test_the_demo_velutrapine_is_not_supported_by_its_negation():
    answer = "Velutrapine is expected to be approved in Europe next year."
    source = ("The European Medicines Agency has not completed its review, and velutrapine "
              "is not approved in any country.")
    (span,) = align_citations(answer, [source])
    assert span.status != "supported"
    # the same claim, negated in the source: a negation conflict
    (span,) = align_citations("Velutrapine is approved in Europe.",
                              ["Velutrapine is not approved in Europe."])
    assert span.status != "supported" and len(_negations(span)) == 1


def test_a_negator_beside_a_few_shared_words_negates_another_claim():
    # the passage covers less than half of the sentence's content: no conflict
    answer = "Examples include paper wasps, hornets and yellow jackets in gardens."
    (span,) = align_citations(answer, ["Paper wasps are not aggressive."])
    assert not _negations(span)


def test_a_conflict_resolved_by_an_agreeing_source():
    # one source negates, another states the claim: conflict-free evidence confirms it
    answer = "The drug was approved in Europe in 2021."
    spans = align_citations(answer, ["The drug was not approved in Europe in 2021.",
                                     "The drug was approved in Europe in 2021."])
    assert spans[0].status == "supported"


# --- the scope rule against its reference ---------------------------------------------

_VOCABULARY = sorted(NEGATOR_WORDS)[:40] + sorted(CLAUSE_WORDS)[:20] + [
    "revenue", "grew", "isn't", "n'a", "n’est", "No.", "5", "2.4", "1,200", "not only",
    "no longer than", "whether or not", "failed to", "fails", "Not", "NEVER", "nothing but",
    "没有", "不仅", "差不多", "非常", "未来", "但是", "获得", "批准", "नहीं", "न केवल", "मंजूरी",
    ",", ".", ";", "(", ")", "—", "。", "，", "।", "\n", "Ohne", "KEIN", "ningún", "не только",
    "-", " - ", "unlikely", "lack", "Banned",
]


@st.composite
def polarity_texts(draw):
    words = draw(st.lists(st.sampled_from(_VOCABULARY), max_size=14))
    separators = draw(st.lists(st.sampled_from([" ", "", "  ", "\t"]), min_size=len(words),
                               max_size=len(words)))
    return "".join(word + separator for word, separator in zip(words, separators))


@settings(max_examples=500, deadline=None)
@given(polarity_texts())
def test_polarity_marks_match_reference(text):
    assert polarity_marks(text) == naive_polarity_marks(text)


@settings(max_examples=300, deadline=None)
@given(polarity_texts(), st.data())
def test_negator_in_scope_matches_reference(text, data):
    n = len(text)
    lo = data.draw(st.integers(0, n))
    hi = data.draw(st.integers(lo, n))
    ranges = data.draw(st.lists(st.tuples(st.integers(lo, hi), st.integers(0, 5)), max_size=3))
    ranges = [(start, min(hi, start + length)) for start, length in ranges]
    conflict = negation_conflict(text, lo, hi, ranges, (lo, lo), "x", 0, 1, [(0, 1)], (0, 1))
    expected = naive_negated(text, lo, hi, ranges)
    assert (conflict is None) == (expected is None)
    if conflict is not None:
        assert conflict.answer_char_start == min(lo, expected[0])
        assert conflict.answer_char_end == max(lo, expected[1])


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text(), st.data())
def test_conflict_offsets_round_trip_on_any_text(answer, source, data):
    def side(text):
        lo = data.draw(st.integers(0, len(text)))
        hi = data.draw(st.integers(lo, len(text)))
        start = data.draw(st.integers(lo, hi))
        end = data.draw(st.integers(start, hi))
        return lo, hi, [(start, end)], (start, end)

    a_lo, a_hi, a_ranges, a_range = side(answer)
    s_lo, s_hi, s_ranges, s_range = side(source)
    offset = data.draw(st.integers(0, 50))
    conflict = negation_conflict(answer, a_lo, a_hi, a_ranges, a_range, source, s_lo, s_hi,
                                 s_ranges, s_range, source_offset=offset)
    if conflict is not None:
        assert conflict.kind == NEGATION
        assert answer[conflict.answer_char_start:conflict.answer_char_end] == (
            conflict.answer_text)
        start, end = conflict.evidence_char_start - offset, conflict.evidence_char_end - offset
        assert source[start:end] == conflict.evidence_text
    bounds, negators = polarity_marks(answer)
    assert all(0 <= b < len(answer) for b in bounds)
    assert all(0 <= s < e <= len(answer) for s, e in negators)


def test_polarity_marks_by_hand():
    assert polarity_marks("Revenue did not grow, but costs fell.") == ((20, 22, 36), ((12, 15),))
    assert polarity_marks("It isn't.")[1] == ((5, 8),)
    assert polarity_marks("Il n'a pas été approuvé.")[1] == ((3, 5), (7, 10))
    assert polarity_marks("No. 5 was approved.") == ((), ())
    assert polarity_marks("Revenue of $1,200.5 grew.") == ((), ())
    assert polarity_marks("该药物没有获得批准。")[1] == ((3, 5),)
    assert polarity_marks("未来非常好") == ((), ())
    assert polarity_marks("") == ((), ())


def test_two_negations_on_one_side_count_as_one():
    # not read as cancelling: "not without risk" is negated, as is "without risk"
    answer, source = "The trial was without risk.", "The trial was not without risk."
    (span,) = align_citations(answer, [source])
    assert not _negations(span) and span.status == "supported"
    (span,) = align_citations("The trial was with risk.", [source])
    assert len(_negations(span)) == 1


# --- the properties through align_citations -------------------------------------------

_WORDS = ["revenue", "patients", "approved", "europe", "tablets", "bridge", "growth",
          "mice", "company", "drug", "trial", "council", "library", "dividend", "plant"]
_INSERTED = ["not", "never", "nicht", "nie", "jamais", "nunca", "не", "никогда", "нет",
             "without", "no", "sin", "ohne", "без", "नहीं"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), min_size=4, max_size=9, unique=True),
       st.sampled_from(_INSERTED), st.data())
def test_inserting_a_negator_breaks_support(words, negator, data):
    position = data.draw(st.integers(1, len(words) - 1))
    sentence = " ".join(words) + "."
    negated = " ".join(words[:position] + [negator] + words[position:]) + "."
    for answer, source in ((negated, sentence), (sentence, negated)):
        (span,) = align_citations(answer, [source])
        assert span.status != "supported", (answer, source)
        assert len(_negations(span)) == 1, (answer, source)
        _check_offsets(answer, [source], [span])
    (span,) = align_citations(negated, [negated])
    assert span.status == "supported" and not _negations(span)
