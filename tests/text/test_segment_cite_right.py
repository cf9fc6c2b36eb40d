"""cite-right's segmentation by one switch: SentenceSegmenter(rules="cite-right"),
SimpleSegmenter and Segment."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citekit import Segment, SentenceSegmenter, SimpleSegmenter, align_citations
from citekit.segment import segment_sentences

PIECES = [".", ". ", ";", "; ", "?", "!", "...", "\n", "\n\n", " ", "a", "A", "five", "Next",
          "Dr", "U.S", "etc", "[1;2]", "[1]", ")", '"', "。", "😀", "é", "5.2"]
texts = st.text() | st.lists(st.sampled_from(PIECES) | st.text(max_size=3),
                             max_size=30).map("".join)


def test_default_rules_are_unchanged():
    text = "Sales rose; costs fell. then profits grew."
    assert segment_sentences(text) == [(0, len(text))]
    assert SentenceSegmenter().rules == "citekit"
    assert SentenceSegmenter().segment(text) == SentenceSegmenter(rules="citekit").segment(text)


def test_cite_right_rules_split_at_semicolons_and_before_lower_case():
    text = "Sales rose; costs fell. then profits grew."
    spans = SentenceSegmenter(rules="cite-right").segment(text)
    assert [text[a:b] for a, b in spans] == ["Sales rose;", "costs fell.", "then profits grew."]
    # the other rules stay: abbreviations, decimals, initials
    text = "Dr. Smith paid 5.2 million to J. K. Rowling. ok"
    spans = SentenceSegmenter(rules="cite-right").segment(text)
    assert [text[a:b] for a, b in spans] == ["Dr. Smith paid 5.2 million to J. K. Rowling.",
                                             "ok"]


def test_simple_segmenter_returns_segments():
    text = "Revenue grew 9%; costs fell.\nmargins rose."
    segments = SimpleSegmenter().segment(text)
    assert segments == [Segment("Revenue grew 9%;", 0, 16), Segment("costs fell.", 17, 28),
                        Segment("margins rose.", 29, 42)]
    assert all(text[s.start:s.end] == s.text for s in segments)
    assert all((s.doc_char_start, s.doc_char_end) == (s.start, s.end) for s in segments)
    joined = SimpleSegmenter(split_on_newlines=False).segment("a b\nc d")
    assert [s.text for s in joined] == ["a b\nc d"]
    assert SimpleSegmenter().segment("") == [] and SimpleSegmenter().segment("  \n ") == []
    assert "rules='cite-right'" in repr(SimpleSegmenter())


def test_simple_segmenter_plugs_into_the_pipeline():
    answer = "Paris is the capital of France; Berlin is the capital of Germany."
    sources = ["Paris is the capital of France.", "Berlin is the capital of Germany."]
    result = align_citations(answer, sources, answer_segmenter=SimpleSegmenter())
    assert [span.answer_span.text for span in result] == [
        "Paris is the capital of France;", "Berlin is the capital of Germany."]
    assert [span.citations[0].source_index for span in result] == [0, 1]
    default = align_citations(answer, sources)
    assert len(default) == 1


def test_segment_many_reads_with_the_same_rules():
    segmenter = SimpleSegmenter()
    texts = ["a; b", "", "cd. e"]
    spans, offsets = segmenter.segment_many(texts)
    assert offsets.tolist() == [0, 2, 2, 4]
    assert spans.tolist() == [[0, 2], [3, 4], [0, 3], [4, 5]]


def test_pickles_with_its_rules():
    segmenter = pickle.loads(pickle.dumps(SimpleSegmenter()))
    assert segmenter.rules == "cite-right" and segmenter.segment_array("a; b").shape == (2, 2)


@pytest.mark.parametrize("rules, error", [("pysbd", ValueError), (1, TypeError),
                                          (None, TypeError)])
def test_bad_rules_are_refused(rules, error):
    with pytest.raises(error, match="rules"):
        SentenceSegmenter(rules=rules)


def test_segment_records_are_validated():
    with pytest.raises(ValueError, match="text must hold"):
        Segment("abc", 0, 2)
    with pytest.raises(TypeError, match="Segment.text"):
        Segment(3, 0, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Segment.doc_char_start"):
        Segment("", -1, -1)
    with pytest.raises(TypeError):
        SimpleSegmenter().segment(b"a; b")  # type: ignore[arg-type]


_MARKER_CHARS = (
    "-*+•‣◦▪▫–—·().0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ)"
)


@given(texts, st.booleans())
def test_cite_right_spans_are_trimmed_ordered_and_in_bounds(text, split_on_newlines):
    segments = SimpleSegmenter(split_on_newlines=split_on_newlines).segment(text)
    previous_end = 0
    for segment in segments:
        assert previous_end <= segment.start < segment.end <= len(text)
        assert text[segment.start:segment.end] == segment.text
        assert not segment.text[0].isspace() and not segment.text[-1].isspace()
        previous_end = segment.end
    # nothing but whitespace and list markers is left out (as with citekit's rules: a
    # marker such as "0. " with nothing after it is no sentence)
    covered = set()
    for segment in segments:
        covered.update(range(segment.start, segment.end))
    for index, char in enumerate(text):
        if index not in covered:
            assert char.isspace() or char in _MARKER_CHARS, (index, char)


@given(texts)
def test_cite_right_rules_only_add_boundaries_at_semicolons_and_terminators(text):
    # every citekit boundary is kept, and each new one follows a ";" or a terminator run
    citekit_ends = {end for _, end in SentenceSegmenter().segment(text)}
    cite_right = SentenceSegmenter(rules="cite-right").segment(text)
    cite_right_ends = {end for _, end in cite_right}
    assert citekit_ends <= cite_right_ends
    for end in cite_right_ends - citekit_ends:
        # a ";" or a terminator run (with its closers), or the end of the piece after one
        assert not text[end - 1].isspace()
