"""Tests of citekit.segment: sentence rules, span invariants, passage windows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from naive import NAIVE_TERMINATOR_RUN, naive_passage_windows

from citekit.segment import (
    PassageWindow,
    SentenceSegmenter,
    passage_window_array,
    passage_windows,
    segment_sentences,
)


def sentences(text: str, segmenter: SentenceSegmenter | None = None) -> list[str]:
    spans = segmenter.segment(text) if segmenter else segment_sentences(text)
    return [text[start:end] for start, end in spans]


# ---------------------------------------------------------------------------------------
# rules


def test_basic_terminators():
    assert sentences("One. Two? Three! Four") == ["One.", "Two?", "Three!", "Four"]


def test_terminator_runs_stay_together():
    assert sentences("Really?! Yes... Fine.") == ["Really?!", "Yes...", "Fine."]


def test_unicode_terminators():
    assert sentences("利益は増えた。本当？はい！") == ["利益は増えた。", "本当？", "はい！"]
    assert sentences("नमस्ते। आप कैसे हैं?") == ["नमस्ते।", "आप कैसे हैं?"]
    assert sentences("هل أنت بخير؟ نعم") == ["هل أنت بخير؟", "نعم"]
    assert sentences("Wait… Then go.") == ["Wait…", "Then go."]


def test_closing_quotes_and_brackets_belong_to_sentence():
    assert sentences('He said "stop." Then left.') == ['He said "stop."', "Then left."]
    assert sentences("It grew (a lot.) Then fell.") == ["It grew (a lot.)", "Then fell."]
    assert sentences("“Done.” Next.") == ["“Done.”", "Next."]
    assert sentences("「終わり。」次。") == ["「終わり。」", "次。"]


def test_lowercase_continuation_is_not_a_boundary():
    assert sentences('"Really?" she asked. It was approx. five.') == [
        '"Really?" she asked.',
        "It was approx. five.",
    ]


def test_abbreviations():
    assert sentences("Dr. Smith met Mr. Jones. They talked.") == [
        "Dr. Smith met Mr. Jones.",
        "They talked.",
    ]
    assert sentences("Use tools, e.g. hammers. Or i.e. Nails.") == [
        "Use tools, e.g. hammers.",
        "Or i.e. Nails.",
    ]
    assert sentences("The U.S. Army grew. It won.") == ["The U.S. Army grew.", "It won."]
    assert sentences("See Fig. 3 for details.") == ["See Fig. 3 for details."]


def test_sentence_final_abbreviations():
    assert sentences("He works at Apple Inc. The firm grew.") == [
        "He works at Apple Inc.",
        "The firm grew.",
    ]
    assert sentences("Apples, pears, etc. are fruit.") == ["Apples, pears, etc. are fruit."]


def test_initials():
    assert sentences("Written by J. K. Rowling. It sold.") == [
        "Written by J. K. Rowling.",
        "It sold.",
    ]


def test_decimals_and_versions():
    assert sentences("Revenue rose 5.2 percent. Costs fell.") == [
        "Revenue rose 5.2 percent.",
        "Costs fell.",
    ]
    assert sentences("Use v1.2.3 now. Or www.example.com later.") == [
        "Use v1.2.3 now.",
        "Or www.example.com later.",
    ]


def test_newlines_and_blank_lines():
    assert sentences("Title\nFirst line\n\nSecond para.\r\nThird") == [
        "Title",
        "First line",
        "Second para.",
        "Third",
    ]
    assert sentences("a\u2028b\u2029c") == ["a", "b", "c"]


def test_one_capital_roman_numeral_with_a_period_is_an_initial():
    # "V." at a line start once read as the list marker 5 and was dropped
    assert sentences("V. Putin said it. Then he left.") == ["V. Putin said it.", "Then he left."]
    assert sentences("Intro.\nI. Newton wrote\nX. Li replied") == [
        "Intro.", "I. Newton wrote", "X. Li replied"
    ]
    # longer numerals, and one capital before ")", stay markers
    assert sentences("II. Two\nIV) four\nXII. twelve\nV) five\n(X) ten") == [
        "Two", "four", "twelve", "five", "ten"
    ]


def test_bullets_and_numbered_lists():
    text = (
        "Summary:\n- first point\n* second point\n• third\n1. one.\n2) two\n(a) three\n"
        "iv. four\nXII. five\nB) six\nA. B. Smith wrote\nmix. seven"
    )
    assert sentences(text) == [
        "Summary:",
        "first point",
        "second point",
        "third",
        "one.",
        "two",
        "three",
        "four",
        "five",
        "six",
        "A. B. Smith wrote",
        "mix. seven",
    ]


def test_not_splitting_on_single_newlines():
    segmenter = SentenceSegmenter(split_on_newlines=False)
    text = "A wrapped\nsentence here. Next one.\n\nNew para"
    assert sentences(text, segmenter) == ["A wrapped\nsentence here.", "Next one.", "New para"]


def test_custom_abbreviations():
    text = "Call Zork. Now. Done."
    assert sentences(text) == ["Call Zork.", "Now.", "Done."]
    assert sentences(text, SentenceSegmenter(extra_abbreviations=["ZORK."])) == [
        "Call Zork. Now.",
        "Done.",
    ]
    only = SentenceSegmenter(abbreviations=["xyz"])
    assert sentences("Dr. Who. Xyz. Yes.", only) == ["Dr.", "Who.", "Xyz. Yes."]


def test_segmenter_is_callable_and_has_repr():
    segmenter = SentenceSegmenter()
    assert segmenter("One. Two.") == segmenter.segment("One. Two.") == [(0, 4), (5, 9)]
    assert "SentenceSegmenter" in repr(segmenter)


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t", "\r\n"])
def test_empty_results(text):
    assert segment_sentences(text) == []


@pytest.mark.parametrize("bad", [None, b"text", 3])
def test_text_must_be_str(bad):
    with pytest.raises(TypeError, match="text"):
        segment_sentences(bad)


def test_constructor_validation():
    with pytest.raises(TypeError, match="split_on_newlines"):
        SentenceSegmenter(split_on_newlines="yes")
    with pytest.raises(TypeError, match="extra_abbreviations"):
        SentenceSegmenter(extra_abbreviations=[1])
    with pytest.raises(ValueError, match="abbreviations"):
        SentenceSegmenter(abbreviations=["."])


def test_lone_surrogates_and_controls():
    text = "Bad \ud800 char. Null\x00 here. \udfff"
    spans = segment_sentences(text)
    assert [text[a:b] for a, b in spans] == ["Bad \ud800 char.", "Null\x00 here.", "\udfff"]


def test_huge_text():
    text = "Dr. Smith grew revenue 5.2% in the U.S. last year. " * 20000
    spans = segment_sentences(text)
    assert len(spans) == 20000
    assert text[spans[-1][0] : spans[-1][1]] == "Dr. Smith grew revenue 5.2% in the U.S. last year."


# ---------------------------------------------------------------------------------------
# properties


def check_spans(text: str, spans: list[tuple[int, int]]) -> None:
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(text)
        piece = text[start:end]
        assert piece == piece.strip() and piece  # trimmed, non-empty
        previous_end = end
    # nothing but whitespace and list markers is left out
    covered = set()
    for start, end in spans:
        covered.update(range(start, end))
    for index, char in enumerate(text):
        if index not in covered:
            assert (
                char.isspace()
                or char
                in "-*+•‣◦▪▫–—·().0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ)"
            )


@given(st.text())
def test_spans_valid_on_any_text(text):
    check_spans(text, segment_sentences(text))
    check_spans(text, SentenceSegmenter(split_on_newlines=False).segment(text))


@given(
    st.lists(
        st.sampled_from(
            [
                "Dr.",
                "Smith",
                "5.2",
                "U.S.",
                "e.g.",
                "ok.",
                "Why?",
                "“No.”",
                "\n",
                "- ",
                "1.",
                "。",
                "(a)",
                " ",
                "…",
            ]
        ),
        max_size=30,
    )
)
def test_spans_valid_on_tricky_text(parts):
    text = " ".join(parts)
    check_spans(text, segment_sentences(text))


def reference_terminator_runs(text, start, end):
    """Maximal terminator runs with their closers and following whitespace, kept if they
    hold an unspaced terminator or are followed by whitespace or the end."""
    from citekit.kernels._segment import _SPACED_TERMINATORS as spaced
    from citekit.kernels._segment import _UNSPACED_TERMINATORS as unspaced

    closers = "\"'”’»)]}」』】〉》〕）］｝›"
    runs = []
    position = start
    while position < end:
        if text[position] not in spaced + unspaced:
            position += 1
            continue
        run_end = position
        while run_end < end and text[run_end] in spaced + unspaced:
            run_end += 1
        while run_end < end and text[run_end] in closers:
            run_end += 1
        space_end = run_end
        while space_end < end and text[space_end].isspace():
            space_end += 1
        if (
            any(c in unspaced for c in text[position:run_end])
            or space_end > run_end
            or (run_end == end)
        ):
            runs.append((position, run_end, space_end))
        position = space_end if space_end > position else position + 1
    return runs


@given(
    st.text(
        alphabet=st.sampled_from('a5 .?!…。？।"”)」\n\t።។‼．\U00011047') | st.characters(),
        max_size=40,
    ),
    st.integers(0, 5),
    st.integers(0, 5),
)
def test_terminator_runs_match_reference(text, cut_start, cut_end):
    start, end = min(cut_start, len(text)), max(len(text) - cut_end, 0)
    start = min(start, end)
    found = [
        (match.start(), match.end(1), match.end())
        for match in NAIVE_TERMINATOR_RUN.finditer(text, start, end)
    ]
    assert found == reference_terminator_runs(text, start, end)


# ---------------------------------------------------------------------------------------
# passage windows


SPANS = [(0, 4), (5, 9), (10, 14), (15, 19), (20, 24)]


def test_windows_default_one_sentence_each():
    windows = passage_windows(SPANS)
    assert windows == [PassageWindow(i, i + 1, s, e) for i, (s, e) in enumerate(SPANS)]


def test_windows_overlapping():
    windows = passage_windows(SPANS, window_size_sentences=3, window_stride_sentences=1)
    assert [(w.sentence_start, w.sentence_end) for w in windows] == [(0, 3), (1, 4), (2, 5)]
    assert windows[0].char_start == 0 and windows[0].char_end == 14


def test_windows_stride_missing_tail_adds_final_window():
    windows = passage_windows(SPANS, window_size_sentences=1, window_stride_sentences=3)
    assert [(w.sentence_start, w.sentence_end) for w in windows] == [(0, 1), (3, 4), (4, 5)]


def test_windows_larger_than_text():
    windows = passage_windows(SPANS, window_size_sentences=10, window_stride_sentences=4)
    assert windows == [PassageWindow(0, 5, 0, 24)]


def test_windows_empty():
    assert passage_windows([]) == []


def test_windows_accept_segmenter_output():
    text = "One. Two. Three."
    windows = passage_windows(segment_sentences(text), 2)
    assert [text[w.char_start : w.char_end] for w in windows] == ["One. Two.", "Two. Three."]


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"window_size_sentences": 0}, ValueError, "window_size_sentences"),
        ({"window_stride_sentences": 0}, ValueError, "window_stride_sentences"),
        ({"window_size_sentences": 1.5}, TypeError, "window_size_sentences"),
        ({"window_stride_sentences": True}, TypeError, "window_stride_sentences"),
    ],
)
def test_window_argument_checks(kwargs, error, name):
    with pytest.raises(error, match=name):
        passage_windows(SPANS, **kwargs)


@pytest.mark.parametrize(
    "spans, error",
    [
        ("abc", TypeError),
        (5, TypeError),
        ([(0, 1, 2)], TypeError),
        ([(3, 1)], ValueError),
        ([(-1, 2)], ValueError),
        ([(0, 5), (3, 8)], ValueError),
        ([(0.0, 1)], TypeError),
    ],
)
def test_window_span_checks(spans, error):
    with pytest.raises(error, match="sentence_spans"):
        passage_windows(spans)


@given(
    st.integers(0, 30),
    st.integers(1, 8),
    st.integers(1, 8),
)
def test_windows_cover_every_sentence_in_order(n_sentences, size, stride):
    spans = [(3 * i, 3 * i + 2) for i in range(n_sentences)]
    windows = passage_windows(spans, size, stride)
    if not n_sentences:
        assert windows == []
        return
    starts = [w.sentence_start for w in windows]
    assert starts == sorted(set(starts))
    assert windows[-1].sentence_end == n_sentences
    for window in windows:
        assert 0 <= window.sentence_start < window.sentence_end <= n_sentences
        assert window.sentence_end - window.sentence_start <= size
        assert window.char_start == spans[window.sentence_start][0]
        assert window.char_end == spans[window.sentence_end - 1][1]
    if stride <= size:  # no gaps: every sentence is in some window
        covered = set()
        for window in windows:
            covered.update(range(window.sentence_start, window.sentence_end))
        assert covered == set(range(n_sentences))


# window sizes and strides: small ones, and ones past any text (beyond int64 too)
WINDOW_STEPS = st.integers(1, 12) | st.sampled_from([2**62, 2**63 - 1, 2**63, 10**30])


@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=40),
    WINDOW_STEPS,
    WINDOW_STEPS,
)
def test_window_array_matches_reference(gaps_and_lengths, size, stride):
    # (the rule is the corpus builder's kernel: passage_window_array is its public face)
    spans, position = [], 0
    for gap, length in gaps_and_lengths:  # ordered spans, some empty, some touching
        spans.append((position + gap, position + gap + length))
        position += gap + length
    expected = naive_passage_windows(spans, size, stride)
    array = passage_window_array(spans, size, stride)
    assert array.dtype == np.int64 and array.shape == (len(expected), 4)
    assert [tuple(row) for row in array.tolist()] == expected
    # the same from an array of spans, and as PassageWindow records
    span_array = np.array(spans, dtype=np.int64).reshape(-1, 2)
    assert passage_window_array(span_array, size, stride).tolist() == array.tolist()
    windows = passage_windows(spans, size, stride)
    assert windows == [PassageWindow(*row) for row in expected]
    assert all(type(value) is int for window in windows for value in window)


@pytest.mark.parametrize(
    "spans, error",
    [
        (np.array([[3, 1]]), ValueError),
        (np.array([[0, 5], [3, 8]]), ValueError),
        (np.array([0, 5]), TypeError),
        (np.array([[0.0, 1.0]]), TypeError),
        (np.array([[0, 2**64 - 1]], dtype=np.uint64), ValueError),
        ([(0, 2**70)], ValueError),
    ],
)
def test_window_array_span_checks(spans, error):
    with pytest.raises(error, match="sentence_spans"):
        passage_window_array(spans)


def test_window_array_accepts_unsigned_and_generators():
    spans = np.array([[0, 4], [5, 9]], dtype=np.uint32)
    assert passage_window_array(spans, 2).tolist() == [[0, 2, 0, 9]]
    assert passage_window_array(((a, b) for a, b in [(0, 4), (5, 9)])).tolist() == [
        [0, 1, 0, 4],
        [1, 2, 5, 9],
    ]
