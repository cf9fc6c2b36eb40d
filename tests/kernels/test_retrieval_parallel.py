"""Top-candidate retrieval shared among threads: every query is walked by one worker with
its own scratch, so the arrays are bit for bit those of one thread on every path; the
dealing of queries to workers and the packing of their slots match plain-Python
references; ``n_threads`` is checked."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels import _retrieval as bag
from citekit.kernels._retrieval import _Scratch, top_candidates
from citekit.kernels._retrieval_walk import ranking_lists
from naive import naive_deal_queries, naive_held, naive_pack_slots
from test_retrieval_masks import mask_cases
from test_retrieval_prune import _arrays, _assert_same

needs_two_threads = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba's thread pool has one thread"
)

# (prune, masks, walk): pruned and not, masks and float sums, both walks
PATHS = [
    (False, None, "auto"), (False, True, "listed"), (False, True, "scan"),
    (False, False, "listed"), (False, False, "scan"), (True, None, "auto"),
    (True, False, "listed"),
]


def _run(index, case_arrays, n_passages, k, prune, masks, walk, n_threads, scratch):
    columns, weights, ranks, offsets = case_arrays
    return top_candidates(
        *index.postings, n_passages, columns, weights, offsets, k, term_ranks=ranks,
        rows=index.rows, scratch=scratch, prune=prune, masks=masks, walk=walk,
        return_held=True, n_threads=n_threads,
    )


@needs_two_threads
@settings(max_examples=60, deadline=None)
@given(case=mask_cases())
def test_two_threads_give_the_arrays_of_one_bit_for_bit(case):
    passage_sets, queries, k, _ = case
    index, *case_arrays = _arrays(passage_sets, queries)
    n_passages = len(passage_sets)
    for scratch in (_Scratch(), _Scratch(frequent_min_passages=0)):
        for prune, masks, walk in PATHS:
            *serial, serial_held = _run(
                index, case_arrays, n_passages, k, prune, masks, walk, 1, scratch
            )
            for _ in range(2):  # the workers' reused scratch rows must come back clean
                *got, held = _run(
                    index, case_arrays, n_passages, k, prune, masks, walk, 2, scratch
                )
                _assert_same(got, serial)
                assert held.tobytes() == serial_held.tobytes()
                assert not scratch.scores.any() and not scratch.words.any()
                assert not scratch.slots.any()
    columns, _, _, offsets = case_arrays
    assert serial_held.tolist() == naive_held(index.rows, columns, offsets, *serial[:2])


@needs_two_threads
def test_many_queries_on_a_large_corpus_give_the_serial_arrays_by_default(monkeypatch):
    # past the entries from which the default shares the queries among threads
    rng = np.random.default_rng(3)
    n_passages = 4000
    sets = [set(rng.choice(400, size=25, replace=False).tolist()) for _ in range(n_passages)]
    queries = [
        [(int(c), float(rng.uniform(0.5, 4.0)), bool(rng.random() < 0.8))
         for c in rng.choice(400, size=int(rng.integers(1, 20)), replace=False)]
        for _ in range(20)
    ]
    index, columns, weights, ranks, offsets = _arrays(sets, queries)
    _, entries = ranking_lists(index.postings[0], columns, ranks, offsets)
    assert entries.sum() >= bag._PARALLEL_MIN_ENTRIES
    args = (*index.postings, n_passages, columns, weights, offsets, 50)
    launched = []
    run_on_threads = bag.run_on_threads
    monkeypatch.setattr(
        bag, "run_on_threads", lambda n, *a: launched.append(n) or run_on_threads(n, *a)
    )
    default = top_candidates(*args, term_ranks=ranks, rows=index.rows, return_held=True)
    one = top_candidates(*args, term_ranks=ranks, rows=index.rows, return_held=True,
                         n_threads=1)
    assert launched == [min(2, numba.get_num_threads())] or numba.get_num_threads() == 1
    _assert_same(default[:4], one[:4])
    assert default[4].tolist() == one[4].tolist()
    assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS  # restored


@settings(max_examples=100, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 40), min_size=1, max_size=12),
    n_queries=st.integers(0, 9),
    n_workers=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
)
def test_dealing_matches_the_longest_first_reference(lengths, n_queries, n_workers, seed):
    rng = np.random.default_rng(seed)
    pointers = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    sizes = rng.integers(0, 6, size=n_queries)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    columns = rng.integers(-1, len(lengths), size=int(offsets[-1])).astype(np.int64)
    ranks = rng.random(int(offsets[-1])) < 0.7
    n_terms, entries = ranking_lists(pointers, columns, ranks, offsets)
    worker_offsets, queries = bag._deal_queries(entries + 1, n_workers)
    expected, expected_total, expected_loads = naive_deal_queries(
        pointers, columns, ranks, offsets, n_workers
    )
    got = [queries[worker_offsets[w]:worker_offsets[w + 1]].tolist()
           for w in range(n_workers)]
    assert got == expected
    assert entries.sum() == expected_total
    assert (entries + 1).tolist() == expected_loads
    assert n_terms.tolist() == [
        sum(1 for t in range(offsets[q], offsets[q + 1]) if columns[t] >= 0 and ranks[t])
        for q in range(n_queries)
    ]


@settings(max_examples=100, deadline=None)
@given(
    counts=st.lists(st.integers(0, 4), max_size=8),
    slot=st.integers(4, 6),
    want_held=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_packing_the_slots_matches_the_reference(counts, slot, want_held, seed):
    rng = np.random.default_rng(seed)
    size = len(counts) * slot
    passages = rng.integers(0, 100, size=size).astype(np.int64)
    rank_scores = rng.random(size)
    scores = rng.random(size)
    held = rng.integers(0, 2**40, size=size if want_held else 0).astype(np.int64)
    (exp_p, exp_r, exp_s, exp_h), exp_offsets = naive_pack_slots(
        counts, slot, [passages.tolist(), rank_scores.tolist(), scores.tolist(),
                       held.tolist() if want_held else [0] * size],
    )
    out_offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    bag._pack_slots(np.array(counts, dtype=np.int64), slot, want_held, passages,
                    rank_scores, scores, held, out_offsets)
    n = out_offsets[-1]
    assert out_offsets.tolist() == exp_offsets
    assert passages[:n].tolist() == exp_p
    assert rank_scores[:n].tolist() == exp_r and scores[:n].tolist() == exp_s
    if want_held:
        assert held[:n].tolist() == exp_h


@pytest.mark.parametrize(
    "bad, error",
    [(0, ValueError), (-1, ValueError), (1.5, TypeError), ("2", TypeError),
     (numba.config.NUMBA_NUM_THREADS + 1, ValueError)],
)
def test_bad_thread_counts_are_refused_naming_the_argument(bad, error):
    one = np.array([0], dtype=np.int64)
    with pytest.raises(error, match="n_threads"):
        top_candidates(np.array([0, 1]), one, 1, one, np.ones(1), np.array([0, 1]), 1,
                       n_threads=bad)
