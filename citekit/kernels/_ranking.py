"""Kernels of the ranking stage: eligible pairs ranked per sentence with the
specification's tie-breaks, and the walks that choose each sentence's citations (at most
``max_citations_per_source`` per source, ``top_k`` in all, duplicates dropped) and its
evidence pool."""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._sort import stable_argsort

__all__ = [
    "choose_all",
    "rank_and_choose",
    "rank_eligible",
    "rank_within_queries",
]


@jit
def _precedes(a, b, float_keys, int_keys):
    """Whether item ``a`` sorts strictly before item ``b``: by the rows of ``float_keys``
    (ascending, NaN last, as numpy sorts), then the rows of ``int_keys`` (ascending)."""
    for r in range(float_keys.shape[0]):
        x = float_keys[r, a]
        y = float_keys[r, b]
        if x < y:
            return True
        if y < x:
            return False
        x_nan = x != x
        y_nan = y != y
        if x_nan != y_nan:
            return y_nan
    for r in range(int_keys.shape[0]):
        if int_keys[r, a] != int_keys[r, b]:
            return int_keys[r, a] < int_keys[r, b]
    return False


@jit
def _group_by_query(items, item_query, n_queries):
    """``items`` grouped by query (a stable counting sort): ``(grouped, bounds)``, query
    ``q``'s items ``grouped[bounds[q]:bounds[q + 1]]`` in their order in ``items``."""
    n = items.shape[0]
    bounds = np.zeros(n_queries + 1, dtype=np.int64)
    for k in range(n):
        bounds[item_query[items[k]] + 1] += 1
    for q in range(n_queries):
        bounds[q + 1] += bounds[q]
    fill = bounds[:-1].copy()
    grouped = np.empty(n, dtype=np.int64)
    for k in range(n):
        q = item_query[items[k]]
        grouped[fill[q]] = items[k]
        fill[q] += 1
    return grouped, bounds


@jit
def _choice_arrays(n_queries, top_k, pool_size):
    """The outputs of :func:`choose_all` for ``n_queries`` sentences, and the walk's
    scratch: ``(judged, judged_offsets, n_pool, chosen_rows, chosen_offsets, chosen,
    pool)``."""
    return (
        np.empty(n_queries * (pool_size + top_k), dtype=np.int64),
        np.zeros(n_queries + 1, dtype=np.int64),
        np.zeros(n_queries, dtype=np.int64),
        np.empty(n_queries * top_k, dtype=np.int64),
        np.zeros(n_queries + 1, dtype=np.int64),
        np.empty(top_k, dtype=np.int64),
        np.empty(pool_size, dtype=np.int64),
    )


@jit
def rank_within_queries(items, item_query, n_queries, float_keys, int_keys):
    """``items`` grouped by query (ascending), each group sorted by the keys.

    Equal to ``items[np.lexsort((*reversed(int_keys[:, items]),
    *reversed(float_keys[:, items]), item_query[items]))]``: keys are indexed by item
    (``float_keys[r, item]``), ties keep the order of ``items``. Returns ``(ranked,
    bounds)``: query ``q``'s items are ``ranked[bounds[q]:bounds[q + 1]]``.

    Why not ``np.lexsort``: it sorts every key over all items (six passes for the
    citation ranking), while the groups are small; a stable counting sort by query and a
    merge sort per group cost a fraction of it, and the bounds come for free.
    """
    ranked, bounds = _group_by_query(items, item_query, n_queries)
    buffer = np.empty(items.shape[0], dtype=np.int64)
    for q in range(n_queries):
        _sort_group(ranked, bounds[q], bounds[q + 1], buffer, float_keys, int_keys)
    return ranked, bounds


