"""Parity tests of the best-first alignment kernels (citekit.kernels._ranking) and of the
pipeline's in-place aligner path (citekit.kernels.align_ranges_unchecked)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels._scoring import (
    COMPONENT_NAMES,
    accept_pairs,
    pair_feasibility,
    score_components,
)
from citekit.kernels._rounds import assemble_blocks, close_queries, record_alignments
from citekit.kernels._overlap import bag_counts_from_held, group_into_terms, query_terms
from citekit.kernels._ranking import (
    choose_all,
    rank_and_choose,
    rank_eligible,
    rank_within_queries,
)
from citekit.kernels._evidence import evidence_chars, judged_int_facts
from citekit.config import CitationConfig
from citekit.kernels import align_pairs, align_ranges_unchecked
from citekit._citations.ranking import EVIDENCE_POOL_PER_CITATION, rank
from citekit.pipeline import Pipeline
from naive import (
    naive_accept_pairs,
    naive_bag_counts_from_held,
    naive_choose_all,
    naive_close_queries,
    naive_evidence_chars,
    naive_group_into_terms,
    naive_judged_int_facts,
    naive_pair_feasibility,
    naive_query_terms,
    naive_rank_within_queries,
    naive_record_alignments,
    naive_score_components,
    naive_smith_waterman,
)

i64 = np.int64


def _choose_all(pipeline, ranked, bounds, pair_source, char_start, char_end):
    """:func:`choose_all` with the pipeline's limits (as the pipeline walks the pairs)."""
    config = pipeline.config
    return choose_all(
        ranked, bounds, pair_source, char_start, char_end, config.top_k,
        config.max_citations_per_source, EVIDENCE_POOL_PER_CITATION * config.top_k,
    )


def _array(values, dtype=i64):
    return np.asarray(values, dtype=dtype)


# -- the aligner reading targets in place -------------------------------------------------


@st.composite
def _ranges_problem(draw):
    alphabet = draw(st.integers(1, 6))
    token_ids = draw(st.lists(st.integers(0, alphabet), max_size=80))
    n = len(token_ids)
    windows = draw(
        st.lists(st.tuples(st.integers(0, n), st.integers(0, 25)), min_size=1, max_size=8)
    )
    starts = [s for s, _ in windows]
    ends = [min(n, s + length) for s, length in windows]
    queries = draw(
        st.lists(st.lists(st.integers(-2, alphabet), max_size=20), min_size=1, max_size=4)
    )
    pairs = draw(
        st.lists(
            st.tuples(st.integers(0, len(queries) - 1), st.integers(0, len(windows) - 1)),
            max_size=30,
        )
    )
    return token_ids, starts, ends, queries, pairs


@settings(max_examples=60, deadline=None)
@given(problem=_ranges_problem(), parallel=st.booleans())
def test_align_ranges_unchecked_equals_the_reference_on_overlapping_windows(problem, parallel):
    token_ids, starts, ends, queries, pairs = problem
    query_ids = _array([t for q in queries for t in q])
    query_offsets = _array(np.cumsum([0] + [len(q) for q in queries]))
    pair_query = _array([q for q, _ in pairs])
    pair_target = _array([t for _, t in pairs])
    rows, block_counts, block_starts, blocks = align_ranges_unchecked(
        query_ids, query_offsets, _array(token_ids), _array(starts), _array(ends),
        pair_query, pair_target, 2, -1, -1, None, None, 0 if parallel else 1 << 40,
    )
    assert rows.shape == (6, len(pairs)) and rows.dtype == i64
    for k, (q, t) in enumerate(pairs):
        expected = naive_smith_waterman(queries[q], token_ids[starts[t]:ends[t]])
        assert tuple(rows[:, k]) == expected[:6]
        found = blocks[block_starts[k]:block_starts[k] + block_counts[k]]
        assert [tuple(b) for b in found.tolist()] == list(expected[6])


def test_align_ranges_unchecked_equals_align_pairs_on_csr_targets():
    rng = np.random.default_rng(3)
    targets = [rng.integers(0, 5, rng.integers(0, 40)) for _ in range(30)]
    target_offsets = _array(np.cumsum([0] + [len(t) for t in targets]))
    target_ids = _array(np.concatenate(targets))
    query_ids = _array(rng.integers(0, 5, 50))
    query_offsets = _array([0, 12, 12, 50])
    pair_query = _array(rng.integers(0, 3, 200))
    pair_target = _array(rng.integers(0, 30, 200))
    for band in (None, 3):
        expected = align_pairs(query_ids, query_offsets, target_ids, target_offsets,
                               pair_query, pair_target, band_width=band, return_blocks=True)
        rows, counts, starts, blocks = align_ranges_unchecked(
            query_ids, query_offsets, target_ids, target_offsets[:-1], target_offsets[1:],
            pair_query, pair_target, 2, -1, -1, band, None, 1 << 40,
        )
        np.testing.assert_array_equal(rows, np.stack(expected[:6]))
        np.testing.assert_array_equal(counts, np.diff(expected.block_offsets))
        for k in range(200):
            np.testing.assert_array_equal(
                blocks[starts[k]:starts[k] + counts[k]],
                expected.blocks[expected.block_offsets[k]:expected.block_offsets[k + 1]],
            )


def test_align_ranges_unchecked_aligns_pairs_too_long_for_one_word_keys():
    # (40,000 x 40,000 tokens need more than 61 bits in one key: two-word keys)
    long = _array(np.zeros(40_000))
    rows, counts, starts, blocks = align_ranges_unchecked(
        long, _array([0, 40_000]), long, _array([0]), _array([40_000]), _array([0]),
        _array([0]), 1000, -1, -1, None, None, 1 << 40)
    assert rows[:, 0].tolist() == [40_000_000, 0, 40_000, 0, 40_000, 40_000]
    assert blocks[starts[0]:starts[0] + counts[0]].tolist() == [[0, 0, 40_000]]


