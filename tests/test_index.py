"""IdfIndex: parity with a dense numpy computation, top-K order, persistence, bad inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.index import IdfIndex, TopK, gather_ranges, top_k_rows
from naive import naive_gather_ranges, naive_normalized_scores


def dense_scores(passages, queries):
    """The lexical score of the spec, computed densely with plain numpy."""
    vocab = sorted({t for p in passages for t in p} | {t for q in queries for t in q})
    col = {t: i for i, t in enumerate(vocab)}
    n = len(passages)
    contains = np.zeros((n, len(vocab)))
    for r, p in enumerate(passages):
        for t in p:
            contains[r, col[t]] = 1.0
    df = contains.sum(axis=0)
    idf = np.log((n + 1.0) / (df + 1.0)) + 1.0
    out = np.zeros((len(queries), n))
    for i, q in enumerate(queries):
        distinct = sorted(set(q))
        if not distinct:
            continue
        weights = np.array([idf[col[t]] for t in distinct])
        present = contains[:, [col[t] for t in distinct]]
        out[i] = present @ weights / weights.sum()
    return out


def pack(seqs):
    lengths = [len(s) for s in seqs]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ids = np.array([t for s in seqs for t in s], dtype=np.int64)
    return ids, offsets


token_lists = st.lists(
    st.lists(st.integers(-(2**62), 2**62) | st.integers(0, 12), max_size=12), max_size=12
)


@settings(max_examples=100)
@given(passages=token_lists, queries=token_lists)
def test_scores_match_dense_reference(passages, queries):
    index = IdfIndex.from_token_lists(passages)
    ids, offsets = pack(queries)
    sparse = index.scores(ids, offsets).toarray()
    np.testing.assert_allclose(sparse, dense_scores(passages, queries), rtol=1e-12, atol=1e-12)


@settings(max_examples=100)
@given(passages=token_lists, queries=token_lists, k=st.integers(0, 5))
def test_top_k_matches_dense_ranking(passages, queries, k):
    index = IdfIndex.from_token_lists(passages)
    ids, offsets = pack(queries)
    top = index.top_k(ids, offsets, k)
    dense = dense_scores(passages, queries)
    assert top.offsets.shape == (len(queries) + 1,)
    for i in range(len(queries)):
        got = top.passages[top.offsets[i] : top.offsets[i + 1]].tolist()
        ranked = sorted(
            (p for p in range(len(passages)) if dense[i, p] > 0), key=lambda p: (-dense[i, p], p)
        )
        # equal scores can differ in the last bits between sparse and dense sums
        assert len(got) == min(k, len(ranked))
        np.testing.assert_allclose(
            top.scores[top.offsets[i] : top.offsets[i + 1]],
            [dense[i, p] for p in ranked[:k]],
            rtol=1e-12,
        )


def test_build_with_overlapping_ranges_equals_copies():
    ids = np.array([1, 2, 3, 4, 5, 1], dtype=np.int64)
    starts, ends = np.array([0, 2, 3]), np.array([4, 6, 3])
    a = IdfIndex.build(ids, starts, ends)
    b = IdfIndex.from_token_lists([[1, 2, 3, 4], [3, 4, 5, 1], []])
    assert (a.matrix != b.matrix).nnz == 0
    np.testing.assert_array_equal(a.idf, b.idf)


def test_idf_formula_and_unseen():
    index = IdfIndex.from_token_lists([[7, 7, 8], [8], [9]])
    np.testing.assert_allclose(index.idf_of([7, 8, 9]), np.log(4 / np.array([2, 3, 2])) + 1)
    assert index.idf_of([123])[0] == pytest.approx(np.log(4) + 1)
    assert index.document_frequency.tolist() == [1, 2, 1]


def test_duplicates_in_query_count_once():
    index = IdfIndex.from_token_lists([[1, 2], [1]])
    once = index.scores([1, 2], [0, 2]).toarray()
    repeated = index.scores([1, 1, 1, 2, 2], [0, 5]).toarray()
    np.testing.assert_allclose(once, repeated)


def test_unseen_query_tokens_lower_the_score():
    index = IdfIndex.from_token_lists([[1, 2]])
    assert index.scores([1, 2], [0, 2]).toarray()[0, 0] == pytest.approx(1.0)
    assert index.scores([1, 2, 99], [0, 3]).toarray()[0, 0] < 1.0


def test_empty_inputs():
    empty = IdfIndex.from_token_lists([])
    assert empty.n_passages == 0 and empty.n_terms == 0
    top = empty.top_k([1, 2], [0, 2], 3)
    assert top.offsets.tolist() == [0, 0] and top.passages.size == 0
    index = IdfIndex.from_token_lists([[1], []])
    top = index.top_k([], [0], 3)  # no queries at all
    assert top.offsets.tolist() == [0]
    top = index.top_k([], [0, 0, 0], 3)  # two empty queries
    assert top.offsets.tolist() == [0, 0, 0]
    none = index.top_k(np.zeros(0, dtype=np.int64), [0], 2)
    assert isinstance(none, TopK)


def test_many_queries_are_blocked_consistently():
    rng = np.random.default_rng(0)
    passages = [rng.integers(0, 50, size=rng.integers(1, 20)).tolist() for _ in range(300)]
    queries = [rng.integers(0, 60, size=rng.integers(0, 15)).tolist() for _ in range(700)]
    index = IdfIndex.from_token_lists(passages)
    ids, offsets = pack(queries)
    whole = index.top_k(ids, offsets, 7)
    for i in (0, 255, 256, 511, 699):
        lo, hi = offsets[i], offsets[i + 1]
        single = index.top_k(ids[lo:hi], [0, hi - lo], 7)
        np.testing.assert_array_equal(
            single.passages, whole.passages[whole.offsets[i] : whole.offsets[i + 1]]
        )


def test_ties_prefer_lower_passage_index():
    index = IdfIndex.from_token_lists([[5], [5], [5], [6]])
    top = index.top_k([5], [0, 1], 2)
    assert top.passages.tolist() == [0, 1]


def test_persistence_round_trip():
    index = IdfIndex.from_token_lists([[1, 2, 3], [3, 4], [2**62]])
    again = IdfIndex.from_arrays(index.to_arrays())
    np.testing.assert_array_equal(again.vocabulary, index.vocabulary)
    np.testing.assert_array_equal(again.idf, index.idf)
    q = np.array([3, 2**62]), np.array([0, 2])
    np.testing.assert_array_equal(again.scores(*q).toarray(), index.scores(*q).toarray())


def test_postings_are_int64_copies_of_the_walked_uint32_passages():
    index = IdfIndex.from_token_lists([[1, 2, 3], [3, 4], [3]])
    indptr, indices = index.postings
    assert indptr.dtype == np.int64 and indices.dtype == np.int64
    assert indptr.tolist() == [0, 1, 2, 5, 6]
    assert indices.tolist() == [0, 0, 0, 1, 2, 1]
    walked = index._walk_postings[1]
    assert walked.dtype == np.uint32 and walked.tolist() == indices.tolist()
    # a copy each time: changing it leaves the index alone
    indices[:] = 0
    assert index.postings[1].tolist() == [0, 0, 0, 1, 2, 1]


def test_pickles_round_trip_and_older_int64_postings_are_upgraded():
    import pickle

    index = IdfIndex.from_token_lists([[1, 2, 3], [3, 4], [3], [9, 1]])
    query = np.array([3, 1, 9]), np.array([0, 3])
    want = index.top_k(*query, 3)
    again = pickle.loads(pickle.dumps(index))
    assert again._walk_postings[1].dtype == np.uint32
    assert again.top_k(*query, 3).passages.tolist() == want.passages.tolist()
    # the state an index pickled before 4-byte postings holds
    state = index.__getstate__()
    pointers, passages = state.pop("_walk_postings")
    state["_postings_int64"] = (pointers, passages.astype(np.int64))
    old = IdfIndex.__new__(IdfIndex)
    old.__setstate__(state)
    assert "_postings_int64" not in old.__dict__
    assert old._walk_postings[1].dtype == np.uint32
    assert old.postings[1].tolist() == index.postings[1].tolist()
    got = old.top_k(*query, 3)
    assert got.passages.tolist() == want.passages.tolist()
    assert got.scores.tolist() == want.scores.tolist()


def test_walk_passages_dtype_and_no_needless_copy():
    from citekit.kernels._retrieval import walk_passages

    small = walk_passages(np.array([0, 2, 1], dtype=np.int64), 3)
    assert small.dtype == np.uint32 and small.tolist() == [0, 2, 1]
    assert walk_passages(small, 3) is small
    # (a corpus of 2**32 passages or more keeps 8-byte passage numbers)
    huge = walk_passages(np.array([0, 2**32 + 5], dtype=np.int64), 2**32 + 6)
    assert huge.dtype == np.int64 and huge.tolist() == [0, 2**32 + 5]
    # strided input comes out contiguous
    strided = walk_passages(np.arange(6, dtype=np.int64)[::2], 6)
    assert strided.flags.c_contiguous and strided.tolist() == [0, 2, 4]


def test_bad_inputs_name_the_argument():
    with pytest.raises(TypeError, match="token_ids"):
        IdfIndex.build([1.5, 2.0], [0], [2])
    with pytest.raises(ValueError, match="range"):
        IdfIndex.build([1, 2], [0], [3])
    with pytest.raises(ValueError, match="range"):
        IdfIndex.build([1, 2], [2], [1])
    with pytest.raises(ValueError, match="query_offsets"):
        IdfIndex.from_token_lists([[1]]).scores([1, 2], [0, 1])
    with pytest.raises(ValueError, match="query_ids"):
        IdfIndex.from_token_lists([[1]]).scores([[1, 2]], [0, 2])
    with pytest.raises(ValueError, match="k"):
        IdfIndex.from_token_lists([[1]]).top_k([1], [0, 1], -1)
    with pytest.raises(TypeError, match="k"):
        IdfIndex.from_token_lists([[1]]).top_k([1], [0, 1], 2.5)
    with pytest.raises(TypeError, match="passages"):
        IdfIndex.from_token_lists("abc")
    with pytest.raises(ValueError, match="vocabulary"):
        IdfIndex([2, 1], [0, 0], [])


@settings(max_examples=100, deadline=None)
@given(ranges=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 6)), max_size=12))
def test_gather_ranges_equals_the_reference(ranges):
    starts = [s for s, _ in ranges]
    ends = [s + length for s, length in ranges]
    positions, rows = gather_ranges(np.array(starts, dtype=np.int32), np.array(ends))
    assert positions.dtype == rows.dtype == np.int64
    assert (positions.tolist(), rows.tolist()) == naive_gather_ranges(starts, ends)


def test_gather_ranges_refuses_an_end_before_its_start():
    with pytest.raises(ValueError, match="start"):
        gather_ranges(np.array([4, 2]), np.array([5, 1]))


def test_gather_ranges_and_top_k_rows_edge_cases():
    positions, rows = gather_ranges(np.array([3, 3, 0]), np.array([3, 5, 1]))
    assert positions.tolist() == [3, 4, 0] and rows.tolist() == [1, 1, 2]
    import scipy.sparse as sp

    top = top_k_rows(sp.csr_matrix((2, 4)), 3)
    assert top.offsets.tolist() == [0, 0, 0]


def test_large_index_is_fast_enough_to_build():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 2**62, size=200_000)
    bounds = np.arange(0, 200_001, 20)
    index = IdfIndex.build(ids, bounds[:-1], bounds[1:])
    assert index.n_passages == 10_000
    top = index.top_k(ids[:20], [0, 20], 3)
    assert top.passages[0] == 0 and top.scores[0] == pytest.approx(1.0)


@settings(max_examples=80)
@given(passages=token_lists, queries=token_lists, data=st.data())
def test_pair_scores_and_rank_tokens_match_dense(passages, queries, data):
    index = IdfIndex.from_token_lists(passages)
    ids, offsets = pack(queries)
    dense = dense_scores(passages, queries)
    if passages and queries:
        pairs = data.draw(
            st.lists(
                st.tuples(st.integers(0, len(queries) - 1), st.integers(0, len(passages) - 1)),
                max_size=20,
            )
        )
        pq = np.array([p[0] for p in pairs], dtype=np.int64)
        pp = np.array([p[1] for p in pairs], dtype=np.int64)
        np.testing.assert_allclose(
            index.pair_scores(ids, offsets, pq, pp), dense[pq, pp], rtol=1e-12, atol=1e-12
        )
    flags = np.array(
        data.draw(st.lists(st.booleans(), min_size=ids.size, max_size=ids.size)), dtype=bool
    )
    top = index.top_k(ids, offsets, 4, rank_tokens=flags)
    for i, query in enumerate(queries):
        flagged = [t for t, f in zip(query, flags[offsets[i] : offsets[i + 1]]) if f]
        rank = dense_scores(passages, [flagged])[0] if flagged else np.zeros(len(passages))
        expected = sorted(
            (p for p in range(len(passages)) if rank[p] > 0), key=lambda p: (-rank[p], p)
        )[:4]
        got = top.passages[top.offsets[i] : top.offsets[i + 1]].tolist()
        assert len(got) == len(expected)
        np.testing.assert_allclose(sorted(rank[got]), sorted(rank[expected]), rtol=1e-12)
        # the reported score is the full lexical score, not the ranking one
        np.testing.assert_allclose(
            top.scores[top.offsets[i] : top.offsets[i + 1]], dense[i, got], rtol=1e-12, atol=1e-12
        )


def test_rank_tokens_and_pairs_validation():
    index = IdfIndex.from_token_lists([[1]])
    with pytest.raises(ValueError, match="rank_tokens"):
        index.top_k([1, 2], [0, 2], 1, rank_tokens=[True])
    with pytest.raises(ValueError, match="pair_query"):
        index.pair_scores([1], [0, 1], [0, 1], [0])
    with pytest.raises(ValueError, match="pair_query"):
        index.pair_scores([1], [0, 1], [3], [0])
    with pytest.raises(ValueError, match="passages"):
        index.pair_scores([1], [0, 1], [0], [5])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 12), st.booleans()), max_size=8), max_size=5
    ),
    st.lists(st.integers(0, 12), unique=True, max_size=8).map(sorted),
)
def test_idf_query_terms_match_reference(queries, vocabulary):
    from citekit.kernels._retrieval import idf_query_terms
    from naive import naive_index_terms

    idf = [1.0 + 0.37 * i for i in range(len(vocabulary))]
    ids = np.array([t for tokens in queries for t, _ in tokens], dtype=np.int64)
    flags = np.array([f for tokens in queries for _, f in tokens], dtype=bool)
    offsets = np.array([0] + list(np.cumsum([len(t) for t in queries])), dtype=np.int64)
    token_columns = np.full(ids.shape[0], -7, dtype=np.int64)
    rows, columns, weights, term_flags, term_offsets, totals = idf_query_terms(
        ids, offsets, flags, np.array(vocabulary, dtype=np.int64), np.array(idf), 9.5,
        token_columns,
    )
    # every token's column, as a dictionary finds it (and as columns_of gives it)
    assert token_columns.tolist() == [vocabulary.index(t) if t in vocabulary else -1
                                      for t in ids.tolist()]
    if vocabulary:
        index = IdfIndex.from_token_lists([[t] for t in vocabulary])
        assert index.columns_of(ids).tolist() == token_columns.tolist()
    terms, expected_totals = naive_index_terms(queries, vocabulary, idf, 9.5)
    assert list(zip(rows.tolist(), columns.tolist(), weights.tolist(), term_flags.tolist())) == [
        tuple(term) for term in terms
    ]
    assert totals.tolist() == expected_totals
    assert np.diff(term_offsets).tolist() == [
        len({t for t, _ in tokens}) for tokens in queries
    ]


def test_idf_query_terms_check_token_columns():
    from citekit.kernels._retrieval import idf_query_terms

    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    args = (i64(3, 4), i64(0, 2), np.ones(2, dtype=bool), i64(4), np.ones(1), 2.0)
    for bad in (np.zeros(3, dtype=np.int64), np.zeros(2, dtype=np.int32)):
        with pytest.raises(ValueError, match="token_columns"):
            idf_query_terms(*args, bad)
    out = np.zeros(2, dtype=np.int64)
    idf_query_terms(*args, out)
    assert out.tolist() == [-1, 0]


def test_columns_of_edge_cases():
    index = IdfIndex.from_token_lists([[5, 9], [9, 12]])
    assert index.columns_of([]).tolist() == []
    assert index.columns_of(np.array([12, 4, 13, 5], dtype=np.int32)).tolist() == [2, -1, -1, 0]
    assert IdfIndex.from_token_lists([]).columns_of([1, 2]).tolist() == [-1, -1]
    with pytest.raises(TypeError, match="token_ids"):
        index.columns_of([1.5])
    with pytest.raises(ValueError, match="token_ids"):
        index.columns_of([[1]])


@settings(max_examples=100, deadline=None)
@given(
    counts=st.lists(st.integers(0, 5), max_size=6),
    data=st.data(),
)
def test_normalized_scores_equal_the_reference(counts, data):
    from citekit.kernels._retrieval import normalized_scores

    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    values = st.floats(-3, 40, allow_nan=False) | st.sampled_from([0.0, 1 / 3, 7.1])
    sums = np.array(data.draw(st.lists(values, min_size=int(offsets[-1]),
                                       max_size=int(offsets[-1]))), dtype=np.float64)
    denominators = np.array(
        data.draw(st.lists(st.sampled_from([0.0, -1.0, np.nan, 0.3, 2.5, 1 / 7]),
                           min_size=len(counts), max_size=len(counts))),
        dtype=np.float64,
    )
    found = normalized_scores(offsets, sums, denominators)
    assert found.tobytes() == naive_normalized_scores(offsets, sums, denominators).tobytes()


def test_top_k_threads_give_the_same_result_and_are_checked():
    import numba

    rng = np.random.default_rng(7)
    passages = [rng.integers(0, 60, size=int(rng.integers(1, 15))).tolist() for _ in range(3000)]
    queries = [rng.integers(0, 60, size=int(rng.integers(1, 12))).tolist() for _ in range(9)]
    index = IdfIndex.from_token_lists(passages)
    ids, offsets = pack(queries)
    one = index.top_k(ids, offsets, 40, n_threads=1)
    every = index.top_k(ids, offsets, 40, n_threads=numba.config.NUMBA_NUM_THREADS)
    default = index.top_k(ids, offsets, 40)
    for other in (every, default):
        assert other.offsets.tolist() == one.offsets.tolist()
        assert other.passages.tolist() == one.passages.tolist()
        assert other.scores.tolist() == one.scores.tolist()
    assert one.offsets[-1] == 9 * 40
    # checked even when there is nothing to do
    for bad in (0, -1, numba.config.NUMBA_NUM_THREADS + 1):
        with pytest.raises(ValueError, match="n_threads"):
            index.top_k(ids[:0], offsets[:1], 3, n_threads=bad)
    for bad in (1.5, "2", True):
        with pytest.raises(TypeError, match="n_threads"):
            index.top_k(ids, offsets, 3, n_threads=bad)


# -- top_k_with_terms: the top-K with the terms each candidate holds -------------------


def _held_by_definition(passages, query, passage):
    """Bit ``t`` set when ``passage`` holds the ``t``-th distinct token of ``query``
    (ascending by id); -1 for a query of more than 63 distinct tokens."""
    terms = sorted(set(query))
    if len(terms) > 63:
        return -1
    return sum(1 << t for t, token in enumerate(terms) if token in set(passages[passage]))


@settings(max_examples=100, deadline=None)
@given(
    passages=st.lists(st.lists(st.integers(0, 30), max_size=10), max_size=12),
    queries=st.lists(st.lists(st.integers(0, 40), max_size=10), max_size=5),
    k=st.integers(0, 6),
    data=st.data(),
)
def test_top_k_with_terms_is_top_k_with_held_terms_and_columns(passages, queries, k, data):
    index = IdfIndex.from_token_lists(passages)
    ids, offsets = pack(queries)
    rank = np.array(data.draw(st.lists(st.booleans(), min_size=len(ids), max_size=len(ids))),
                    dtype=bool)
    for rank_tokens in (None, rank):
        top, held, columns = index.top_k_with_terms(ids, offsets, k, rank_tokens=rank_tokens)
        expected = index.top_k(ids, offsets, k, rank_tokens=rank_tokens)
        for got, want in zip(top, expected):
            assert got.dtype == want.dtype and got.tolist() == want.tolist()
        assert held.dtype == np.int64 and held.shape == top.passages.shape
        assert held.tolist() == [
            _held_by_definition(passages, queries[q], int(top.passages[i]))
            for q in range(len(queries))
            for i in range(top.offsets[q], top.offsets[q + 1])
        ]
        assert columns.dtype == np.int64 and columns.tolist() == index.columns_of(ids).tolist()


def test_top_k_with_terms_of_long_queries_and_empty_cases():
    passages = [list(range(80)), [1, 2], [70, 71]]
    index = IdfIndex.from_token_lists(passages)
    # a query of 64 distinct tokens (held unknown: -1) beside one of two
    ids, offsets = pack([list(range(64)), [2, 71]])
    top, held, columns = index.top_k_with_terms(ids, offsets, 3)
    assert top.offsets.tolist() == [0, 2, 5]
    assert held[:2].tolist() == [-1, -1]
    assert sorted(zip(top.passages[2:].tolist(), held[2:].tolist())) == [
        (0, 0b11), (1, 0b01), (2, 0b10)
    ]
    assert columns.tolist() == index.columns_of(ids).tolist()
    # k = 0: no candidate, the columns all the same
    top, held, columns = index.top_k_with_terms(ids, offsets, 0)
    assert top.offsets.tolist() == [0, 0, 0] and held.size == top.passages.size == 0
    assert columns.tolist() == index.columns_of(ids).tolist()
    # no query, an empty query, a query of unknown tokens
    for queries in ([], [[]], [[500, 501]]):
        ids, offsets = pack(queries)
        top, held, columns = index.top_k_with_terms(ids, offsets, 2)
        assert top.offsets.tolist() == [0] * (len(queries) + 1)
        assert held.size == 0 and columns.tolist() == [-1] * len(ids)
    top, held, columns = index.top_k_with_terms([], [0], 2)
    assert top.offsets.tolist() == [0] and held.size == columns.size == 0
    # an index of no passage
    top, held, columns = IdfIndex.from_token_lists([]).top_k_with_terms([4, 5], [0, 2], 2)
    assert top.offsets.tolist() == [0, 0] and held.size == 0 and columns.tolist() == [-1, -1]


@pytest.mark.parametrize(
    "arguments, error, name",
    [
        (([1, 2], [0, 2], -1), ValueError, "k"),
        (([1, 2], [0, 2], 1.5), TypeError, "k"),
        (([1.5, 2], [0, 2], 1), TypeError, "query_ids"),
        (([[1, 2]], [0, 2], 1), ValueError, "query_ids"),
        (([1, 2], [0, 3], 1), ValueError, "query_offsets"),
        (([1, 2], [1, 2], 1), ValueError, "query_offsets"),
        (([1, 2], [0, 2, 1], 1), ValueError, "query_offsets"),
        (([1, 2], [0, 2], 1, {"rank_tokens": [True]}), ValueError, "rank_tokens"),
        (([1, 2], [0, 2], 1, {"n_threads": 0}), ValueError, "n_threads"),
        (([1, 2], [0, 2], 1, {"n_threads": "2"}), TypeError, "n_threads"),
    ],
)
def test_top_k_with_terms_checks_its_arguments(arguments, error, name):
    index = IdfIndex.from_token_lists([[1, 2], [2, 3]])
    *positional, keywords = arguments if isinstance(arguments[-1], dict) else (*arguments, {})
    with pytest.raises(error, match=name):
        index.top_k_with_terms(*positional, **keywords)
