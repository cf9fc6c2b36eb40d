"""Kernels of the pipeline's alignment stage: query terms for the bag counts and the
bookkeeping of the best-first alignment (numba).

:meth:`citekit.pipeline.Pipeline._align_best_first` aligns candidate pairs in one or more
aligner calls (rounds, plus a retry on content words). Doing the per-call bookkeeping
with numpy took a dozen array operations per call (scatter six result columns, expand
blocks per pair, a weighted bincount, rebuilding the per-pair block arrays), each costing
microseconds of call overhead on arrays of a few hundred pairs: more than the alignment
kernel itself for a typical answer. These kernels do the same in one pass each.

Each call's blocks are appended to one growing array (the *arena*) and each pair points
to its latest blocks by ``(block_start, block_count)``; :func:`assemble_blocks` gathers
them into the CSR form of :class:`~citekit.kernels.PairAlignments` when a round needs
them.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._sort import stable_argsort

__all__ = [
    "assemble_blocks",
    "bag_counts_from_held",
    "choose_all",
    "close_queries",
    "evidence_chars",
    "judged_int_facts",
    "pair_feasibility",
    "score_components",
    "query_terms",
    "rank_and_choose",
    "rank_eligible",
    "rank_within_queries",
    "record_alignments",
]


@jit
def record_alignments(
    pairs,
    rows,
    block_counts,
    block_starts,
    blocks,
    query_offsets,
    pair_query,
    content_prefix,
    word_prefix,
    min_letter_run,
    content_present,
    aligned_rows,
    pair_block_start,
    pair_block_count,
    content_matched,
    arena,
    arena_size,
):
    """Store one aligner call's results for ``pairs`` and list the pairs to retry.

    For call row ``k`` and pair ``p = pairs[k]``: ``aligned_rows[:, p] = rows[:, k]``
    (score, query_start, query_end, target_start, target_end, matches); the pair's blocks
    ``blocks[block_starts[k]:block_starts[k] + block_counts[k]]`` (rows ``(query_pos,
    target_pos, length)``) are appended to ``arena`` after its first ``arena_size`` rows
    (the caller makes room for ``block_counts.sum()`` more) and located by
    ``pair_block_start[p]``, ``pair_block_count[p]``; ``content_matched[p]`` counts the
    content tokens of the query inside those blocks (``content_prefix`` is the prefix sum
    of the query tokens' content flags), but in a block of fewer than ``min_letter_run``
    tokens (and than the query's) only its content words (``word_prefix``: the same
    without single letters of Thai, kana, ..., which two in a row match by chance). A
    later call for the same pair overwrites all of it (its old blocks stay in the arena,
    unused).

    Returns the pairs (in call order) that matched no content token although their
    passage contains some (``content_present[p] >= 1``): their best alignment is a run of
    stop words, and the pipeline aligns them again on content words only.
    """
    n = pairs.shape[0]
    retry = np.empty(n, dtype=np.int64)
    n_retry = 0
    end = arena_size
    for k in range(n):
        p = pairs[k]
        for c in range(6):
            aligned_rows[c, p] = rows[c, k]
        count = block_counts[k]
        pair_block_start[p] = end
        pair_block_count[p] = count
        query_base = query_offsets[pair_query[p]]
        # (a sentence shorter than a run: a block of all its tokens)
        letter_run = min(min_letter_run, query_offsets[pair_query[p] + 1] - query_base)
        matched = 0.0
        for b in range(count):
            source = block_starts[k] + b
            for c in range(3):
                arena[end + b, c] = blocks[source, c]
            begin = query_base + blocks[source, 0]
            length = blocks[source, 2]
            if length >= letter_run:
                matched += content_prefix[begin + length] - content_prefix[begin]
            else:
                matched += word_prefix[begin + length] - word_prefix[begin]
        end += count
        content_matched[p] = matched
        if matched == 0 and content_present[p] >= 1:
            retry[n_retry] = p
            n_retry += 1
    return retry[:n_retry]


@jit
def assemble_blocks(pair_block_start, pair_block_count, arena):
    """Gather every pair's blocks from ``arena`` into ``(block_offsets, blocks)``: pair
    ``p`` owns ``blocks[block_offsets[p]:block_offsets[p + 1]]``, which are
    ``arena[pair_block_start[p]:pair_block_start[p] + pair_block_count[p]]``."""
    n_pairs = pair_block_start.shape[0]
    block_offsets = np.zeros(n_pairs + 1, dtype=np.int64)
    for p in range(n_pairs):
        block_offsets[p + 1] = block_offsets[p] + pair_block_count[p]
    blocks = np.empty((block_offsets[n_pairs], 3), dtype=np.int64)
    for p in range(n_pairs):
        source = pair_block_start[p]
        destination = block_offsets[p]
        for b in range(pair_block_count[p]):
            for c in range(3):
                blocks[destination + b, c] = arena[source + b, c]
    return block_offsets, blocks


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
    :meth:`citekit.pipeline.Pipeline._rank`): :func:`rank_within_queries` of the pairs
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
    :meth:`citekit.pipeline.Pipeline._rank_and_choose`): sentence ``q``'s pairs, best first, are
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
    n_judged = 0
    n_chosen_all = 0
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
    n_judged = 0
    n_chosen_all = 0
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
                ranked[lo:hi].sort()
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


@jit
def close_queries(
    open_query,
    limit,
    query_first,
    order,
    score_bound,
    ranked,
    ranked_bounds,
    final,
    passage_source,
    char_start,
    char_end,
    top_k,
    max_per_source,
    pool_size,
):
    """The close test of a best-first round, for every open query (updates
    ``open_query`` and ``limit`` in place).

    Query ``q`` has aligned its first ``limit[q]`` pairs of ``order[query_first[q]:
    query_first[q + 1]]`` (most promising first). It closes when none is left, or when
    its accepted pairs (``ranked[ranked_bounds[q]:ranked_bounds[q + 1]]``, best first)
    whose ``final`` score beats ``score_bound`` of its next unaligned pair already give
    ``top_k`` citations and ``pool_size`` evidence candidates, walked as
    :func:`choose_all` walks them (duplicate evidence
    ``(source, char_start, char_end)`` skipped, at most ``max_per_source`` citations per
    source). Otherwise its limit grows fourfold.

    Why a kernel: the same walk in Python cost a list, a set and a dict per open query
    per round, more than the alignment itself on batches of many sentences.
    """
    chosen = np.empty(top_k, dtype=np.int64)
    judged = np.empty(pool_size, dtype=np.int64)
    for q in range(open_query.shape[0]):
        if not open_query[q]:
            continue
        next_rank = limit[q]
        if next_rank >= query_first[q + 1] - query_first[q]:
            open_query[q] = False
            continue
        best_rest = score_bound[order[query_first[q] + next_rank]]
        n_chosen, n_judged = _walk(
            ranked, ranked_bounds[q], ranked_bounds[q + 1], True, final, best_rest,
            passage_source, char_start, char_end, top_k, max_per_source, pool_size, chosen,
            judged,
        )
        if n_chosen >= top_k and n_judged >= pool_size:
            open_query[q] = False
        else:
            limit[q] *= 4


@jit
def evidence_chars(
    pair_passage,
    target_start,
    target_end,
    embedding_only,
    passage_token_start,
    passage_char_start,
    passage_char_end,
    token_starts,
    token_ends,
):
    """Character range of each pair's evidence (see
    :func:`citekit.pipeline._evidence_chars`); one pass instead of ten array operations."""
    n_pairs = pair_passage.shape[0]
    char_start = np.zeros(n_pairs, dtype=np.int64)
    char_end = np.zeros(n_pairs, dtype=np.int64)
    last_index = token_starts.shape[0] - 1
    for p in range(n_pairs):
        passage = pair_passage[p]
        if embedding_only[p]:
            char_start[p] = passage_char_start[passage]
            char_end[p] = passage_char_end[passage]
        elif last_index >= 0:
            first_token = passage_token_start[passage] + target_start[p]
            last_token = passage_token_start[passage] + max(target_end[p] - 1, target_start[p])
            char_start[p] = token_starts[min(first_token, last_index)]
            char_end[p] = token_ends[min(last_token, last_index)]
    return char_start, char_end


@jit
def query_terms(query_ids, query_offsets, query_content, columns):
    """The distinct tokens (terms) of every query, for
    :func:`citekit._bag.pair_bag_counts`.

    Query ``q``'s tokens are ``query_ids[query_offsets[q]:query_offsets[q + 1]]``, with
    content flags ``query_content`` and index columns ``columns`` (``-1``: in no passage).
    Returns ``(term_columns, term_offsets, term_counts, term_is_content,
    distinct_content)``: query ``q`` owns terms ``term_offsets[q]:term_offsets[q + 1]``,
    ascending by token id; a term's count is its number of occurrences in the query and it
    is content when any occurrence is; ``distinct_content[q]`` (float64) counts the
    query's content terms, whether or not the index knows them.

    Why a kernel: the same grouping in numpy (lexsort, boundary flags, cumsum, three
    bincounts) cost a dozen calls of microseconds each per batch of sentences.
    """
    n_queries = query_offsets.shape[0] - 1
    n_tokens = query_ids.shape[0]
    term_columns = np.empty(n_tokens, dtype=np.int64)
    term_counts = np.empty(n_tokens, dtype=np.int64)
    term_is_content = np.empty(n_tokens, dtype=np.bool_)
    term_offsets = np.zeros(n_queries + 1, dtype=np.int64)
    distinct_content = np.zeros(n_queries, dtype=np.float64)
    n_terms = 0
    for q in range(n_queries):
        lo = query_offsets[q]
        hi = query_offsets[q + 1]
        order = stable_argsort(query_ids[lo:hi])
        k = 0
        while k < hi - lo:
            first = lo + order[k]
            token = query_ids[first]
            count = 0
            content = False
            while k < hi - lo and query_ids[lo + order[k]] == token:
                count += 1
                content = content or query_content[lo + order[k]]
                k += 1
            term_columns[n_terms] = columns[first]
            term_counts[n_terms] = count
            term_is_content[n_terms] = content
            if content:
                distinct_content[q] += 1
            n_terms += 1
        term_offsets[q + 1] = n_terms
    return (
        term_columns[:n_terms],
        term_offsets,
        term_counts[:n_terms],
        term_is_content[:n_terms],
        distinct_content,
    )


@jit
def bag_counts_from_held(held, pair_query, term_offsets, term_counts, term_is_content):
    """:func:`citekit._bag.pair_bag_counts` from the terms each pair's passage holds:
    ``held[p]`` has bit ``t`` set when it holds term ``term_offsets[q] + t`` of its query
    ``q = pair_query[p]`` (terms as :func:`query_terms` gives them; -1: not known, then
    the pair's counts are -1 too). Returns ``(all, content, distinct_content)``: the
    query's tokens, its content tokens (with multiplicity) and its distinct content
    tokens that the passage holds.

    Why: the retrieval walk knows the terms of its candidates (the bits of its words), so
    the counts need not read every candidate's row again.
    """
    n_pairs = held.shape[0]
    out_all = np.empty(n_pairs, dtype=np.int64)
    out_content = np.empty(n_pairs, dtype=np.int64)
    out_distinct = np.empty(n_pairs, dtype=np.int64)
    for p in range(n_pairs):
        bits = held[p]
        if bits < 0:
            out_all[p] = -1
            out_content[p] = -1
            out_distinct[p] = -1
            continue
        first = term_offsets[pair_query[p]]
        total_all = 0
        total_content = 0
        distinct = 0
        t = 0
        while bits:
            if bits & 1:
                total_all += term_counts[first + t]
                if term_is_content[first + t]:
                    total_content += term_counts[first + t]
                    distinct += 1
            bits >>= 1
            t += 1
        out_all[p] = total_all
        out_content[p] = total_content
        out_distinct[p] = distinct
    return out_all, out_content, out_distinct


@jit
def pair_feasibility(pair_query, query_lengths, content_total, distinct_per_query,
                     content_occurrences, content_distinct, words_per_query, word_distinct,
                     min_answer_coverage, min_content_tokens):
    """The per-pair quantities the pipeline decides on before aligning (see
    :meth:`citekit.pipeline.Pipeline._align_chunk`), in one pass instead of about twenty
    numpy calls, with the same float operations in the same order.

    Returns ``(safe_len, safe_content, passage_content_coverage, min_content, feasible,
    short)``: the query's tokens and content tokens (at least 1), the share of its distinct
    content words (``words_per_query``; ``word_distinct`` of them in the passage) the
    passage holds, the distinct content tokens a citation needs
    (``min(min_content_tokens, (distinct + 1) // 2)``), whether the pair passes the
    coverage test (a content token held, and held content tokens or distinct words
    reaching ``min_answer_coverage``), and whether it passes it with fewer distinct
    content tokens than needed (then inflections are counted).
    """
    n_pairs = pair_query.shape[0]
    safe_len = np.empty(n_pairs, dtype=np.int64)
    safe_content = np.empty(n_pairs, dtype=np.int64)
    coverage = np.empty(n_pairs, dtype=np.float64)
    min_content = np.empty(n_pairs, dtype=np.float64)
    feasible = np.empty(n_pairs, dtype=np.bool_)
    short = np.empty(n_pairs, dtype=np.bool_)
    for p in range(n_pairs):
        q = pair_query[p]
        safe_len[p] = max(query_lengths[q], 1)
        safe_content[p] = max(content_total[q], 1)
        distinct = distinct_per_query[q]
        coverage[p] = word_distinct[p] / max(words_per_query[q], 1.0)
        min_content[p] = min(float(min_content_tokens), (distinct + 1.0) // 2.0)
        occurrences = content_occurrences[p]
        feasible[p] = occurrences >= 1.0 and (
            occurrences / safe_content[p] >= min_answer_coverage
            or coverage[p] >= min_answer_coverage
        )
        short[p] = feasible[p] and content_distinct[p] < min_content[p]
    return safe_len, safe_content, coverage, min_content, feasible, short


@jit
def accept_pairs(score, target_start, target_end, content_matched, content_variants,
                 min_content, content_coverage, passage_coverage, final, pairs,
                 min_alignment_score, min_answer_coverage, min_final_score):
    """Which aligned pairs may become citations (see
    :meth:`citekit.pipeline.Pipeline._align_chunk`): a real alignment scoring at least
    ``min_alignment_score`` that matched a content token, enough distinct content tokens
    (matched or held as inflections), content coverage by the alignment or the passage
    reaching ``min_answer_coverage``, and a final score of at least ``min_final_score``.
    Entry ``i`` is entry ``i`` of the arrays of the pairs judged (``score`` to ``final``)
    and describes pair ``pairs[i]`` of the per-pair arrays (``content_variants``,
    ``min_content``, ``passage_coverage``); an empty ``pairs`` stands for every pair, in
    order."""
    n = score.shape[0]
    every = pairs.shape[0] == 0
    accepted = np.empty(n, dtype=np.bool_)
    for i in range(n):
        p = i if every else pairs[i]
        matched = content_matched[i]
        accepted[i] = (
            score[i] >= min_alignment_score
            and target_end[i] > target_start[i]
            and matched >= 1.0
            and max(matched, content_variants[p]) >= min_content[p]
            and (
                content_coverage[i] >= min_answer_coverage
                or passage_coverage[p] >= min_answer_coverage
            )
            and final[i] >= min_final_score
        )
    return accepted


#: the rows of :func:`score_components`' matrix, in the order of the components dict
COMPONENT_NAMES = (
    "alignment_score",
    "normalized_alignment",
    "matches",
    "answer_coverage",
    "evidence_coverage",
    "lexical_score",
    "embedding_score",
    "content_coverage",
    "passage_content_coverage",
)


@jit
def score_components(score, matches, target_start, target_end, content_matched, safe_len,
                     safe_content, passage_coverage, lexical, embedding, pairs, match_score,
                     weights, weighted):
    """The score components of the aligned pairs (rows of the returned matrix, in the
    order of :data:`COMPONENT_NAMES`) and, when ``weighted``, their final score: the
    specification's weighted sum (``weights``: alignment, answer coverage, evidence
    coverage, lexical, embedding; embedding similarity clipped at 0 as ``np.maximum``
    clips it), each value computed with the float operations, in the order, of
    :meth:`citekit.pipeline.WeightedScorer.score` and the numpy expressions they replace.
    Entry ``i`` is entry ``i`` of the arrays of the pairs judged (``score`` to
    ``content_matched``) and describes pair ``pairs[i]`` of the per-pair arrays (the
    rest); an empty ``pairs`` stands for every pair, in order."""
    n = score.shape[0]
    every = pairs.shape[0] == 0
    out = np.empty((9, n), dtype=np.float64)
    final = np.zeros(n if weighted else 0, dtype=np.float64)
    for i in range(n):
        p = i if every else pairs[i]
        length = safe_len[p]
        out[0, i] = score[i]
        out[1, i] = score[i] / max(match_score * length, 1)
        out[2, i] = matches[i]
        out[3, i] = matches[i] / length
        out[4, i] = matches[i] / max(target_end[i] - target_start[i], 1)
        out[5, i] = lexical[p]
        out[6, i] = embedding[p]
        out[7, i] = content_matched[i] / safe_content[p]
        out[8, i] = passage_coverage[p]
        if weighted:
            similarity = embedding[p]
            clipped = similarity if (similarity > 0.0 or similarity != similarity) else 0.0
            final[i] = (
                weights[0] * out[1, i]
                + weights[1] * out[3, i]
                + weights[2] * out[4, i]
                + weights[3] * out[5, i]
                + weights[4] * clipped
            )
    return out, final


@jit
def judged_int_facts(pairs, pair_passage, passage_source, base_offsets, source_indices,
                     block_offsets, passage_token_start, passage_token_end, char_start,
                     char_end, query_start, query_end, passage_char_start,
                     passage_char_end):
    """The integer facts the records need of each judged pair, one row each (see
    :class:`citekit.pipeline._JudgedFacts`), so that one ``tolist`` gives them all:
    source, source index, passage, base offset, block range (lo, hi), token range (lo,
    hi), evidence characters (start, end), answer token range (start, last: ``query_end -
    1``, at least the start), passage characters (start, end; absolute)."""
    n = pairs.shape[0]
    out = np.empty((14, n), dtype=np.int64)
    for i in range(n):
        pair = pairs[i]
        passage = pair_passage[pair]
        source = passage_source[passage]
        base = base_offsets[source]
        out[0, i] = source
        out[1, i] = source_indices[source]
        out[2, i] = passage
        out[3, i] = base
        out[4, i] = block_offsets[pair]
        out[5, i] = block_offsets[pair + 1]
        out[6, i] = passage_token_start[passage]
        out[7, i] = passage_token_end[passage]
        out[8, i] = char_start[pair]
        out[9, i] = char_end[pair]
        out[10, i] = query_start[pair]
        out[11, i] = max(query_end[pair] - 1, query_start[pair])
        out[12, i] = base + passage_char_start[passage]
        out[13, i] = base + passage_char_end[passage]
    return out