# -- recording calls and assembling blocks -------------------------------------------------


@st.composite
def _recorded_calls(draw):
    query_lengths = draw(st.lists(st.integers(0, 8), min_size=1, max_size=4))
    query_offsets = np.cumsum([0] + query_lengths).tolist()
    n_tokens = query_offsets[-1]
    query_content = draw(st.lists(st.booleans(), min_size=n_tokens, max_size=n_tokens))
    # content words: the content tokens that are no single letters of Thai, kana, ...
    letter = draw(st.lists(st.booleans(), min_size=n_tokens, max_size=n_tokens))
    query_words = [c and not x for c, x in zip(query_content, letter)]
    n_pairs = draw(st.integers(1, 12))
    pair_query = draw(
        st.lists(st.integers(0, len(query_lengths) - 1), min_size=n_pairs, max_size=n_pairs)
    )
    content_present = draw(st.lists(st.integers(0, 2), min_size=n_pairs, max_size=n_pairs))
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        pairs = sorted(draw(st.sets(st.integers(0, n_pairs - 1), max_size=n_pairs)))
        rows, blocks = [], []
        for p in pairs:
            rows.append(draw(st.lists(st.integers(0, 50), min_size=6, max_size=6)))
            length = query_lengths[pair_query[p]]
            pair_blocks, position = [], 0
            while position < length and draw(st.booleans()):
                start = draw(st.integers(position, length - 1))
                run = draw(st.integers(1, length - start))
                pair_blocks.append((start, draw(st.integers(0, 30)), run))
                position = start + run
            blocks.append(pair_blocks)
        calls.append((pairs, rows, blocks))
    return query_offsets, query_content, query_words, pair_query, content_present, calls


@settings(max_examples=100, deadline=None)
@given(problem=_recorded_calls(), spare=st.integers(0, 5), min_letter_run=st.integers(1, 4))
def test_record_alignments_and_assemble_blocks_equal_the_reference(problem, spare,
                                                                   min_letter_run):
    query_offsets, query_content, query_words, pair_query, content_present, calls = problem
    n_pairs = len(pair_query)
    content_prefix = _array(np.concatenate([[0], np.cumsum(query_content)]))
    word_prefix = _array(np.concatenate([[0], np.cumsum(query_words)]))
    aligned_rows = np.zeros((6, n_pairs), i64)
    block_start = np.zeros(n_pairs, i64)
    block_count = np.zeros(n_pairs, i64)
    content_matched = np.zeros(n_pairs)
    total = sum(len(b) for _, _, call_blocks in calls for b in call_blocks)
    arena = np.full((total + spare, 3), -7, i64)
    used = 0
    retries = []
    for pairs, rows, call_blocks in calls:
        counts = _array([len(b) for b in call_blocks])
        # the call's blocks with unused scratch rows between pairs, as the aligner leaves them
        starts = _array(np.cumsum([0] + [c + spare for c in counts.tolist()])[:-1])
        scratch = np.full((int(starts[-1] + counts[-1] + spare) if len(pairs) else 0, 3), -9, i64)
        for k, pair_blocks in enumerate(call_blocks):
            if pair_blocks:
                scratch[starts[k]:starts[k] + len(pair_blocks)] = pair_blocks
        retry = record_alignments(
            _array(pairs), _array(rows).reshape(-1, 6).T.copy(), counts, starts, scratch,
            _array(query_offsets), _array(pair_query), content_prefix, word_prefix,
            min_letter_run, _array(content_present),
            aligned_rows, block_start, block_count, content_matched, arena, used,
        )
        used += int(counts.sum())
        retries.append(retry.tolist())
    block_offsets, blocks = assemble_blocks(block_start, block_count, arena)
    rows, expected_blocks, matched, expected_retries = naive_record_alignments(
        calls, query_offsets, pair_query, query_content, content_present, query_words,
        min_letter_run,
    )
    assert retries == expected_retries
    for p in range(n_pairs):
        assert tuple(aligned_rows[:, p]) == rows.get(p, (0,) * 6)
        assert [tuple(b) for b in blocks[block_offsets[p]:block_offsets[p + 1]].tolist()] == (
            expected_blocks.get(p, [])
        )
        assert content_matched[p] == matched.get(p, 0)
    assert block_offsets[-1] == blocks.shape[0] == sum(len(b) for b in expected_blocks.values())


# -- ranking and the close test -----------------------------------------------------------


@st.composite
def _ranking_problem(draw):
    n_items = draw(st.integers(0, 40))
    n_queries = draw(st.integers(1, 4))
    floats = st.sampled_from([0.0, -0.0, 0.5, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.25])
    n_float = draw(st.integers(1, 2))
    n_int = draw(st.integers(0, 4))
    float_keys = [draw(st.lists(floats, min_size=n_items, max_size=n_items))
                  for _ in range(n_float)]
    int_keys = [draw(st.lists(st.integers(-2, 2), min_size=n_items, max_size=n_items))
                for _ in range(n_int)]
    item_query = draw(st.lists(st.integers(0, n_queries - 1), min_size=n_items,
                               max_size=n_items))
    items = sorted(draw(st.sets(st.integers(0, max(n_items - 1, 0)), max_size=n_items)))
    if not n_items:
        items = []
    return items, item_query, n_queries, float_keys, int_keys


