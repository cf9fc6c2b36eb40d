"""Hypothesis properties of the kernels over arbitrary Unicode, tokenized by code point.

Code points make spans directly checkable on the strings: ``text[start:end]``.
"""

import difflib

from hypothesis import given, strategies as st

from citekit.kernels import align_batch, lcs_length, matching_blocks, smith_waterman

texts = st.text(max_size=60)
small_alphabet_texts = st.text(alphabet="ab\u0301\U0001f600\u4e2d", max_size=40)


def code_points(text):
    return [ord(character) for character in text]


def check_alignment(query, target, alignment):
    n, m = len(query), len(target)
    assert 0 <= alignment.query_start <= alignment.query_end <= n
    assert 0 <= alignment.target_start <= alignment.target_end <= m
    covered = 0
    previous_q = alignment.query_start
    previous_t = alignment.target_start
    for q, t, length in alignment.blocks:
        assert length > 0 and q >= previous_q and t >= previous_t
        assert query[q:q + length] == target[t:t + length]
        previous_q, previous_t = q + length, t + length
        covered += length
    assert previous_q <= max(alignment.query_end, alignment.query_start)
    assert covered == alignment.matches
    if alignment.score:
        assert alignment.blocks[0][:2] == (alignment.query_start, alignment.target_start)
        last = alignment.blocks[-1]
        assert (last[0] + last[2], last[1] + last[2]) == (alignment.query_end,
                                                          alignment.target_end)
    else:
        assert alignment.blocks == () and alignment.matches == 0


@given(query=texts, target=texts)
def test_alignment_spans_are_in_bounds_ordered_and_round_trip(query, target):
    alignment = smith_waterman(code_points(query), code_points(target), return_blocks=True)
    check_alignment(query, target, alignment)


@given(query=small_alphabet_texts, target=small_alphabet_texts, width=st.integers(0, 5))
def test_banded_alignment_spans_round_trip(query, target, width):
    alignment = smith_waterman(code_points(query), code_points(target), band_width=width,
                               return_blocks=True)
    check_alignment(query, target, alignment)


@given(prefix=texts, copy=st.text(min_size=1, max_size=40), suffix=texts)
def test_an_exact_copy_is_found(prefix, copy, suffix):
    target = prefix + copy + suffix
    alignment = smith_waterman(code_points(copy), code_points(target), return_blocks=True)
    assert alignment.score == 2 * len(copy) and alignment.matches == len(copy)
    assert (alignment.query_start, alignment.query_end) == (0, len(copy))
    assert target[alignment.target_start:alignment.target_end] == copy
    assert alignment.target_start == target.find(copy)  # the earliest occurrence


@given(query=texts, targets=st.lists(texts, max_size=12))
def test_batch_rows_equal_single_alignments(query, targets):
    ids = [token for target in targets for token in code_points(target)]
    offsets = [0]
    for target in targets:
        offsets.append(offsets[-1] + len(target))
    result = align_batch(code_points(query), ids, offsets)
    for k, target in enumerate(targets):
        single = smith_waterman(code_points(query), code_points(target))
        assert (result.score[k], result.query_start[k], result.query_end[k],
                result.target_start[k], result.target_end[k], result.matches[k]) == single[:6]


@given(a=small_alphabet_texts, b=small_alphabet_texts)
def test_matching_blocks_equal_difflib_on_strings(a, b):
    expected = [tuple(block) for block in
                difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()]
    blocks = matching_blocks(code_points(a), code_points(b))
    assert blocks == expected
    for i, j, size in blocks:
        assert a[i:i + size] == b[j:j + size]


@given(a=texts, b=texts)
def test_lcs_length_bounds_and_symmetry(a, b):
    length = lcs_length(code_points(a), code_points(b))
    assert length == lcs_length(code_points(b), code_points(a))
    assert 0 <= length <= min(len(a), len(b))
    matched = sum(size for _, _, size in matching_blocks(code_points(a), code_points(b)))
    assert length >= matched
