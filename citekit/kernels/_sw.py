"""Smith-Waterman kernels over int64 token ids (numba, serial).

Keys
----
The DP value of a cell is one int64 *key* packing, from the most to the least significant
field: the alignment score, the number of matches, ``m - target_start`` and
``n - query_start``. Extending an alignment adds a constant to the key (the score step,
plus one match for an exact diagonal step) and leaves the start fields alone, so an
integer ``max`` over keys is the lexicographic maximum over
``(score, matches, -target_start, -query_start)``. The public tie-breaking therefore costs
nothing in the inner loop, and the start of the best alignment is known without a
traceback. :func:`key_bits` gives the width a problem needs; wrappers check it fits.

Anti-diagonals
--------------
Cells on one anti-diagonal ``k = i + j`` depend only on anti-diagonals ``k - 1`` and
``k - 2``, so the inner loop over ``i`` has no loop-carried dependency and LLVM turns it
into SIMD code. Three rotating buffers hold the last anti-diagonals; a NEG_KEY guard is
written just outside each one, which is all the next two anti-diagonals can read beyond
the valid cells (anti-diagonal ranges move by at most one cell per step).

Traceback
---------
Small problems keep every anti-diagonal (``keys[k, i - first_row(k)]``) and trace back
directly. Large ones run a storage-free pass to find the best key, whose start fields give
the rectangle of the optimal alignment, then re-run the DP with storage on that rectangle
only: the best alignment of the sub-problem is the same alignment (every alignment of the
rectangle is one of the whole problem and the preference order is translation invariant).
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._band import seeded_band
from citekit.kernels._sw_wide import align_region_wide

# Out-of-band sentinel: far below any reachable key; adding a score step cannot overflow.
NEG_KEY = -(1 << 62)
# Largest key width (sign excluded) for which key + step never overflows an int64.
MAX_KEY_BITS = 61
# Problems whose stored anti-diagonals take at most this many keys (256 KiB) are traced
# back from the first pass; larger ones use the score-only pass + rectangle recompute.
STORE_CELLS = 1 << 15


@jit
def _bit_length(value):
    bits = 0
    while value > 0:
        bits += 1
        value >>= 1
    return bits


@jit
def key_shifts(n, m):
    """``(query_bits, start_bits, score_shift)``: where the key fields begin."""
    query_bits = _bit_length(n)
    start_bits = query_bits + _bit_length(m)  # the matches field starts here
    score_shift = start_bits + _bit_length(min(n, m))
    return query_bits, start_bits, score_shift


@jit
def key_bits(n, m, match_score, max_penalty):
    """Bits (sign excluded) that the widest key of an n x m problem needs."""
    score_shift = key_shifts(n, m)[2]
    return score_shift + _bit_length(max(match_score * min(n, m) + 1, max_penalty))


@jit
def decode_key(key, n, m, query_bits, start_bits, score_shift):
    """``(score, query_start, target_start, matches)`` packed in a key of an n x m problem."""
    query_start = n - (key & ((1 << query_bits) - 1))
    target_start = m - ((key >> query_bits) & ((1 << (start_bits - query_bits)) - 1))
    matches = (key >> start_bits) & ((1 << (score_shift - start_bits)) - 1)
    return key >> score_shift, query_start, target_start, matches


@jit
def _first_row(k, m, diag_hi):
    """Smallest i of a DP cell (i, k - i) with j <= m and j - i <= diag_hi."""
    return max(0, k - m, (k - diag_hi + 1) // 2)


@jit
def _last_row(k, n, diag_lo):
    """Largest i of a DP cell (i, k - i) with i <= n, j >= 0 and j - i >= diag_lo."""
    return min(n, k, (k - diag_lo) // 2)


@jit
def _diagonal_width(n, m, diag_lo, diag_hi):
    """Most cells any anti-diagonal of the region holds."""
    return min(n + 1, m + 1, (diag_hi - diag_lo) // 2 + 1)


@jit
def _antidiagonal(query_padded, target_reversed, before, previous, current, i_first, i_last,
                  base, n, match_step, mismatch_step, gap_step, query_bits):
    """Cells i_first..i_last of one anti-diagonal; returns their largest key.

    Written over contiguous slices with no loop-carried dependency so that it vectorizes.
    """
    diagonal_best = NEG_KEY
    count = i_last + 1 - i_first
    if count <= 0:
        return diagonal_best
    query_tokens = query_padded[i_first:i_last + 1]
    target_tokens = target_reversed[base + i_first:base + i_last + 1]
    diag_keys = before[i_first:i_last + 1]
    up_keys = previous[i_first:i_last + 1]
    left_keys = previous[i_first + 1:i_last + 2]
    out = current[i_first + 1:i_last + 2]
    # restart key ((m - j) << query_bits) + (n - i) grows by this much per step of i
    restart_first = ((base + i_first) << query_bits) + (n - i_first)
    restart_step = (1 << query_bits) - 1
    for x in range(count):
        diag = diag_keys[x] + (match_step if query_tokens[x] == target_tokens[x] else mismatch_step)
        key = max(max(diag, up_keys[x] + gap_step),
                  max(left_keys[x] + gap_step, restart_first + x * restart_step))
        out[x] = key
        diagonal_best = max(diagonal_best, key)
    return diagonal_best


@jit
def _dp_pass(query, target, diag_lo, diag_hi, match_step, mismatch_step, gap_step,
             query_bits, buffers, keys, store):
    """Fill the DP over cells (i, j), 0 <= i <= n, 0 <= j <= m, diag_lo <= j - i <= diag_hi.

    ``buffers`` is scratch of shape ``(5, >= max(n, m) + 3)``: rows 0-2 rotate as
    anti-diagonals (index ``i + 1``), row 3 holds ``[0] + query``, row 4 the reversed
    target followed by a pad. When ``store`` is true, ``keys[k, i - first_row(k), 0]`` keeps
    every cell. Returns ``(best_key, best_i, best_j)``: the maximal key, reached first at
    the smallest ``i + j`` and, on that anti-diagonal, the smallest ``j``.
    """
    n = query.shape[0]
    m = target.shape[0]
    query_padded = buffers[3]
    target_reversed = buffers[4]
    query_padded[0] = 0
    for i in range(n):
        query_padded[i + 1] = query[i]
    for j in range(m):
        target_reversed[j] = target[m - 1 - j]
    target_reversed[m] = 0
    current = buffers[0]
    previous = buffers[1]
    before = buffers[2]
    for row in range(3):
        for i in range(n + 3):
            buffers[row, i] = NEG_KEY
    best_key = NEG_KEY
    best_i = -1
    best_j = -1
    for k in range(n + m + 1):
        i_first = _first_row(k, m, diag_hi)
        i_last = _last_row(k, n, diag_lo)
        # target_reversed[m - k + i] is target[j - 1]; (m - j) is also the start field
        diagonal_best = _antidiagonal(
            query_padded, target_reversed, before, previous, current, i_first, i_last,
            m - k, n, match_step, mismatch_step, gap_step, query_bits,
        )
        if i_first >= 0 and i_first <= n + 2:
            current[i_first] = NEG_KEY
        if i_last + 2 >= 0 and i_last + 2 <= n + 2:
            current[i_last + 2] = NEG_KEY
        if store:
            for i in range(i_first, i_last + 1):
                keys[k, i - i_first, 0] = current[i + 1]
        if diagonal_best > best_key:
            best_key = diagonal_best
            for i in range(i_last, i_first - 1, -1):
                if current[i + 1] == diagonal_best:
                    best_i = i
                    best_j = k - i
                    break
        current, previous, before = before, current, previous
    return best_key, best_i, best_j


@jit
def _key_at(keys, lane, i, j, m, diag_hi):
    """Key of DP cell (i, j): lane < 0 for the anti-diagonal layout
    ``keys[i + j, i - first_row(i + j), 0]``, else the lane layout ``keys[i, j, lane]``."""
    if lane < 0:
        return keys[i + j, i - _first_row(i + j, m, diag_hi), 0]
    return keys[i, j, lane]


@jit
def traceback(query, target, diag_lo, diag_hi, match_step, mismatch_step, gap_step,
              query_bits, start_bits, keys, lane, end_i, end_j, blocks_out):
    """Trace the alignment ending at DP cell (end_i, end_j) back to its start.

    At each cell the first predecessor whose key plus the step equals the cell's key is
    taken, in the order diagonal, up (query token against a gap), left (target token
    against a gap). Writes runs of exact matches to ``blocks_out`` as rows
    ``(query_start, target_start, length)`` in increasing order and returns
    ``(query_start, target_start, matches, n_blocks)``.
    """
    n = query.shape[0]
    m = target.shape[0]
    key = _key_at(keys, lane, end_i, end_j, m, diag_hi)
    whole_key = np.int64(key)  # lane keys may be float32 (exact small integers)
    start_i = n - (whole_key & ((1 << query_bits) - 1))
    start_j = m - ((whole_key >> query_bits) & ((1 << (start_bits - query_bits)) - 1))
    i = end_i
    j = end_j
    matches = 0
    n_blocks = 0
    run_q = -1
    run_t = -1
    run_length = 0
    while i != start_i or j != start_j:
        if i > 0 and j > 0:
            is_match = query[i - 1] == target[j - 1]
            previous = _key_at(keys, lane, i - 1, j - 1, m, diag_hi)
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
        if i > 0 and j - i + 1 <= diag_hi:
            previous = _key_at(keys, lane, i - 1, j, m, diag_hi)
            if previous + gap_step == key:
                key = previous
                i -= 1
                continue
        if j > 0 and j - 1 - i >= diag_lo:
            previous = _key_at(keys, lane, i, j - 1, m, diag_hi)
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
    for b in range(n_blocks // 2):  # runs were collected from the end backwards
        for c in range(3):
            swap = blocks_out[b, c]
            blocks_out[b, c] = blocks_out[n_blocks - 1 - b, c]
            blocks_out[n_blocks - 1 - b, c] = swap
    return start_i, start_j, matches, n_blocks


@jit
def _stored_keys(key_scratch, n, m, diag_lo, diag_hi):
    """A (n + m + 1, width, 1) view of key_scratch for the stored anti-diagonals."""
    width = _diagonal_width(n, m, diag_lo, diag_hi)
    return key_scratch[: (n + m + 1) * width].reshape((n + m + 1, width, 1))


@jit
def stored_cells(n, m, diag_lo, diag_hi):
    """Keys stored to trace back an n x m region."""
    return (n + m + 1) * _diagonal_width(n, m, diag_lo, diag_hi)


@jit
def _align_region(query, target, diag_lo, diag_hi, match_score, mismatch_score, gap_score,
                  buffers, key_scratch, blocks_out, want_blocks):
    """Best alignment restricted to diag_lo <= j - i <= diag_hi, with its blocks.

    Without ``want_blocks`` there is no traceback: the best key holds everything else.

    Returns ``(score, query_start, query_end, target_start, target_end, matches,
    n_blocks)``; the empty alignment when no cell scores above zero.
    """
    n = query.shape[0]
    m = target.shape[0]
    query_bits, start_bits, score_shift = key_shifts(n, m)
    match_step = match_score * (1 << score_shift) + (1 << start_bits)
    mismatch_step = mismatch_score * (1 << score_shift)
    gap_step = gap_score * (1 << score_shift)
    store = want_blocks and stored_cells(n, m, diag_lo, diag_hi) <= STORE_CELLS
    keys = _stored_keys(key_scratch, n if store else 0, m if store else 0, diag_lo, diag_hi)
    best_key, end_i, end_j = _dp_pass(
        query, target, diag_lo, diag_hi, match_step, mismatch_step, gap_step,
        query_bits, buffers, keys, store,
    )
    score, start_i, start_j, matches = decode_key(best_key, n, m, query_bits, start_bits,
                                                  score_shift)
    if score <= 0:
        return 0, 0, 0, 0, 0, 0, 0
    if not want_blocks:
        return score, start_i, end_i, start_j, end_j, matches, 0
    if store:
        start_i, start_j, matches, n_blocks = traceback(
            query, target, diag_lo, diag_hi, match_step, mismatch_step, gap_step,
            query_bits, start_bits, keys, -1, end_i, end_j, blocks_out,
        )
        return score, start_i, end_i, start_j, end_j, matches, n_blocks
    # second pass, with storage, on the rectangle of the optimal alignment
    sub_query = query[start_i:end_i]
    sub_target = target[start_j:end_j]
    sub_n = end_i - start_i
    sub_m = end_j - start_j
    shift = start_j - start_i
    sub_lo = max(diag_lo - shift, -sub_n)
    sub_hi = min(diag_hi - shift, sub_m)
    query_bits, start_bits, score_shift = key_shifts(sub_n, sub_m)
    match_step = match_score * (1 << score_shift) + (1 << start_bits)
    mismatch_step = mismatch_score * (1 << score_shift)
    gap_step = gap_score * (1 << score_shift)
    # may exceed the scratch; bounded by the whole region's cells, which the caller's
    # choice of full DP (cell budget) or band bounds
    rectangle_scratch = np.empty(stored_cells(sub_n, sub_m, sub_lo, sub_hi), dtype=np.int64)
    keys = _stored_keys(rectangle_scratch, sub_n, sub_m, sub_lo, sub_hi)
    # (np.bool_: a literal True would compile a second _dp_pass for this one call)
    sub_key, sub_end_i, sub_end_j = _dp_pass(
        sub_query, sub_target, sub_lo, sub_hi, match_step, mismatch_step, gap_step,
        query_bits, buffers, keys, np.bool_(True),
    )
    sub_start_i, sub_start_j, matches, n_blocks = traceback(
        sub_query, sub_target, sub_lo, sub_hi, match_step, mismatch_step, gap_step,
        query_bits, start_bits, keys, -1, sub_end_i, sub_end_j, blocks_out,
    )
    for b in range(n_blocks):
        blocks_out[b, 0] += start_i
        blocks_out[b, 1] += start_j
    return score, start_i, end_i, start_j, end_j, matches, n_blocks


@jit
def problem_region(n, m, band_width, full_cell_budget, auto_band_width):
    """Decide full DP or band for an n x m problem before seeding.

    Returns ``(banded, half_width)``.
    """
    if band_width < 0 and stored_cells(n, m, -n, m) <= full_cell_budget:
        return False, 0
    return True, band_width if band_width >= 0 else auto_band_width


@jit
def _align_region_keyed(query, target, diag_lo, diag_hi, match_score, mismatch_score,
                        gap_score, buffers, key_scratch, blocks_out, want_blocks,
                        key_bits_limit):
    """The region with 64-bit keys when they fit ``key_bits_limit``, else two-word keys
    (``_sw_wide.py``; same alignment, more time)."""
    n = query.shape[0]
    m = target.shape[0]
    if key_bits(n, m, match_score, max(-mismatch_score, -gap_score)) <= key_bits_limit:
        return _align_region(query, target, diag_lo, diag_hi, match_score, mismatch_score,
                             gap_score, buffers, key_scratch, blocks_out, want_blocks)
    return align_region_wide(query, target, diag_lo, diag_hi, match_score, mismatch_score,
                             gap_score, blocks_out, want_blocks)


@jit
def needs_band_or_wide_keys(n, m, band_width, full_cell_budget, auto_band_width,
                            match_score, max_penalty, key_bits_limit):
    """Whether :func:`align_one` takes band seeding or two-word keys for an n x m pair
    (``max_penalty``: the largest of ``-mismatch_score`` and ``-gap_score``): a banded
    problem, or a full DP whose 64-bit keys need more than ``key_bits_limit`` bits. Pairs
    that need neither can be aligned by :func:`align_one_full_dp`."""
    if n == 0 or m == 0:
        return False
    if problem_region(n, m, band_width, full_cell_budget, auto_band_width)[0]:
        return True
    return key_bits(n, m, match_score, max_penalty) > key_bits_limit


@jit
def align_one_full_dp(query, target, band_width, full_cell_budget, auto_band_width,
                      match_score, mismatch_score, gap_score, buffers, key_scratch,
                      blocks_out, want_blocks, key_bits_limit=MAX_KEY_BITS):
    """:func:`align_one` for a pair that needs neither band seeding nor two-word keys
    (:func:`needs_band_or_wide_keys` is false; a pair that does raises RuntimeError).

    It does not reference the band and two-word-key kernels, so a caller that only
    aligns such pairs does not compile them (the drivers choose it from their plan)."""
    n = query.shape[0]
    m = target.shape[0]
    if n == 0 or m == 0:
        return 0, 0, 0, 0, 0, 0, 0
    if needs_band_or_wide_keys(n, m, band_width, full_cell_budget, auto_band_width,
                               match_score, max(-mismatch_score, -gap_score),
                               key_bits_limit):
        raise RuntimeError("citekit internal error: a pair that needs band seeding or "
                           "two-word keys reached align_one_full_dp")
    return _align_region(query, target, -n, m, match_score, mismatch_score, gap_score,
                         buffers, key_scratch, blocks_out, want_blocks)


@jit
def align_one(query, target, band_width, full_cell_budget, auto_band_width,
              match_score, mismatch_score, gap_score, buffers, key_scratch, blocks_out,
              want_blocks, key_bits_limit=MAX_KEY_BITS):
    """Align one query with one target; see :func:`citekit.kernels.smith_waterman`.

    ``band_width < 0`` selects the automatic mode. Scratch: ``buffers`` of shape
    ``(5, >= max(n, m) + 3)`` and ``key_scratch`` of at least ``STORE_CELLS`` keys.
    A region whose 64-bit keys would need more than ``key_bits_limit`` bits is aligned
    with two-word keys (the tests lower the limit to force that path).
    Returns ``(score, query_start, query_end, target_start, target_end, matches,
    n_blocks)``, all zeros for the empty alignment.
    """
    n = query.shape[0]
    m = target.shape[0]
    if n == 0 or m == 0:
        return 0, 0, 0, 0, 0, 0, 0
    banded, half_width = problem_region(n, m, band_width, full_cell_budget, auto_band_width)
    if not banded:
        return _align_region_keyed(query, target, -n, m, match_score, mismatch_score,
                                   gap_score, buffers, key_scratch, blocks_out, want_blocks,
                                   key_bits_limit)
    has_shared, diag_lo, diag_hi = seeded_band(query, target, half_width)
    if not has_shared:
        return 0, 0, 0, 0, 0, 0, 0
    # only target columns the band touches take part: translate the problem to them
    first_column = max(0, diag_lo)
    last_column = min(m, n + diag_hi)
    score, qs, qe, ts, te, matches, n_blocks = _align_region_keyed(
        query, target[first_column:last_column], diag_lo - first_column,
        diag_hi - first_column, match_score, mismatch_score, gap_score,
        buffers, key_scratch, blocks_out, want_blocks, key_bits_limit,
    )
    if score == 0:
        return 0, 0, 0, 0, 0, 0, 0
    for b in range(n_blocks):
        blocks_out[b, 1] += first_column
    return score, qs, qe, ts + first_column, te + first_column, matches, n_blocks