@settings(max_examples=150, deadline=None)
@given(problem=_ranking_problem())
def test_rank_within_queries_equals_lexsort_and_the_reference(problem):
    items, item_query, n_queries, float_keys, int_keys = problem
    n_items = len(item_query)
    float_array = _array(float_keys, np.float64).reshape(len(float_keys), n_items)
    int_array = _array(int_keys).reshape(len(int_keys), n_items)
    ranked, bounds = rank_within_queries(
        _array(items), _array(item_query), n_queries, float_array, int_array
    )
    expected = naive_rank_within_queries(items, item_query, float_keys, int_keys)
    assert ranked.tolist() == expected
    item_array = _array(items)
    keys = [row[item_array] for row in int_array[::-1]] + [
        row[item_array] for row in float_array[::-1]
    ]
    by_lexsort = item_array[np.lexsort(keys + [_array(item_query)[item_array]])]
    assert ranked.tolist() == by_lexsort.tolist()
    queries = _array(item_query)[ranked]
    assert bounds.tolist() == np.searchsorted(queries, np.arange(n_queries + 1)).tolist()


def _ranking_case(seed, n_pairs, with_nan):
    """``(passage_source, pair_query, pair_passage, char_start, char_end, final, eligible,
    n_queries)`` of a random ranking problem over 20 passages of 4 sources, with ties (few
    scores, positions and passages)."""
    rng = np.random.default_rng(seed)
    passage_source = _array(rng.integers(0, 4, 20))
    pair_query = np.sort(_array(rng.integers(0, 6, n_pairs)))
    pair_passage = _array(rng.integers(0, 20, n_pairs))
    char_start = _array(rng.integers(0, 5, n_pairs))
    char_end = char_start + rng.integers(0, 4, n_pairs)
    # (a custom scorer may give NaN: it ranks last, as numpy sorts it)
    final = rng.choice([0.2, 0.4, 0.6, np.nan] if with_nan else [0.2, 0.4, 0.6], n_pairs)
    eligible = rng.random(n_pairs) < 0.7
    n_queries = int(pair_query.max()) + 2 if n_pairs else 1
    return (passage_source, pair_query, pair_passage, char_start, char_end, final, eligible,
            n_queries)


@settings(max_examples=60, deadline=None)
@given(
    prefer_source_order=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
    n_pairs=st.sampled_from([0, 1, 7, 300]),
    with_nan=st.booleans(),
)
def test_pipeline_rank_equals_the_lexsort_definition(
    prefer_source_order, seed, n_pairs, with_nan
):
    config = CitationConfig(prefer_source_order=prefer_source_order)
    (passage_source, pair_query, pair_passage, char_start, char_end, final, eligible,
     n_queries) = _ranking_case(seed, n_pairs, with_nan)
    corpus = SimpleNamespace(
        passage_source=passage_source,
        base_offsets=_array([0, 100, 0, 7]),
        source_indices=_array([2, 0, 1, 3]),
    )
    ranked, bounds = rank(eligible, pair_query, pair_passage, char_start, char_end, final,
                          corpus, n_queries, config)
    queries = pair_query[ranked]
    assert bounds.tolist() == np.searchsorted(queries, np.arange(n_queries + 1)).tolist()
    source = corpus.passage_source[pair_passage]
    absolute = char_start + corpus.base_offsets[source]
    index = corpus.source_indices[source]
    length = char_end - char_start
    if prefer_source_order:
        keys = (pair_passage, -length, absolute, index, -final, pair_query)
    else:
        keys = (pair_passage, index, -length, absolute, -final, pair_query)
    chosen = np.flatnonzero(eligible)
    expected = chosen[np.lexsort(tuple(key[chosen] for key in keys))]
    assert ranked.tolist() == expected.tolist()


@st.composite
def _close_problem(draw):
    n_queries = draw(st.integers(1, 4))
    per_query = [draw(st.integers(0, 12)) for _ in range(n_queries)]
    query_first = np.cumsum([0] + per_query).tolist()
    n_pairs = query_first[-1]
    order = list(range(n_pairs))  # pairs grouped by query, as the pipeline orders them
    scores = st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9])
    score_bound = draw(st.lists(scores, min_size=n_pairs, max_size=n_pairs))
    final = draw(st.lists(scores, min_size=n_pairs, max_size=n_pairs))
    passage_source = draw(st.lists(st.integers(0, 2), min_size=n_pairs, max_size=n_pairs))
    char_start = draw(st.lists(st.integers(0, 2), min_size=n_pairs, max_size=n_pairs))
    char_end = [s + draw(st.integers(0, 1)) for s in char_start]
    ranked_per_query = []
    for q in range(n_queries):
        mine = list(range(query_first[q], query_first[q + 1]))
        ranked_per_query.append(draw(st.permutations(mine))[: draw(st.integers(0, len(mine)))])
    open_query = draw(st.lists(st.booleans(), min_size=n_queries, max_size=n_queries))
    limit = draw(st.lists(st.integers(0, 14), min_size=n_queries, max_size=n_queries))
    top_k = draw(st.integers(1, 3))
    return (open_query, limit, query_first, order, score_bound, ranked_per_query, final,
            passage_source, char_start, char_end, top_k, draw(st.integers(1, 2)),
            top_k * draw(st.integers(1, 3)))


