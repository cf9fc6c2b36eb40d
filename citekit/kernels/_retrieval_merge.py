"""The merged path of the retrieval kernels, for queries whose posting lists are long
(large corpora): an exact MaxScore search that reads posting lists in order instead of
adding into a score per passage.

On a corpus of millions of passages, walking a query's lists into a per-passage array
touches a new cache line per posting (the lists of common content words hold hundreds of
thousands of passages each): the walk is bound by memory, not by arithmetic. Most of
those postings cannot matter: once ``k`` passages are known to score ``theta``, a passage
holding only terms whose weights sum to less than ``theta`` cannot be among the ``k``
best. So:

1. the lists are merged heaviest term first into one sorted array of candidate passages
   with their partial sums (merging reads lists and candidates in order: no random
   access);
2. after each list, the ``k`` best candidates by partial sum are scored exactly from
   their rows (``k`` short row reads): the ``k``-th best of those exact scores is a lower
   bound ``theta`` of the ``k``-th best score of the query;
3. once ``theta`` exceeds the summed weight of the lists left, no passage outside the
   candidates can reach it: the remaining (light, long) lists only add their weight to
   the candidates still in the running, found by binary search or one pass over the
   list, and candidates that can no longer reach ``theta`` are dropped before each list;
4. the survivors are scored exactly, in query order, from their rows.

The walk's sums are rounded in another order than the query's: every comparison of them
carries a margin that can only keep more passages, and the result is scored again in
query order, so it is bit for bit that of walking every list. When admission does not
stop early (``theta`` stays below the lists left) the merges would cost more than the
plain walk: past a budget of merged entries the path gives up and the caller walks the
lists as before.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._retrieval_masks import _mask_score, _mask_tables
from citekit.kernels._retrieval_select import _row_terms, _select
from citekit.kernels._sort import stable_argsort

# by default, only queries whose ranking lists hold this many entries take the merged
# path: shorter ones are walked as fast into per-passage words (measured: the benchmark
# workload at 1,000 documents walks about 60,000 entries per query)
_MIN_MERGED_ENTRIES = 262144


# ... and only queries of at most this many ranking terms: with more, the k-th best
# score found early stays below the weight of the lists left for most of the walk, and
# merging the candidates with every list costs more than walking them (measured at
# 10,000 and 100,000 documents)
_AUTO_MERGED_TERMS = 4


# the merged path keeps which terms each candidate holds in one int64
_MERGED_MAX_TERMS = 63


@jit
def _estimate_of_mask(mask, tables):
    """The sum of the per-byte partial sums of the rank score of ``mask``: within a
    relative ``n_terms * 2**-52`` of the exact one (positive weights)."""
    total = 0.0
    byte = 0
    while mask:
        total += tables[byte, mask & 255]
        mask >>= 8
        byte += 1
    return total


@jit
def _row_mask(row_pointers, row_columns, passage, by_column, local_columns, held):
    """Bit ``i`` set when the row of ``passage`` holds the query's ``i``-th ranking term."""
    _row_terms(row_pointers, row_columns, passage, by_column, local_columns, held)
    mask = np.int64(0)
    for i in range(held.shape[0]):
        if held[i]:
            mask |= np.int64(1) << i
    return mask