@jit
def _walk(ranked, lo, hi, use_threshold, final, threshold, passage_source, char_start,
          char_end, top_k, max_per_source, pool_size, chosen, judged):
    """Walk ``ranked[lo:hi]`` as :func:`choose_all` does (with
    ``use_threshold``, only the pairs whose ``final`` score is above ``threshold``).
    Fills ``chosen`` (at most ``top_k``) and ``judged`` (at most ``pool_size``) and
    returns their lengths."""
    n_chosen = 0
    n_judged = 0
    seen = set()
    for k in range(lo, hi):
        pair = ranked[k]
        if use_threshold and not final[pair] > threshold:
            continue
        source = passage_source[pair]
        key = (source, char_start[pair], char_end[pair])
        if key in seen:
            continue
        seen.add(key)
        if n_judged < pool_size:
            judged[n_judged] = pair
            n_judged += 1
        if n_chosen < top_k:
            used = 0
            for c in range(n_chosen):
                if passage_source[chosen[c]] == source:
                    used += 1
            if used < max_per_source:
                chosen[n_chosen] = pair
                n_chosen += 1
        if n_chosen >= top_k and n_judged >= pool_size:
            break
    return n_chosen, n_judged


@jit
def _ranking_keys(eligible_mask, pair_query, pair_passage, char_start, char_end, final,
                  passage_source, base_offsets, source_indices, prefer_source_order):
    """The eligible pairs, their queries and their ranking keys (see
    :func:`rank_eligible`): ``(eligible, query, float_keys, int_keys)``, keys indexed by
    position in ``eligible``."""
    n_pairs = eligible_mask.shape[0]
    n_eligible = 0
    for p in range(n_pairs):
        n_eligible += eligible_mask[p]
    eligible = np.empty(n_eligible, dtype=np.int64)
    query = np.empty(n_eligible, dtype=np.int64)
    float_keys = np.empty((1, n_eligible))
    int_keys = np.empty((4, n_eligible), dtype=np.int64)
    k = 0
    for p in range(n_pairs):
        if not eligible_mask[p]:
            continue
        eligible[k] = p
        query[k] = pair_query[p]
        passage = pair_passage[p]
        source = passage_source[passage]
        start = char_start[p]
        absolute_start = start + base_offsets[source]
        negative_length = start - char_end[p]
        float_keys[0, k] = -final[p]
        if prefer_source_order:
            int_keys[0, k] = source_indices[source]
            int_keys[1, k] = absolute_start
            int_keys[2, k] = negative_length
        else:
            int_keys[0, k] = absolute_start
            int_keys[1, k] = negative_length
            int_keys[2, k] = source_indices[source]
        int_keys[3, k] = passage
        k += 1
    return eligible, query, float_keys, int_keys


@jit
def rank_eligible(eligible_mask, pair_query, pair_passage, char_start, char_end, final,
                  passage_source, base_offsets, source_indices, prefer_source_order,
                  n_queries):
    """The eligible pairs grouped by query, best first (see
    :func:`citekit._citations.ranking.rank`): :func:`rank_within_queries` of the pairs
    whose ``eligible_mask`` is set, by ``-final``, then (``prefer_source_order``) source
    index, absolute evidence start, longer evidence first and passage, or absolute start,
    longer evidence, source index and passage; the keys are computed here rather than
    gathered by a dozen numpy calls. Returns ``(ranked, bounds)``: query ``q``'s pairs
    are ``ranked[bounds[q]:bounds[q + 1]]`` (``pair_query`` below ``n_queries``)."""
    eligible, query, float_keys, int_keys = _ranking_keys(
        eligible_mask, pair_query, pair_passage, char_start, char_end, final, passage_source,
        base_offsets, source_indices, prefer_source_order,
    )
    n_eligible = eligible.shape[0]
    ranked, bounds = rank_within_queries(
        np.arange(n_eligible), query, n_queries, float_keys, int_keys
    )
    return eligible[ranked], bounds