@settings(max_examples=150, deadline=None)
@given(problem=_close_problem())
def test_close_queries_equals_the_reference(problem):
    (open_query, limit, query_first, order, score_bound, ranked_per_query, final,
     passage_source, char_start, char_end, top_k, max_per_source, pool_size) = problem
    open_array = np.array(open_query, dtype=bool)
    limit_array = _array(limit)
    ranked = _array([p for mine in ranked_per_query for p in mine])
    ranked_bounds = _array(np.cumsum([0] + [len(mine) for mine in ranked_per_query]))
    close_queries(open_array, limit_array, _array(query_first), _array(order),
                  _array(score_bound, np.float64), ranked, ranked_bounds,
                  _array(final, np.float64), _array(passage_source), _array(char_start),
                  _array(char_end), top_k, max_per_source, pool_size)
    expected_open, expected_limit = naive_close_queries(
        open_query, limit, query_first, order, score_bound, ranked_per_query, final,
        passage_source, char_start, char_end, top_k, max_per_source, pool_size,
    )
    assert open_array.tolist() == expected_open
    assert limit_array.tolist() == expected_limit


@settings(max_examples=150, deadline=None)
@given(problem=_close_problem())
def test_pipeline_choose_all_equals_the_reference(problem):
    (_, _, _, _, _, ranked_per_query, _, passage_source, char_start, char_end, top_k,
     max_per_source, pool_size) = problem
    pipeline = Pipeline(CitationConfig(top_k=top_k, max_citations_per_source=max_per_source))
    ranked = _array([p for mine in ranked_per_query for p in mine])
    bounds = _array(np.cumsum([0] + [len(mine) for mine in ranked_per_query]))
    judged, judged_offsets, n_pool, chosen_rows, chosen_offsets = _choose_all(
        pipeline, ranked, bounds, _array(passage_source), _array(char_start), _array(char_end)
    )
    found = [
        (
            judged[judged_offsets[q]:judged_offsets[q + 1]].tolist(),
            int(n_pool[q]),
            chosen_rows[chosen_offsets[q]:chosen_offsets[q + 1]].tolist(),
        )
        for q in range(len(ranked_per_query))
    ]
    assert found == naive_choose_all(ranked_per_query, passage_source, char_start, char_end,
                                     top_k, max_per_source, 3 * top_k)


def test_pipeline_choose_all_of_no_sentence_and_of_empty_sentences():
    pipeline = Pipeline(CitationConfig(top_k=2))
    empty = _array([])
    judged, judged_offsets, n_pool, chosen_rows, chosen_offsets = _choose_all(
        pipeline, empty, _array([0]), empty, empty, empty
    )
    assert judged.size == 0 and judged_offsets.tolist() == [0] and n_pool.size == 0
    assert chosen_rows.size == 0 and chosen_offsets.tolist() == [0]
    # two sentences without pairs around one whose two pairs give the same evidence
    judged, judged_offsets, n_pool, chosen_rows, chosen_offsets = _choose_all(
        pipeline, _array([1, 0]), _array([0, 0, 2, 2]), _array([0, 0]), _array([3, 3]),
        _array([9, 9]),
    )
    assert judged.tolist() == [1] and judged_offsets.tolist() == [0, 0, 1, 1]
    assert n_pool.tolist() == [0, 1, 0]
    assert chosen_rows.tolist() == [0] and chosen_offsets.tolist() == [0, 0, 1, 1]


def test_pipeline_choose_all_judges_citations_outside_the_pool():
    # one citation per source: the pool (6 pairs) fills with source 0 before the second
    # citation, from source 1, is reached; it is judged after the pool
    pipeline = Pipeline(CitationConfig(top_k=2, max_citations_per_source=1))
    source = [0] * 6 + [1, 1]
    ranked_per_query = [[0, 1, 2, 3, 4, 5, 6, 7], [7, 6, 0]]
    starts = list(range(8))
    judged, judged_offsets, n_pool, chosen_rows, chosen_offsets = _choose_all(
        pipeline, _array([p for mine in ranked_per_query for p in mine]), _array([0, 8, 11]),
        _array(source), _array(starts), _array([s + 1 for s in starts]),
    )
    assert judged.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 6, 0]
    assert judged_offsets.tolist() == [0, 7, 10] and n_pool.tolist() == [6, 3]
    assert chosen_rows.tolist() == [0, 6, 0, 2] and chosen_offsets.tolist() == [0, 2, 4]
    expected = naive_choose_all(ranked_per_query, source, starts, [s + 1 for s in starts],
                                2, 1, 6)
    assert expected == [([0, 1, 2, 3, 4, 5, 6], 6, [0, 6]), ([7, 6, 0], 3, [0, 2])]


@settings(max_examples=200, deadline=None)
@given(
    prefer_source_order=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
    n_pairs=st.sampled_from([0, 1, 7, 40, 300]),
    with_nan=st.booleans(),
    top_k=st.integers(1, 4),
    max_per_source=st.integers(1, 3),
    pool_per_citation=st.integers(1, 3),
    front=st.sampled_from([1, 2, 3, 8, 32, 1000]),
)
def test_rank_and_choose_equals_choose_all_of_the_full_ranking(
        prefer_source_order, seed, n_pairs, with_nan, top_k, max_per_source,
        pool_per_citation, front):
    """Ranking only the front of each sentence's pairs (walking it, and sorting the rest
    only when the walk reads past it) chooses exactly what walking the full ranking does:
    fronts of 1 to 3 pairs force the fall-back, ties (few scores, positions and passages)
    test the stable order."""
    (passage_source, pair_query, pair_passage, char_start, char_end, final, eligible,
     n_queries) = _ranking_case(seed, n_pairs, with_nan)
    base_offsets, source_indices = _array([0, 100, 0, 7]), _array([2, 0, 1, 3])
    pool_size = top_k * pool_per_citation
    keys = (eligible, pair_query, pair_passage, char_start, char_end, final, passage_source,
            base_offsets, source_indices, prefer_source_order, n_queries)
    ranked, bounds = rank_eligible(*keys)
    pair_source = passage_source[pair_passage]
    expected = choose_all(ranked, bounds, pair_source, char_start, char_end, top_k,
                          max_per_source, pool_size)
    found = rank_and_choose(*keys, pair_source, top_k, max_per_source, pool_size, front)
    assert [a.tolist() for a in found] == [a.tolist() for a in expected]


