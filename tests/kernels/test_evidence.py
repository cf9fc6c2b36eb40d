"""The evidence-set kernel (citekit.kernels._evidence) against its reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels._evidence import evidence_set
from naive import naive_evidence_set


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
    return (covers, n_pool, weights, content, row_source, by_score, top_k, max_per_source,
            uncovered_ok)


@settings(max_examples=400, deadline=None)
@given(evidence_cases())
def test_evidence_set_matches_reference(case):
    (covers, n_pool, weights, content, row_source, by_score, top_k, max_per_source,
     uncovered_ok) = case
    n_tokens = len(weights)
    selected, shown = evidence_set(
        np.array(covers, dtype=bool).reshape(len(covers), n_tokens), n_pool,
        np.array(weights), np.array(content, dtype=bool), np.array(row_source, dtype=np.int64),
        np.array(by_score, dtype=np.int64), top_k, max_per_source,
        np.array(uncovered_ok, dtype=bool),
    )
    expected_selected, expected_shown = naive_evidence_set(
        covers, n_pool, weights, content, row_source, by_score, top_k,
        max_per_source, uncovered_ok,
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
    assert shown.tolist() == [0, 2, 1]
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
    with pytest.raises(ValueError, match="uncovered_ok"):
        evidence_set(np.zeros((2, 1), dtype=bool), 2, np.zeros(1), np.zeros(1, bool),
                     np.zeros(2, np.int64), np.zeros(0, np.int64), 1, 1, np.zeros(3, bool))