@jit
def choose_all(ranked, bounds, passage_source, char_start, char_end, top_k, max_per_source,
               pool_size):
    """The citations and evidence pool of every sentence (see
    :func:`citekit._citations.ranking.choose_citations`): sentence ``q``'s pairs, best first, are
    ``ranked[bounds[q]:bounds[q + 1]]``.

    Returns ``(judged, judged_offsets, n_pool, chosen_rows, chosen_offsets)``: sentence
    ``q`` judges ``judged[judged_offsets[q]:judged_offsets[q + 1]]``, its evidence pool
    (the first ``n_pool[q]``) then the citations chosen by score that are not in it; its
    citations by score are the judged pairs at rows ``chosen_rows[chosen_offsets[q]:
    chosen_offsets[q + 1]]`` (positions in its judged list), best first.
    """
    n_queries = bounds.shape[0] - 1
    judged, judged_offsets, n_pool, chosen_rows, chosen_offsets, chosen, pool = (
        _choice_arrays(n_queries, top_k, pool_size)
    )
    # (int64 from the start: a literal 0, the type numba first infers for these loop
    # counters, would compile _record_choice once more)
    n_judged = np.int64(0)
    n_chosen_all = np.int64(0)
    for q in range(n_queries):
        n_chosen, n_pooled = _walk(
            ranked, bounds[q], bounds[q + 1], False, np.zeros(0), 0.0, passage_source,
            char_start, char_end, top_k, max_per_source, pool_size, chosen, pool,
        )
        n_judged, n_chosen_all = _record_choice(
            q, chosen, n_chosen, pool, n_pooled, judged, n_judged, judged_offsets, n_pool,
            chosen_rows, n_chosen_all, chosen_offsets,
        )
    return (
        judged[:n_judged], judged_offsets, n_pool, chosen_rows[:n_chosen_all], chosen_offsets
    )


@jit
def _record_choice(q, chosen, n_chosen, pool, n_pooled, judged, n_judged, judged_offsets,
                   n_pool, chosen_rows, n_chosen_all, chosen_offsets):
    """Append sentence ``q``'s walk (its pool, then the chosen pairs outside it) to
    :func:`choose_all`'s outputs; returns the new ``(n_judged, n_chosen_all)``."""
    first = n_judged
    for i in range(n_pooled):
        judged[n_judged] = pool[i]
        n_judged += 1
    n_pool[q] = n_pooled
    for c in range(n_chosen):
        row = -1
        for i in range(first, n_judged):
            if judged[i] == chosen[c]:
                row = i - first
                break
        if row < 0:
            judged[n_judged] = chosen[c]
            row = n_judged - first
            n_judged += 1
        chosen_rows[n_chosen_all] = row
        n_chosen_all += 1
    judged_offsets[q + 1] = n_judged
    chosen_offsets[q + 1] = n_chosen_all
    return n_judged, n_chosen_all


@jit
def _sort_group(ranked, lo, hi, buffer, float_keys, int_keys):
    """Stable bottom-up merge sort of ``ranked[lo:hi]`` by the keys (see
    :func:`rank_within_queries`)."""
    width = 1
    while width < hi - lo:
        for start in range(lo, hi, 2 * width):
            middle = min(start + width, hi)
            end = min(start + 2 * width, hi)
            i = start
            j = middle
            out = start
            while i < middle and j < end:
                if _precedes(ranked[j], ranked[i], float_keys, int_keys):
                    buffer[out] = ranked[j]
                    j += 1
                else:
                    buffer[out] = ranked[i]
                    i += 1
                out += 1
            while i < middle:
                buffer[out] = ranked[i]
                i += 1
                out += 1
            while j < end:
                buffer[out] = ranked[j]
                j += 1
                out += 1
        for k in range(lo, hi):
            ranked[k] = buffer[k]
        width *= 2


@jit
def _best_of_group(ranked, lo, hi, n_best, float_keys, int_keys):
    """Move the first ``n_best`` (``<= hi - lo``) items of the stable order of
    ``ranked[lo:hi]`` (see :func:`_sort_group`) to ``ranked[lo:lo + n_best]``, in that
    order; the other items follow in no order.

    The items are read in order into a sorted front: while it is not full an item joins
    it (in the slot it was read from, then moved up past the items it strictly precedes:
    stable); once full, an item that strictly precedes the front's last one takes its
    place in the front, and that one the item's slot."""
    n = 0
    for k in range(lo, hi):
        item = ranked[k]
        if n == n_best:
            last = ranked[lo + n_best - 1]
            if not _precedes(item, last, float_keys, int_keys):
                continue
            ranked[k] = last
            position = lo + n_best - 1
        else:
            position = k  # (every item read so far is in the front: lo + n == k)
            n += 1
        while position > lo and _precedes(item, ranked[position - 1], float_keys, int_keys):
            ranked[position] = ranked[position - 1]
            position -= 1
        ranked[position] = item


