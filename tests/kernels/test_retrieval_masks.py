"""Top-candidate retrieval through per-passage term masks (queries of at most 16
ranking terms, positive weights) gives, bit for bit, the arrays of the walk-everything
algorithm (``naive_top_candidates_in_order``) and of the float-summing paths it
replaces, on both walks; and its helpers (rank scores from a mask, selection, the final
sort) match their plain-Python references."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels import _retrieval_masks as mask_path
from citekit.kernels import _retrieval_select as select
from citekit.kernels._retrieval import _Scratch, top_candidates
from naive import (
    assert_top_candidates_by_definition,
    naive_collect_marked,
    naive_held,
    naive_kth_smallest,
    naive_rank_score,
    naive_sort_best,
    naive_top_candidates_in_order,
)
from test_retrieval_prune import WEIGHT_POOLS, _arrays, _arrays_and_expected, _assert_same

# (masks, walk): the default, the mask path on both walks, and the float paths it stands
# in for
PATHS = [
    (None, "auto"), (True, "auto"), (True, "listed"), (True, "scan"), (False, "listed"),
    (False, "scan"),
]


@st.composite
def mask_cases(draw):
    """Corpora and queries of up to 24 terms (past the 16 a mask holds), drawn from
    weight pools that tie (integers, repeated fractions) or not."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_passages = draw(st.integers(1, 80))
    n_columns = draw(st.integers(1, 24))
    density = draw(st.sampled_from([0.05, 0.3, 0.7, 1.0]))
    passage_sets = [
        {c for c in range(n_columns) if rng.random() < density} for _ in range(n_passages)
    ]
    pool = WEIGHT_POOLS[draw(st.sampled_from(sorted(WEIGHT_POOLS)))]
    all_rank = draw(st.booleans())
    queries = []
    for _ in range(draw(st.integers(1, 4))):
        terms = []
        n_terms = draw(st.sampled_from([0, 1, 2, 8, 9, 15, 16, 17, 24]))
        for column in rng.integers(-1, n_columns, size=n_terms).tolist():
            weight = float(rng.choice(pool)) if pool else float(rng.uniform(0.05, 6.0))
            terms.append((column, weight, bool(all_rank or rng.random() < 0.75)))
        queries.append(terms)
    k = draw(st.sampled_from([0, 1, 2, 5, n_passages - 1, n_passages, n_passages + 3]))
    return passage_sets, queries, max(k, 0), pool is WEIGHT_POOLS["integers"]


def _run(index, n_passages, columns, weights, ranks, offsets, k, masks, walk, scratch=None):
    return top_candidates(
        *index.postings, n_passages, columns, weights, offsets, k, term_ranks=ranks,
        rows=index.rows, scratch=scratch, masks=masks, walk=walk,
    )


@settings(max_examples=120, deadline=None)
@given(case=mask_cases())
def test_masks_match_the_walk_everything_algorithm_bit_for_bit(case):
    passage_sets, queries, k, exact_weights = case
    index, columns, weights, ranks, offsets, expected = _arrays_and_expected(
        passage_sets, queries, k
    )
    n_passages = len(passage_sets)
    # the unranked terms' weights from rows, or from the frequent columns' bits
    for scratch in (_Scratch(), _Scratch(frequent_min_passages=0)):
        for masks, walk in PATHS:
            for _ in range(2):  # the reused scratch must come back clean
                got = _run(index, n_passages, columns, weights, ranks, offsets, k, masks,
                           walk, scratch)
                assert not scratch.scores.any() and not scratch.words.any()
                assert not scratch.slots.any()
                _assert_same(got, expected)
    if exact_weights:
        assert_top_candidates_by_definition(got, passage_sets, queries, k)


def _compare_paths(sets, queries, ks):
    index, columns, weights, ranks, offsets = _arrays(sets, queries)
    for k in ks:
        expected = naive_top_candidates_in_order(
            *index.postings, index.rows, len(sets), columns, weights, ranks, offsets, k
        )
        for masks, walk in PATHS:
            got = _run(index, len(sets), columns, weights, ranks, offsets, k, masks, walk)
            _assert_same(got, expected)


def test_many_ties_keep_the_lowest_passages():
    # 3,000 passages, most holding the same two terms: the k-th best is tied thousands
    # of times, and the sampled bound lands on the tie
    rng = np.random.default_rng(3)
    sets = [{0, 1} if rng.random() < 0.9 else {0, 1, 2} for _ in range(3000)]
    queries = [[(0, 4.25, True), (1, 4.25, True), (2, 9.0, True), (3, 1.0, False)]]
    _compare_paths(sets, queries, [1, 50, 200, 2999, 3000, 4000])


