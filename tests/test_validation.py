"""Tests of citekit._validation: the span checker shared by the tokenizers, the segmenter's
windows and the reading of custom stages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from citekit._validation import check_spans, check_text_spans


def spans_of(pairs):
    array = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return array[:, 0], array[:, 1]


def check(pairs, name="spans", **options):
    check_spans(*spans_of(pairs), name, **options)


def naive_first_bad(pairs, n_chars, empty):
    """The first bad span, what is wrong with it and the span checked before it, checking
    one span after another."""
    previous = None  # (index, end) of the last span checked
    for index, (start, end) in enumerate(pairs):
        if empty == "skip" and start == end:
            continue
        if end < start:
            return index, "reversed", None
        if start < 0 or (n_chars is not None and end > n_chars):
            return index, "outside", None
        if empty == "reject" and start == end:
            return index, "empty", None
        if previous is not None and start < previous[1]:
            return index, "order", previous[0]
        previous = (index, end)
    return None


@pytest.mark.parametrize("empty", ["keep", "reject", "skip"])
def test_ordered_spans_pass(empty):
    check([(0, 3), (4, 9), (9, 12)], n_chars=12, empty=empty)
    check([], n_chars=0, empty=empty)  # no span
    check([(0, 5)], empty=empty)  # no upper bound


def test_empty_spans_are_kept_rejected_or_skipped():
    check([(0, 3), (3, 3), (3, 5)])  # kept: in order
    with pytest.raises(ValueError, match=r"spans has unordered or overlapping spans"):
        check([(0, 3), (2, 2)])  # kept: out of order
    with pytest.raises(ValueError, match=r"spans has an empty span \(3, 3\) for span 1"):
        check([(0, 3), (3, 3)], empty="reject")
    # skipped: neither bounds nor order apply to them
    check([(0, 3), (2, 2), (99, 99), (3, 5)], n_chars=5, empty="skip")
    with pytest.raises(ValueError, match="spans for spans 0 and 3"):
        check([(0, 3), (2, 2), (9, 9), (2, 5)], n_chars=5, empty="skip")


@pytest.mark.parametrize(
    "pairs, options, message",
    [
        ([(0, 2), (5, 3)], {}, r"spans has a reversed span \(5, 3\) for span 1"),
        ([(0, 2), (2, 9)], {"n_chars": 8}, r"a span outside \[0, 8\]: \(2, 9\) for span 1"),
        ([(-1, 2)], {"n_chars": 8}, r"a span outside \[0, 8\]: \(-1, 2\) for span 0"),
        ([(-1, 2)], {}, r"a span starting before 0: \(-1, 2\) for span 0"),
        ([(0, 5), (3, 8)], {}, r"unordered or overlapping spans for spans 0 and 1: "
                               r"\(0, 5\) then \(3, 8\)"),
        ([(4, 5), (0, 2)], {}, "unordered or overlapping spans for spans 0 and 1"),
        ([(1, 1)], {"empty": "reject"}, r"an empty span \(1, 1\) for span 0"),
        # the first bad span is named, whatever is wrong with the later ones
        ([(0, 2), (1, 3), (5, 4)], {}, "unordered or overlapping spans for spans 0 and 1"),
        ([(0, 2), (3, 9), (2, 1)], {"n_chars": 5}, r"span outside \[0, 5\]"),
    ],
)
def test_bad_spans_are_named(pairs, options, message):
    with pytest.raises(ValueError, match=message):
        check(pairs, **options)


def test_message_names_the_argument_and_the_item():
    with pytest.raises(ValueError, match=r"^my_segmenter returned a reversed span \(5, 0\) for "
                                         r"sentence 0$"):
        check([(5, 0)], "my_segmenter", item="sentence", returned=True)
    with pytest.raises(ValueError, match=r"^tokenizer returned unordered or overlapping spans "
                                         r"for tokens 2 and 3"):
        check([(0, 1), (1, 2), (2, 4), (3, 5)], "tokenizer", item="token", returned=True)
    with pytest.raises(ValueError, match="empty must be"):
        check([(0, 1)], empty="drop")


SPAN_LISTS = st.lists(st.tuples(st.integers(-2, 12), st.integers(-2, 12)), max_size=8)


@given(SPAN_LISTS, st.none() | st.integers(0, 10), st.sampled_from(["keep", "reject", "skip"]))
def test_check_spans_matches_a_loop(pairs, n_chars, empty):
    expected = naive_first_bad(pairs, n_chars, empty)
    if expected is None:
        check(pairs, n_chars=n_chars, empty=empty)
        return
    index, kind, before = expected
    words = {
        "reversed": "reversed span",
        "outside": "outside" if n_chars is not None else "starting before 0",
        "empty": "empty span",
        "order": "unordered or overlapping",
    }
    with pytest.raises(ValueError) as raised:
        check(pairs, n_chars=n_chars, empty=empty)
    message = str(raised.value)
    assert words[kind] in message
    start, end = pairs[index]
    assert f"({start}, {end})" in message
    if kind == "order":
        previous = pairs[before]
        assert f"for spans {before} and {index}: ({previous[0]}, {previous[1]})" in message
    else:
        assert message.endswith(f"for span {index}")


def _i64(*values):
    return np.array(values, dtype=np.int64)


def test_check_text_spans_accepts_each_texts_spans_in_its_bounds():
    texts = ["ab cd", "", "efg"]
    # text 0: two spans; text 1: none; text 2: one
    check_text_spans(_i64(0, 3, 0), _i64(2, 5, 3), _i64(0, 2, 2, 3), texts, "s.f",
                     empty="reject", item="token")
    check_text_spans(_i64(), _i64(), _i64(0, 0, 0, 0), texts, "s.f", empty="skip", item="x")


@pytest.mark.parametrize("offsets", [(0, 2, 3), (0, 2, 2, 2), (1, 2, 2, 3), (0, 3, 2, 3)])
def test_check_text_spans_refuses_offsets_that_do_not_cover_the_spans(offsets):
    with pytest.raises(ValueError, match="s.f returned offsets that are not 4 non-decreasing"):
        check_text_spans(_i64(0, 3, 0), _i64(2, 5, 3), _i64(*offsets), ["ab cd", "", "efg"],
                         "s.f", empty="reject", item="token")


def test_check_text_spans_names_the_text_of_a_bad_span():
    # the span (0, 4) fits the first text but not the third, where it lies
    with pytest.raises(ValueError, match=r"s\.f\(texts\[2\]\).*outside \[0, 3\]"):
        check_text_spans(_i64(0, 0), _i64(2, 4), _i64(0, 1, 1, 2), ["ab cd", "", "efg"],
                         "s.f", empty="reject", item="token")
    with pytest.raises(ValueError, match=r"texts\[0\]"):
        check_text_spans(_i64(0, 1), _i64(2, 3), _i64(0, 2, 2, 2), ["ab cd", "", "efg"],
                         "s.f", empty="keep", item="token")