@settings(max_examples=200, deadline=None)
@given(
    keys=st.lists(st.tuples(st.sampled_from([0.1, 0.5, np.nan]), st.integers(0, 3)),
                  min_size=1, max_size=40),
    data=st.data(),
)
def test_best_of_group_is_the_front_of_the_stable_order(keys, data):
    from citekit.kernels._ranking import _best_of_group

    n = len(keys)
    n_best = data.draw(st.integers(1, n))
    lo = data.draw(st.integers(0, 3))
    items = data.draw(st.permutations(range(n)))
    float_keys = np.array([[k[0] for k in keys]])
    int_keys = _array([[k[1] for k in keys]])
    ranked = _array([-1] * lo + list(items) + [-2])
    _best_of_group(ranked, lo, lo + n, n_best, float_keys, int_keys)
    # the stable order of the items as given: numpy's lexsort (NaN last)
    order = _array(items)[np.lexsort((int_keys[0][items], float_keys[0][items]))]
    assert ranked[lo:lo + n_best].tolist() == order[:n_best].tolist()
    # every item is still there, and nothing outside the group moved
    assert sorted(ranked[lo:lo + n].tolist()) == list(range(n))
    assert ranked[:lo].tolist() == [-1] * lo and ranked[-1] == -2

# -- evidence characters ------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    n_tokens=st.integers(0, 12),
    pairs=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 6), st.integers(0, 6), st.booleans()),
        max_size=15,
    ),
)
def test_evidence_chars_equals_the_reference(n_tokens, pairs):
    token_starts = [3 * t for t in range(n_tokens)]
    token_ends = [3 * t + 2 for t in range(n_tokens)]
    passage_token_start = [0, 2, max(n_tokens - 1, 0), 5]
    passage_char_start = [0, 6, 9, 15]
    passage_char_end = [8, 20, 30, 40]
    pair_passage = [p for p, _, _, _ in pairs]
    target_start = [min(s, e) for _, s, e, _ in pairs]
    target_end = [max(s, e) for _, s, e, _ in pairs]
    embedding_only = [flag for _, _, _, flag in pairs]
    found = evidence_chars(
        _array(pair_passage), _array(target_start), _array(target_end),
        np.array(embedding_only, dtype=bool), _array(passage_token_start),
        _array(passage_char_start), _array(passage_char_end), _array(token_starts),
        _array(token_ends),
    )
    expected = naive_evidence_chars(
        pair_passage, target_start, target_end, embedding_only, passage_token_start,
        passage_char_start, passage_char_end, token_starts, token_ends,
    )
    assert [found[0].tolist(), found[1].tolist()] == [expected[0], expected[1]]


# -- query terms --------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    queries=st.lists(
        st.lists(st.tuples(st.integers(-3, 5) | st.integers(-(2**63), 2**63 - 1),
                           st.booleans()), max_size=12),
        max_size=5,
    )
)
def test_query_terms_equals_the_reference(queries):
    # a token's column is a function of its id (-1: unknown to the index)
    def column_of(token):
        return token % 7 - 1 if -3 <= token <= 5 else -1

    flat = [(token, content, column_of(token)) for tokens in queries for token, content in tokens]
    query_offsets = _array(np.cumsum([0] + [len(tokens) for tokens in queries]))
    term_columns, term_offsets, term_counts, term_is_content, distinct_content = query_terms(
        _array([token for token, _, _ in flat]),
        query_offsets,
        np.array([content for _, content, _ in flat], dtype=bool),
        _array([column for _, _, column in flat]),
    )
    expected_terms, expected_distinct = naive_query_terms(
        [[(token, content, column_of(token)) for token, content in tokens] for tokens in queries]
    )
    found = [
        list(zip(term_columns[lo:hi].tolist(), term_counts[lo:hi].tolist(),
                 term_is_content[lo:hi].tolist()))
        for lo, hi in zip(term_offsets[:-1].tolist(), term_offsets[1:].tolist())
    ]
    assert found == expected_terms
    assert distinct_content.tolist() == expected_distinct


