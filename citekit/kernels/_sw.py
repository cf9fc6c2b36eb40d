"""Smith-Waterman kernels over int64 token ids (numba, serial).

The DP value of a cell is a single int64 *key* that packs, from most to least
significant field: the alignment score, the number of matches, ``m - target_start`` and
``n - query_start``. Extending an alignment adds a constant to the key (the score step,
plus one match for an exact diagonal step) and leaves the start fields alone, so plain
integer ``max`` over keys is a lexicographic maximum over
``(score, matches, -target_start, -query_start)``: the tie-breaking of the public API
falls out of ordinary integer arithmetic and costs nothing in the inner loop.

``_key_shifts`` gives the field widths; the public wrappers check beforehand that the
widest key of a problem fits in 62 bits (:func:`key_bits`).
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._band import _seeded_band

# Out-of-band sentinel: far below any reachable key, and adding any score step to it
# cannot overflow (steps are bounded by 2**61 by the key-width check).
NEG_KEY = -(1 << 62)
# Largest number of bits a key may need, sign excluded, so that key + step never overflows.
MAX_KEY_BITS = 61


@jit
def _bit_length(value):
    bits = 0
    while value > 0:
        bits += 1
        value >>= 1
    return bits


@jit
def _key_shifts(n, m):
    """Bit offsets of the start/match/score fields for an n x m problem."""
    query_bits = _bit_length(n)
    start_bits = query_bits + _bit_length(m)  # offset of the matches field
    score_shift = start_bits + _bit_length(min(n, m))
    return query_bits, start_bits, score_shift


@jit
def _restart_key(i, j, n, m, query_bits):
    """Key of the empty alignment starting (and ending) at DP cell (i, j)."""
    return ((m - j) << query_bits) | (n - i)


@jit
def _fill_region(
    query, target, row_lo, row_hi, col_lo, col_hi, diag_lo, diag_hi,
    match_step, mismatch_step, gap_step, query_bits, keys,
):
    """Fill the keys of DP cells (i, j) with row_lo <= i <= row_hi, col_lo <= j <= col_hi
    and diag_lo <= j - i <= diag_hi; alignments never leave that region.

    Cell (i, j) is stored at ``keys[i - row_lo, j - max(col_lo, i + diag_lo)]``.
    Returns ``(best_key, best_i, best_j)``: the maximal key, ties broken towards the
    smaller ``i + j`` (shorter span for the same start), then smaller ``j``, then ``i``.
    """
    n = query.shape[0]
    m = target.shape[0]
    best_key = NEG_KEY
    best_i = -1
    best_j = -1
    for i in range(row_lo, row_hi + 1):
        j_first = max(col_lo, i + diag_lo)
        j_last = min(col_hi, i + diag_hi)
        if j_first > j_last:
            continue
        row = i - row_lo
        prev_first = max(col_lo, i - 1 + diag_lo)
        left_key = NEG_KEY
        for j in range(j_first, j_last + 1):
            key = _restart_key(i, j, n, m, query_bits)
            if i > row_lo and j > col_lo:
                step = match_step if query[i - 1] == target[j - 1] else mismatch_step
                candidate = keys[row - 1, j - 1 - prev_first] + step
                if candidate > key:
                    key = candidate
            if i > row_lo and j - i + 1 <= diag_hi:
                candidate = keys[row - 1, j - prev_first] + gap_step
                if candidate > key:
                    key = candidate
            if j > j_first:
                candidate = left_key + gap_step
                if candidate > key:
                    key = candidate
            keys[row, j - j_first] = key
            left_key = key
            if key > best_key or (
                key == best_key
                and (i + j < best_i + best_j or (i + j == best_i + best_j and j < best_j))
            ):
                best_key = key
                best_i = i
                best_j = j
    return best_key, best_i, best_j


@jit
def _traceback(
    query, target, row_lo, col_lo, diag_lo, diag_hi, match_step, mismatch_step, gap_step,
    query_bits, start_bits, keys, end_i, end_j, blocks_out,
):
    """Trace the alignment ending at DP cell (end_i, end_j) back to its start.

    At every cell the first predecessor whose key plus the step equals the cell's key is
    taken, in the order diagonal, up (a query token against a gap), left (a target token
    against a gap). Writes the runs of exact matches to ``blocks_out`` as rows
    ``(query_start, target_start, length)`` in increasing order and returns
    ``(query_start, target_start, matches, n_blocks)``.
    """
    n = query.shape[0]
    m = target.shape[0]
    key = keys[end_i - row_lo, end_j - max(col_lo, end_i + diag_lo)]
    start_i = n - (key & ((1 << query_bits) - 1))
    start_j = m - ((key >> query_bits) & ((1 << (start_bits - query_bits)) - 1))
    i = end_i
    j = end_j
    matches = 0
    n_blocks = 0
    run_q = -1
    run_t = -1
    run_length = 0
    while i != start_i or j != start_j:
        row = i - row_lo
        prev_first = max(col_lo, i - 1 + diag_lo)
        if i > row_lo and j > col_lo:
            is_match = query[i - 1] == target[j - 1]
            previous = keys[row - 1, j - 1 - prev_first]
            if previous + (match_step if is_match else mismatch_step) == key:
                key = previous
                i -= 1
                j -= 1
                if is_match:
                    matches += 1
                    if run_length > 0 and run_q == i + 1 and run_t == j + 1:
                        run_length += 1
                    else:
                        if run_length > 0:
                            blocks_out[n_blocks, 0] = run_q
                            blocks_out[n_blocks, 1] = run_t
                            blocks_out[n_blocks, 2] = run_length
                            n_blocks += 1
                        run_length = 1
                    run_q = i
                    run_t = j
                continue
        if i > row_lo and j - i + 1 <= diag_hi:
            previous = keys[row - 1, j - prev_first]
            if previous + gap_step == key:
                key = previous
                i -= 1
                continue
        row_first = max(col_lo, i + diag_lo)
        if j > row_first:
            previous = keys[row, j - 1 - row_first]
            if previous + gap_step == key:
                key = previous
                j -= 1
                continue
        raise RuntimeError("citekit internal error: Smith-Waterman traceback lost its path")
    if run_length > 0:
        blocks_out[n_blocks, 0] = run_q
        blocks_out[n_blocks, 1] = run_t
        blocks_out[n_blocks, 2] = run_length
        n_blocks += 1
    # runs were found from the end backwards
    for k in range(n_blocks // 2):
        for c in range(3):
            swap = blocks_out[k, c]
            blocks_out[k, c] = blocks_out[n_blocks - 1 - k, c]
            blocks_out[n_blocks - 1 - k, c] = swap
    return start_i, start_j, matches, n_blocks


@jit
def key_bits(n, m, match_score, max_penalty):
    """Bits (sign excluded) the widest key of an n x m problem needs."""
    score_shift = _key_shifts(n, m)[2]
    return score_shift + _bit_length(max(match_score * min(n, m) + 1, max_penalty))


@jit
def align_one(
    query, target, band_width, full_cell_budget, auto_band_width,
    match_score, mismatch_score, gap_score, blocks_out,
):
    """Align one query with one target.

    ``band_width < 0`` selects the automatic mode: the full DP when ``(n + 1) * (m + 1)``
    is within ``full_cell_budget``, else a band of half-width ``auto_band_width``.
    Returns ``(score, query_start, query_end, target_start, target_end, matches, n_blocks)``
    with all zeros for the empty alignment; blocks go to ``blocks_out``.
    """
    n = query.shape[0]
    m = target.shape[0]
    if n == 0 or m == 0:
        return 0, 0, 0, 0, 0, 0, 0
    if band_width < 0 and (n + 1) * (m + 1) <= full_cell_budget:
        diag_lo = -n
        diag_hi = m
    else:
        half_width = band_width if band_width >= 0 else auto_band_width
        has_shared, diag_lo, diag_hi = _seeded_band(query, target, half_width)
        if not has_shared:
            return 0, 0, 0, 0, 0, 0, 0
    query_bits, start_bits, score_shift = _key_shifts(n, m)
    match_step = match_score * (1 << score_shift) + (1 << start_bits)
    mismatch_step = mismatch_score * (1 << score_shift)
    gap_step = gap_score * (1 << score_shift)
    keys = np.empty((n + 1, min(m + 1, diag_hi - diag_lo + 1)), dtype=np.int64)
    best_key, end_i, end_j = _fill_region(
        query, target, 0, n, 0, m, diag_lo, diag_hi,
        match_step, mismatch_step, gap_step, query_bits, keys,
    )
    score = best_key >> score_shift
    if score <= 0:
        return 0, 0, 0, 0, 0, 0, 0
    start_i, start_j, matches, n_blocks = _traceback(
        query, target, 0, 0, diag_lo, diag_hi, match_step, mismatch_step, gap_step,
        query_bits, start_bits, keys, end_i, end_j, blocks_out,
    )
    return score, start_i, end_i, start_j, end_j, matches, n_blocks
