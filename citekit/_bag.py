"""Small numba kernels of the citation pipeline: candidate retrieval and bag counts.

For every (sentence, passage) pair the pipeline needs, before aligning, how many of the
sentence's tokens the passage contains (all tokens and content tokens, counted with
their multiplicity in the sentence) and how many DISTINCT content tokens. These bound
what an alignment can achieve, so hopeless pairs are never aligned. The kernel marks the
sentence's columns in a per-column slot array once per sentence and scans the passage's
CSR row of the :class:`~citekit.index.IdfIndex`: cost per pair is one look-up per word of
the passage, independent of the corpus size.

:func:`top_candidates` finds each sentence's best passages for :meth:`IdfIndex.top_k
<citekit.index.IdfIndex.top_k>` by walking the posting lists of its terms. A query of up
to 16 terms adds, per posting, one integer to a 32-bit word per passage (a bit per term
and an integer bound of the score); a sampled bound picks the few passages that can be
among the best, whose exact scores come from their term bits (tables of query-order
sums). Longer queries sum float weights and partition only the few largest sums; on
request they prune (MaxScore-style: heaviest terms first, skipping what cannot reach
the k best, the passages kept scored again from their rows in query order). Every path
gives, bit for bit, the result of walking every list and adding in query order.
:func:`factorize` maps token ids to vocabulary columns when the index is built, and
:func:`rows_and_postings` builds the index's sorted rows and their transpose.
"""

from __future__ import annotations

import numpy as np

from citekit._copy_kernel import copy_range
from citekit._jit import check_threads, jit, jit_parallel, prange, run_on_threads
from citekit.kernels._sort import stable_argsort

__all__ = [
    "columns_of_ids",
    "factorize",
    "pair_bag_counts",
    "passage_dtype",
    "row_contains",
    "rows_and_postings",
    "top_candidates",
    "transpose_rows",
    "walk_passages",
    "warmup",
]


@jit
def _row_holds(row_pointers, row_columns, row, column):
    """Whether the sorted CSR row ``row`` holds ``column`` (binary search)."""
    lo = row_pointers[row]
    row_hi = row_pointers[row + 1]
    hi = row_hi
    while lo < hi:
        mid = (lo + hi) >> 1
        if row_columns[mid] < column:
            lo = mid + 1
        else:
            hi = mid
    return lo < row_hi and row_columns[lo] == column


@jit
def _pair_bag_counts_kernel(
    row_pointers,
    row_columns,
    term_columns,
    term_offsets,
    term_counts,
    term_is_content,
    pair_query,
    pair_passage,
    slot_of_column,
    out_all,
    out_content,
    out_distinct,
):
    # The current query's terms are marked in ``slot_of_column`` (term + 1, 0 = none), so
    # a pair costs one look-up per word of the passage instead of a binary search per
    # query term; marks change only when the query does (pairs come grouped by query).
    n_pairs = pair_query.shape[0]
    # First every pair's first and last row column: the rows lie scattered over the index
    # and these loads do not depend on each other, so the CPU overlaps their cache misses
    # (the counting loop waits for each row in turn: the kernel took 1.5x as long on a
    # 1,000-document corpus with cold caches, 1.1x with warm ones). Columns are sorted
    # within rows, so a row outside the query's column range holds none of its terms, and
    # a scan stops past that range.
    row_first = np.empty(n_pairs, dtype=np.int64)
    row_last = np.empty(n_pairs, dtype=np.int64)
    for pair in range(n_pairs):
        lo = row_pointers[pair_passage[pair]]
        hi = row_pointers[pair_passage[pair] + 1]
        if hi > lo:
            row_first[pair] = row_columns[lo]
            row_last[pair] = row_columns[hi - 1]
        else:
            row_first[pair] = 1
            row_last[pair] = 0
    query = -1
    lowest = 0
    highest = -1
    for pair in range(n_pairs):
        if pair_query[pair] != query:
            if query >= 0:
                for term in range(term_offsets[query], term_offsets[query + 1]):
                    if term_columns[term] >= 0:
                        slot_of_column[term_columns[term]] = 0
            query = pair_query[pair]
            lowest = 0
            highest = -1
            for term in range(term_offsets[query], term_offsets[query + 1]):
                column = term_columns[term]
                if column >= 0:
                    slot_of_column[column] = term + 1
                    if highest < lowest:
                        lowest = column
                        highest = column
                    else:
                        lowest = min(lowest, column)
                        highest = max(highest, column)
        passage = pair_passage[pair]
        total_all = 0
        total_content = 0
        distinct_content = 0
        if row_first[pair] <= highest and row_last[pair] >= lowest:
            for entry in range(row_pointers[passage], row_pointers[passage + 1]):
                column = row_columns[entry]
                if column > highest:
                    break
                slot = slot_of_column[column]
                if slot > 0:
                    term = slot - 1
                    total_all += term_counts[term]
                    if term_is_content[term]:
                        total_content += term_counts[term]
                        distinct_content += 1
        out_all[pair] = total_all
        out_content[pair] = total_content
        out_distinct[pair] = distinct_content
    if query >= 0:
        for term in range(term_offsets[query], term_offsets[query + 1]):
            if term_columns[term] >= 0:
                slot_of_column[term_columns[term]] = 0


