"""Top-candidate retrieval with MaxScore-style pruning gives, bit for bit, the arrays of
the walk-everything algorithm it replaced (``naive_top_candidates_in_order``) and the
candidates the definition gives (``naive_top_candidates``), on every path of the kernel:
pruned or not, both walks, forced stop checks, binary searches or list walks."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels._retrieval import _Scratch, top_candidates
from citekit.index import IdfIndex
from naive import assert_top_candidates_by_definition, naive_top_candidates_in_order

# weight pools: integers (sums exact in any order, so ties are real ties), a few repeated
# fractions (ties whose sums round differently by order), and free floats
WEIGHT_POOLS = {
    "integers": [1.0, 2.0, 3.0],
    "fractions": [0.1, 0.7, 1 / 3, 2.9, 1.3],
    "free": None,
}
PATHS = [
    # (prune, walk, check_cost, search_cost)
    (False, "auto", 2.0, 16.0),
    (False, "listed", 2.0, 16.0),
    (False, "scan", 2.0, 16.0),
    (True, "auto", 2.0, 16.0),
    (True, "listed", 0.0, 0.0),  # check before every list; search rows whenever pruned
    (True, "scan", 0.0, 1e18),  # check before every list; always walk the lists
    (True, "listed", 0.0, 1.0),
]


def _assert_same(got, expected):
    for name, a, b in zip(("offsets", "passages", "rank_scores", "scores"), got, expected):
        assert a.dtype == b.dtype, name
        assert a.shape == b.shape, name
        # bit-identical floats (array_equal would also accept -0.0 == 0.0)
        assert a.tobytes() == b.tobytes(), name


@st.composite
def retrieval_cases(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_passages = draw(st.integers(1, 60))
    n_columns = draw(st.integers(1, 10))
    density = draw(st.sampled_from([0.05, 0.3, 0.6, 0.95, None]))
    if density is None:
        # subsets of every size: passages holding only light terms can outscore those
        # holding one heavy term, which is what an early stop of admission would miss
        passage_sets = [
            set(rng.choice(n_columns, size=int(rng.integers(0, n_columns + 1)), replace=False))
            for _ in range(n_passages)
        ]
    else:
        passage_sets = [
            {c for c in range(n_columns) if rng.random() < density} for _ in range(n_passages)
        ]
    pool = WEIGHT_POOLS[draw(st.sampled_from(sorted(WEIGHT_POOLS)))]
    all_rank = draw(st.booleans())
    queries = []
    for _ in range(draw(st.integers(1, 4))):
        terms = []
        # token -1 is in no passage; columns may repeat within a query
        for column in rng.integers(-1, n_columns, size=int(rng.integers(0, 12))).tolist():
            weight = float(rng.choice(pool)) if pool else float(rng.uniform(0.05, 6.0))
            terms.append((column, weight, bool(all_rank or rng.random() < 0.75)))
        queries.append(terms)
    k = draw(st.sampled_from([0, 1, 2, 3, 5, n_passages, n_passages + 3]))
    return passage_sets, queries, k, pool is WEIGHT_POOLS["integers"]


def _arrays(passage_sets, queries):
    index = IdfIndex.from_token_lists([sorted(s) for s in passage_sets])
    vocabulary = index.vocabulary.tolist()
    columns = np.array(
        [vocabulary.index(c) if c in vocabulary else -1 for t in queries for c, _, _ in t],
        dtype=np.int64,
    )
    weights = np.array([w for t in queries for _, w, _ in t], dtype=np.float64)
    ranks = np.array([r for t in queries for _, _, r in t], dtype=bool)
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in queries])]).astype(np.int64)
    return index, columns, weights, ranks, offsets


def _arrays_and_expected(passage_sets, queries, k):
    """:func:`_arrays`, and the walk-everything algorithm's result on them."""
    index, columns, weights, ranks, offsets = _arrays(passage_sets, queries)
    expected = naive_top_candidates_in_order(
        *index.postings, index.rows, len(passage_sets), columns, weights, ranks, offsets, k
    )
    return index, columns, weights, ranks, offsets, expected


@settings(max_examples=150, deadline=None)
@given(case=retrieval_cases())
def test_every_path_matches_the_walk_everything_algorithm_bit_for_bit(case):
    passage_sets, queries, k, exact_weights = case
    index, columns, weights, ranks, offsets, expected = _arrays_and_expected(
        passage_sets, queries, k
    )
    n_passages = len(passage_sets)
    scratch = _Scratch()
    for prune, walk, check_cost, search_cost in PATHS:
        for _ in range(2):  # the reused scratch must come back clean
            got = top_candidates(
                *index.postings, n_passages, columns, weights, offsets, k,
                term_ranks=ranks, rows=index.rows, scratch=scratch, prune=prune, walk=walk,
                check_cost=check_cost, search_cost=search_cost,
            )
            assert not scratch.scores.any()
            _assert_same(got, expected)
    if exact_weights:
        assert_top_candidates_by_definition(got, passage_sets, queries, k)


