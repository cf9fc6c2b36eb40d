"""The evidence-set kernel (citekit.kernels._evidence) against its reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels._evidence import (
    EVIDENCE_REACH,
    FACT_BLOCK_HI,
    FACT_CHAR_END,
    FACT_CHAR_START,
    FACT_TOKEN_HI,
    FACT_TOKEN_LO,
    N_FACTS,
    evidence_set,
    widen_evidence,
)
from naive import naive_evidence_set, naive_widen_evidence


@st.composite
def evidence_cases(draw):
    n_rows = draw(st.integers(0, 8))
    n_tokens = draw(st.integers(0, 10))
    covers = [draw(st.lists(st.booleans(), min_size=n_tokens, max_size=n_tokens))
              for _ in range(n_rows)]
    n_pool = draw(st.integers(0, n_rows))
    # the pipeline's weights: 2 (values), 1, 0.25 (function words), 0 (punctuation)
    weights = draw(st.lists(st.sampled_from([0.0, 0.25, 1.0, 2.0]), min_size=n_tokens,
                            max_size=n_tokens))
    content = draw(st.lists(st.booleans(), min_size=n_tokens, max_size=n_tokens))
    row_source = draw(st.lists(st.integers(0, 3), min_size=n_rows, max_size=n_rows))
    by_score = draw(st.lists(st.integers(0, n_rows - 1), max_size=6)) if n_rows else []
    top_k = draw(st.integers(0, 5))
    max_per_source = draw(st.integers(1, 3))
    uncovered_ok = draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows))
    # what each row's alignment matched: some of what it covers
    matched = [[cover and draw(st.booleans()) for cover in row] for row in covers]
    return (covers, n_pool, weights, content, row_source, by_score, top_k, max_per_source,
            uncovered_ok, matched)


@settings(max_examples=400, deadline=None)
@given(evidence_cases())
def test_evidence_set_matches_reference(case):
    (covers, n_pool, weights, content, row_source, by_score, top_k, max_per_source,
     uncovered_ok, matched) = case
    n_tokens = len(weights)
    selected, shown = evidence_set(
        np.array(covers, dtype=bool).reshape(len(covers), n_tokens), n_pool,
        np.array(weights), np.array(content, dtype=bool), np.array(row_source, dtype=np.int64),
        np.array(by_score, dtype=np.int64), top_k, max_per_source,
        np.array(uncovered_ok, dtype=bool),
        np.array(matched, dtype=bool).reshape(len(covers), n_tokens),
    )
    expected_selected, expected_shown = naive_evidence_set(
        covers, n_pool, weights, content, row_source, by_score, top_k,
        max_per_source, uncovered_ok, matched,
    )
    assert selected.tolist() == expected_selected
    assert shown.tolist() == expected_shown


def test_evidence_set_prefers_the_row_adding_most():
    # row 1 repeats row 0; row 2 adds tokens 2 and 3 (a value: weight 2)
    covers = np.array([[1, 1, 0, 0], [1, 1, 1, 0], [0, 0, 1, 1]], dtype=bool)
    weights, content = np.array([1.0, 1.0, 1.0, 2.0]), np.ones(4, dtype=bool)
    selected, shown = evidence_set(covers, 3, weights, content, np.zeros(3, np.int64),
                                   np.array([0, 1, 2]), 3, 3)
    assert selected.tolist() == [True, False, True]
    # row 1, the next by score, adds nothing to rows 0 and 2: it is filler, not shown
    assert shown.tolist() == [0, 2]
    # one citation per source: the second source-0 row is not shown
    _, shown = evidence_set(covers, 3, weights, content, np.array([0, 0, 1]),
                            np.array([0, 1, 2]), 3, 1)
    assert shown.tolist() == [0, 2]


def test_evidence_set_shows_only_rows_covering_content():
    # row 0 (the best by score) covers only a stop word: row 1 anchors the set and comes
    # first; row 0 is not shown even as a citation by score
    covers = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=bool)
    weights, content = np.array([1.0, 0.25, 1.0]), np.array([True, False, True])
    selected, shown = evidence_set(covers, 3, weights, content, np.array([0, 1, 2]),
                                   np.array([0, 1, 2]), 3, 1)
    assert selected.tolist() == [False, True, True]
    assert shown.tolist() == [1, 2]
    # unless it may be shown without cover (an embedding-only candidate)
    selected, shown = evidence_set(covers, 3, weights, content, np.array([0, 1, 2]),
                                   np.array([0, 1, 2]), 3, 1, np.array([True, False, False]))
    assert selected.tolist() == [True, True, True]
    assert shown.tolist() == [0, 1, 2]
    # nothing covers content: nothing is shown
    nothing = np.zeros((2, 3), dtype=bool)
    selected, shown = evidence_set(nothing, 2, weights, content, np.array([0, 1]),
                                   np.array([0, 1]), 3, 2)
    assert selected.tolist() == [False, False] and shown.tolist() == []


def test_evidence_set_edge_cases():
    empty = np.zeros((0, 0), dtype=bool)
    none = np.zeros(0, dtype=np.int64)
    selected, shown = evidence_set(empty, 0, np.zeros(0), np.zeros(0, bool), none, none, 3, 1)
    assert selected.shape == (0,) and shown.shape == (0,)
    # no tokens: no row covers content, so only rows allowed without cover take part;
    # top_k 0: nothing at all
    covers = np.zeros((2, 0), dtype=bool)
    selected, shown = evidence_set(covers, 2, np.zeros(0), np.zeros(0, bool),
                                   np.array([0, 1]), np.array([1]), 3, 1)
    assert selected.tolist() == [False, False] and shown.tolist() == []
    selected, shown = evidence_set(covers, 2, np.zeros(0), np.zeros(0, bool),
                                   np.array([0, 1]), np.array([1]), 3, 1, np.ones(2, bool))
    assert selected.tolist() == [True, False] and shown.tolist() == [0, 1]
    selected, shown = evidence_set(covers, 2, np.zeros(0), np.zeros(0, bool),
                                   np.array([0, 1]), np.array([1]), 0, 1, np.ones(2, bool))
    assert selected.tolist() == [False, False] and shown.tolist() == []


def test_evidence_set_bad_input():
    with pytest.raises(ValueError, match="covers"):
        evidence_set(np.zeros(3, dtype=bool), 0, np.zeros(3), np.zeros(3, bool),
                     np.zeros(0, np.int64), np.zeros(0, np.int64), 1, 1)
    with pytest.raises(ValueError, match="n_pool"):
        evidence_set(np.zeros((2, 1), dtype=bool), 3, np.zeros(1), np.zeros(1, bool),
                     np.zeros(2, np.int64), np.zeros(0, np.int64), 1, 1)
    with pytest.raises(ValueError, match="matched"):
        evidence_set(np.zeros((2, 1), dtype=bool), 2, np.zeros(1), np.zeros(1, bool),
                     np.zeros(2, np.int64), np.zeros(0, np.int64), 1, 1, None,
                     np.zeros((2, 2), bool))
    with pytest.raises(ValueError, match="uncovered_ok"):
        evidence_set(np.zeros((2, 1), dtype=bool), 2, np.zeros(1), np.zeros(1, bool),
                     np.zeros(2, np.int64), np.zeros(0, np.int64), 1, 1, np.zeros(3, bool))


@st.composite
def widening_cases(draw):
    """One pair: a sentence and a passage over a small vocabulary (so that tokens
    repeat), blocks of equal tokens, tokens glued or apart."""
    sentence = draw(st.lists(st.integers(0, 6), min_size=1, max_size=8))
    content = draw(st.lists(st.booleans(), min_size=len(sentence), max_size=len(sentence)))
    passage = draw(st.lists(st.integers(0, 6), min_size=1, max_size=16))
    gaps = draw(st.lists(st.integers(0, 2), min_size=len(passage), max_size=len(passage)))
    starts, ends, position = [], [], 0
    for gap in gaps:
        position += gap
        starts.append(position)
        position += 3
        ends.append(position)
    q = draw(st.integers(0, len(sentence) - 1))
    t = draw(st.integers(0, len(passage) - 1))
    length = draw(st.integers(0, min(len(sentence) - q, len(passage) - t)))
    blocks = [(q, t, length)]
    if length and draw(st.booleans()):
        q2, t2 = q + length + 1, t + length + draw(st.integers(1, 3))
        if q2 < len(sentence) and t2 < len(passage):
            blocks.append((q2, t2, 1))
    reach = draw(st.integers(1, EVIDENCE_REACH + 1))
    return sentence, content, passage, starts, ends, blocks, reach


def _widened(sentence, content, passage, starts, ends, blocks, reach, embedding=False):
    live = [block for block in blocks if block[2] > 0]
    facts = np.zeros((N_FACTS, 1), dtype=np.int64)
    facts[FACT_BLOCK_HI, 0] = len(blocks)
    facts[FACT_TOKEN_LO, 0], facts[FACT_TOKEN_HI, 0] = 0, len(passage)
    if live:
        facts[FACT_CHAR_START, 0] = starts[min(t for _, t, _ in live)]
        facts[FACT_CHAR_END, 0] = ends[max(t + n - 1 for _, t, n in live)]
    evidence = (int(facts[FACT_CHAR_START, 0]), int(facts[FACT_CHAR_END, 0]))
    widen_evidence(
        facts, np.zeros(1, dtype=np.int64), np.array([0, len(sentence)], dtype=np.int64),
        np.array(sentence, dtype=np.int64), np.array(content, dtype=bool),
        np.array(blocks, dtype=np.int64).reshape(-1, 3), np.array(passage, dtype=np.int64),
        np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64),
        np.array([embedding]), reach,
    )
    return evidence, (int(facts[FACT_CHAR_START, 0]), int(facts[FACT_CHAR_END, 0]))


@settings(max_examples=400, deadline=None)
@given(widening_cases())
def test_widen_evidence_matches_reference(case):
    sentence, content, passage, starts, ends, blocks, reach = case
    evidence, got = _widened(*case)
    assert got == naive_widen_evidence(
        sentence, content, blocks, passage, starts, ends, evidence, reach
    )
    # the evidence only grows, and stays inside the passage
    assert got[0] <= evidence[0] and got[1] >= evidence[1]
    assert got[0] >= 0 and got[1] <= max(ends[-1], evidence[1])


def test_widen_evidence_takes_content_beside_the_alignment():
    # sentence "revenue rose 15 % to 2.4" (ids 1-6, "%" and "to" not content); passage
    # "revenue of 2.4 billion , up 15 % from a year" aligned on "2.4" only
    sentence, content = [1, 2, 3, 4, 5, 6], [True, True, True, False, False, True]
    passage = [1, 7, 6, 9, 10, 8, 3, 4, 11, 12, 13]
    starts = [0, 8, 11, 15, 22, 24, 27, 29, 31, 36, 38]
    ends = [7, 10, 14, 22, 23, 26, 29, 30, 35, 37, 42]
    _, got = _widened(sentence, content, passage, starts, ends, [(5, 2, 1)], EVIDENCE_REACH)
    assert got == (0, 30)  # "revenue" ... "15%": both ends of the claim, not "from a year"
    # a reach of one token stops at the first token without content of the sentence
    _, got = _widened(sentence, content, passage, starts, ends, [(5, 2, 1)], 1)
    assert got == (11, 14)
    # an embedding-only pair keeps its evidence; a pair without blocks too
    assert _widened(sentence, content, passage, starts, ends, [(5, 2, 1)], 5, True)[1] == (
        11, 14)
    assert _widened(sentence, content, passage, starts, ends, [(0, 0, 0)], 5)[1] == (0, 0)


def test_widen_evidence_takes_each_sentence_token_once():
    # "growth" once in the sentence, three times in the passage: only the nearest is taken
    sentence, content = [1, 2], [True, True]
    passage = [2, 5, 2, 5, 1, 5, 2]
    starts = [0, 4, 8, 12, 16, 20, 24]
    ends = [3, 7, 11, 15, 19, 23, 27]
    _, got = _widened(sentence, content, passage, starts, ends, [(0, 4, 1)], 5)
    assert got == (8, 19)


def test_evidence_set_shows_what_the_evidence_matched():
    # row 0 covers all tokens (its neighbouring passage holds tokens 2 and 3) but its
    # alignment matched tokens 0 and 1: row 1, which matched 2 and 3, is shown too
    covers = np.array([[1, 1, 1, 1], [0, 0, 1, 1], [1, 1, 0, 0]], dtype=bool)
    matched = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 1, 0, 0]], dtype=bool)
    weights, content = np.ones(4), np.ones(4, dtype=bool)
    selected, shown = evidence_set(covers, 3, weights, content, np.array([0, 1, 2]),
                                   np.array([1, 2]), 3, 3, None, matched)
    assert selected.tolist() == [True, False, False]
    assert shown.tolist() == [0, 1]
    # by covers alone, row 0 leaves nothing to add
    _, shown = evidence_set(covers, 3, weights, content, np.array([0, 1, 2]),
                            np.array([1, 2]), 3, 3)
    assert shown.tolist() == [0]
