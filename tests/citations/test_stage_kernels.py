"""The pipeline's own numba kernels against plain-Python references, and best-first
alignment against aligning every candidate."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels._index import factorize
from citekit.kernels._overlap import pair_bag_counts, row_contains
from citekit.config import CitationConfig
from citekit.index import IdfIndex
from citekit.pipeline import Pipeline, WeightedScorer
from citekit.results import results_to_json
from naive import (
    naive_pair_bag_counts,
    naive_range_rows,
    naive_top_candidates,
    naive_transpose,
)


passages_strategy = st.lists(st.lists(st.integers(0, 15), max_size=10), min_size=1, max_size=8)


@settings(max_examples=150)
@given(passages=passages_strategy, data=st.data())
def test_pair_bag_counts_matches_reference(passages, data):
    index = IdfIndex.from_token_lists(passages)
    n_terms = index.n_terms
    queries = data.draw(
        st.lists(
            st.lists(
                st.tuples(st.integers(-1, max(n_terms - 1, 0)), st.integers(1, 4), st.booleans()),
                max_size=6,
                unique_by=lambda t: t[0],
            ),
            min_size=1,
            max_size=4,
        )
    )
    pairs = data.draw(
        st.lists(
            st.tuples(st.integers(0, len(queries) - 1), st.integers(0, len(passages) - 1)),
            max_size=12,
        )
    )
    term_offsets = np.cumsum([0] + [len(q) for q in queries]).astype(np.int64)
    flat = [t for q in queries for t in q]
    columns = np.array([t[0] for t in flat], dtype=np.int64)
    counts = np.array([t[1] for t in flat], dtype=np.int64)
    content = np.array([t[2] for t in flat], dtype=bool)
    pq = np.array([p[0] for p in pairs], dtype=np.int64)
    pp = np.array([p[1] for p in pairs], dtype=np.int64)
    pointers, row_columns = index.rows
    got = pair_bag_counts(pointers, row_columns, columns, term_offsets, counts, content, pq, pp)
    vocabulary = index.vocabulary.tolist()
    passage_sets = [{vocabulary.index(t) for t in p} for p in passages]
    expected = naive_pair_bag_counts(passage_sets, queries, pairs)
    for got_array, expected_list in zip(got, expected):
        assert got_array.tolist() == expected_list
    # the column count given (as the pipeline does) rather than found
    again = pair_bag_counts(pointers, row_columns, columns, term_offsets, counts, content, pq, pp,
                            max(n_terms, 1))
    assert [a.tolist() for a in again] == [a.tolist() for a in got]


@settings(max_examples=150)
@given(passages=passages_strategy, data=st.data())
def test_row_contains_matches_reference(passages, data):
    index = IdfIndex.from_token_lists(passages)
    probes = data.draw(
        st.lists(
            st.tuples(st.integers(0, len(passages) - 1), st.integers(-2, index.n_terms + 2)),
            max_size=30,
        )
    )
    rows = np.array([p[0] for p in probes], dtype=np.int64)
    cols = np.array([p[1] for p in probes], dtype=np.int64)
    pointers, row_columns = index.rows
    vocabulary = index.vocabulary.tolist()
    expected = [0 <= c < len(vocabulary) and vocabulary[c] in passages[r] for r, c in probes]
    assert row_contains(pointers, row_columns, rows, cols).tolist() == expected
    assert index.contains(rows, np.where(cols < index.n_terms, cols, -1)).tolist() == [
        e if c < index.n_terms else False for e, c in zip(expected, cols.tolist())
    ]


class AlignEverything(WeightedScorer):
    """Same scores, but not the built-in type: the pipeline then aligns every feasible pair."""


def _generated(seed):
    rng = random.Random(seed)
    subjects = ["Revenue", "Profit", "Headcount", "Output", "Traffic", "Demand"]
    places = ["in Lisbon", "in Osaka", "at the plant", "in Europe", "overseas"]
    verbs = ["grew", "fell", "rose", "dropped"]

    def sentence():
        return (
            f"{rng.choice(subjects)} {rng.choice(places)} {rng.choice(verbs)} "
            f"{rng.randint(1, 30)}% "
            f"to ${rng.randint(1, 9)}.{rng.randint(0, 9)} million in {rng.randint(2018, 2024)}."
        )

    documents = [" ".join(sentence() for _ in range(25)) for _ in range(12)]
    answers = []
    for _ in range(6):
        parts = []
        for _ in range(6):
            doc = rng.choice(documents).split(". ")
            choice = rng.random()
            if choice < 0.4:
                parts.append(rng.choice(doc).rstrip(".") + ".")
            elif choice < 0.7:
                parts.append(sentence())
            else:
                a, b = rng.choice(doc).split(" "), rng.choice(doc).split(" ")
                parts.append(" ".join(a[: len(a) // 2] + b[len(b) // 2 :]).rstrip(".") + ".")
        answers.append(" ".join(parts))
    return documents, answers


def test_best_first_alignment_equals_aligning_everything(monkeypatch):
    import citekit._citations.rounds as rounds_module

    # small batches are aligned in one call; force the best-first rounds here
    monkeypatch.setattr(rounds_module, "_ALIGN_ALL_BELOW", 0)
    monkeypatch.setattr(rounds_module, "_FIRST_ROUND_PAIRS", 2)
    calls = []
    original = rounds_module.run_aligner

    def counting(*args):
        calls.append(len(args[4]))
        return original(*args)

    monkeypatch.setattr(rounds_module, "run_aligner", counting)
    configs = [
        CitationConfig(),
        CitationConfig(top_k=1),
        CitationConfig(top_k=5, max_citations_per_source=1),
        CitationConfig(prefer_source_order=False, min_final_score=1.0),
        CitationConfig(multi_span_evidence=True, window_size_sentences=2),
    ]
    for seed, config in enumerate(configs):
        documents, answers = _generated(seed)
        fast = Pipeline(config)
        full = Pipeline(config, scorer=AlignEverything())
        corpus = fast.prepare(documents)
        calls.clear()
        fast_results = fast.align_many(answers, corpus)
        if seed == 0:
            assert len(calls) >= 2  # more than one round really happened
        for a, b in zip(fast_results, full.align_many(answers, corpus)):
            assert results_to_json(a) == results_to_json(b)


@settings(max_examples=100)
@given(values=st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 3), max_size=60))
def test_factorize_matches_numpy_unique(values):
    array = np.array(values, dtype=np.int64)
    vocabulary, columns = factorize(array)
    expected_vocabulary, expected_columns = np.unique(array, return_inverse=True)
    np.testing.assert_array_equal(vocabulary, expected_vocabulary)
    np.testing.assert_array_equal(columns, expected_columns.reshape(-1))
    _, _, first = factorize(array, return_first=True)
    np.testing.assert_array_equal(first, np.unique(array, return_index=True)[1])


def test_factorize_grows_its_table():
    rng = np.random.default_rng(4)
    array = rng.integers(-(2**40), 2**40, size=50_000)
    vocabulary, columns = factorize(array)
    expected_vocabulary, expected_columns = np.unique(array, return_inverse=True)
    np.testing.assert_array_equal(vocabulary, expected_vocabulary)
    np.testing.assert_array_equal(columns, expected_columns.reshape(-1))


@settings(max_examples=150, deadline=None)
@given(
    n_passages=st.integers(1, 300),
    density=st.sampled_from([0.01, 0.05, 0.3, 0.9]),
    k=st.integers(0, 12),
    seed=st.integers(0, 2**32 - 1),
    tied=st.booleans(),
)
def test_top_candidates_matches_reference(n_passages, density, k, seed, tied):
    # sparse and dense posting lists take the two walks of the kernel (first-touch list /
    # sequential scan); distinct or tied weights exercise the histogram and the tie-breaks
    from citekit.kernels._retrieval import _Scratch, top_candidates

    rng = np.random.default_rng(seed)
    n_columns = 12
    passage_sets = [
        {c for c in range(n_columns) if rng.random() < density} for _ in range(n_passages)
    ]
    index = IdfIndex.from_token_lists([sorted(s) for s in passage_sets])
    queries = []
    for _ in range(int(rng.integers(1, 5))):
        picked = rng.choice(n_columns + 2, size=int(rng.integers(0, 8)), replace=False)
        terms = []
        for column in picked.tolist():
            weight = 1.0 if tied else float(rng.uniform(0.1, 5.0))
            terms.append((column, weight, bool(rng.random() < 0.7)))
        queries.append(terms)
    # the index's columns: token id c is column c when every id is present
    vocabulary = index.vocabulary.tolist()
    columns = [
        [vocabulary.index(c) if c in vocabulary else -1 for c, _, _ in terms] for terms in queries
    ]
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in queries])]).astype(np.int64)
    scratch = _Scratch()
    for _ in range(2):  # the reused scratch must come back clean
        out_offsets, passages, rank_scores, scores = top_candidates(
            *index.postings,
            n_passages,
            np.array([c for cs in columns for c in cs], dtype=np.int64),
            np.array([w for t in queries for _, w, _ in t], dtype=np.float64),
            offsets,
            k,
            term_ranks=np.array([r for t in queries for _, _, r in t], dtype=bool),
            rows=index.rows,
            scratch=scratch,
        )
        assert not scratch.scores.any()
        expected = naive_top_candidates(passage_sets, queries, k)
        for q, (best, rank, full) in enumerate(expected):
            lo, hi = out_offsets[q], out_offsets[q + 1]
            got = passages[lo:hi].tolist()
            # equal rank sums may differ in the last bit between summation orders
            np.testing.assert_allclose(rank_scores[lo:hi], rank, rtol=1e-12)
            if tied or len(set(np.round(rank, 9))) == len(rank):
                assert got == best
            np.testing.assert_allclose(
                scores[lo:hi],
                [sum(w for c, w, _ in queries[q] if c in passage_sets[p]) for p in got],
                rtol=1e-12,
            )
        assert len(passages) == sum(len(best) for best, _, _ in expected)


def test_top_candidates_needs_rows_for_non_ranking_terms():
    from citekit.kernels._retrieval import top_candidates

    one = np.zeros(1, dtype=np.int64)
    with pytest.raises(ValueError, match="rows"):
        top_candidates(
            np.array([0, 1]), one, 1, one, np.ones(1), np.array([0, 1]), 1,
            term_ranks=np.zeros(1, dtype=bool),
        )


@settings(max_examples=150)
@given(
    columns=st.lists(st.integers(0, 9), max_size=40),
    data=st.data(),
)
def test_index_of_columns_matches_reference(columns, data):
    # the index builder on column numbers (IdfIndex's constructor): rows and their
    # transpose, with every column of the vocabulary, those in no row too
    from citekit.kernels._index import index_of_columns

    n = len(columns)
    ranges = data.draw(
        st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=8)
    )  # overlapping, empty and repeated ranges
    starts = np.array([min(a, b) for a, b in ranges], dtype=np.int64)
    ends = np.array([max(a, b) for a, b in ranges], dtype=np.int64)
    (indptr, indices), postings, frequency, ratio = index_of_columns(
        np.array(columns, dtype=np.int64), starts, ends, 10
    )
    expected = naive_range_rows(columns, starts.tolist(), ends.tolist())
    assert indptr.tolist() == np.cumsum([0] + [len(r) for r in expected]).tolist()
    assert indices.tolist() == [c for r in expected for c in r]
    t_indptr, t_indices = postings
    transposed = naive_transpose(expected, 10)
    assert t_indptr.tolist() == np.cumsum([0] + [len(r) for r in transposed]).tolist()
    assert t_indices.tolist() == [p for r in transposed for p in r]
    assert frequency.tolist() == [len(r) for r in transposed]
    assert ratio.tolist() == ((len(ranges) + 1.0) / (frequency + 1.0)).tolist()
    # the dtypes of the index builder's arrays (the passages of the postings as the
    # retrieval walk reads them)
    assert [a.dtype for a in (indptr, indices, t_indptr, t_indices, frequency, ratio)] == [
        np.int64, np.int64, np.int64, np.uint32, np.int64, np.float64
    ]


def test_index_constructor_canonicalizes_rows():
    # columns out of order and repeated within a row count once, in order
    index = IdfIndex([10, 20, 30], [0, 4, 5], [2, 0, 2, 1, 1])
    assert index.rows[1].tolist() == [0, 1, 2, 1]
    assert index.document_frequency.tolist() == [1, 2, 1]
    assert index.matrix.toarray().tolist() == [[1, 1, 1], [0, 1, 0]]


@pytest.mark.parametrize(
    "config",
    [
        CitationConfig(),
        CitationConfig(multi_span_evidence=False),
        CitationConfig(top_k=5, max_citations_per_source=1, multi_span_max_spans=1),
        CitationConfig(window_size_sentences=2, multi_span_merge_gap_chars=0),
    ],
)
def test_conflicts_read_only_where_a_value_can_face_one(monkeypatch, workload, config):
    """records_batch marks the alignments with a value of the sentence beside or between
    their matched blocks; reading every real alignment's values instead (what the
    pipeline did before) gives the same results, and the marks skip alignments."""
    import citekit._citations.records as records_module
    from citekit.kernels._evidence import RECORD_CHECK_VALUES

    documents = workload.make_documents(30, seed=7)
    answers = [workload.make_answer(documents, seed=seed)["answer"] for seed in range(12)]
    pipe = Pipeline(config)
    corpus = pipe.prepare(documents)
    marked = pipe.align_many(answers, corpus)
    original = records_module.records_batch
    skipped = []

    def check_every_alignment(*args):
        out = original(*args)
        judged_offsets, uncovered_ok, aligned_content = args[2], args[13], args[14]
        rec_offsets, rec_rows, rec_flags = out[0], out[1], out[2]
        entries = np.repeat(judged_offsets[:-1], np.diff(rec_offsets)) + rec_rows
        real = ~uncovered_ok[entries] & (aligned_content[entries] >= 2)
        skipped.append(int((real & (rec_flags & RECORD_CHECK_VALUES == 0)).sum()))
        rec_flags |= np.where(real, RECORD_CHECK_VALUES, 0)
        return out

    monkeypatch.setattr(records_module, "records_batch", check_every_alignment)
    every = pipe.align_many(answers, corpus)
    assert [results_to_json(r) for r in marked] == [results_to_json(r) for r in every]
    assert sum(skipped) > 0
    # and conflicts were found on the way
    assert any(c.conflicts for r in marked for span in r for c in span.citations)