def test_ties_at_the_kth_score_keep_the_lowest_passages():
    # 40 passages hold the same three terms; five more hold one extra term
    sets = [{0, 1, 2} for _ in range(40)] + [{0, 1, 2, 3} for _ in range(5)]
    queries = [[(0, 1.5, True), (1, 0.25, True), (2, 3.0, True), (3, 4.0, True)]]
    index, columns, weights, ranks, offsets = _arrays(sets, queries)
    for prune, walk, check_cost, search_cost in PATHS:
        out_offsets, passages, _, _ = top_candidates(
            *index.postings, len(sets), columns, weights, offsets, 12,
            term_ranks=ranks, rows=index.rows, prune=prune, walk=walk,
            check_cost=check_cost, search_cost=search_cost,
        )
        assert out_offsets.tolist() == [0, 12]
        assert passages.tolist() == [40, 41, 42, 43, 44] + list(range(7))


@pytest.mark.parametrize("k", [1, 2])
def test_passages_holding_only_light_terms_are_not_lost(k):
    # after the two heaviest terms the best score is 4 (no passage holds both) and the
    # three light terms left weigh 6 together: admission must go on, and passage 2
    # (holding two light terms only) is the best
    sets = [{0}, {1}, {2, 3}, {4}]
    queries = [[(0, 4.0, True), (1, 3.0, True), (2, 3.0, True), (3, 3.0, True), (4, 0.5, True)]]
    index, columns, weights, ranks, offsets = _arrays(sets, queries)
    for prune, walk, check_cost, search_cost in PATHS:
        out_offsets, passages, rank_scores, _ = top_candidates(
            *index.postings, len(sets), columns, weights, offsets, k,
            term_ranks=ranks, rows=index.rows, prune=prune, walk=walk,
            check_cost=check_cost, search_cost=search_cost,
        )
        assert passages.tolist() == [2, 0][:k]
        assert rank_scores.tolist() == [6.0, 4.0][:k]


def test_sums_equal_in_query_order_tie_however_the_walk_rounded_them():
    # in query order 0.2 + 0.1 + 0.7 == 0.3 + 0.7 == 1.0; heaviest first, 0.7 + 0.2 + 0.1
    # rounds to 0.9999999999999999: the walk's sums must not decide the tie (passage 0,
    # the lower, wins it)
    queries = [[(0, 0.3, True), (1, 0.2, True), (2, 0.45, True), (3, 0.1, True), (4, 0.7, True)]]
    # alone, and behind a dozen passages scoring exactly 1.0 (so that the guessed floor
    # of the best lands on the k-th best itself)
    for sets in ([{1, 3, 4}, {0, 4}, {2}], [{1, 3, 4}] + [{0, 4}] * 12 + [{2}]):
        _assert_lowest_wins(sets, queries)


def _assert_lowest_wins(sets, queries):
    index, columns, weights, ranks, offsets = _arrays(sets, queries)
    for prune, walk, check_cost, search_cost in PATHS:
        _, passages, rank_scores, _ = top_candidates(
            *index.postings, len(sets), columns, weights, offsets, 1,
            term_ranks=ranks, rows=index.rows, prune=prune, walk=walk,
            check_cost=check_cost, search_cost=search_cost,
        )
        assert passages.tolist() == [0]
        assert rank_scores.tolist() == [1.0]


def test_light_long_lists_are_not_needed_to_find_the_best():
    # one heavy rare term and many light common ones: pruning stops admitting passages
    # early, and the result is still the reference's
    rng = np.random.default_rng(7)
    sets = [{c for c in range(1, 9) if rng.random() < 0.8} for _ in range(3000)]
    for p in range(0, 3000, 97):
        sets[p].add(0)
    queries = [[(0, 9.0, True)] + [(c, 0.1 + 0.01 * c, True) for c in range(1, 9)]]
    index, columns, weights, ranks, offsets = _arrays(sets, queries)
    expected = naive_top_candidates_in_order(
        *index.postings, index.rows, len(sets), columns, weights, ranks, offsets, 10
    )
    for prune, walk, check_cost, search_cost in PATHS:
        got = top_candidates(
            *index.postings, len(sets), columns, weights, offsets, 10,
            term_ranks=ranks, rows=index.rows, prune=prune, walk=walk,
            check_cost=check_cost, search_cost=search_cost,
        )
        _assert_same(got, expected)


def test_bad_walk_is_refused():
    one = np.zeros(1, dtype=np.int64)
    with pytest.raises(ValueError, match="walk"):
        top_candidates(np.array([0, 1]), one, 1, one, np.ones(1), np.array([0, 1]), 1,
                       walk="sideways")


def test_workload_corpus_matches_the_walk_everything_algorithm(retrieval_calls):
    # the pipeline's own retrieval calls on a benchmark corpus (IDF weights, content
    # words ranking, k = max_candidates_lexical), recorded and replayed on every path
    calls = retrieval_calls(300, 3, 4)
    for args, kwargs in calls:
        for k in (args[6], 1, 7):
            expected = naive_top_candidates_in_order(
                args[0], args[1], kwargs["rows"], args[2], args[3], args[4],
                kwargs["term_ranks"], args[5], k,
            )
            for prune, walk, check_cost, search_cost in PATHS:
                got = top_candidates(
                    *args[:6], k, term_ranks=kwargs["term_ranks"], rows=kwargs["rows"],
                    prune=prune, walk=walk, check_cost=check_cost, search_cost=search_cost,
                )
                _assert_same(got, expected)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_non_positive_weights_are_refused(bad):
    one = np.zeros(1, dtype=np.int64)
    with pytest.raises(ValueError, match="term_weights must be positive"):
        top_candidates(np.array([0, 1]), one, 1, one, np.array([bad]), np.array([0, 1]), 1)