@settings(max_examples=150, deadline=None)
@given(
    queries=st.lists(
        st.lists(st.tuples(st.integers(-3, 5) | st.integers(-(2**63), 2**63 - 1),
                           st.booleans()), max_size=40),
        max_size=5,
    ),
    values_are_positions=st.booleans(),
    optional=st.sampled_from(["all", "none", "counts", "flagged", "token_terms"]),
)
def test_group_into_terms_equals_the_reference(queries, values_are_positions, optional):
    # (more than 16 tokens a query: the merge passes of the sort, too)
    ids = _array([token for tokens in queries for token, _ in tokens])
    flags = np.array([flag for tokens in queries for _, flag in tokens], dtype=bool)
    offsets = _array(np.cumsum([0] + [len(tokens) for tokens in queries]))
    # values: the ids, or the positions (then a term's value is its first token)
    values = np.arange(ids.shape[0], dtype=i64) if values_are_positions else ids
    n = ids.shape[0]
    term_values = np.full(n, -7, dtype=i64)
    term_flags = np.zeros(n, dtype=bool)
    term_offsets = np.zeros(len(queries) + 1, dtype=i64)
    wanted = {name: optional in ("all", name) for name in ("counts", "flagged", "token_terms")}
    term_counts = np.full(n if wanted["counts"] else 0, -7, dtype=i64)
    n_flagged = np.full(len(queries) if wanted["flagged"] else 0, -7.0)
    token_terms = np.full(n if wanted["token_terms"] else 0, -7, dtype=i64)
    n_terms = group_into_terms(ids, offsets, flags, values, term_values, term_counts,
                               term_flags, term_offsets, n_flagged, token_terms)
    terms, expected_offsets, expected_flagged, expected_token_terms = naive_group_into_terms(
        ids.tolist(), offsets.tolist(), flags.tolist(), values.tolist()
    )
    assert n_terms == len(terms)
    assert term_offsets.tolist() == expected_offsets
    assert term_values[:n_terms].tolist() == [value for value, _, _ in terms]
    assert term_flags[:n_terms].tolist() == [flag for _, _, flag in terms]
    # the optional outputs, filled when given (an empty one is skipped)
    if wanted["counts"]:
        assert term_counts[:n_terms].tolist() == [count for _, count, _ in terms]
    if wanted["flagged"]:
        assert n_flagged.tolist() == expected_flagged
    if wanted["token_terms"]:
        assert token_terms.tolist() == expected_token_terms


@settings(max_examples=60, deadline=None)
@given(
    queries=st.lists(
        st.lists(st.tuples(st.integers(0, 12), st.booleans()), max_size=24), max_size=5
    ),
    vocabulary=st.lists(st.integers(0, 12), unique=True, max_size=8).map(sorted),
)
def test_both_query_terms_are_one_grouping(queries, vocabulary):
    """The overlap's terms and the index's are the same terms, in the same order."""
    from citekit.kernels._retrieval import idf_query_terms

    ids = _array([token for tokens in queries for token, _ in tokens])
    flags = np.array([flag for tokens in queries for _, flag in tokens], dtype=bool)
    offsets = _array(np.cumsum([0] + [len(tokens) for tokens in queries]))
    token_columns = np.empty(ids.shape[0], dtype=i64)
    _, columns, _, rank_flags, index_offsets, _ = idf_query_terms(
        ids, offsets, flags, _array(vocabulary), np.ones(len(vocabulary)), 2.0, token_columns
    )
    term_columns, term_offsets, _, term_is_content, distinct = query_terms(
        ids, offsets, flags, token_columns
    )
    assert term_offsets.tolist() == index_offsets.tolist()
    assert term_columns.tolist() == columns.tolist()
    assert term_is_content.tolist() == rank_flags.tolist()
    assert distinct.tolist() == [
        float(rank_flags[lo:hi].sum()) for lo, hi in zip(term_offsets[:-1], term_offsets[1:])
    ]


# -- custom aligners give the built-in aligner's results ----------------------------------


def _documents_and_answers(seed):
    rng = np.random.default_rng(seed)
    words = ("revenue grew the of in market share percent costs fell by rose to and a "
             "company reported quarter year sales profit").split()

    def sentence():
        return " ".join(rng.choice(words, rng.integers(4, 12))).capitalize() + (
            f" {rng.integers(1, 99)}%." if rng.random() < 0.5 else "."
        )

    documents = [" ".join(sentence() for _ in range(12)) for _ in range(6)]
    answers = [" ".join(sentence() for _ in range(4)) for _ in range(5)]
    # copies and stop-word-only overlaps exercise the content-word retry
    answers.append(documents[0].split(". ")[2] + ". In the of and a to.")
    return documents, answers


@pytest.mark.parametrize("rounds", [False, True])
def test_custom_aligners_give_the_built_in_results(monkeypatch, rounds):
    import citekit._citations.rounds as rounds_module
    from citekit.kernels import smith_waterman
    from citekit.results import results_to_json

    if rounds:
        monkeypatch.setattr(rounds_module, "_ALIGN_ALL_BELOW", 0)
        monkeypatch.setattr(rounds_module, "_FIRST_ROUND_PAIRS", 2)

    class PairsAligner:
        calls = 0

        def align_pairs(self, *arrays, **options):
            PairsAligner.calls += 1
            return align_pairs(*arrays, **options)

    class PerPairAligner:
        def align(self, query, target):
            return smith_waterman(query, target, return_blocks=True)

    for seed in range(3):
        documents, answers = _documents_and_answers(seed)
        built_in = Pipeline(CitationConfig(top_k=2))
        corpus = built_in.prepare(documents)
        expected = [results_to_json(r) for r in built_in.align_many(answers, corpus)]
        for aligner in (PairsAligner(), PerPairAligner()):
            custom = Pipeline(CitationConfig(top_k=2), aligner=aligner)
            found = [results_to_json(r) for r in custom.align_many(answers, corpus)]
            assert found == expected
    assert PairsAligner.calls >= 3