@jit
def _merged_candidates(
    posting_pointers, posting_passages, row_pointers, row_columns, term_columns,
    term_weights, terms, k, budget, touched, hits, values, scores,
):
    """The passages that can be among the ``k`` best by rank score, into ``hits`` with
    their exact rank scores (query order) in ``values``; returns how many, or -1 when
    admission did not stop within ``budget`` merged entries (nothing found: walk the
    lists instead). ``touched``, ``hits``, ``values`` (at least one entry per passage)
    and ``scores`` (all zero, left all zero) are scratch; rows needed; positive weights;
    at most ``_MERGED_MAX_TERMS`` terms.

    Candidates carry a mask of the terms found so far (bit ``i``: ``terms[i]``); a mask's
    estimate (byte tables of query-order sums) is within rounding of its exact score,
    which the tables give too (:func:`_mask_score`): the walk adds no floats.
    """
    n_terms = terms.shape[0]
    # heaviest first; equal weights: shorter list first, then query order
    keys = np.empty(n_terms)
    lengths = np.empty(n_terms, dtype=np.int64)
    for i in range(n_terms):
        column = term_columns[terms[i]]
        lengths[i] = posting_pointers[column + 1] - posting_pointers[column]
        keys[i] = -term_weights[terms[i]]
    by_length = stable_argsort(lengths)
    order = by_length[np.argsort(keys[by_length], kind="mergesort")]  # query positions
    # rest[j]: summed weight of the terms from the j-th walked on
    rest = np.zeros(n_terms + 1)
    for j in range(n_terms - 1, -1, -1):
        rest[j] = term_weights[terms[order[j]]] + rest[j + 1]
    # a sum of at most n_terms positive weights, in any grouping, lies within a relative
    # n_terms * 2**-53 of the exact sum: bounds times ``up`` compared with scores times
    # ``down`` (once per rounding between them) can only keep more passages
    margin = (n_terms + 2) * 2.0**-50
    up = 1.0 + margin
    down = 1.0 - margin
    tables = np.empty(((n_terms + 7) // 8, 256))
    _mask_tables(term_weights, terms, tables)
    # exact scores of passages not fully walked read their rows (terms in column order)
    local_columns = np.empty(n_terms, dtype=np.int64)
    for i in range(n_terms):
        local_columns[i] = term_columns[terms[i]]
    by_column = stable_argsort(local_columns)
    held = np.zeros(n_terms, dtype=np.bool_)
    # candidates: ascending passages with their masks, in one of two buffers
    current_passages = touched
    current_masks = values.view(np.int64)
    other_passages = hits
    other_masks = scores.view(np.int64)
    in_scores = 0  # entries of ``scores`` written (zeroed before returning)
    n_current = 0
    theta = 0.0  # the k-th best of k passages' exact scores: a lower bound of the k-th best
    work = 0
    j = 0
    while j < n_terms and not (theta > 0.0 and theta * down > rest[j] * up):
        position = order[j]
        column = term_columns[terms[position]]
        bit = np.int64(1) << position
        lo = posting_pointers[column]
        hi = posting_pointers[column + 1]
        work += n_current + hi - lo
        if work > budget:
            scores[:in_scores] = 0.0
            return -1
        # merge the list into the candidates
        a = 0
        entry = lo
        n = 0
        while a < n_current and entry < hi:
            passage = current_passages[a]
            listed = np.int64(posting_passages[entry])
            if passage < listed:
                other_passages[n] = passage
                other_masks[n] = current_masks[a]
                a += 1
            elif listed < passage:
                other_passages[n] = listed
                other_masks[n] = bit
                entry += 1
            else:
                other_passages[n] = passage
                other_masks[n] = current_masks[a] | bit
                a += 1
                entry += 1
            n += 1
        while a < n_current:
            other_passages[n] = current_passages[a]
            other_masks[n] = current_masks[a]
            a += 1
            n += 1
        while entry < hi:
            other_passages[n] = posting_passages[entry]
            other_masks[n] = bit
            entry += 1
            n += 1
        if j % 2 == 0:
            in_scores = max(in_scores, n)
        current_passages, other_passages = other_passages, current_passages
        current_masks, other_masks = other_masks, current_masks
        n_current = n
        j += 1
        if n_current >= k and j < n_terms:
            # the k best candidates by the terms walked, scored exactly from their rows:
            # the k-th best of those scores bounds the k-th best from below
            partial = np.empty(n_current)
            for i in range(n_current):
                partial[i] = _estimate_of_mask(current_masks[i], tables)
            kth = _select(partial.copy(), n_current, n_current - k)
            best = np.empty(k)
            n_best = 0
            for i in range(n_current):
                if partial[i] > kth or (partial[i] == kth and n_best < k):
                    if n_best < k:
                        mask = _row_mask(
                            row_pointers, row_columns, current_passages[i], by_column,
                            local_columns, held,
                        )
                        best[n_best] = _mask_score(mask, tables, term_weights, terms)
                        n_best += 1
            theta = max(theta, _select(best, n_best, 0))
    # the lists left only add to the candidates still in the running
    for j2 in range(j, n_terms + 1):
        estimates = np.empty(n_current)
        for a in range(n_current):
            estimates[a] = _estimate_of_mask(current_masks[a], tables)
        if n_current > k:
            # k candidates estimate at least the k-th largest estimate: they score it
            # less the rounding of both
            kth = _select(estimates.copy(), n_current, n_current - k)
            theta = max(theta, kth * down * down)
        bar = theta * down
        remaining = rest[j2]
        n = 0
        for a in range(n_current):
            if (estimates[a] + remaining) * up >= bar:
                current_passages[n] = current_passages[a]
                current_masks[n] = current_masks[a]
                n += 1
        n_current = n
        if n_current == 0 or j2 == n_terms:
            break
        position = order[j2]
        column = term_columns[terms[position]]
        bit = np.int64(1) << position
        lo = posting_pointers[column]
        hi = posting_pointers[column + 1]
        entry = lo
        if 16 * n_current < hi - lo:
            # few candidates: a binary search each, in the part of the list after the
            # previous one's
            for a in range(n_current):
                passage = current_passages[a]
                low = entry
                high = hi
                while low < high:
                    middle = (low + high) >> 1
                    if np.int64(posting_passages[middle]) < passage:
                        low = middle + 1
                    else:
                        high = middle
                entry = low
                if entry < hi and np.int64(posting_passages[entry]) == passage:
                    current_masks[a] |= bit
        else:
            for a in range(n_current):
                passage = current_passages[a]
                while entry < hi and np.int64(posting_passages[entry]) < passage:
                    entry += 1
                if entry < hi and np.int64(posting_passages[entry]) == passage:
                    current_masks[a] |= bit
    # the survivors (every list applied), scored exactly in query order from their masks
    # (``hits`` and ``values`` are written at or before the entry read)
    for a in range(n_current):
        passage = current_passages[a]
        mask = current_masks[a]
        hits[a] = passage
        values[a] = _mask_score(mask, tables, term_weights, terms)
    scores[:in_scores] = 0.0
    return n_current