def test_a_sample_that_guesses_too_high_falls_back_to_every_touched_passage():
    # 5,000 passages: the sample takes every 4th; the first 100 it takes hold a heavy
    # term, no other passage does, so its guessed bound of the 200 best is reached by
    # only 100 passages and the kernel must look at every touched one
    sets = [{0, 1} if p % 4 == 0 and p < 400 else {0} for p in range(5000)]
    for p in range(1, 5000, 7):
        sets[p].add(2)
    queries = [[(0, 1.0, True), (1, 7.5, True), (2, 0.3, True)]]
    _compare_paths(sets, queries, [150, 200, 300])


def test_integer_weights_tie_exactly_and_float_weights_round_in_query_order():
    # 0.1 + 0.2 + 0.7 (query order) and 0.7 + 0.2 + 0.1 differ by one ulp: the mask's
    # tables must add in query order, across the two bytes of the mask
    rng = np.random.default_rng(11)
    sets = [set(rng.choice(16, size=int(rng.integers(1, 16)), replace=False).tolist())
            for _ in range(400)]
    fractions = [0.1, 0.2, 0.7, 1 / 3, 0.1, 0.2, 0.7, 1 / 3] * 2
    integers = [float(w) for w in rng.integers(1, 4, size=16)]
    for pool in (fractions, integers):
        queries = [[(c, w, True) for c, w in enumerate(pool)]]
        _compare_paths(sets, queries, [1, 7, 100, 400])


def test_more_than_sixteen_terms_take_the_float_path():
    rng = np.random.default_rng(5)
    sets = [set(rng.choice(20, size=6, replace=False).tolist()) for _ in range(300)]
    long_query = [(c, 1.0 + 0.1 * c, True) for c in range(20)]
    sixteen = [(c, 1.0 + 0.1 * c, c % 5 > 0) for c in range(20)]
    _compare_paths(sets, [long_query, sixteen], [0, 1, 10, 300])


def test_workload_corpus_matches_on_both_walks_with_and_without_masks(retrieval_calls):
    calls = retrieval_calls(300, 4, 3)
    for args, kwargs in calls:
        for k in (args[6], 1, 13):
            expected = naive_top_candidates_in_order(
                args[0], args[1], kwargs["rows"], args[2], args[3], args[4],
                kwargs["term_ranks"], args[5], k,
            )
            for masks, walk in PATHS:
                got = top_candidates(
                    *args[:6], k, term_ranks=kwargs["term_ranks"], rows=kwargs["rows"],
                    masks=masks, walk=walk,
                )
                _assert_same(got, expected)