def test_alignment_arena_calls_add_up_to_one_call():
    # the best-first rounds align a batch's pairs over several aligner calls (each
    # appending its blocks to the arena, growing it): the pairs' alignments and content
    # matches are those of one call over all of them
    from citekit._citations.candidates import find_candidates
    from citekit._citations.feasibility import bag_statistics
    from citekit._citations.queries import Queries
    from citekit._citations.rounds import AlignmentArena
    from citekit._reading import segment_spans
    from citekit.tokenizers.base import tokenize_checked

    documents, answers = _documents_and_answers(1)
    pipeline = Pipeline()
    corpus = pipeline.prepare(documents)
    queries = Queries()
    for number, answer in enumerate(answers):
        spans = segment_spans(pipeline._answer_segmenter(), answer, name="answer_segmenter")
        queries.add_answer(number, answer, tokenize_checked(corpus.tokenizer, answer), spans)
    batch = queries.pack(0, len(queries))
    config = pipeline.config
    found = find_candidates(corpus, batch, queries.texts(answers, 0, len(queries)), config,
                            None, None)
    bag = bag_statistics(corpus, batch.ids, batch.offsets, batch.content, found.columns,
                         found.pair_query, found.pair_passage, found.held)
    pairs = np.arange(found.pair_query.shape[0])
    assert pairs.shape[0] > 30

    def arena():
        return AlignmentArena(corpus, batch, found.pair_query, found.pair_passage,
                              bag.content_occurrences, config, None, None)

    whole = arena()
    whole.align_with_retry(pairs)
    in_rounds = arena()
    for part in (pairs[::3], pairs[1::3], pairs[2::3]):
        in_rounds.align_with_retry(part)
    assert in_rounds.blocks_used == whole.blocks_used > 0
    for a, b in zip(whole.rows(), in_rounds.rows()):
        assert a.tolist() == b.tolist()
    assert whole.content_matched.tolist() == in_rounds.content_matched.tolist()
    assert whole.content_matched.sum() > 0


# -- bag counts from the terms each candidate holds ----------------------------------------


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_bag_counts_from_held_equal_the_reference(data):
    term_counts = data.draw(st.lists(st.integers(1, 4), max_size=70))
    n_terms = len(term_counts)
    term_is_content = data.draw(st.lists(st.booleans(), min_size=n_terms, max_size=n_terms))
    cuts = sorted(data.draw(st.lists(st.integers(0, n_terms), max_size=3)))
    term_offsets = [0] + cuts + [n_terms]
    n_queries = len(term_offsets) - 1
    pairs = data.draw(st.lists(st.integers(0, n_queries - 1), max_size=12))
    held = []
    for q in pairs:
        size = min(term_offsets[q + 1] - term_offsets[q], 63)
        bits = data.draw(st.integers(0, 2**size - 1))
        held.append(data.draw(st.sampled_from([bits, -1])) if size else 0)
    found = bag_counts_from_held(
        _array(held), _array(pairs), _array(term_offsets), _array(term_counts),
        np.array(term_is_content, dtype=bool),
    )
    expected = naive_bag_counts_from_held(held, pairs, term_offsets, term_counts,
                                          term_is_content)
    assert [values.tolist() for values in found] == [list(values) for values in expected]


def test_pipeline_bag_statistics_from_held_equal_those_from_rows():
    import citekit._citations.align as align_module
    from citekit._citations.feasibility import bag_statistics

    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(40)]
    sources = [" ".join(rng.choice(words, size=12)) + "." for _ in range(60)]
    pipeline = Pipeline()
    corpus = pipeline.prepare(sources)
    answer = " ".join(rng.choice(words, size=15)) + ". " + " ".join(words[:3]) + " w1 w1."
    result_pairs = []

    def spy(*args):
        result_pairs.append(args)
        return bag_statistics(*args)

    original = align_module.bag_statistics
    align_module.bag_statistics = spy
    try:
        pipeline.align(answer, corpus)
    finally:
        align_module.bag_statistics = original
    (args,) = result_pairs
    # (corpus, ids, offsets, content, columns, pair_query, pair_passage, held, words)
    assert len(args) == 9
    base, held = args[:7], args[7]
    assert held is not None and held.dtype == np.int64
    assert held.shape[0] > 0 and (held >= 0).all()
    from_held = bag_statistics(*base, held)
    from_rows = bag_statistics(*base, None)
    for a, b in zip(from_held, from_rows):
        assert np.array_equal(a, b)
    # unknown entries (sentences of more than 63 distinct tokens) are read from the rows
    mixed = held.copy()
    mixed[::2] = -1
    for a, b in zip(bag_statistics(*base, mixed), from_rows):
        assert np.array_equal(a, b)
    # content words counted apart (some content tokens taken for letters) agree too
    content = base[3]
    words = content & (np.arange(content.shape[0]) % 3 != 0)
    for a, b in zip(bag_statistics(*base, held, words), bag_statistics(*base, None, words)):
        assert np.array_equal(a, b)
    with_words = bag_statistics(*base, held, words)
    assert not np.array_equal(with_words.word_distinct, from_held.word_distinct)


# -- feasibility before aligning, acceptance after ------------------------------------------


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_queries=st.integers(1, 5),
       n_pairs=st.sampled_from([0, 1, 9, 60]),
       min_answer_coverage=st.sampled_from([0.0, 0.2, 1 / 3, 0.5, 1.0]),
       min_content_tokens=st.integers(0, 3))
def test_pair_feasibility_equals_the_numpy_expressions(seed, n_queries, n_pairs,
                                                       min_answer_coverage,
                                                       min_content_tokens):
    rng = np.random.default_rng(seed)
    query_lengths = _array(rng.integers(0, 30, n_queries))
    content_total = np.minimum(query_lengths, _array(rng.integers(0, 20, n_queries)))
    distinct = np.minimum(content_total, rng.integers(0, 15, n_queries)).astype(np.float64)
    pair_query = np.sort(_array(rng.integers(0, n_queries, n_pairs)))
    content_distinct = np.floor(rng.random(n_pairs) * (distinct[pair_query] + 1))
    occurrences = content_distinct + rng.integers(0, 3, n_pairs)
    # content words: some of the content tokens (the rest single letters of Thai, kana...)
    words = np.floor(rng.random(n_queries) * (distinct + 1))
    word_distinct = np.minimum(content_distinct, np.floor(rng.random(n_pairs)
                                                          * (words[pair_query] + 1)))
    args = (pair_query, query_lengths, content_total, distinct, occurrences,
            content_distinct, words, word_distinct, min_answer_coverage, min_content_tokens)
    found = pair_feasibility(*args)
    expected = naive_pair_feasibility(*args)
    for a, b in zip(found, expected):
        assert a.tolist() == b.tolist()


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_pairs=st.sampled_from([0, 1, 12, 80]),
       select=st.booleans(), thresholds=st.tuples(st.integers(-2, 4),
                                                  st.sampled_from([0.0, 0.2, 0.5, 1.0]),
                                                  st.sampled_from([-1.0, 0.0, 0.8, 1.5])))
