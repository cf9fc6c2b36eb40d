"""Property tests over arbitrary Unicode: offsets are exact, exact copies are supported."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from citekit.config import CitationConfig
from citekit.pipeline import Pipeline
from citekit.results import SourceChunk, SourceDocument
from citekit.segment import segment_sentences
from citekit.tokenizers import SimpleTokenizer

PIPE = Pipeline()
TOKENIZER = SimpleTokenizer()

# mixes arbitrary code points with real words and sentence ends so texts have sentences
_word = st.sampled_from(
    [
        "Revenue",
        "grew",
        "15%",
        "$2.1",
        "1,200",
        "straße",
        "东京",
        "दिल्ली",
        "القاهرة",
        "Москва",
        "🎉",
        "ภาษาไทย",
        "です",
        "カタカナ",
        "ﬁne",
        "e\u0301",
    ]
)
_piece = st.one_of(
    st.text(max_size=12), _word, st.sampled_from([". ", "! ", "。", "\n", " ", "? "])
)
unicode_text = st.lists(_piece, max_size=25).map("".join)


def assert_offsets(result, texts, answer):
    for span in result:
        assert (
            answer[span.answer_span.char_start : span.answer_span.char_end] == span.answer_span.text
        )
        last = span.answer_span.char_start
        for start, end in span.unsupported_spans:
            assert last <= start < end <= span.answer_span.char_end
            last = end
        assert (span.status == "unsupported") == (not span.citations)
        for c in span.citations:
            text = texts[c.source_id]
            assert 0 <= c.char_start <= c.char_end <= len(text)
            assert text[c.char_start : c.char_end] == c.evidence
            for piece in c.evidence_spans:
                assert text[piece.char_start : piece.char_end] == piece.evidence
            for conflict in c.conflicts:
                assert (
                    answer[conflict.answer_char_start : conflict.answer_char_end]
                    == conflict.answer_text
                )
                assert (
                    text[conflict.evidence_char_start : conflict.evidence_char_end]
                    == conflict.evidence_text
                )
            assert span.answer_span.char_start <= c.answer_char_start <= c.answer_char_end
            assert c.answer_char_end <= span.answer_span.char_end


@settings(max_examples=150)
@given(sources=st.lists(unicode_text, min_size=1, max_size=4), answer=unicode_text)
def test_offsets_exact_for_arbitrary_text(sources, answer):
    result = PIPE.align(answer, sources)
    assert_offsets(result, {str(i): s for i, s in enumerate(sources)}, answer)


@settings(max_examples=150)
@given(
    sources=st.lists(unicode_text, min_size=1, max_size=4),
    pick=st.tuples(st.integers(0, 3), st.integers(0, 50)),
)
def test_exact_copy_of_a_source_sentence_is_supported(sources, pick):
    source_number = pick[0] % len(sources)
    text = sources[source_number]
    sentences = segment_sentences(text)
    assume(sentences)
    start, end = sentences[pick[1] % len(sentences)]
    answer = text[start:end]
    # the copy must be one sentence on its own and carry at least one token
    assume(segment_sentences(answer) == [(0, len(answer))])
    assume(len(TOKENIZER.tokenize(answer)) > 0)
    result = PIPE.align(answer, sources)
    assert_offsets(result, {str(i): s for i, s in enumerate(sources)}, answer)
    assert len(result) == 1
    span = result[0]
    assert span.status == "supported", (answer, sources)
    top = span.citations[0]
    assert top.components["answer_coverage"] == 1.0
    assert span.unsupported_spans == ()


@settings(max_examples=60)
@given(prefix=unicode_text, body=unicode_text, answer_pick=st.integers(0, 50))
def test_chunk_offsets_are_absolute(prefix, body, answer_pick):
    document = prefix + body
    chunk = SourceChunk("doc", body, len(prefix), len(document), document_text=document)
    sentences = segment_sentences(body)
    answer = body[slice(*sentences[answer_pick % len(sentences)])] if sentences else body
    result = PIPE.align(answer, [chunk, SourceDocument("other", prefix)])
    assert_offsets(result, {"doc": document, "other": prefix}, answer)


@settings(max_examples=60)
@given(document=unicode_text, cuts=st.lists(st.integers(0, 400), min_size=2, max_size=6),
       answer_pick=st.integers(0, 50))
def test_overlapping_chunks_offsets_are_absolute_and_evidence_is_cited_once(
    document, cuts, answer_pick
):
    # chunks over overlapping ranges of one document (every character in at least one)
    n = len(document)
    points = sorted({0, n, *(c % (n + 1) for c in cuts)})
    ranges = [(a, min(n, b + 5)) for a, b in zip(points, points[1:])] or [(0, n)]
    chunks = [SourceChunk("doc", document[a:b], a, b, document_text=document) for a, b in ranges]
    sentences = segment_sentences(document)
    answer = document[slice(*sentences[answer_pick % len(sentences)])] if sentences else document
    result = PIPE.align(answer, chunks)
    assert_offsets(result, {"doc": document}, answer)
    for span in result:
        cited = [(c.char_start, c.char_end) for c in span.citations]
        assert len(cited) == len(set(cited)), cited
        assert len(cited) <= PIPE.config.max_citations_per_source


WIDE = Pipeline(
    CitationConfig(
        window_size_sentences=2, multi_span_evidence=True, multi_span_merge_gap_chars=0, top_k=5
    )
)


@settings(max_examples=100)
@given(sources=st.lists(unicode_text, min_size=1, max_size=3), answer=unicode_text)
def test_offsets_exact_with_windows_and_multi_span_evidence(sources, answer):
    result = WIDE.align(answer, sources)
    assert_offsets(result, {str(i): s for i, s in enumerate(sources)}, answer)
    for span in result:
        for citation in span.citations:
            starts = [piece.char_start for piece in citation.evidence_spans]
            assert starts == sorted(starts)


# sentences of values said to rise or fall, for the conflict checks' prefilters
_subject = st.sampled_from(["Revenue at Contoso", "Costs in Denver", "Net profit", "Shares"])
_direction = st.sampled_from(
    ["rose", "fell", "grew by", "dropped", "was", "rose to", "an increase of", "a loss of",
     "up", "down", "PROFIT", "ﬁne", "", "fell to", "up to", "sank auf"]
)
_value = st.sampled_from(["3%", "-3%", "$3 million", "$3.5bn", "12", "2,400", ".5", "2015"])
_tail = st.sampled_from(["in 2023.", "last year, the company said.", "on Monday.", "."])
_value_sentence = st.tuples(_subject, _direction, _value, _tail).map(" ".join)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(_value_sentence, min_size=1, max_size=3).map(" ".join), min_size=1,
             max_size=3),
    st.lists(_value_sentence, min_size=1, max_size=3).map(" ".join),
)
def test_conflict_prefilters_hide_no_conflict(sources, answer):
    # the pipeline compares the values of an alignment only where a sign, a point, a
    # scale word or a rise against a fall may change them: comparing every alignment
    # gives the same results
    from unittest import mock

    import citekit._citations.records as records

    expected = [span.to_dict() for span in PIPE.align(answer, sources)]
    with mock.patch.object(records, "may_be_prefixed", lambda *args: True):
        assert [span.to_dict() for span in PIPE.align(answer, sources)] == expected