@settings(max_examples=150, deadline=None)
@given(
    weights=st.lists(
        st.one_of(st.sampled_from([0.1, 0.2, 0.7, 1.0, 3.0]), st.floats(1e-3, 1e3)),
        min_size=1, max_size=16,
    ),
    mask=st.integers(0, 2**16 - 1),
)
def test_a_mask_scores_exactly_as_its_terms_added_in_query_order(weights, mask):
    n_terms = len(weights)
    mask &= (1 << n_terms) - 1
    term_weights = np.array(weights)
    terms = np.arange(n_terms, dtype=np.int64)
    tables = np.empty((2, 256))
    mask_path._mask_tables(term_weights, terms, tables)
    held = [bool(mask >> j & 1) for j in range(n_terms)]
    exact = mask_path._mask_score(np.uint32(mask), tables, term_weights, terms)
    assert exact == naive_rank_score(weights, held)
    # the estimate (the two bytes summed apart) lies within the kernel's margin
    estimate = mask_path._mask_estimate(np.uint32(mask), tables)
    down = 1.0 - (n_terms + 2) * 2.0**-50
    assert estimate * down <= exact and exact * down <= estimate


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(st.sampled_from([0.5, 1.0, 2.0, 2.0, 3.5]) | st.floats(-1e6, 1e6),
                    min_size=1, max_size=300),
    data=st.data(),
)
def test_select_finds_the_rank_th_smallest(values, data):
    rank = data.draw(st.integers(0, len(values) - 1))
    array = np.array(values)
    assert select._select(array, len(values), rank) == naive_kth_smallest(values, rank)
    assert sorted(array.tolist()) == sorted(values)  # reordered, not changed
    ints = np.array([int(v) for v in values], dtype=np.int64)
    assert select._select(ints, len(values), rank) == naive_kth_smallest(ints.tolist(), rank)


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(0, 120),
    seed=st.integers(0, 2**32 - 1),
    huge=st.booleans(),
    nan=st.booleans(),
    spread=st.booleans(),
)
def test_the_final_sort_orders_by_value_then_passage(n, seed, huge, nan, spread):
    rng = np.random.default_rng(seed)
    # passages near 2**62 do not fit beside a value rank in one key: two argsorts then;
    # values that tie often, or hardly ever
    top = 2**62 if huge else 10**6
    passages = rng.choice(top, size=n, replace=False).astype(np.int64)
    values = (
        rng.uniform(0.0, 50.0, size=n) if spread
        else rng.choice([1.0, 2.5, 2.5, 7.0, 0.1 + 0.2], size=n)
    )
    out_passages = np.full(n + 3, -1, dtype=np.int64)
    out_values = np.full(n + 3, -1.0)
    if nan and n:
        values[rng.random(n) < 0.3] = np.nan
        values[0] = np.nan
        select._sort_best(passages, values, n, out_passages, out_values, 3)
        # NaN rows take the argsort path: by value, larger first, NaN last (numpy's
        # mergesort), equal values by lower passage
        by_passage = np.argsort(passages, kind="mergesort")
        order = by_passage[np.argsort(-values[by_passage], kind="mergesort")]
        assert out_passages[3:].tolist() == passages[order].tolist()
        assert out_values[3:].tobytes() == values[order].tobytes()
        return
    select._sort_best(passages, values, n, out_passages, out_values, 3)
    expected_passages, expected_values = naive_sort_best(passages.tolist(), values.tolist())
    assert out_passages[3:].tolist() == expected_passages
    assert out_values[3:].tolist() == expected_values
    assert out_passages[:3].tolist() == [-1, -1, -1]


@given(
    n=st.integers(0, 200),
    seed=st.integers(0, 2**32 - 1),
    share=st.sampled_from([0.0, 0.01, 0.2, 1.0]),
)
def test_collecting_the_words_that_reach_the_bar(n, seed, share):
    # none, a few, many or all words reach the bar; some lie exactly at it
    rng = np.random.default_rng(seed)
    bar = 40 << mask_path._MASK_BITS
    words = (rng.integers(1, 40, size=n, dtype=np.int64) << mask_path._MASK_BITS).astype(np.uint32)
    reach = rng.random(n) < share
    words[reach] = bar + rng.integers(0, 3, size=int(reach.sum())) * (1 << mask_path._MASK_BITS)
    words |= rng.integers(1, 1 << mask_path._MASK_BITS, size=n).astype(np.uint32)
    words[reach & (rng.random(n) < 0.3)] = bar  # exactly at the bar (no mask bits)
    tables = rng.uniform(0.0, 1.0, size=(2, 256))
    expected = naive_collect_marked(words.tolist(), bar)
    low = (1 << mask_path._MASK_BITS) - 1
    for listed in (False, True):
        touched = rng.permutation(n).astype(np.int64)
        hits = np.full(n + 1, -1, dtype=np.int64)
        values = np.zeros(n + 1)
        n_hits = mask_path._collect_marked(words, listed, touched, n, bar, tables, hits, values)
        got = hits[:n_hits].tolist()
        if listed:  # in the order listed
            assert got == [p for p in touched.tolist() if words[p] >= bar]
        else:
            assert got == expected
        for passage, value in zip(got, values[:n_hits].tolist()):
            mask = int(words[passage]) & low
            assert value == tables[0, mask & 255] + tables[1, mask >> 8]


def test_a_single_word_at_the_bar_is_collected_wherever_it_lies():
    bar = 7 << mask_path._MASK_BITS
    tables = np.zeros((2, 256))
    for n in (1, 31, 32, 33, 64, 100):
        for position in range(n):
            words = np.full(n, (6 << mask_path._MASK_BITS) | 1, dtype=np.uint32)
            words[position] = bar | 1
            hits = np.zeros(n + 1, dtype=np.int64)
            untouched = np.zeros(0, dtype=np.int64)
            n_hits = mask_path._collect_marked(
                words, False, untouched, 0, bar, tables, hits, np.zeros(n + 1)
            )
            assert hits[:n_hits].tolist() == [position]


