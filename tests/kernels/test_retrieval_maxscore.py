"""The paths of top-candidate retrieval for large corpora -- MaxScore (a bound of the k-th
best from the rows, candidates in a bitmap) and the scanning walk block by block of
passages -- give, bit for bit, the arrays of the walk-everything algorithm
(``naive_top_candidates_in_order``) and the candidates of the definition
(``naive_top_candidates``), forced or not, with held terms as the rows give them."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels._retrieval import _Scratch, top_candidates
from citekit.kernels._retrieval_select import heaviest_first
from naive import (
    assert_top_candidates_by_definition,
    naive_heaviest_first,
    naive_held,
    naive_top_candidates_in_order,
)
from test_retrieval_prune import _arrays, _arrays_and_expected, _assert_same, retrieval_cases

# forced, by default (long lists only), never
MAXSCORE = [True, None, False]

# the scanning walk: list after list, blocks of 1, 3 and 7 passages, by default
SCAN_BLOCKS = [0, 1, 3, 7, None]


def _run(index, n_passages, columns, weights, ranks, offsets, k, maxscore, scratch,
         **options):
    return top_candidates(
        *index.postings, n_passages, columns, weights, offsets, k, term_ranks=ranks,
        rows=index.rows, scratch=scratch, maxscore=maxscore, **options,
    )


@settings(max_examples=150, deadline=None)
@given(case=retrieval_cases())
def test_maxscore_path_matches_the_walk_everything_algorithm_bit_for_bit(case):
    passage_sets, queries, k, exact_weights = case
    index, columns, weights, ranks, offsets, expected = _arrays_and_expected(
        passage_sets, queries, k
    )
    n_passages = len(passage_sets)
    scratch = _Scratch()
    for maxscore in MAXSCORE:
        for _ in range(2):  # the reused scratch must come back clean
            *got, held = _run(index, n_passages, columns, weights, ranks, offsets, k,
                              maxscore, scratch, return_held=True)
            assert not scratch.scores.any() and not scratch.words.any()
            _assert_same(got, expected)
            assert held.tolist() == naive_held(index.rows, columns, offsets, got[0], got[1])
    if exact_weights:
        assert_top_candidates_by_definition(got, passage_sets, queries, k)


def test_light_long_lists_only_reach_the_candidates():
    # one heavy rare term and many light common ones: only the heavy list finds
    # candidates; passages holding all the light terms but not the heavy one cannot
    # catch up
    rng = np.random.default_rng(7)
    sets = [{c for c in range(1, 9) if rng.random() < 0.8} for _ in range(3000)]
    for p in range(0, 3000, 97):
        sets[p].add(0)
    queries = [[(0, 9.0, True)] + [(c, 0.1 + 0.01 * c, True) for c in range(1, 9)]]
    index, columns, weights, ranks, offsets = _arrays(sets, queries)
    for k in (1, 10, 31, 32, 200):
        expected = naive_top_candidates_in_order(
            *index.postings, index.rows, len(sets), columns, weights, ranks, offsets, k
        )
        for maxscore in MAXSCORE:
            got = _run(index, len(sets), columns, weights, ranks, offsets, k, maxscore, None)
            _assert_same(got, expected)


def test_ties_at_the_kth_score_keep_the_lowest_passages():
    # 40 passages hold the same three terms; five more hold one extra term
    sets = [{0, 1, 2} for _ in range(40)] + [{0, 1, 2, 3} for _ in range(5)]
    queries = [[(0, 1.5, True), (1, 0.25, True), (2, 3.0, True), (3, 4.0, True)]]
    index, columns, weights, ranks, offsets = _arrays(sets, queries)
    for maxscore in MAXSCORE:
        out_offsets, passages, _, _ = _run(
            index, len(sets), columns, weights, ranks, offsets, 12, maxscore, None
        )
        assert out_offsets.tolist() == [0, 12]
        assert passages.tolist() == [40, 41, 42, 43, 44] + list(range(7))


def test_sums_equal_in_query_order_tie_however_the_walk_ordered_them():
    # in query order 0.2 + 0.1 + 0.7 == 0.3 + 0.7 == 1.0; heaviest first, 0.7 + 0.2 + 0.1
    # rounds to 0.9999999999999999: the lower passage (0) wins the tie
    queries = [[(0, 0.3, True), (1, 0.2, True), (2, 0.45, True), (3, 0.1, True), (4, 0.7, True)]]
    for sets in ([{1, 3, 4}, {0, 4}, {2}], [{1, 3, 4}] + [{0, 4}] * 12 + [{2}]):
        index, columns, weights, ranks, offsets = _arrays(sets, queries)
        for maxscore in MAXSCORE:
            _, passages, rank_scores, _ = _run(
                index, len(sets), columns, weights, ranks, offsets, 1, maxscore, None
            )
            assert passages.tolist() == [0]
            assert rank_scores.tolist() == [1.0]


@pytest.mark.parametrize("n_threads", [1, 2])
def test_workload_corpus_matches_the_walk_everything_algorithm(retrieval_calls, n_threads):
    # the pipeline's own retrieval calls on a benchmark corpus, replayed on every path
    for args, kwargs in retrieval_calls(300, 3, 4):
        for k in (args[6], 1, 7):
            expected = naive_top_candidates_in_order(
                args[0], args[1], kwargs["rows"], args[2], args[3], args[4],
                kwargs["term_ranks"], args[5], k,
            )
            for maxscore in MAXSCORE:
                got = top_candidates(
                    *args[:6], k, term_ranks=kwargs["term_ranks"], rows=kwargs["rows"],
                    maxscore=maxscore, n_threads=n_threads,
                )
                _assert_same(got, expected)


def test_maxscore_needs_rows():
    # without rows the bound cannot be found: the lists are walked instead
    sets = [{0, 1}, {1}, {0, 2}, {2}]
    queries = [[(0, 2.0, True), (1, 1.0, True), (2, 0.5, True)]]
    index, columns, weights, ranks, offsets = _arrays(sets, queries)
    got = top_candidates(*index.postings, len(sets), columns, weights, offsets, 2, maxscore=True)
    assert got[1].tolist() == [0, 2]


@settings(max_examples=100, deadline=None)
@given(case=retrieval_cases())
def test_blocked_scanning_walk_matches_the_walk_everything_algorithm(case):
    passage_sets, queries, k, _ = case
    index, columns, weights, ranks, offsets, expected = _arrays_and_expected(
        passage_sets, queries, k
    )
    n_passages = len(passage_sets)
    scratch = _Scratch()
    for scan_block in SCAN_BLOCKS:
        for masks in (True, None):
            *got, held = top_candidates(
                *index.postings, n_passages, columns, weights, offsets, k, term_ranks=ranks,
                rows=index.rows, scratch=scratch, walk="scan", masks=masks,
                scan_block=scan_block, maxscore=False, return_held=True,
            )
            assert not scratch.words.any()
            _assert_same(got, expected)
            assert held.tolist() == naive_held(index.rows, columns, offsets, got[0], got[1])


def test_blocked_walk_on_the_workload_corpus(retrieval_calls):
    for args, kwargs in retrieval_calls(300, 3, 4):
        expected = naive_top_candidates_in_order(
            args[0], args[1], kwargs["rows"], args[2], args[3], args[4],
            kwargs["term_ranks"], args[5], args[6],
        )
        for scan_block in (5, 1000, 32768):
            got = top_candidates(
                *args[:7], term_ranks=kwargs["term_ranks"], rows=kwargs["rows"],
                walk="scan", masks=True, scan_block=scan_block, maxscore=False,
            )
            _assert_same(got, expected)


def test_bad_scan_block_is_refused():
    one = np.zeros(1, dtype=np.int64)
    with pytest.raises(ValueError, match="scan_block"):
        top_candidates(np.array([0, 1]), one, 1, one, np.ones(1), np.array([0, 1]), 1,
                       scan_block=-1)


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 4), min_size=1, max_size=8),
    weights=st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.5]), min_size=8, max_size=8),
    picks=st.lists(st.integers(0, 7), min_size=0, max_size=8),
)
def test_heaviest_first_matches_the_reference(lengths, weights, picks):
    # ties of weight and of length are common here: both tie-breaks are exercised
    n_columns = len(lengths)
    pointers = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    term_columns = np.array([i % n_columns for i in range(8)], dtype=np.int64)
    term_weights = np.array(weights, dtype=np.float64)
    terms = np.array(picks, dtype=np.int64)
    got = heaviest_first(terms, term_columns, term_weights, pointers).tolist()
    assert got == naive_heaviest_first(terms, term_columns, term_weights, pointers)
