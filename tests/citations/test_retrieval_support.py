"""SpanCitations.retrieval_support: the candidate passages of a span that gave no citation
(cite-right's retrieval-only signal), off by default."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from citekit import RetrievalSupport
from citekit.config import CitationConfig
from citekit.pipeline import Pipeline, align_citations
from citekit.results import SourceChunk, SpanCitations, results_from_json, results_to_json

SOURCES = [
    "Paris is the capital of France.",
    "Paris has many museums and parks.",
    "Berlin is the capital of Germany.",
    "Tokyo is large.",
]
ANSWER = "Paris is the capital of France."


def test_off_by_default_and_absent_from_dicts():
    result = align_citations(ANSWER, SOURCES)
    assert result[0].status == "supported"
    assert result[0].retrieval_support == []
    assert "retrieval_support" not in result[0].to_dict()
    assert CitationConfig().max_retrieval_support == 0


def test_candidates_without_a_citation_are_listed_best_first():
    config = CitationConfig(max_retrieval_support=3)
    span = align_citations(ANSWER, SOURCES, config=config)[0]
    cited = {c.candidate_index for c in span.citations}
    support = span.retrieval_support
    assert support, "the passages sharing words but giving no citation are listed"
    assert all(isinstance(item, RetrievalSupport) for item in support)
    assert not cited & {item.candidate_index for item in support}
    # no passage of Tokyo shares a word with the answer: never a candidate
    assert "Tokyo is large." not in [item.passage_text for item in support]
    for item in support:
        source = SOURCES[item.source_index]
        assert item.source_id == str(item.source_index)
        assert source[item.passage_char_start:item.passage_char_end] == item.passage_text
        assert item.lexical_score > 0.0 and item.embedding_score == 0.0
        weights = config.weights
        assert item.retrieval_score == pytest.approx(weights.lexical * item.lexical_score)
    keys = [(-s.retrieval_score, s.source_index, s.passage_char_start) for s in support]
    assert keys == sorted(keys)
    assert len({item.candidate_index for item in support}) == len(support)


def test_the_limit_keeps_the_best_entries():
    full = align_citations(ANSWER, SOURCES, config=CitationConfig(max_retrieval_support=10))
    one = align_citations(ANSWER, SOURCES, config=CitationConfig(max_retrieval_support=1))
    assert len(full[0].retrieval_support) >= 2
    assert one[0].retrieval_support == full[0].retrieval_support[:1]
    # citations and statuses do not depend on the switch
    plain = align_citations(ANSWER, SOURCES)
    assert [s.citations for s in full] == [s.citations for s in plain]
    assert [s.status for s in full] == [s.status for s in plain]


def test_an_unsupported_span_lists_the_passages_it_retrieved():
    config = CitationConfig(max_retrieval_support=3)
    span = align_citations("Germany borders France.", SOURCES, config=config)[0]
    assert span.status == "unsupported" and span.citations == []
    texts = {item.passage_text for item in span.retrieval_support}
    assert texts == {SOURCES[0], SOURCES[2]}


def test_chunk_offsets_index_the_document():
    document = "Intro text. Paris has many museums and parks. Paris is the capital of France."
    start = document.index("Paris has")
    chunk = SourceChunk(source_id="doc", text=document[start:], doc_char_start=start,
                        doc_char_end=len(document))
    config = CitationConfig(max_retrieval_support=3)
    span = align_citations(ANSWER, [chunk], config=config)[0]
    assert span.status == "supported" and span.retrieval_support
    for item in span.retrieval_support:
        assert item.source_id == "doc"
        assert document[item.passage_char_start:item.passage_char_end] == item.passage_text


def test_many_answers_in_one_batch_equal_one_at_a_time():
    pipe = Pipeline(CitationConfig(max_retrieval_support=2))
    corpus = pipe.prepare(SOURCES)
    answers = [ANSWER, "Germany borders France. Paris has parks.", "", "Tokyo is large."]
    together = pipe.align_many(answers, corpus)
    for answer, result in zip(answers, together):
        alone = pipe.align(answer, corpus)
        assert [s.retrieval_support for s in result] == [s.retrieval_support for s in alone]


class _Embedder:
    """Vectors by keyword: a passage about the same city is similar without a shared word."""

    def encode(self, texts):
        vectors = []
        for text in texts:
            lowered = text.lower()
            vectors.append([float("paris" in lowered or "capital" in lowered),
                            float("tokyo" in lowered), 1e-3])
        return np.array(vectors, dtype=np.float32)


def test_embedding_candidates_count_from_min_embedding_similarity():
    sources = ["The capital has museums.", "Tokyo grows."]  # (no word of the answer)
    config = CitationConfig(max_retrieval_support=3, min_embedding_similarity=0.5)
    span = align_citations("Paris is old.", sources, config=config, embedder=_Embedder())[0]
    texts = [item.passage_text for item in span.retrieval_support]
    assert texts == ["The capital has museums."]
    item = span.retrieval_support[0]
    assert item.lexical_score == 0.0 and item.embedding_score > 0.5
    assert item.retrieval_score == pytest.approx(config.weights.embedding * item.embedding_score)


def test_strict_evidence_keeps_the_retrieval_support():
    config = CitationConfig(max_retrieval_support=3, require_all_answer_tokens_in_evidence=True)
    loose = CitationConfig(max_retrieval_support=3)
    answer = "Paris is the capital of France and has parks."
    strict = align_citations(answer, SOURCES, config=config)[0]
    assert strict.retrieval_support == align_citations(answer, SOURCES, config=loose)[0] \
        .retrieval_support


def test_round_trips_through_json_and_pickle():
    result = align_citations(ANSWER, SOURCES, config=CitationConfig(max_retrieval_support=3))
    assert "retrieval_support" in result[0].to_dict()
    assert results_from_json(results_to_json(result)) == list(result)
    assert pickle.loads(pickle.dumps(result[0])) == result[0]
    assert SpanCitations.from_dict(result[0].to_dict()).retrieval_support == \
        result[0].retrieval_support


@pytest.mark.parametrize("value, error", [(-1, ValueError), ("3", TypeError),
                                          (True, TypeError), (2.0, TypeError)])
def test_max_retrieval_support_is_validated(value, error):
    with pytest.raises(error, match="max_retrieval_support"):
        CitationConfig(max_retrieval_support=value)


def test_records_are_validated():
    good = dict(retrieval_score=0.5, source_id="s", source_index=0, candidate_index=0,
                passage_char_start=2, passage_char_end=6, passage_text="Rome",
                embedding_score=0.0, lexical_score=1.0)
    assert RetrievalSupport(**good).passage_char_end == 6
    with pytest.raises(ValueError, match="passage_text must hold"):
        RetrievalSupport(**{**good, "passage_text": "Rom"})
    with pytest.raises(ValueError, match="retrieval_score must be finite"):
        RetrievalSupport(**{**good, "retrieval_score": float("nan")})
    with pytest.raises(ValueError, match="candidate_index must be >= 0"):
        RetrievalSupport(**{**good, "candidate_index": -1})
    with pytest.raises(TypeError, match="source_id must be str"):
        RetrievalSupport(**{**good, "source_id": 3})
    with pytest.raises(TypeError, match="retrieval_support must hold RetrievalSupport"):
        SpanCitations(result_span(), (), "unsupported", retrieval_support=[3])


def result_span():
    from citekit.results import AnswerSpan

    return AnswerSpan(text="Hi.", char_start=0, char_end=3)


def test_nothing_is_computed_at_zero():
    from citekit._citations.retrieval_support import add_retrieval_support

    records = [SpanCitations(result_span(), (), "unsupported")]

    class Untouchable:
        def __getattr__(self, name):
            raise AssertionError(f"read {name} at max_retrieval_support=0")

    found = Untouchable()
    assert add_retrieval_support(records, found, Untouchable(), CitationConfig()) is records
    assert records[0].retrieval_support == []
