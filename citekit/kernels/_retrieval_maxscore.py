"""The MaxScore path of the retrieval kernels, for queries whose posting lists are long
(large corpora): an exact search whose per-passage state fits in the cache.

On a corpus of millions of passages, walking a query's lists into a word per passage
(:mod:`citekit.kernels._retrieval_masks`) writes a new cache line of a corpus-sized array
per posting: the walk is bound by memory, not by arithmetic. Most of those postings
cannot matter: once ``k`` passages are known to score ``theta``, a passage holding only
terms whose weights sum to less than ``theta`` (the light, common ones) cannot be among
the ``k`` best. So:

1. ``theta``: the passages of the heaviest (rarest) terms' lists, up to a budget of
   rows, are scored exactly from their rows; the k-th best of those scores is a lower
   bound of the query's k-th best score;
2. the lists of the terms that are not lighter than it (the "essential" ones, heaviest
   first, until the lists left weigh less than ``theta``) mark their passages in a bitmap
   of the corpus (one bit per passage: it stays in the cache): the candidates;
3. every ranking list is then read in order, and each posting whose passage is a
   candidate sets its term's bit in that candidate's mask (its slot: the bits set before
   it in the bitmap, from per-word counts); the other postings cost a load and a bit test;
4. each candidate's rank score is its mask's weights added in query order (byte tables,
   :func:`citekit.kernels._retrieval_masks._mask_score`): the additions of walking every
   list, hence bit for bit the same scores.

A passage that is not a candidate holds only terms lighter than the essential ones,
weighing less than ``theta`` (with a margin for rounding), so it scores less than the
k-th best: the candidates hold the ``k`` best, ties included, scored exactly.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._copy import copy_range
from citekit.kernels._retrieval_masks import (
    _add_unranked,
    _held_from_rows,
    _mask_score,
    _mask_tables,
)
from citekit.kernels._retrieval_select import _emit_best, _row_terms, _select, heaviest_first
from citekit.kernels._retrieval_walk import _HELD_BITS, ranking_lists
from citekit.kernels._sort import stable_argsort

# by default, only in corpora of this many passages (smaller ones' per-passage words fit
# in the cache; this path's kernels are then never compiled) ...
_MAXSCORE_MIN_PASSAGES = 2097152


# ... and only queries whose ranking lists hold this many entries
_MIN_MAXSCORE_ENTRIES = 262144


# the path keeps which ranking terms each candidate holds in one int64
_MAXSCORE_MAX_TERMS = 63


# rows read to bound the k-th best score: this many times k (or the query's entries
# divided by _BOUND_ENTRIES_PER_ROW, when more)
_BOUND_ROWS_PER_K = 4


_BOUND_ENTRIES_PER_ROW = 1024


# a list this many times longer than the candidates is searched for each candidate
# instead of read
_SEARCH_COST = 32


# by default, only queries of at most this many ranking terms: with more, the bound
# found stays below the weight of most lists, the candidates are a large share of the
# corpus, and reading every list with a bit test costs about what adding into the
# per-passage words costs (measured at 100,000 documents: 2-5 terms 2.5 to 7 times
# faster, 8 or more terms 2 to 4 times slower)
_AUTO_MAXSCORE_TERMS = 5


@jit
def _count_bits(word):
    """The set bits of a 32-bit ``word`` (an int64 below 2**32)."""
    word = word - ((word >> 1) & 0x55555555)
    word = (word & 0x33333333) + ((word >> 2) & 0x33333333)
    word = (word + (word >> 4)) & 0x0F0F0F0F
    return ((word * 0x01010101) & 0xFFFFFFFF) >> 24


@jit
def _maxscore_candidates(
    posting_pointers, posting_passages, row_pointers, row_columns, term_columns,
    term_weights, terms, k, words, touched, hits, values,
):
    """Every passage that can be among the ``k`` best by rank score, into ``hits`` with
    its exact rank score (query order) in ``values``; returns how many. ``words``
    (uint32, one per passage, all zero, left all zero), ``touched``, ``hits`` and
    ``values`` (at least one entry per passage) are scratch; rows needed; positive
    weights; at most ``_MAXSCORE_MAX_TERMS`` ranking terms."""
    n_terms = terms.shape[0]
    n_passages = words.shape[0]
    n_words = (n_passages + 31) >> 5
    bitmap = words[:n_words]
    order = heaviest_first(terms, term_columns, term_weights, posting_pointers)
    # rest[j]: summed weight of the terms from the j-th heaviest on
    rest = np.zeros(n_terms + 1)
    for j in range(n_terms - 1, -1, -1):
        rest[j] = term_weights[terms[order[j]]] + rest[j + 1]
    # a sum of at most n_terms positive weights, in any order, lies within a relative
    # n_terms * 2**-53 of the exact sum: comparing with margins this wide can only keep
    # more passages
    margin = (n_terms + 2) * 2.0**-50
    tables = np.empty(((n_terms + 7) // 8, 256))
    _mask_tables(term_weights, terms, tables)
    n_entries = 0
    for i in range(n_terms):
        column = term_columns[terms[i]]
        n_entries += posting_pointers[column + 1] - posting_pointers[column]
    # 1. a lower bound of the k-th best score: the exact scores of distinct passages of
    # the heaviest lists (a bit marks each one scored)
    budget = max(_BOUND_ROWS_PER_K * k, n_entries // _BOUND_ENTRIES_PER_ROW)
    local_columns = np.empty(n_terms, dtype=np.int64)
    for i in range(n_terms):
        local_columns[i] = term_columns[terms[i]]
    by_column = stable_argsort(local_columns)
    held = np.zeros(n_terms, dtype=np.bool_)
    n_scored = np.int64(0)  # (int64, not Literal[int](0): one signature of the callee)
    for j in range(n_terms):
        column = term_columns[terms[order[j]]]
        lo = posting_pointers[column]
        hi = min(posting_pointers[column + 1], lo + budget - n_scored)
        for entry in range(lo, hi):
            passage = np.int64(posting_passages[entry])
            word = np.int64(bitmap[passage >> 5])
            flag = np.int64(1) << (passage & 31)
            if word & flag == 0:
                bitmap[passage >> 5] = word | flag
                _row_terms(row_pointers, row_columns, passage, by_column, local_columns,
                           held)
                mask = np.int64(0)
                for i in range(n_terms):
                    if held[i]:
                        mask |= np.int64(1) << i
                values[n_scored] = _mask_score(mask, tables, term_weights, terms)
                n_scored += 1
        if n_scored >= budget:
            break
    theta = 0.0
    if n_scored >= k:
        theta = _select(values, n_scored, n_scored - k)
    # 2. the essential lists (every passage scoring theta holds one of their terms)
    # mark the candidates; the passages scored above are marked too (more candidates
    # never change the result)
    n_essential = n_terms
    while n_essential > 1 and rest[n_essential - 1] * (1.0 + margin) < theta * (1.0 - margin):
        n_essential -= 1
    for j in range(n_essential):
        column = term_columns[terms[order[j]]]
        for entry in range(posting_pointers[column], posting_pointers[column + 1]):
            passage = np.int64(posting_passages[entry])
            bitmap[passage >> 5] |= np.uint32(1) << np.uint32(passage & 31)
    # the candidates ascending, and the candidates before each word of the bitmap
    n_candidates = 0
    for w in range(n_words):
        touched[w] = n_candidates
        word = np.int64(bitmap[w])
        while word:
            low = word & -word
            hits[n_candidates] = (w << 5) + _count_bits(low - 1)
            n_candidates += 1
            word ^= low
    # 3. every list sets its term's bit in the masks of its candidates
    masks = values.view(np.int64)
    masks[:n_candidates] = 0
    for position in range(n_terms):
        column = term_columns[terms[position]]
        bit = np.int64(1) << position
        lo = posting_pointers[column]
        hi = posting_pointers[column + 1]
        if _SEARCH_COST * n_candidates < hi - lo:
            # few candidates, a long list: a binary search each, in the part of the list
            # after the previous candidate's
            for i in range(n_candidates):
                passage = hits[i]
                low = lo
                high = hi
                while low < high:
                    middle = (low + high) >> 1
                    if np.int64(posting_passages[middle]) < passage:
                        low = middle + 1
                    else:
                        high = middle
                lo = low
                if lo < hi and np.int64(posting_passages[lo]) == passage:
                    masks[i] |= bit
            continue
        for entry in range(lo, hi):
            passage = np.int64(posting_passages[entry])
            word = np.int64(bitmap[passage >> 5])
            shift = passage & 31
            if (word >> shift) & 1:
                slot = touched[passage >> 5] + _count_bits(word & ((np.int64(1) << shift) - 1))
                masks[slot] |= bit
    bitmap[:] = 0
    # 4. exact rank scores, in query order, from the masks
    for i in range(n_candidates):
        values[i] = _mask_score(masks[i], tables, term_weights, terms)
    return n_candidates


@jit
def _maxscore_queries(
    posting_pointers, posting_passages, row_pointers, row_columns, term_columns,
    term_weights, term_ranks, term_offsets, k, words, touched, hits, values, slots,
    frequent_bits, bit_of_column, queries, slot, out_counts, out_passages,
    out_rank_scores, out_scores, want_held, out_held,
):
    """The candidates of the queries ``queries`` by :func:`_maxscore_candidates` (each
    with 2 to ``_MAXSCORE_MAX_TERMS`` ranking terms found, positive weights, rows), into
    the output arrays as the walk's kernels (:mod:`citekit.kernels._retrieval_walk`) write
    them (query ``q``'s at ``q * slot``): its own driver, so that corpora that never take
    this path never compile it."""
    for position in range(queries.shape[0]):
        query = queries[position]
        n_out = query * slot
        first = term_offsets[query]
        last = term_offsets[query + 1]
        n_terms = 0
        n_found = 0
        for term in range(first, last):
            if term_columns[term] >= 0:
                n_found += 1
                n_terms += term_ranks[term]
        terms = np.empty(n_terms, dtype=np.int64)
        n_terms = 0
        for term in range(first, last):
            if term_columns[term] >= 0 and term_ranks[term]:
                terms[n_terms] = term
                n_terms += 1
        n_hits = _maxscore_candidates(
            posting_pointers, posting_passages, row_pointers, row_columns, term_columns,
            term_weights, terms, k, words, touched, hits, values,
        )
        take = _emit_best(hits, values, n_hits, k, 0.0, out_passages, out_rank_scores, n_out)
        held_bits = want_held and last - first <= _HELD_BITS
        if want_held and not held_bits:
            out_held[n_out:n_out + take] = -1
        if held_bits:
            _held_from_rows(
                row_pointers, row_columns, term_columns, first, last, out_passages, n_out,
                take, slots, out_held,
            )
        if n_found > n_terms:
            _add_unranked(
                row_pointers, row_columns, term_columns, term_weights, term_ranks, first,
                last, out_passages, out_rank_scores, out_scores, n_out, take, slots,
                frequent_bits, bit_of_column, False, out_held,
            )
        else:
            copy_range(out_scores, n_out, out_rank_scores, n_out, take)
        out_counts[query] = take


def maxscore_queries(
    posting_pointers: np.ndarray,
    n_passages: int,
    term_columns: np.ndarray,
    term_ranks: np.ndarray,
    term_offsets: np.ndarray,
    k: int,
    maxscore: bool | None,
    have_rows: bool,
) -> np.ndarray:
    """Which queries take the MaxScore path (bool, one per query): with ``maxscore``
    True, every query of 2 to 63 ranking terms found in the corpus whose lists hold more
    than ``k`` entries; by default (None) only in corpora of 2,097,152 passages or more,
    those of at most 5 such terms whose lists hold 262,144 entries or more; none with
    False or without rows.

    Examples
    --------
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> pointers = i64(0, 3, 5, 6)  # column lengths 3, 2, 1
    >>> ranks = np.ones(4, dtype=bool)
    >>> maxscore_queries(pointers, 4, i64(0, 1, 2, -1), ranks, i64(0, 2, 4), 2, True,
    ...                  True).tolist()
    [True, False]
    """
    n_queries = term_offsets.shape[0] - 1
    if maxscore is False or not have_rows or (
        maxscore is None and n_passages < _MAXSCORE_MIN_PASSAGES
    ):
        return np.zeros(n_queries, dtype=bool)
    n_terms, entries = ranking_lists(posting_pointers, term_columns, term_ranks, term_offsets)
    chosen = (n_terms >= 2) & (n_terms <= _MAXSCORE_MAX_TERMS) & (entries > k)
    if maxscore is None:
        chosen &= (n_terms <= _AUTO_MAXSCORE_TERMS) & (entries >= _MIN_MAXSCORE_ENTRIES)
    return chosen  # type: ignore[no-any-return]