@jit
def _walk_ranked(ranked, lo, hi, eligible, buffer, pair_source, char_start, char_end, top_k,
                 max_per_source, pool_size, chosen, pool):
    """:func:`_walk` of the pairs ``eligible[ranked[lo:hi]]`` (written to ``buffer[lo:hi]``
    first)."""
    for k in range(lo, hi):
        buffer[k] = eligible[ranked[k]]
    return _walk(
        buffer, lo, hi, False, np.zeros(0), 0.0, pair_source, char_start, char_end, top_k,
        max_per_source, pool_size, chosen, pool,
    )


@jit
def rank_and_choose(eligible_mask, pair_query, pair_passage, char_start, char_end, final,
                    passage_source, base_offsets, source_indices, prefer_source_order,
                    n_queries, pair_source, top_k, max_per_source, pool_size, front):
    """:func:`choose_all` of :func:`rank_eligible`'s ranking, without ranking more of a
    sentence's pairs than its walk reads: the first ``front`` of a larger group are found
    (:func:`_best_of_group`) and walked; only when the walk needs more than those is the
    whole group sorted and walked again. Returns :func:`choose_all`'s outputs
    (``pair_source``: each pair's source, as there)."""
    eligible, query, float_keys, int_keys = _ranking_keys(
        eligible_mask, pair_query, pair_passage, char_start, char_end, final, passage_source,
        base_offsets, source_indices, prefer_source_order,
    )
    n = eligible.shape[0]
    ranked, bounds = _group_by_query(np.arange(n), query, n_queries)
    buffer = np.empty(n, dtype=np.int64)
    judged, judged_offsets, n_pool, chosen_rows, chosen_offsets, chosen, pool = (
        _choice_arrays(n_queries, top_k, pool_size)
    )
    # (int64 from the start: a literal 0, the type numba first infers for these loop
    # counters, would compile _record_choice once more)
    n_judged = np.int64(0)
    n_chosen_all = np.int64(0)
    for q in range(n_queries):
        lo = bounds[q]
        hi = bounds[q + 1]
        n_chosen = n_pooled = 0
        done = False
        if hi - lo > front:
            _best_of_group(ranked, lo, hi, front, float_keys, int_keys)
            n_chosen, n_pooled = _walk_ranked(
                ranked, lo, lo + front, eligible, buffer, pair_source, char_start, char_end,
                top_k, max_per_source, pool_size, chosen, pool,
            )
            done = n_chosen >= top_k and n_pooled >= pool_size
            if not done:
                # the walk went past the front: the whole group, from its first order
                # (ascending, on which the stable sort breaks ties)
                # (the shared stable sort, already compiled, and a loop: ``ndarray.sort``
                # would compile numba's quicksort, a slice assignment its broadcasting,
                # seconds of a first call for this rare path)
                group = ranked[lo:hi].copy()
                order = stable_argsort(group)
                for i in range(hi - lo):
                    ranked[lo + i] = group[order[i]]
        if not done:
            _sort_group(ranked, lo, hi, buffer, float_keys, int_keys)
            n_chosen, n_pooled = _walk_ranked(
                ranked, lo, hi, eligible, buffer, pair_source, char_start, char_end, top_k,
                max_per_source, pool_size, chosen, pool,
            )
        n_judged, n_chosen_all = _record_choice(
            q, chosen, n_chosen, pool, n_pooled, judged, n_judged, judged_offsets, n_pool,
            chosen_rows, n_chosen_all, chosen_offsets,
        )
    return (
        judged[:n_judged], judged_offsets, n_pool, chosen_rows[:n_chosen_all], chosen_offsets
    )