@pytest.mark.parametrize("k", [0, 1, 3])
def test_empty_queries_and_k(k):
    one = np.zeros(1, dtype=np.int64)
    offsets, passages, rank_scores, scores = top_candidates(
        np.array([0, 1]), one, 1, one[:0], np.zeros(0), np.array([0, 0]), k
    )
    assert offsets.tolist() == [0, 0] and passages.size == rank_scores.size == scores.size == 0


@pytest.mark.parametrize("scale", [1e-310, 1e-300, 1e300])
def test_tiny_and_huge_weights(scale):
    # subnormal sums take the float path (their integer scale would be infinite); huge
    # ones the mask path (their sum stays finite)
    rng = np.random.default_rng(2)
    sets = [set(rng.choice(6, size=3, replace=False).tolist()) for _ in range(200)]
    queries = [[(c, scale * (1 + c % 3), True) for c in range(6)]]
    _compare_paths(sets, queries, [1, 10, 200])


def test_unranked_terms_among_and_outside_the_frequent_columns():
    # 100 columns, column c in about 1 / (1 + c / 10) of the passages: the 63 most
    # frequent are kept per passage; queries mix unranked terms among them and outside
    rng = np.random.default_rng(8)
    sets = [{c for c in range(100) if rng.random() < 1 / (1 + c / 10)} for _ in range(500)]
    frequent_only = [(0, 1.5, False), (3, 2.0, True), (1, 0.7, False), (40, 3.0, True)]
    mixed = [(0, 1.5, False), (3, 2.0, True), (90, 0.7, False), (99, 0.3, False),
             (60, 3.0, True)]
    index, columns, weights, ranks, offsets = _arrays(sets, [frequent_only, mixed])
    for k in (1, 40, 500):
        expected = naive_top_candidates_in_order(
            *index.postings, index.rows, len(sets), columns, weights, ranks, offsets, k
        )
        scratch = _Scratch(frequent_min_passages=0)
        for masks, walk in PATHS:
            got = _run(index, len(sets), columns, weights, ranks, offsets, k, masks, walk,
                       scratch)
            _assert_same(got, expected)
        assert (scratch.bit_of_column >= 0).sum() == 63


# -- which query terms each candidate holds ------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(case=mask_cases(), prune=st.booleans())
def test_held_terms_match_the_rows_on_every_path(case, prune):
    passage_sets, queries, k, _ = case
    index, columns, weights, ranks, offsets = _arrays(passage_sets, queries)
    n_passages = len(passage_sets)
    # the unranked terms' bits from rows, or from the frequent columns' bits
    for scratch in (_Scratch(), _Scratch(frequent_min_passages=0)):
        for masks, walk in PATHS:
            plain = top_candidates(
                *index.postings, n_passages, columns, weights, offsets, k, term_ranks=ranks,
                rows=index.rows, scratch=scratch, masks=masks, walk=walk, prune=prune,
            )
            *got, held = top_candidates(
                *index.postings, n_passages, columns, weights, offsets, k, term_ranks=ranks,
                rows=index.rows, scratch=scratch, masks=masks, walk=walk, prune=prune,
                return_held=True,
            )
            _assert_same(got, plain)
            assert not scratch.words.any() and not scratch.slots.any()
            assert held.dtype == np.int64
            assert held.tolist() == naive_held(index.rows, columns, offsets, got[0], got[1])


def test_held_terms_of_long_queries_are_unknown_and_a_query_may_repeat_a_column():
    rng = np.random.default_rng(8)
    sets = [set(rng.choice(70, size=20, replace=False).tolist()) for _ in range(50)]
    long_query = [(c, 1.0, True) for c in range(64)]  # 64 terms: past the 63 bits
    repeated = [(3, 1.0, True), (3, 2.0, False), (5, 1.0, False), (99, 1.0, True)]
    index, columns, weights, ranks, offsets = _arrays(sets, [long_query, repeated])
    *got, held = top_candidates(
        *index.postings, len(sets), columns, weights, offsets, 10, term_ranks=ranks,
        rows=index.rows, return_held=True,
    )
    n_long = int(got[0][1])
    assert n_long == 10 and (held[:n_long] == -1).all()
    assert held.tolist() == naive_held(index.rows, columns, offsets, got[0], got[1])
    assert {bits & 3 for bits in held[n_long:].tolist()} == {3}  # both terms of column 3


def test_held_terms_need_rows():
    one = np.array([0], dtype=np.int64)
    with pytest.raises(ValueError, match="rows"):
        top_candidates(np.array([0, 1]), one, 1, one, np.ones(1), np.array([0, 1]), 1,
                       return_held=True)