def test_accept_pairs_equals_the_numpy_expression(seed, n_pairs, select, thresholds):
    rng = np.random.default_rng(seed)
    content_variants = rng.integers(0, 4, n_pairs).astype(np.float64)
    min_content = rng.integers(0, 3, n_pairs).astype(np.float64)
    passage_coverage = rng.choice([0.0, 0.2, 0.5, 1.0], n_pairs)
    pairs = np.sort(_array(rng.choice(n_pairs, n_pairs // 2, replace=False))) if select \
        else None
    n = n_pairs if pairs is None else pairs.shape[0]
    score = _array(rng.integers(-1, 8, n))
    target_start = _array(rng.integers(0, 5, n))
    target_end = target_start + rng.integers(0, 3, n)
    content_matched = rng.integers(0, 4, n).astype(np.float64)
    content_coverage = rng.choice([0.0, 0.2, 0.5, 1.0], n)
    final = rng.choice([0.0, 0.8, 1.5, 2.2, np.nan], n)
    args = (score, target_start, target_end, content_matched, content_variants, min_content,
            content_coverage, passage_coverage, final)
    found = accept_pairs(*args, _array([]) if pairs is None else pairs,
                         *(float(t) for t in thresholds))
    expected = naive_accept_pairs(*args, pairs, *thresholds)
    assert found.tolist() == expected.tolist()


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_pairs=st.sampled_from([0, 1, 12, 80]),
       select=st.booleans(), match_score=st.integers(1, 3),
       weights=st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1 / 3, 2.0]), min_size=5,
                        max_size=5))
def test_score_components_equal_the_numpy_expressions(seed, n_pairs, select, match_score,
                                                      weights):
    from citekit.config import CitationWeights
    from citekit.pipeline import WeightedScorer

    rng = np.random.default_rng(seed)
    safe_len = _array(rng.integers(1, 30, n_pairs))
    safe_content = _array(rng.integers(1, 20, n_pairs))
    passage_coverage = rng.random(n_pairs)
    lexical = rng.random(n_pairs)
    # similarities below zero, negative zero and NaN are clipped as np.maximum clips them
    embedding = rng.choice([-0.5, -0.0, 0.0, 0.3, 0.9, np.nan], n_pairs)
    pairs = np.sort(_array(rng.choice(n_pairs, n_pairs // 2, replace=False))) if select \
        else None
    n = n_pairs if pairs is None else pairs.shape[0]
    score = _array(rng.integers(0, 40, n))
    matches = _array(rng.integers(0, 20, n))
    target_start = _array(rng.integers(0, 9, n))
    target_end = target_start + rng.integers(0, 25, n)
    content_matched = rng.integers(0, 10, n).astype(np.float64)
    args = (score, matches, target_start, target_end, content_matched, safe_len,
            safe_content, passage_coverage, lexical, embedding)
    matrix, final = score_components(*args, _array([]) if pairs is None else pairs,
                                     match_score, np.array(weights), True)
    expected = naive_score_components(*args, pairs, match_score)
    assert list(expected) == list(COMPONENT_NAMES)
    for row, name in zip(matrix, COMPONENT_NAMES):
        assert row.tobytes() == expected[name].tobytes(), name
    config = CitationConfig(weights=CitationWeights(*weights))
    assert final.tobytes() == WeightedScorer().score(expected, config).tobytes()
    _, unweighted = score_components(*args, _array([]) if pairs is None else pairs,
                                     match_score, np.array(weights), False)
    assert unweighted.shape == (0,)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_pairs=st.sampled_from([0, 1, 10, 50]))
def test_judged_int_facts_equal_the_numpy_gathers(seed, n_pairs):
    rng = np.random.default_rng(seed)
    n_passages, n_sources = 12, 4
    passage_source = _array(rng.integers(0, n_sources, n_passages))
    args = (
        _array(rng.integers(0, max(n_pairs, 1), rng.integers(0, 2 * n_pairs + 1)))
        if n_pairs else _array([]),
        _array(rng.integers(0, n_passages, n_pairs)),
        passage_source,
        _array(rng.integers(0, 500, n_sources)),
        _array(rng.permutation(n_sources)),
        np.sort(_array(rng.integers(0, 40, n_pairs + 1))),
        _array(rng.integers(0, 50, n_passages)),
        _array(rng.integers(50, 90, n_passages)),
        _array(rng.integers(0, 30, n_pairs)),
        _array(rng.integers(30, 60, n_pairs)),
        _array(rng.integers(0, 5, n_pairs)),
        _array(rng.integers(0, 9, n_pairs)),
        _array(rng.integers(0, 200, n_passages)),
        _array(rng.integers(200, 400, n_passages)),
    )
    found = judged_int_facts(*args)
    assert found.shape == (14, args[0].shape[0])
    assert found.tolist() == naive_judged_int_facts(*args).reshape(14, -1).tolist()