def pair_bag_counts(
    row_pointers: np.ndarray,
    row_columns: np.ndarray,
    term_columns: np.ndarray,
    term_offsets: np.ndarray,
    term_counts: np.ndarray,
    term_is_content: np.ndarray,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    n_columns: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair: query token occurrences in the passage (all, content) and distinct
    content tokens in the passage.

    Parameters
    ----------
    row_pointers, row_columns : ndarray of int64
        CSR structure of the passages x vocabulary matrix, columns sorted within rows.
    term_columns : ndarray of int64
        Column of each distinct query token (``-1``: in no passage), grouped by query.
    term_offsets : ndarray of int64
        Query ``q`` owns terms ``term_offsets[q]:term_offsets[q + 1]``.
    term_counts : ndarray of int64
        How often each distinct token occurs in its query.
    term_is_content : ndarray of bool
        Whether each distinct token is a content token.
    pair_query, pair_passage : ndarray of int64
        The pairs (fastest grouped by query).
    n_columns : int, optional
        Number of vocabulary columns (default: found from the columns given).

    Returns
    -------
    tuple of three int64 arrays

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> # passage 0 holds columns {0, 2}; the query has column 0 twice, 1 once, 2 once
    >>> counts = pair_bag_counts(i64(0, 2), i64(0, 2), i64(0, 1, 2), i64(0, 3), i64(2, 1, 1),
    ...                          np.array([True, True, False]), i64(0), i64(0))
    >>> [c.tolist() for c in counts]
    [[3], [2], [1]]
    """
    n_pairs = pair_query.shape[0]
    out_all = np.zeros(n_pairs, dtype=np.int64)
    out_content = np.zeros(n_pairs, dtype=np.int64)
    out_distinct = np.zeros(n_pairs, dtype=np.int64)
    if n_pairs:
        row_columns = np.ascontiguousarray(row_columns, dtype=np.int64)
        term_columns = np.ascontiguousarray(term_columns, dtype=np.int64)
        if n_columns is None:
            n_columns = 1 + max(
                int(row_columns.max()) if row_columns.size else -1,
                int(term_columns.max()) if term_columns.size else -1,
            )
        _pair_bag_counts_kernel(
            np.ascontiguousarray(row_pointers, dtype=np.int64),
            row_columns,
            term_columns,
            np.ascontiguousarray(term_offsets, dtype=np.int64),
            np.ascontiguousarray(term_counts, dtype=np.int64),
            np.ascontiguousarray(term_is_content, dtype=np.bool_),
            np.ascontiguousarray(pair_query, dtype=np.int64),
            np.ascontiguousarray(pair_passage, dtype=np.int64),
            np.zeros(max(int(n_columns), 1), dtype=np.int64),
            out_all,
            out_content,
            out_distinct,
        )
    return out_all, out_content, out_distinct


@jit
def _row_contains_kernel(row_pointers, row_columns, passages, columns, out):
    for i in range(passages.shape[0]):
        column = columns[i]
        if column >= 0:
            out[i] = _row_holds(row_pointers, row_columns, passages[i], column)


def row_contains(
    row_pointers: np.ndarray, row_columns: np.ndarray, passages: np.ndarray, columns: np.ndarray
) -> np.ndarray:
    """Whether CSR row ``passages[i]`` holds column ``columns[i]`` (negative: never).

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> row_contains(i64(0, 2, 3), i64(1, 4, 0), i64(0, 0, 1, 1), i64(4, 0, 0, -1)).tolist()
    [True, False, True, False]
    """
    out = np.zeros(passages.shape[0], dtype=np.bool_)
    if passages.shape[0]:
        _row_contains_kernel(
            np.ascontiguousarray(row_pointers, dtype=np.int64),
            np.ascontiguousarray(row_columns, dtype=np.int64),
            np.ascontiguousarray(passages, dtype=np.int64),
            np.ascontiguousarray(columns, dtype=np.int64),
            out,
        )
    return out


def warmup() -> None:
    """Compile (or load from the on-disk cache) this module's kernels.

    Examples
    --------
    >>> warmup()
    """
    one = np.zeros(1, dtype=np.int64)
    two = np.array([0, 1], dtype=np.int64)
    pair_bag_counts(
        two, one, one, two, np.ones(1, dtype=np.int64), np.ones(1, dtype=bool), one, one
    )
    row_contains(two, one, one, one)
    top_candidates(two, one, 1, one, np.ones(1), two, 1)
    import numba

    if numba.config.NUMBA_NUM_THREADS >= 2:  # the driver sharing queries among threads
        top_candidates(
            two, one, 1, np.zeros(2, dtype=np.int64), np.ones(2),
            np.arange(3, dtype=np.int64), 1, n_threads=2,
        )
    # (the frequent columns' bits, which only corpora of 8,192 passages or more keep)
    _Scratch(frequent_min_passages=1).frequent(two, one, 1)
    query_terms(one, two, np.ones(1, dtype=bool), one, np.ones(1), 1.0)
    columns_of_ids(one, one)
    factorize(one)
    rows_and_postings(one, one, one, 1)


# interleaved copies of each score histogram (see _kth_best)
_N_COPIES = 4
# sample size of the guessed floor of the k best (see _kth_best)
_SAMPLE = 1024


@jit
def _bucket(value, low, scale, top_bucket):
    """Histogram bucket of ``value``: monotone non-decreasing in ``value``, in
    ``[0, top_bucket]`` (clamped before the integer conversion, branch-free)."""
    return int(min(max((value - low) * scale, 0.0), float(top_bucket)))


@jit
def _collect(touched, n_touched, scores, floor, up, down, hits, values):
    """Every passage of ``touched[:n_touched]`` whose score times ``up`` reaches ``floor``
    times ``down``, with its score, into ``hits``/``values``; returns how many."""
    bar = floor * down
    n_hits = 0
    for i in range(n_touched):
        passage = touched[i]
        value = scores[passage]
        if value * up >= bar:
            hits[n_hits] = passage
            values[n_hits] = value
            n_hits += 1
    return n_hits


@jit
def _kth_best(touched, n_touched, scores, k, floor, low, high, up, down, buckets, hits, values):
    """The ``k``-th largest of ``scores[touched[:n_touched]]`` (``k < n_touched``), and
    into ``hits``/``values`` every passage whose score times ``up`` reaches it times
    ``down`` (``up = down = 1``: those that reach it, and maybe a few more), with its
    score; returns how many and the k-th largest. Scores are left as they are.

    Only the few largest scores are partitioned: those reaching ``floor`` when at least
    ``k`` are known to reach it (``floor > 0``); else those reaching a floor guessed from
    a sample (at about twice the k-th best's rank); else, when fewer than ``k`` reach
    that guess, those in or above the bucket of the k-th largest in a histogram over
    ``[low, high]`` (every score lies in it).
    """
    if floor <= 0.0:
        step = max(1, n_touched // _SAMPLE)
        n_sample = 0
        for i in range(0, n_touched, step):
            values[n_sample] = scores[touched[i]]
            n_sample += 1
        rank = min(n_sample, 2 * k * n_sample // n_touched + 8)
        floor = _select(values[:n_sample].copy(), n_sample, n_sample - rank)
    # at least k reach the floor when as many reach it with the margin (all of which
    # then lie above the k-th largest with the margin, as wanted)
    n_hits = _collect(touched, n_touched, scores, floor, up, down, hits, values)
    if n_hits >= k:
        return n_hits, _select(values[:n_hits].copy(), n_hits, n_hits - k)
    n_buckets = buckets.shape[0] // _N_COPIES
    top_bucket = n_buckets - 1
    scale = top_bucket / (high - low) if high > low else 0.0
    buckets[:] = 0
    for i in range(n_touched):
        # consecutive equal scores would chain their increments through one counter:
        # _N_COPIES histograms, taken in turn, keep them independent
        copy = (i & (_N_COPIES - 1)) * n_buckets
        buckets[copy + _bucket(scores[touched[i]], low, scale, top_bucket)] += 1
    # the bucket function is monotone: everything below the cut scores less than
    # everything from the cut up, which holds at least k entries
    cut = _cut(buckets, k)
    n_hits = 0
    for i in range(n_touched):
        passage = touched[i]
        value = scores[passage]
        if _bucket(value, low, scale, top_bucket) >= cut:
            hits[n_hits] = passage
            values[n_hits] = value
            n_hits += 1
    kth = _select(values[:n_hits].copy(), n_hits, n_hits - k)
    if up != 1.0 or down != 1.0:
        # the margin may reach below the cut
        n_hits = _collect(touched, n_touched, scores, kth, up, down, hits, values)
    return n_hits, kth


@jit
def _cut(buckets, k):
    """The highest bucket such that it and the ones above hold at least ``k`` entries
    (``buckets`` holds ``_N_COPIES`` interleaved histograms, summed here)."""
    n_buckets = buckets.shape[0] // _N_COPIES
    cut = n_buckets
    above = 0
    while above < k:
        cut -= 1
        for copy in range(_N_COPIES):
            above += buckets[copy * n_buckets + cut]
    return cut


@jit
def _select(values, n, rank):
    """The ``rank``-th smallest (from 0) of ``values[:n]``, which it reorders: a
    quickselect with three-way partitions (many equal values cost one pass)."""
    lo = 0
    hi = n - 1
    while lo < hi:
        # median of three as pivot
        first = values[lo]
        middle = values[(lo + hi) >> 1]
        last = values[hi]
        pivot = middle
        if (first < middle) != (first < last):
            pivot = first
        elif (last < middle) != (last < first):
            pivot = last
        below = lo
        i = lo
        above = hi
        while i <= above:
            value = values[i]
            if value < pivot:
                values[i] = values[below]
                values[below] = value
                below += 1
                i += 1
            elif value > pivot:
                values[i] = values[above]
                values[above] = value
                above -= 1
            else:
                i += 1
        if rank < below:
            hi = below - 1
        elif rank > above:
            lo = above + 1
        else:
            return pivot
    return values[rank]


@jit
def _emit_best(hits, values, n, k, threshold, out_passages, out_scores, n_out):
    """Write the ``k`` best of ``hits[:n]`` (distinct passages, exact scores ``values[:n]``)
    at ``n_out``: larger score first, equal scores by lower passage. Returns how many.

    When more than ``k`` entries remain, every entry above the k-th best score stays and,
    of those tied with it, the lowest passages fill the rest, so only ``k`` entries are
    sorted however many ties there are. ``threshold``: the k-th best score if known,
    else 0.0.
    """
    if n > k:
        if threshold <= 0.0:
            threshold = _select(values[:n].copy(), n, n - k)
        n_above = 0
        n_tied = 0
        for i in range(n):
            if values[i] > threshold:
                n_above += 1
            elif values[i] == threshold:
                n_tied += 1
        need = k - n_above
        last_tied = -1
        if n_tied > need:
            tied = np.empty(n_tied, dtype=np.int64)
            n_tied = 0
            for i in range(n):
                if values[i] == threshold:
                    tied[n_tied] = hits[i]
                    n_tied += 1
            last_tied = _select(tied, n_tied, need - 1)
        n_kept = 0
        for i in range(n):
            value = values[i]
            if value > threshold or (
                value == threshold and (last_tied < 0 or hits[i] <= last_tied)
            ):
                hits[n_kept] = hits[i]
                values[n_kept] = value
                n_kept += 1
        n = n_kept
    _sort_best(hits, values, n, out_passages, out_scores, n_out)
    return n


@jit
def _sort_best(hits, values, n, out_passages, out_scores, n_out):
    """Write ``hits[:n]`` (distinct passages) and ``values[:n]`` at ``n_out``, larger
    value first, equal values by lower passage.

    One sort of integer keys: a value's rank among the distinct values (descending)
    above the passage's bits. Keys that would not fit in 63 bits, or NaN values, take
    two argsorts instead (by passage, then a stable one by value).
    """
    # (stable_argsort, shared by the kernels, instead of numba's own sorts: less to compile)
    by_value = stable_argsort(values[:n])
    ordered = np.empty(n)
    for i in range(n):
        ordered[i] = values[by_value[i]]
    n_distinct = 0
    largest = 0
    for i in range(n):
        if i == 0 or ordered[i] != ordered[n_distinct - 1]:
            ordered[n_distinct] = ordered[i]
            n_distinct += 1
        largest = max(largest, hits[i])
    shift = 0
    while largest >> shift:
        shift += 1
    rank_bits = 0
    while n_distinct >> rank_bits:
        rank_bits += 1
    packed = shift + rank_bits <= 62
    for i in range(n):
        packed &= values[i] == values[i] and hits[i] >= 0
    if packed:
        distinct = ordered[:n_distinct]
        keys = np.empty(n, dtype=np.int64)
        # the position of each value among the distinct ones: a branch-free binary
        # search (the branches of one would be mispredicted half the time)
        top = 1
        while top * 2 <= n_distinct:
            top *= 2
        for i in range(n):
            value = values[i]
            position = 0
            half = top
            while half:
                probe = position + half
                position += half if probe < n_distinct and distinct[probe] <= value else 0
                half >>= 1
            keys[i] = ((n_distinct - 1 - position) << shift) | hits[i]
        by_key = stable_argsort(keys)  # (distinct keys: any sort is the same)
        low = (np.int64(1) << shift) - 1
        for i in range(n):
            key = keys[by_key[i]]
            out_passages[n_out + i] = key & low
            out_scores[n_out + i] = distinct[n_distinct - 1 - (key >> shift)]
        return
    # passages are distinct: any sort by passage is the same, then a stable sort by value
    by_passage = stable_argsort(hits[:n])
    kept_hits = hits[:n][by_passage]
    kept_values = values[:n][by_passage]
    by_score = np.argsort(-kept_values, kind="mergesort")
    for i in range(n):
        out_passages[n_out + i] = kept_hits[by_score[i]]
        out_scores[n_out + i] = kept_values[by_score[i]]


@jit
def _add_new(posting_passages, lo, hi, weight, scores, touched, n_touched):
    """Add ``weight`` to the passages of postings ``lo:hi``, listing each passage when
    first touched (branch-free: ``touched`` has room for one entry past the corpus)."""
    for entry in range(lo, hi):
        passage = posting_passages[entry]
        score = scores[passage]
        touched[n_touched] = passage
        n_touched += score == 0.0
        scores[passage] = score + weight
    return n_touched


@jit
def _add_all(posting_passages, lo, hi, weight, scores):
    """Add ``weight`` to the passages of postings ``lo:hi`` without looking."""
    for entry in range(lo, hi):
        scores[posting_passages[entry]] += weight


@jit
def _add_to_kept(posting_passages, lo, hi, weight, scores):
    """Add ``weight`` to the passages of postings ``lo:hi`` that are still candidates
    (nonzero score); the others stay zero. Branch-free: adding 0.0 changes no score."""
    for entry in range(lo, hi):
        passage = posting_passages[entry]
        score = scores[passage]
        scores[passage] = score + (weight if score != 0.0 else 0.0)


@jit
def _list_touched(scores, touched):
    """Every passage with a nonzero score, ascending, into ``touched``; returns how many."""
    n_touched = 0
    for passage in range(scores.shape[0]):
        touched[n_touched] = passage
        n_touched += scores[passage] != 0.0
    return n_touched


@jit
def _keep_reachable(touched, n_touched, scores, rest, up, bar):
    """Keep the passages of ``touched[:n_touched]`` whose score plus ``rest``, times the
    rounding margin ``up``, reaches ``bar``; the others are reset to zero and removed.
    Returns how many stay."""
    n_kept = 0
    for i in range(n_touched):
        passage = touched[i]
        if (scores[passage] + rest) * up >= bar:
            touched[n_kept] = passage
            n_kept += 1
        else:
            scores[passage] = 0.0
    return n_kept


@jit
def _kth_at_least(touched, n_touched, scores, k, floor, values):
    """The ``k``-th largest of ``scores[touched[:n_touched]]``, given that at least ``k``
    of them are ``>= floor`` (only those are partitioned)."""
    n_values = 0
    for i in range(n_touched):
        value = scores[touched[i]]
        if value >= floor:
            values[n_values] = value
            n_values += 1
    return _select(values[:n_values].copy(), n_values, n_values - k)


@jit
def _row_terms(row_pointers, row_columns, passage, by_column, term_columns, held):
    """Set ``held[t]`` for every term ``t`` of ``by_column`` (term indices sorted by
    column) that the sorted CSR row ``passage`` holds: one merge of the two lists."""
    entry = row_pointers[passage]
    row_end = row_pointers[passage + 1]
    for i in range(by_column.shape[0]):
        term = by_column[i]
        column = term_columns[term]
        while entry < row_end and row_columns[entry] < column:
            entry += 1
        held[term] = entry < row_end and row_columns[entry] == column


# Queries with fewer ranking terms are walked in query order without pruning: there is
# nothing to skip.
_MIN_PRUNED_TERMS = 3
# Queries of at most this many ranking terms (all weights positive, their sum finite)
# are walked as 32-bit words per passage: a bit per term it holds and, above them, an
# integer bound of its score (see _mask_candidates); longer ones sum float weights.
_MASK_BITS = 16
# by default, only queries whose lists hold this many entries: on small corpora (a RAG
# call's few documents) the float sums cost as much or less (measured)
_MIN_MASK_ENTRIES = 2048
# the guessed bound of the k best is the sample's (numerator / 2 * k * sampled share +
# add)-th best: about 1.5 k passages reach it, rarely fewer than k
_GUESS_RANK_NUMERATOR = 3
_GUESS_RANK_ADD = 4
# a rank score's first 8 terms are summed by one table look-up (see _mask_tables)
_TABLE_BITS = 8


@jit
def _mask_tables(term_weights, terms, tables):
    """``tables[b, m]``: the weights of terms ``8 * b + i`` for the set bits ``i`` of
    ``m``, added to 0.0 in increasing ``i`` (query order). Row 0 is exact: the start of
    every rank score's additions. Only the entries of masks the query's terms can set
    are filled (row ``b`` past the terms: entry 0 only)."""
    n_terms = terms.shape[0]
    for byte in range(tables.shape[0]):
        tables[byte, 0] = 0.0
        n_bits = min(_TABLE_BITS, max(0, n_terms - _TABLE_BITS * byte))
        top = 0
        for mask in range(1, 1 << n_bits):
            if mask == 2 << top:
                top += 1
            weight = term_weights[terms[_TABLE_BITS * byte + top]]
            tables[byte, mask] = tables[byte, mask ^ (1 << top)] + weight


@jit
def _mask_score(mask, tables, term_weights, terms):
    """The rank score of a passage holding the terms of ``mask``: its terms' weights
    added to 0.0 in query order, as walking the lists adds them (bit for bit)."""
    bits = np.int64(mask)
    score = tables[0, bits & 255]
    term = _TABLE_BITS
    bits >>= _TABLE_BITS
    while bits:
        if bits & 1:
            score += term_weights[terms[term]]
        bits >>= 1
        term += 1
    return score


@jit
def _mask_estimate(mask, tables):
    """The sum of the per-byte partial sums of the rank score of ``mask``: within a
    relative ``n_terms * 2**-52`` of the exact one (positive weights), and branch-free."""
    bits = np.int64(mask)
    return tables[0, bits & 255] + tables[1, bits >> 8]


@jit
def _collect_marked(words, listed, touched, n_touched, bar, tables, hits, values):
    """Every passage (listed: of ``touched[:n_touched]``) whose word reaches ``bar``,
    into ``hits``, with its estimated score (from the word's low bits) in ``values``;
    returns how many."""
    low = (1 << _MASK_BITS) - 1
    n_hits = 0
    if listed:
        for i in range(n_touched):
            passage = touched[i]
            word = words[passage]
            if word >= bar:
                hits[n_hits] = passage
                values[n_hits] = _mask_estimate(word & low, tables)
                n_hits += 1
    else:
        for passage in range(words.shape[0]):
            word = words[passage]
            if word >= bar:
                hits[n_hits] = passage
                values[n_hits] = _mask_estimate(word & low, tables)
                n_hits += 1
    return n_hits


@jit
def _mask_candidates(
    posting_pointers, posting_passages, term_columns, term_weights, terms, k, scan,
    words, tables, touched, hits, values,
):
    """The passages that can be among the ``k`` best by rank score, into ``hits`` with
    their exact rank scores in ``values``; returns how many (every passage scoring at
    least the k-th best is there). ``words`` (uint32, all zero, left all zero) gets a
    word per passage; at most ``_MASK_BITS`` ranking terms, positive weights.

    A passage's word holds, in its low bits, a bit per ranking term it holds (a mask)
    and, above them, a bound of its rank score: the sum of the integer weights
    ``ceil(weight * scale)`` of those terms. Each posting list adds its term's bit and
    integer weight to the words of its passages in one integer addition (a list names a
    passage once: adding the bit sets it).

    The rank score is a function of the mask: the byte tables turn it into an estimate
    (two look-ups) or into the exact score (the first 8 terms looked up, the held ones
    after them added in query order: the same additions in the same order as summing
    the lists, hence bit for bit the same). The integer bounds are compared as words:
    a sample guesses the bound that about ``1.5 k`` passages reach, one pass over the
    words keeps the passages that reach it (less the rounding of the integer weights),
    and their estimates the ones that may reach the k-th best score, which are scored
    exactly. If that does not settle the k best (fewer than ``k`` reach the guess), every
    touched passage is examined instead.
    """
    n_terms = terms.shape[0]
    n_passages = words.shape[0]
    # A sum of n positive weights in any grouping lies within a relative n * 2**-53 of
    # the exact sum: comparing an estimate or a bound with an exact score times ``down``
    # (once per rounding that separates them) can only keep more passages.
    down = 1.0 - (n_terms + 2) * 2.0**-50
    total = 0.0
    lightest = term_weights[terms[0]]
    for j in range(n_terms):
        total += term_weights[terms[j]]
        lightest = min(lightest, term_weights[terms[j]])
    # the integer weights of all terms sum to less than 2**(32 - _MASK_BITS)
    scale = (2.0 ** (32 - _MASK_BITS) - 2.0 - 2.0 * n_terms) * down / total
    n_touched = 0
    for j in range(n_terms):
        term = terms[j]
        column = term_columns[term]
        increment = (np.int64(np.ceil(term_weights[term] * scale)) << _MASK_BITS) | (1 << j)
        lo = posting_pointers[column]
        hi = posting_pointers[column + 1]
        if scan:
            for entry in range(lo, hi):
                passage = posting_passages[entry]
                words[passage] = words[passage] + increment
        else:
            # list each passage when first touched (branch-free: ``touched`` has room
            # for one entry past the corpus)
            for entry in range(lo, hi):
                passage = posting_passages[entry]
                word = words[passage]
                touched[n_touched] = passage
                n_touched += word == 0
                words[passage] = word + increment
    _mask_tables(term_weights, terms, tables)
    # the guessed bound, from a regular sample of the touched passages (scan: of all
    # passages, the untouched ones bounded by 0)
    population = n_passages if scan else n_touched
    step = max(1, population // _SAMPLE)
    n_drawn = 0
    n_sample = 0
    for i in range(0, population, step):
        bound = np.int64(words[i] if scan else words[touched[i]]) >> _MASK_BITS
        n_drawn += 1
        if bound > 0:
            values[n_sample] = bound
            n_sample += 1
    rank = _GUESS_RANK_NUMERATOR * k * n_drawn // max(population, 1) // 2 + _GUESS_RANK_ADD
    n_hits = -1
    if rank <= n_sample:
        guess = np.int64(_select(values, n_sample, n_sample - rank))
        # Integer weights are rounded up, by less than one each: the passages bounded by
        # the guess less n_terms are kept, so that every passage scoring what those
        # bounded by the guess score is kept; any other passage's bound is at most
        # ``below``, so it scores at most ``outside``.
        below = max(guess - n_terms - 1, 0)
        n_hits = _collect_marked(
            words, not scan, touched, n_touched, (below + 1) << _MASK_BITS, tables, hits,
            values,
        )
        outside = below / scale / (down * down * down)
        n_hits = _keep_best_estimates(k, outside, down, hits, n_hits, values)
    if n_hits < 0:
        # no guess, or too high a guess: every touched passage (nonzero word)
        n_hits = _collect_marked(words, not scan, touched, n_touched, 1, tables, hits, values)
        n_hits = _keep_best_estimates(k, -1.0, down, hits, n_hits, values)
    low = (1 << _MASK_BITS) - 1
    for i in range(n_hits):
        values[i] = _mask_score(words[hits[i]] & low, tables, term_weights, terms)
    return n_hits, n_touched


@jit
def _reset_words(words, scan, touched, n_touched):
    """Set the words :func:`_mask_candidates` touched back to zero."""
    if scan:
        words[:] = 0
    else:
        for i in range(n_touched):
            words[touched[i]] = 0


@jit
def _held_from_words(words, terms, first, passages, start, n, out_held):
    """``out_held[start:start + n]``: the bits ``term - first`` of the ranking ``terms``
    that each passage's word holds (bit ``j`` of its mask is ``terms[j]``)."""
    low = (1 << _MASK_BITS) - 1
    for i in range(start, start + n):
        mask = np.int64(words[passages[i]]) & low
        held = np.int64(0)
        j = 0
        while mask:
            if mask & 1:
                held |= np.int64(1) << (terms[j] - first)
            mask >>= 1
            j += 1
        out_held[i] = held


@jit
def _held_from_rows(
    row_pointers, row_columns, term_columns, first, last, passages, start, n, slots, out_held
):
    """``out_held[start:start + n]``: the bits ``term - first`` of the query's terms found
    in the corpus (``first:last``) that each passage's CSR row holds. Their columns are
    numbered in ``slots`` (one entry per column, all zero, left all zero; terms of one
    column share a number), so a passage costs one look-up per word of its row."""
    slot_of_term = np.zeros(last - first, dtype=np.int64)
    n_slots = 0
    for term in range(first, last):
        column = term_columns[term]
        if column >= 0:
            if slots[column] == 0:
                n_slots += 1
                slots[column] = n_slots
            slot_of_term[term - first] = slots[column]
    # held[0]: the columns of no term
    held = np.zeros(n_slots + 1, dtype=np.bool_)
    for i in range(start, start + n):
        passage = passages[i]
        for entry in range(row_pointers[passage], row_pointers[passage + 1]):
            held[slots[row_columns[entry]]] = True
        bits = np.int64(0)
        for t in range(last - first):
            if slot_of_term[t] > 0 and held[slot_of_term[t]]:
                bits |= np.int64(1) << t
        out_held[i] = bits
        held[:] = False
    for term in range(first, last):
        column = term_columns[term]
        if column >= 0:
            slots[column] = 0


@jit
def _keep_best_estimates(k, outside, down, hits, n_hits, values):
    """Keep the passages of ``hits[:n_hits]`` (their estimated scores ``values``) that
    may score the k-th best or more, given that every other passage scores at most
    ``outside`` (-1.0: none is touched); returns how many, or -1 when that does not
    settle it.

    ``k`` passages estimating at least the k-th best estimate ``theta`` score at least
    ``theta * down``, so the k-th best score is at least that: when that exceeds
    ``outside``, every passage that scores it is among the hits and estimates at least
    ``theta * down * down``.
    """
    if n_hits < k:
        return n_hits if outside < 0.0 else -1
    theta = _select(values[:n_hits].copy(), n_hits, n_hits - k)
    if theta * down * down <= outside:
        return -1
    bar = theta * down * down
    n_kept = 0
    for i in range(n_hits):
        if values[i] >= bar:
            hits[n_kept] = hits[i]
            n_kept += 1
    return n_kept


@jit
def _add_unranked(
    row_pointers, row_columns, term_columns, term_weights, term_ranks, first, last,
    passages, rank_scores, scores, start, n, slots, frequent_bits, bit_of_column,
    want_held, out_held,
):
    """``scores[start:start + n]``: the rank scores plus, in query order, the weights of
    the query's terms (``first:last``) found in the corpus that do not rank and that
    each passage's CSR row holds.

    When every such term is among the corpus's most frequent columns (the stop words
    that do not rank usually are), one word per passage says which of those it holds
    (``frequent_bits``, bit ``bit_of_column[column]``; -1: not frequent; empty: none).
    Otherwise their columns are numbered in ``slots`` (one entry per column, all zero,
    left all zero), so a passage costs one look-up per word of its row. Either way the
    words or rows are touched all at once first: they are rarely in cache, and
    independent loads overlap the misses. With ``want_held``, the bit ``term - first`` of
    each such term a passage holds is set in its ``out_held`` entry.
    """
    if bit_of_column.shape[0] > 0:
        frequent = True
        for term in range(first, last):
            column = term_columns[term]
            if column >= 0 and not term_ranks[term] and bit_of_column[column] < 0:
                frequent = False
        if frequent:
            touched = 0
            for i in range(start, start + n):
                touched += frequent_bits[passages[i]]
            for i in range(start, start + n):
                bits = frequent_bits[passages[i]]
                total = rank_scores[i]
                for term in range(first, last):
                    column = term_columns[term]
                    if column >= 0 and not term_ranks[term]:
                        if (bits >> bit_of_column[column]) & 1:
                            total += term_weights[term]
                            if want_held:
                                out_held[i] |= np.int64(1) << (term - first)
                scores[i] = total
            return touched
    slot_of_term = np.zeros(last - first, dtype=np.int64)
    n_slots = 0
    for term in range(first, last):
        column = term_columns[term]
        if column >= 0 and not term_ranks[term]:
            if slots[column] == 0:
                n_slots += 1
                slots[column] = n_slots
            slot_of_term[term - first] = slots[column]
    # one load per cache line of the first rows' words (no branch on row lengths, which
    # would be mispredicted and hold the next loads back); may read into the next row
    touched = 0
    last_entry = row_columns.shape[0] - 1
    for i in range(start, start + n):
        entry = row_pointers[passages[i]]
        touched += row_columns[min(entry, last_entry)] + row_columns[min(entry + 8, last_entry)]
        touched += row_columns[min(entry + 16, last_entry)]
    # held[0]: the columns of no such term
    held = np.zeros(n_slots + 1, dtype=np.bool_)
    for i in range(start, start + n):
        passage = passages[i]
        for entry in range(row_pointers[passage], row_pointers[passage + 1]):
            held[slots[row_columns[entry]]] = True
        total = rank_scores[i]
        for term in range(first, last):
            slot = slot_of_term[term - first]
            if slot > 0 and held[slot]:
                total += term_weights[term]
                if want_held:
                    out_held[i] |= np.int64(1) << (term - first)
        scores[i] = total
        held[:] = False
    for term in range(first, last):
        if slot_of_term[term - first] > 0:
            slots[term_columns[term]] = 0
    return touched


@jit
def _summed_candidates(
    posting_pointers, posting_passages, row_pointers, row_columns, term_columns,
    term_weights, terms, n_entries, k, pruning, walk, check_cost, search_cost, scores,
    touched, hits, values, buckets,
):
    """The passages that can be among the ``k`` best by rank score, summing the term
    weights into the dense ``scores`` (all zero, left all zero), in query order or, when
    ``pruning``, heaviest term first (MaxScore). Returns how many are in ``hits`` (their
    walk scores in ``values``), a threshold to give :func:`_emit_best` (0.0: none), and
    whether the walk's order differed from the query's (then the hits are every passage
    that may tie or beat the k-th best with rounding, to be scored again)."""
    n_terms = terms.shape[0]
    n_passages = scores.shape[0]
    order = terms.copy()
    if pruning:
        # heaviest first; equal weights: shorter list first, then query order
        keys = np.empty(n_terms)
        lengths = np.empty(n_terms, dtype=np.int64)
        for i in range(n_terms):
            column = term_columns[terms[i]]
            lengths[i] = posting_pointers[column + 1] - posting_pointers[column]
            keys[i] = -term_weights[terms[i]]
        by_length = stable_argsort(lengths)
        by_weight = by_length[np.argsort(keys[by_length], kind="mergesort")]
        order = terms[by_weight]
    # rest[j]: summed weight of the terms from the j-th walked on
    rest = np.zeros(n_terms + 1)
    for j in range(n_terms - 1, -1, -1):
        rest[j] = term_weights[order[j]] + rest[j + 1]
    # Rounding: a sum of at most n_terms positive weights, in any order, lies within
    # a relative n_terms * 2**-53 of the exact sum; upper bounds times ``up`` compared
    # with lower bounds times ``down`` can only keep more passages, never fewer.
    margin = (n_terms + 2) * 2.0**-50
    up = 1.0 + margin
    down = 1.0 - margin
    # Long lists touch much of the corpus: add without looking, then list the touched
    # passages in one sequential scan; short ones: list each passage when touched.
    scan = walk == 1 or (walk < 0 and not pruning and 2 * n_entries > n_passages)
    listed = not scan
    n_touched = 0
    admitting = True
    theta = 0.0  # a lower bound of the k-th best rank score, once known
    known = False
    share = 1.0
    walked = 0
    for j in range(n_terms):
        term = order[j]
        column = term_columns[term]
        weight = term_weights[term]
        lo = posting_pointers[column]
        hi = posting_pointers[column + 1]
        if (
            pruning
            and admitting
            and j > 0
            and n_entries - walked > check_cost * (n_touched if listed else walked)
            and (rest[0] - rest[j]) * share * down > rest[j] * up
        ):
            # The k-th best score so far may exceed the weight of the lists left:
            # find it (a bound that only rises as lists are added). It is at most the
            # weight walked; a k-th best found below that predicts, by the same
            # share of the weight walked, when the next one may be worth finding.
            if not listed:
                n_touched = _list_touched(scores, touched)
                listed = True
            if n_touched >= k:
                _, theta = _kth_best(
                    touched, n_touched, scores, k, 0.0, rest[n_terms - 1] * down,
                    rest[0] * up, 1.0, 1.0, buckets, hits, values,
                )
                known = True
                share = theta / (rest[0] - rest[j])
        if admitting and known and theta * down > rest[j] * up:
            # k passages score more than the lists left weigh: no passage not touched
            # yet can reach the k-th best, so stop admitting passages
            admitting = False
        if admitting:
            if listed:
                n_touched = _add_new(
                    posting_passages, lo, hi, weight, scores, touched, n_touched
                )
            else:
                _add_all(posting_passages, lo, hi, weight, scores)
        else:
            length = hi - lo
            if n_touched > k and length > search_cost * k and length > n_touched:
                # a long list: the k-th best can only have risen, and this list's
                # weight and the rest are all that is left to add; drop the passages
                # that can no longer reach it, so that the few left may be searched
                theta = _kth_at_least(touched, n_touched, scores, k, theta, values)
                n_touched = _keep_reachable(
                    touched, n_touched, scores, rest[j], up, theta * down
                )
            # only the passages still in the running gain: one binary search per
            # passage, or one walk of the list, whichever costs less
            if n_touched * search_cost < length:
                for i in range(n_touched):
                    passage = touched[i]
                    if _row_holds(row_pointers, row_columns, passage, column):
                        scores[passage] += weight
            else:
                _add_to_kept(posting_passages, lo, hi, weight, scores)
        walked += hi - lo
    # the passages that can be among the k best, with their walk scores (every
    # touched score reset to zero), and the k-th largest walk score
    lightest = rest[n_terms - 1] if pruning else term_weights[terms[0]]
    if not pruning:
        for i in range(1, n_terms):
            lightest = min(lightest, term_weights[terms[i]])
    if not listed:
        n_touched = _list_touched(scores, touched)
    # the walk's sums are rounded differently from the query-order ones when the
    # order changed: then keep every passage that may tie or beat the k-th best
    reordered = False
    for i in range(n_terms):
        reordered |= order[i] != terms[i]
    if n_touched > k:
        n_hits, theta = _kth_best(
            touched, n_touched, scores, k, theta if known else 0.0, lightest * down,
            rest[0] * up, up if reordered else 1.0, down if reordered else 1.0,
            buckets, hits, values,
        )
    else:
        n_hits = n_touched
        theta = 0.0
        for i in range(n_touched):
            hits[i] = touched[i]
            values[i] = scores[touched[i]]
    for i in range(n_touched):
        scores[touched[i]] = 0.0
    if reordered and theta > 0.0:
        bar = theta * down
        n_kept = 0
        for i in range(n_hits):
            if values[i] * up >= bar:
                hits[n_kept] = hits[i]
                n_kept += 1
        n_hits = n_kept
        theta = 0.0
    elif theta > 0.0:
        n_kept = 0
        for i in range(n_hits):
            if values[i] >= theta:
                hits[n_kept] = hits[i]
                values[n_kept] = values[i]
                n_kept += 1
        n_hits = n_kept
    return n_hits, theta, reordered


@jit
def _top_candidates_kernel(
    posting_pointers,
    posting_passages,
    row_pointers,
    row_columns,
    term_columns,
    term_weights,
    term_ranks,
    term_offsets,
    k,
    prune,
    walk,
    use_masks,
    check_cost,
    search_cost,
    scores,
    touched,
    hits,
    values,
    words,
    slots,
    frequent_bits,
    bit_of_column,
    buckets,
    queries,
    slot,
    out_counts,
    out_passages,
    out_rank_scores,
    out_scores,
    want_held,
    out_held,
):
    """The candidates of the queries ``queries`` (any order): query ``q``'s go to entries
    ``q * slot:q * slot + out_counts[q]`` of the output arrays (``slot >= min(k, number
    of passages)``). One worker's scratch arrays (``scores`` and ``words`` all zero,
    left all zero)."""
    n_passages = scores.shape[0]
    have_rows = row_pointers.shape[0] == n_passages + 1
    tables = np.empty((_MASK_BITS // _TABLE_BITS, 256))
    for position in range(queries.shape[0]):
        query = queries[position]
        n_out = query * slot
        out_counts[query] = 0
        first = term_offsets[query]
        last = term_offsets[query + 1]
        n_terms = 0
        n_found = 0
        n_entries = 0
        for term in range(first, last):
            column = term_columns[term]
            if column >= 0:
                n_found += 1
                if term_ranks[term]:
                    n_terms += 1
                    n_entries += posting_pointers[column + 1] - posting_pointers[column]
        if n_terms == 0 or k <= 0:
            continue
        # the ranking terms found in the corpus (query order: the order of every rank
        # score's additions), and every found term
        terms = np.empty(n_terms, dtype=np.int64)
        found = np.empty(n_found, dtype=np.int64)
        n_terms = 0
        n_found = 0
        positive = True
        total = 0.0
        for term in range(first, last):
            if term_columns[term] >= 0:
                found[n_found] = term
                n_found += 1
                if term_ranks[term]:
                    terms[n_terms] = term
                    n_terms += 1
                    weight = term_weights[term]
                    positive &= weight > 0.0
                    total += weight
        # Pruning walks the terms from the heaviest down (MaxScore order): the scores it
        # accumulates are sums in another order than the query's, so the passages that
        # can be among the k best are scored again, in query order, from their rows.
        pruning = prune and have_rows and n_entries > k and n_terms >= _MIN_PRUNED_TERMS
        reordered = False
        masked = False
        scan = False
        n_touched = 0
        theta = 0.0
        # (the integer weights scale the weights by about 2**16 / total: finite)
        if (
            (use_masks > 0 or (use_masks < 0 and n_entries >= _MIN_MASK_ENTRIES))
            and positive and total < np.inf and 2.0**32 / total < np.inf
            and not pruning and n_terms <= _MASK_BITS
        ):
            scan = walk == 1 or (walk < 0 and 2 * n_entries > n_passages)
            n_hits, n_touched = _mask_candidates(
                posting_pointers, posting_passages, term_columns, term_weights, terms, k,
                scan, words, tables, touched, hits, values,
            )
            masked = True
        else:
            n_hits, theta, reordered = _summed_candidates(
                posting_pointers, posting_passages, row_pointers, row_columns,
                term_columns, term_weights, terms, n_entries, k, pruning, walk,
                check_cost, search_cost, scores, touched, hits, values, buckets,
            )
        if reordered:
            # their rank scores in query order, from their rows merged with the found
            # terms by column
            by_column = found[stable_argsort(term_columns[found])]
            held = np.zeros(last - first, dtype=np.bool_)
            local_by_column = by_column - first
            local_columns = term_columns[first:last]
            for i in range(n_hits):
                _row_terms(
                    row_pointers, row_columns, hits[i], local_by_column, local_columns, held
                )
                total = 0.0
                for term in terms:
                    if held[term - first]:
                        total += term_weights[term]
                values[i] = total
        take = _emit_best(
            hits, values, n_hits, k, theta, out_passages, out_rank_scores, n_out
        )
        # which of the query's terms each kept passage holds: the ranking ones from the
        # words of the walk (no row read), else every found one from the rows
        held_bits = want_held and last - first <= _HELD_BITS
        if want_held and not held_bits:
            out_held[n_out:n_out + take] = -1
        if held_bits and masked:
            _held_from_words(words, terms, first, out_passages, n_out, take, out_held)
        elif held_bits:
            _held_from_rows(
                row_pointers, row_columns, term_columns, first, last, out_passages, n_out,
                take, slots, out_held,
            )
        if masked:
            _reset_words(words, scan, touched, n_touched)
        # the full score adds the weights of the terms that do not rank
        if n_found > n_terms:
            _add_unranked(
                row_pointers, row_columns, term_columns, term_weights, term_ranks, first,
                last, out_passages, out_rank_scores, out_scores, n_out, take, slots,
                frequent_bits, bit_of_column, held_bits and masked, out_held,
            )
        else:
            copy_range(out_scores, n_out, out_rank_scores, n_out, take)
        out_counts[query] = take


# queries of at most this many terms get the bits of the terms each candidate holds
_HELD_BITS = 63
# the columns whose membership is kept per passage in one int64 (bit 63 unused)
_N_FREQUENT = 63
# corpora from this many passages keep it (smaller ones' rows are cheap to read)
_FREQUENT_MIN_PASSAGES = 8192


@jit
def _mark_frequent(posting_pointers, posting_passages, columns, bits):
    """Set bit ``b`` of ``bits[p]`` for every passage ``p`` of column ``columns[b]``."""
    for bit in range(columns.shape[0]):
        column = columns[bit]
        flag = np.int64(1) << bit
        for entry in range(posting_pointers[column], posting_pointers[column + 1]):
            bits[posting_passages[entry]] |= flag


class _Scratch:
    """Per-index scratch arrays of :func:`top_candidates`, reused across calls (fresh
    arrays of the corpus size cost page faults on every call): per worker thread, float
    scores and 32-bit words per passage, passage lists, a slot per vocabulary column and
    histogram buckets (one row per worker); one user at a time. Also, for corpora of
    ``frequent_min_passages`` passages or more, which of the 63 most frequent columns
    each passage holds (built on first use)."""

    def __init__(self, frequent_min_passages: int = _FREQUENT_MIN_PASSAGES) -> None:
        import threading

        self.lock = threading.Lock()
        self.frequent_min_passages = frequent_min_passages
        self.scores = np.zeros((0, 0), dtype=np.float64)
        self.touched = np.zeros((0, 1), dtype=np.int64)
        self.hits = np.zeros((0, 0), dtype=np.int64)
        self.values = np.zeros((0, 0), dtype=np.float64)
        self.words = np.zeros((0, 0), dtype=np.uint32)
        self.slots = np.zeros((0, 0), dtype=np.int64)
        self.buckets = np.zeros((0, _N_COPIES * _N_BUCKETS), dtype=np.int64)
        self.frequent_source: np.ndarray | None = None
        self.frequent_bits = np.zeros(0, dtype=np.int64)
        self.bit_of_column = np.zeros(0, dtype=np.int64)

    def frequent(
        self, posting_pointers: np.ndarray, posting_passages: np.ndarray, n_passages: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(bits, bit_of_column)`` of the frequent columns (empty for small corpora),
        kept while the same postings array is given."""
        if n_passages < self.frequent_min_passages:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        if self.frequent_source is not posting_passages:
            pointers = np.ascontiguousarray(posting_pointers, dtype=np.int64)
            lengths = np.diff(pointers)
            order = np.argsort(-lengths, kind="stable")[:_N_FREQUENT]
            columns = order[lengths[order] > 0].astype(np.int64)
            self.bit_of_column = np.full(lengths.shape[0], -1, dtype=np.int64)
            self.bit_of_column[columns] = np.arange(columns.shape[0])
            self.frequent_bits = np.zeros(n_passages, dtype=np.int64)
            _mark_frequent(
                pointers, walk_passages(posting_passages, n_passages), columns,
                self.frequent_bits,
            )
            self.frequent_source = posting_passages
        return self.frequent_bits, self.bit_of_column

    def arrays(self, n_passages: int, n_columns: int, n_workers: int = 1) -> tuple[np.ndarray, ...]:
        """``(scores, touched, hits, values, words, slots, buckets)``, each with at least
        ``n_workers`` rows (row ``w``: worker ``w``'s)."""
        if self.scores.shape[1] != n_passages or self.scores.shape[0] < n_workers:
            # the kernel leaves ``scores`` and ``words`` all zero again when it returns
            rows = max(n_workers, self.scores.shape[0])
            self.scores = np.zeros((rows, n_passages), dtype=np.float64)
            self.touched = np.zeros((rows, n_passages + 1), dtype=np.int64)
            self.hits = np.zeros((rows, n_passages), dtype=np.int64)
            self.values = np.zeros((rows, n_passages), dtype=np.float64)
            self.words = np.zeros((rows, n_passages), dtype=np.uint32)
            self.buckets = np.zeros((rows, _N_COPIES * _N_BUCKETS), dtype=np.int64)
        if self.slots.shape[1] != n_columns or self.slots.shape[0] < n_workers:
            self.slots = np.zeros((max(n_workers, self.slots.shape[0]), n_columns), np.int64)
        return (
            self.scores, self.touched, self.hits, self.values, self.words, self.slots,
            self.buckets,
        )


_N_BUCKETS = 1024
# how the posting lists of the admitted terms are walked: chosen by list lengths, first
# touch listed (only the touched passages are visited afterwards), or added blind and the
# touched passages found by one scan of the corpus
_WALKS = {"auto": -1, "listed": 0, "scan": 1}
# queries whose ranking lists hold this many entries in all are shared among threads
# (when numba has more than one): fewer cost less than waking the workers (measured)
_PARALLEL_MIN_ENTRIES = 16384


# (np.iinfo costs about a microsecond a call, and every retrieval call asks)
_UINT32_MAX = 2**32 - 1


def passage_dtype(n_passages: int) -> type:
    """The dtype postings keep passage numbers in for a corpus of ``n_passages``: uint32
    (:func:`walk_passages`), int64 from 2**32 passages.

    Examples
    --------
    >>> passage_dtype(68_000).__name__, passage_dtype(2**32).__name__
    ('uint32', 'int64')
    """
    return np.uint32 if n_passages <= _UINT32_MAX else np.int64


def walk_passages(posting_passages: np.ndarray, n_passages: int) -> np.ndarray:
    """The postings' passage numbers as the retrieval kernels read them: uint32 (int64
    for a corpus of 2**32 passages or more), contiguous; the array itself when it is so.

    The walk streams every entry of a query's lists (tens of thousands per query on the
    benchmark's 1,000 documents, far more than the caches hold): 4-byte entries halve
    what it reads, and made the retrieval kernel about 15% faster there (a bare walk of
    those lists: 87 us per query with int64 entries, 77 with int32, 65 with uint32).

    Examples
    --------
    >>> import numpy as np
    >>> walk_passages(np.array([0, 2, 1]), 3).dtype
    dtype('uint32')
    """
    return np.ascontiguousarray(posting_passages, dtype=passage_dtype(n_passages))


@jit
def _deal_queries(posting_pointers, term_columns, term_ranks, term_offsets, n_workers):
    """Deal the queries to ``n_workers`` workers, longest walk first to the least loaded
    (a query's load: the entries of its ranking lists, plus one). Returns ``(offsets,
    queries, total)``: worker ``w`` takes ``queries[offsets[w]:offsets[w + 1]]``;
    ``total`` is every query's entries."""
    n_queries = term_offsets.shape[0] - 1
    loads = np.zeros(n_queries, dtype=np.int64)
    total = 0
    for query in range(n_queries):
        entries = 1
        for term in range(term_offsets[query], term_offsets[query + 1]):
            column = term_columns[term]
            if column >= 0 and term_ranks[term]:
                entries += posting_pointers[column + 1] - posting_pointers[column]
        loads[query] = entries
        total += entries - 1
    order = stable_argsort(-loads)
    worker_load = np.zeros(n_workers, dtype=np.int64)
    worker_of = np.empty(n_queries, dtype=np.int64)
    for i in range(n_queries):
        query = order[i]
        best = 0
        for worker in range(1, n_workers):
            if worker_load[worker] < worker_load[best]:
                best = worker
        worker_of[query] = best
        worker_load[best] += loads[query]
    offsets = np.zeros(n_workers + 1, dtype=np.int64)
    for query in range(n_queries):
        offsets[worker_of[query] + 1] += 1
    for worker in range(n_workers):
        offsets[worker + 1] += offsets[worker]
    filled = offsets[:-1].copy()
    queries = np.empty(n_queries, dtype=np.int64)
    for query in range(n_queries):
        queries[filled[worker_of[query]]] = query
        filled[worker_of[query]] += 1
    return offsets, queries, total


@jit_parallel
def _top_candidates_parallel(
    n_workers, worker_offsets, worker_queries, posting_pointers, posting_passages,
    row_pointers, row_columns, term_columns, term_weights, term_ranks, term_offsets, k,
    prune, walk, use_masks, check_cost, search_cost, scores, touched, hits, values, words,
    slots, frequent_bits, bit_of_column, buckets, slot, out_counts, out_passages,
    out_rank_scores, out_scores, want_held, out_held,
):
    """:func:`_top_candidates_kernel` on ``n_workers`` threads: worker ``w`` takes the
    queries ``worker_queries[worker_offsets[w]:worker_offsets[w + 1]]`` with the scratch
    rows ``w`` (queries are independent: the result does not depend on the dealing)."""
    for worker in prange(n_workers):
        _top_candidates_kernel(
            posting_pointers, posting_passages, row_pointers, row_columns, term_columns,
            term_weights, term_ranks, term_offsets, k, prune, walk, use_masks, check_cost,
            search_cost, scores[worker], touched[worker], hits[worker], values[worker],
            words[worker], slots[worker], frequent_bits, bit_of_column, buckets[worker],
            worker_queries[worker_offsets[worker]:worker_offsets[worker + 1]], slot,
            out_counts, out_passages, out_rank_scores, out_scores, want_held, out_held,
        )


@jit
def _pack_slots(counts, slot, want_held, passages, rank_scores, scores, held, out_offsets):
    """Move query ``q``'s ``counts[q]`` entries from ``q * slot`` to follow query
    ``q - 1``'s (in place: an entry only moves down) and fill the CSR ``out_offsets``."""
    n = 0
    for query in range(counts.shape[0]):
        start = query * slot
        for i in range(counts[query]):
            passages[n + i] = passages[start + i]
            rank_scores[n + i] = rank_scores[start + i]
            scores[n + i] = scores[start + i]
            if want_held:
                held[n + i] = held[start + i]
        n += counts[query]
        out_offsets[query + 1] = n


def _n_workers(n_threads: int | None, n_queries: int) -> int:
    """Workers for ``n_queries`` queries on ``n_threads`` threads (None: numba's current
    count); checks ``n_threads``."""
    import numba

    threads = numba.get_num_threads() if n_threads is None else check_threads(n_threads)
    return max(1, min(threads, n_queries))


def top_candidates(
    posting_pointers: np.ndarray,
    posting_passages: np.ndarray,
    n_passages: int,
    term_columns: np.ndarray,
    term_weights: np.ndarray,
    term_offsets: np.ndarray,
    k: int,
    *,
    term_ranks: np.ndarray | None = None,
    rows: tuple[np.ndarray, np.ndarray] | None = None,
    scratch: _Scratch | None = None,
    prune: bool = False,
    walk: str = "auto",
    masks: bool | None = None,
    check_cost: float = 2.0,
    search_cost: float = 16.0,
    return_held: bool = False,
    n_threads: int | None = None,
) -> tuple[np.ndarray, ...]:
    """The ``k`` passages with the largest summed term weight for every query.

    A passage's rank score is the sum of the weights of the query's ranking terms it
    holds, added in query order; the best ``k`` are kept (equal scores: lower passage
    first; weights must be positive). Terms whose ``term_ranks`` flag is False do not
    find or rank passages; their weights are added to the full score of the passages
    kept (found in each kept passage's CSR row, ``rows``).

    A query of at most 16 ranking terms (positive weights) whose lists are long (see
    ``masks``) is walked as a 32-bit word per passage: each posting adds its term's bit
    and an integer weight (the weight scaled and rounded up) in one integer addition,
    so the word holds which terms the passage has and an upper bound of its score. A
    regular sample of the words guesses a bound that about ``1.5 k`` passages reach;
    one pass over the words keeps those within the rounding of it, estimates from the
    term bits (two table look-ups) keep the few that may reach the k-th best, and these
    are scored exactly: the first 8 terms' weights by a table of their sums in query
    order, the held ones after them added in order -- the additions of walking the
    lists, in the same order, hence the same floats. If fewer than ``k`` passages reach
    the guess, every touched passage is examined instead. Only about ``k`` entries are
    then sorted however many tie.

    Other queries sum the weights into a dense float array
    (reset after each query); the best are then found from a sample's guess of the
    k-th best score (one pass over the touched passages, a histogram when the guess
    fails).

    The full score adds, in query order, the weights of the terms that do not rank
    that each kept passage holds: read from one word per passage when they are all
    among the corpus's 63 most frequent columns (corpora of 8,192 passages or more;
    the word is built once per scratch), else from the passage's row (their columns
    marked in a per-column slot array: one look-up per word of the row).

    With ``prune`` (and ``rows``), a query of three or more ranking terms is
    walked heaviest term first (MaxScore order): once ``k`` passages score more than
    the summed weight of the lists left, no passage outside them can reach the k-th
    best, so the rest of the lists only update the passages still in the running (by a
    binary search in their rows, or a walk of the list, whichever costs less), and the
    passages that can no longer reach the k-th best are dropped as it rises. The kept
    passages are then scored again in query order, so that ``offsets``, ``passages``
    and both score arrays are bit for bit those of walking every list in query order;
    every comparison on the walk's differently rounded sums carries a margin that can
    only keep more passages.

    Parameters
    ----------
    posting_pointers, posting_passages : ndarray of int
        The index's postings (CSR, passages ascending within each column); the passages
        are walked as uint32 (:func:`walk_passages`: pass them so to avoid a copy).
    n_passages : int
        Number of passages.
    term_columns, term_weights : ndarray
        Column (``-1``: in no passage) and positive weight of every query term.
    term_offsets : ndarray of int64
        Query ``q`` owns terms ``term_offsets[q]:term_offsets[q + 1]``.
    k : int
        Passages per query.
    term_ranks : ndarray of bool, optional
        Whether each term ranks (default: all).
    rows : tuple of two int64 arrays, optional
        The index's CSR rows (columns sorted); needed when some terms do not rank and
        for pruning.
    scratch : _Scratch, optional
        Scratch arrays to reuse across calls.
    prune : bool
        Whether to prune; never changes the result. Off by default: on the benchmark
        workload (1,000 documents, 68,000 passages, k = 200) walking a posting entry
        costs about a nanosecond, while pruning pays per passage (passes to find the
        k-th best, a binary search per candidate and list, scoring again), and its
        queries, whose content words weigh alike, only stop admitting passages after
        most lists; pruning was 20-30% slower there.
    walk : {"auto", "listed", "scan"}
        How the lists that admit passages are walked: each passage listed when first
        touched, or weights added blind and the touched passages found by one scan of
        the corpus (cheaper when the lists cover much of it); ``"auto"`` scans when the
        lists' entries exceed half the corpus and nothing is pruned. Never changes the
        result.
    masks : bool, optional
        Whether queries of at most 16 ranking terms (positive weights) are walked as
        per-passage words of term bits and score bounds rather than float sums; default:
        when their lists hold 2,048 entries or more. Never changes the result: on the
        benchmark workload (1,000 documents) it makes the call 1.25 (an AMD EPYC machine)
        to 1.5 (an Intel Xeon) times faster than float sums on one thread (``python
        benchmarks/kernels.py --retrieval 1000``); on a few
        documents, float sums cost as much or less.
    check_cost, search_cost : float
        The cost model of pruning, in posting entries walked: a stop check (one pass
        over the touched passages) is tried when the lists left are ``check_cost``
        times longer than that pass; a list is searched in the candidates' rows instead
        of walked when it is ``search_cost`` times longer than the candidates. Never
        change the result (tests force every path with them).
    return_held : bool
        Also return ``held``: for each candidate, bit ``t`` set when its passage holds
        the query's term ``term_offsets[q] + t`` (found in the corpus), for queries of at
        most 63 terms (-1 for longer ones). The ranking terms' bits of a query walked as
        words come from its words (no row is read), the others from the passages' rows
        (or the frequent columns' word). Requires ``rows``.
    n_threads : int, optional
        Threads the queries are shared among (each query is walked by one thread, with
        its own scratch; never changes the result). Default: numba's current thread
        count when the queries' ranking lists hold 16,384 entries or more in all (fewer
        cost less than waking the threads), else one. At most numba's thread pool
        (``NUMBA_NUM_THREADS``).

    Returns
    -------
    offsets, passages, rank_scores, scores : ndarray
        Packed CSR: query ``q``'s candidates are ``passages[offsets[q]:offsets[q + 1]]``;
        ``rank_scores`` sums the ranking terms' weights, ``scores`` every term's.
        With ``return_held``, ``held`` (int64) follows.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> # term 0 is in passages 0 and 2, term 1 in passage 2
    >>> offsets, passages, _, scores = top_candidates(
    ...     i64(0, 2, 3), i64(0, 2, 2), 3, i64(0, 1), np.array([1.0, 2.0]), i64(0, 2), 5)
    >>> offsets.tolist(), passages.tolist(), scores.tolist()
    ([0, 2], [2, 0], [3.0, 1.0])
    """
    if walk not in _WALKS:
        raise ValueError(f"walk must be one of {sorted(_WALKS)}, got {walk!r}")
    term_weights = np.ascontiguousarray(term_weights, dtype=np.float64)
    if term_weights.size and not term_weights.min() > 0.0:  # (NaN fails too)
        # a zero weight would list a passage twice in the walk that lists each passage
        # when its score first rises above zero
        raise ValueError("term_weights must be positive")
    n_queries = term_offsets.shape[0] - 1
    out_offsets = np.zeros(n_queries + 1, dtype=np.int64)
    capacity = n_queries * max(0, min(k, n_passages))
    out_passages = np.zeros(capacity, dtype=np.int64)
    out_rank_scores = np.zeros(capacity, dtype=np.float64)
    out_scores = np.zeros(capacity, dtype=np.float64)
    ranks = (
        np.ones(term_columns.shape[0], dtype=np.bool_)
        if term_ranks is None
        else np.ascontiguousarray(term_ranks, dtype=np.bool_)
    )
    if rows is None:
        if not ranks.all():
            raise ValueError("rows are needed when some terms do not rank")
        if return_held:
            raise ValueError("rows are needed for return_held")
        rows = (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    out_held = np.zeros(capacity if return_held else 0, dtype=np.int64)
    if n_queries and capacity:
        pointers = np.ascontiguousarray(posting_pointers, dtype=np.int64)
        columns = np.ascontiguousarray(term_columns, dtype=np.int64)
        term_offsets = np.ascontiguousarray(term_offsets, dtype=np.int64)
        n_workers = _n_workers(n_threads, n_queries)
        worker_offsets, worker_queries, total = _deal_queries(
            pointers, columns, ranks, term_offsets, n_workers
        )
        if n_threads is None and total < _PARALLEL_MIN_ENTRIES:
            n_workers = 1
            worker_offsets = np.array([0, n_queries], dtype=np.int64)
            worker_queries = np.arange(n_queries, dtype=np.int64)
        scratch = _Scratch() if scratch is None else scratch
        owned = scratch.lock.acquire(blocking=False)
        try:
            n_columns = posting_pointers.shape[0] - 1
            own = scratch if owned else _Scratch(scratch.frequent_min_passages)
            scores, touched, hits, values, words, slots, buckets = own.arrays(
                n_passages, n_columns, n_workers
            )
            frequent_bits, bit_of_column = own.frequent(
                posting_pointers, posting_passages, n_passages
            )
            arguments = (
                pointers,
                walk_passages(posting_passages, n_passages),
                np.ascontiguousarray(rows[0], dtype=np.int64),
                np.ascontiguousarray(rows[1], dtype=np.int64),
                columns,
                np.ascontiguousarray(term_weights, dtype=np.float64),
                ranks,
                term_offsets,
                int(k),
                bool(prune),
                _WALKS[walk],
                -1 if masks is None else int(bool(masks)),
                float(check_cost),
                float(search_cost),
            )
            slot = capacity // n_queries
            counts = np.zeros(n_queries, dtype=np.int64)
            outputs = (counts, out_passages, out_rank_scores, out_scores, bool(return_held),
                       out_held)
            if n_workers == 1:
                _top_candidates_kernel(
                    *arguments, scores[0], touched[0], hits[0], values[0], words[0],
                    slots[0], frequent_bits, bit_of_column, buckets[0], worker_queries, slot,
                    *outputs,
                )
            else:
                run_on_threads(
                    n_workers, _top_candidates_parallel, n_workers, worker_offsets,
                    worker_queries, *arguments, scores, touched, hits, values, words, slots,
                    frequent_bits, bit_of_column, buckets, slot, *outputs,
                )
        finally:
            if owned:
                scratch.lock.release()
        _pack_slots(
            counts, slot, bool(return_held), out_passages, out_rank_scores, out_scores,
            out_held, out_offsets,
        )
    n_out = int(out_offsets[-1])
    found = out_offsets, out_passages[:n_out], out_rank_scores[:n_out], out_scores[:n_out]
    return (*found, out_held[:n_out]) if return_held else found


@jit
def _first_seen_codes(values, codes, firsts):
    """Code of each value = order of its first appearance; returns the distinct values.
    ``firsts[code]`` (room for one entry per value) gets the position of that first
    appearance."""
    # start small (the table stays in cache for typical vocabularies) and grow
    capacity = 1 << 12
    table_keys = np.empty(capacity, dtype=np.int64)
    table_codes = np.full(capacity, -1, dtype=np.int64)
    distinct = np.empty(min(values.shape[0], capacity), dtype=np.int64)
    n_distinct = 0
    for i in range(values.shape[0]):
        if 2 * n_distinct >= capacity:
            # grow and re-insert (rare: only for very large vocabularies)
            capacity <<= 1
            table_keys = np.empty(capacity, dtype=np.int64)
            table_codes = np.full(capacity, -1, dtype=np.int64)
            grown = np.empty(capacity, dtype=np.int64)
            copy_range(grown, 0, distinct, 0, n_distinct)
            distinct = grown
            for code in range(n_distinct):
                slot = (np.uint64(distinct[code]) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)
                slot = np.int64(slot) & (capacity - 1)
                while table_codes[slot] != -1:
                    slot = (slot + 1) & (capacity - 1)
                table_keys[slot] = distinct[code]
                table_codes[slot] = code
        value = values[i]
        slot = (np.uint64(value) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)
        slot = np.int64(slot) & (capacity - 1)
        while True:
            code = table_codes[slot]
            if code == -1:
                table_keys[slot] = value
                table_codes[slot] = n_distinct
                distinct[n_distinct] = value
                firsts[n_distinct] = i
                codes[i] = n_distinct
                n_distinct += 1
                break
            if table_keys[slot] == value:
                codes[i] = code
                break
            slot = (slot + 1) & (capacity - 1)
    return distinct[:n_distinct]


def factorize(values: np.ndarray, *, return_first: bool = False) -> tuple[np.ndarray, ...]:
    """Sorted distinct values and the position of each value among them.

    Equal to ``np.unique(values, return_inverse=True)``, computed with a hash table in
    one pass (several times faster for millions of token ids). With ``return_first``,
    also the position in ``values`` where each distinct value first appears (as
    ``np.unique``'s ``return_index``).

    Examples
    --------
    >>> import numpy as np
    >>> vocabulary, columns = factorize(np.array([30, 10, 30, -5], dtype=np.int64))
    >>> vocabulary.tolist(), columns.tolist()
    ([-5, 10, 30], [2, 1, 2, 0])
    >>> factorize(np.array([30, 10, 30, -5]), return_first=True)[2].tolist()
    [3, 1, 0]
    """
    values = np.ascontiguousarray(values, dtype=np.int64)
    if values.shape[0] == 0:
        empty = np.zeros(0, dtype=np.int64)
        return (empty, empty, empty) if return_first else (empty, empty)
    codes = np.empty(values.shape[0], dtype=np.int64)
    firsts = np.empty(values.shape[0], dtype=np.int64)
    distinct = _first_seen_codes(values, codes, firsts)
    order = np.argsort(distinct, kind="stable")
    rank = np.empty(order.shape[0], dtype=np.int64)
    rank[order] = np.arange(order.shape[0], dtype=np.int64)
    if return_first:
        return distinct[order], rank[codes], firsts[: distinct.shape[0]][order]
    return distinct[order], rank[codes]


@jit
def columns_of_ids(vocabulary, ids):
    """The column of each of ``ids`` in the ascending ``vocabulary`` (its position), -1
    for ids not in it: one binary search per id (what ``IdfIndex.columns_of`` needs; the
    same with numpy took seven array calls).

    Examples
    --------
    >>> import numpy as np
    >>> columns_of_ids(np.array([10, 30]), np.array([30, 20, 10, 40])).tolist()
    [1, -1, 0, -1]
    """
    n_vocabulary = vocabulary.shape[0]
    out = np.empty(ids.shape[0], dtype=np.int64)
    for i in range(ids.shape[0]):
        column = np.searchsorted(vocabulary, ids[i]) if n_vocabulary else 0
        out[i] = column if column < n_vocabulary and vocabulary[column] == ids[i] else -1
    return out


@jit
def normalized_scores(offsets, sums, denominators):
    """``sums`` of query ``q``'s entries (``offsets[q]:offsets[q + 1]``) divided by its
    ``denominators[q]`` (1 when it is not positive): the lexical scores of the candidates
    (see :meth:`citekit.index.IdfIndex.top_k`)."""
    out = np.empty(sums.shape[0], dtype=np.float64)
    for q in range(offsets.shape[0] - 1):
        denominator = denominators[q] if denominators[q] > 0 else 1.0
        for i in range(offsets[q], offsets[q + 1]):
            out[i] = sums[i] / denominator
    return out


@jit
def gather_ranges_kernel(starts, ends):
    """Positions ``concat(range(s, e) for s, e in zip(starts, ends))`` and the row of
    each (see :func:`citekit.index.gather_ranges`); an end before its start raises."""
    n = 0
    for i in range(starts.shape[0]):
        if ends[i] < starts[i]:
            raise ValueError("every range must end at or after its start")
        n += ends[i] - starts[i]
    positions = np.empty(n, dtype=np.int64)
    rows = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(starts.shape[0]):
        for position in range(starts[i], ends[i]):
            positions[k] = position
            rows[k] = i
            k += 1
    return positions, rows


@jit
def _range_rows_kernel(columns, starts, ends, n_terms, indptr):
    """Distinct columns of ``columns[starts[p]:ends[p]]`` for every passage ``p``, in
    order of first appearance: fills ``indptr`` (n_passages + 1), returns the indices."""
    last_row = np.full(n_terms, -1, dtype=np.int64)
    capacity = 0
    for p in range(starts.shape[0]):
        capacity += ends[p] - starts[p]
    indices = np.empty(capacity, dtype=np.int64)
    n = 0
    for p in range(starts.shape[0]):
        for i in range(starts[p], ends[p]):
            column = columns[i]
            if last_row[column] != p:
                last_row[column] = p
                indices[n] = column
                n += 1
        indptr[p + 1] = n
    return indices[:n].copy()


@jit
def _transpose_kernel(indptr, indices, n_terms, out_indptr, out_indices):
    """CSR transpose of a binary matrix (counting sort; rows come out sorted)."""
    for i in range(indices.shape[0]):
        out_indptr[indices[i] + 1] += 1
    for column in range(n_terms):
        out_indptr[column + 1] += out_indptr[column]
    fill = out_indptr[:-1].copy()
    for row in range(indptr.shape[0] - 1):
        for i in range(indptr[row], indptr[row + 1]):
            column = indices[i]
            out_indices[fill[column]] = row
            fill[column] += 1


def rows_and_postings(
    columns: np.ndarray, starts: np.ndarray, ends: np.ndarray, n_terms: int
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Binary CSR rows ``(indptr, indices)``, row ``p`` holding the distinct values of
    ``columns[starts[p]:ends[p]]`` (all in ``[0, n_terms)``) sorted, and their transpose
    (the postings, passages ascending). Ranges may overlap.

    Each row's distinct values are found in one pass; two counting-sort transposes then
    sort every row at once (cheaper than sorting rows one by one).

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> rows, postings = rows_and_postings(i64(2, 0, 2, 1), i64(0, 1), i64(3, 4), 3)
    >>> [a.tolist() for a in rows], [a.tolist() for a in postings]
    ([[0, 2, 5], [0, 2, 0, 1, 2]], [[0, 2, 3, 5], [0, 1, 1, 0, 1]])
    """
    indptr = np.zeros(starts.shape[0] + 1, dtype=np.int64)
    unsorted = _range_rows_kernel(
        np.ascontiguousarray(columns, dtype=np.int64),
        np.ascontiguousarray(starts, dtype=np.int64),
        np.ascontiguousarray(ends, dtype=np.int64),
        int(n_terms),
        indptr,
    )
    postings = transpose_rows(indptr, unsorted, n_terms)
    return transpose_rows(*postings, starts.shape[0]), postings


def transpose_rows(
    indptr: np.ndarray, indices: np.ndarray, n_terms: int
) -> tuple[np.ndarray, np.ndarray]:
    """The transpose ``(indptr, indices)`` of a binary CSR matrix with ``n_terms`` columns
    (each output row sorted).

    Examples
    --------
    >>> import numpy as np
    >>> indptr, indices = transpose_rows(np.array([0, 2, 3]), np.array([0, 2, 2]), 3)
    >>> indptr.tolist(), indices.tolist()
    ([0, 1, 1, 3], [0, 0, 1])
    """
    out_indptr = np.zeros(int(n_terms) + 1, dtype=np.int64)
    out_indices = np.empty(indices.shape[0], dtype=np.int64)
    _transpose_kernel(
        np.ascontiguousarray(indptr, dtype=np.int64),
        np.ascontiguousarray(indices, dtype=np.int64),
        int(n_terms),
        out_indptr,
        out_indices,
    )
    return out_indptr, out_indices


@jit
def _query_terms_kernel(
    ids, offsets, flags, vocabulary, idf, unseen_idf, rows, columns, weights, term_flags,
    term_offsets, denominators, token_columns,
):
    n_terms = 0
    n_vocabulary = vocabulary.shape[0]
    for query in range(offsets.shape[0] - 1):
        lo = offsets[query]
        hi = offsets[query + 1]
        order = stable_argsort(ids[lo:hi])
        total = 0.0
        k = 0
        while k < hi - lo:
            token = ids[lo + order[k]]
            flag = False
            first = k
            while k < hi - lo and ids[lo + order[k]] == token:
                flag = flag or flags[lo + order[k]]
                k += 1
            column = np.searchsorted(vocabulary, token) if n_vocabulary else 0
            if column < n_vocabulary and vocabulary[column] == token:
                weight = idf[column]
            else:
                column = -1
                weight = unseen_idf
            for j in range(first, k):
                token_columns[lo + order[j]] = column
            rows[n_terms] = query
            columns[n_terms] = column
            weights[n_terms] = weight
            term_flags[n_terms] = flag
            total += weight
            n_terms += 1
        term_offsets[query + 1] = n_terms
        denominators[query] = total
    return n_terms


def query_terms(
    ids: np.ndarray,
    offsets: np.ndarray,
    flags: np.ndarray,
    vocabulary: np.ndarray,
    idf: np.ndarray,
    unseen_idf: float,
    token_columns: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """The distinct tokens (terms) of every query, ascending by id, with their index
    column (-1: not in ``vocabulary``), IDF weight (``unseen_idf`` when not in it) and
    rank flag (set when any occurrence's ``flags`` is); ``offsets`` out per query, and
    each query's denominator: its terms' weights summed in term order. ``token_columns``
    (optional, contiguous int64, one per id) receives the column of every id.

    One pass per batch (it was a lexsort, boundary flags and a dozen numpy calls).

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> rows, columns, weights, flags, offsets, totals = query_terms(
    ...     i64(30, 10, 30, 5), i64(0, 3, 4), np.array([False, True, True, False]),
    ...     i64(10, 30), np.array([1.5, 2.0]), 3.0)
    >>> rows.tolist(), columns.tolist(), weights.tolist(), flags.tolist()
    ([0, 0, 1], [0, 1, -1], [1.5, 2.0, 3.0], [True, True, False])
    >>> offsets.tolist(), totals.tolist()
    ([0, 2, 3], [3.5, 3.0])
    """
    n = ids.shape[0]
    if token_columns is None:
        token_columns = np.empty(n, dtype=np.int64)
    elif token_columns.shape != (n,) or token_columns.dtype != np.int64:
        raise ValueError(f"token_columns must be int64 of shape ({n},)")
    rows = np.empty(n, dtype=np.int64)
    columns = np.empty(n, dtype=np.int64)
    weights = np.empty(n, dtype=np.float64)
    term_flags = np.empty(n, dtype=np.bool_)
    term_offsets = np.zeros(offsets.shape[0], dtype=np.int64)
    denominators = np.zeros(offsets.shape[0] - 1, dtype=np.float64)
    n_terms = _query_terms_kernel(
        np.ascontiguousarray(ids, dtype=np.int64),
        np.ascontiguousarray(offsets, dtype=np.int64),
        np.ascontiguousarray(flags, dtype=np.bool_),
        np.ascontiguousarray(vocabulary, dtype=np.int64),
        np.ascontiguousarray(idf, dtype=np.float64),
        float(unseen_idf),
        rows,
        columns,
        weights,
        term_flags,
        term_offsets,
        denominators,
        token_columns,
    )
    return (
        rows[:n_terms],
        columns[:n_terms],
        weights[:n_terms],
        term_flags[:n_terms],
        term_offsets,
        denominators,
    )
