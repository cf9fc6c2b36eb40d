"""Kernels shared by the retrieval paths: adding posting lists into per-passage scores
and choosing the k best of those scores (sampled histogram bounds, partial selection)."""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._sort import stable_argsort


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
        n_sample = np.int64(0)  # (int64, not Literal[int](0): one signature of the callee)
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
    n_hits = np.int64(0)  # (int64, not Literal[int](0): one signature of the callee)
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
            n_tied = np.int64(0)  # (int64, not Literal[int](0): one signature of the callee)
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
    # passages are distinct: any sort by passage is the same, then a stable sort by value,
    # larger first and NaN last (numpy's mergesort order; stable_argsort, compiled for the
    # values above anyway, instead of numba's mergesort: less to compile)
    by_passage = stable_argsort(hits[:n])
    kept_hits = hits[:n][by_passage]
    kept_values = values[:n][by_passage]
    by_score = np.empty(n, dtype=np.int64)
    n_numbers = 0
    for i in range(n):
        if kept_values[i] == kept_values[i]:
            by_score[n_numbers] = i
            n_numbers += 1
    numbers = by_score[:n_numbers].copy()
    by_score[:n_numbers] = numbers[stable_argsort(-kept_values[numbers])]
    n_nan = n_numbers
    for i in range(n):
        if kept_values[i] != kept_values[i]:
            by_score[n_nan] = i
            n_nan += 1
    for i in range(n):
        out_passages[n_out + i] = kept_hits[by_score[i]]
        out_scores[n_out + i] = kept_values[by_score[i]]


@jit
def heaviest_first(terms, term_columns, term_weights, posting_pointers):
    """Positions in ``terms`` (query terms: indices into ``term_columns`` and
    ``term_weights``) from the heaviest term to the lightest, MaxScore's walk order;
    equal weights: the shorter posting list first, then query order."""
    n_terms = terms.shape[0]
    keys = np.empty(n_terms)
    lengths = np.empty(n_terms, dtype=np.int64)
    for i in range(n_terms):
        column = term_columns[terms[i]]
        lengths[i] = posting_pointers[column + 1] - posting_pointers[column]
        keys[i] = -term_weights[terms[i]]
    by_length = stable_argsort(lengths)
    return by_length[np.argsort(keys[by_length], kind="mergesort")]


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
    n_values = np.int64(0)  # (int64, not Literal[int](0): one signature of the callee)
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
