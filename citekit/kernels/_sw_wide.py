"""Smith-Waterman with two-word keys: the fallback for regions too large for one int64.

The 64-bit kernel (``_sw.py``) packs ``(score, matches, m - target_start, n -
query_start)`` into one int64; beyond about 32,000 x 32,000 tokens in the aligned region
the fields no longer fit. Here the same four fields are kept in two int64 words compared
lexicographically: ``high = score << match_bits | matches`` and ``low = (m - target_start)
<< query_bits | (n - query_start)``. The DP, the choice of the best cell (the largest key,
reached first at the smallest ``i + j`` and then the smallest ``j``) and the traceback
preference (diagonal, then up, then left) are those of the 64-bit kernel, so both give
the same alignment wherever the 64-bit one applies (the tests force small problems onto
this kernel and compare them with the reference).

The region is swept row by row over its band of diagonals. Instead of keys, one byte per
cell of the band records which predecessor the traceback would take, so memory is
``(n + 1) * (diag_hi - diag_lo + 1)`` bytes with blocks and ``O(band)`` without; Both
words fit while ``match_bits + bit_length(match_score * min(n, m) + 1) <= 61`` and
``bit_length(n) + bit_length(m) <= 61`` (:func:`wide_key_bits`; with the default scores,
regions of up to about a billion tokens a side).
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit

# far below any reachable high word; adding a score step cannot overflow
_NEG_HIGH = -(1 << 62)
# traceback directions stored per cell
_START = 0
_DIAGONAL = 1
_UP = 2
_LEFT = 3


@jit
def _bit_length(value):
    bits = 0
    while value > 0:
        bits += 1
        value >>= 1
    return bits


@jit
def wide_key_bits(n, m, match_score, max_penalty):
    """Bits (sign excluded) the wider of the two words of an n x m region needs."""
    high = _bit_length(min(n, m)) + _bit_length(max(match_score * min(n, m) + 1, max_penalty))
    return max(high, _bit_length(n) + _bit_length(m))


@jit
def _greater(high_a, low_a, high_b, low_b):
    return high_a > high_b or (high_a == high_b and low_a > low_b)


@jit
def align_region_wide(query, target, diag_lo, diag_hi, match_score, mismatch_score,
                      gap_score, blocks_out, want_blocks):
    """Best alignment of cells ``diag_lo <= j - i <= diag_hi``, as ``_sw._align_region``.

    Returns ``(score, query_start, query_end, target_start, target_end, matches,
    n_blocks)``; the empty alignment when no cell scores above zero.
    """
    n = query.shape[0]
    m = target.shape[0]
    query_bits = _bit_length(n)
    match_bits = _bit_length(min(n, m))
    match_step = match_score * (1 << match_bits) + 1
    mismatch_step = mismatch_score * (1 << match_bits)
    gap_step = gap_score * (1 << match_bits)
    width = diag_hi - diag_lo + 1
    # row buffers indexed by c + 1, c = j - i - diag_lo; guards at 0 and width + 1
    previous_high = np.full(width + 2, _NEG_HIGH, dtype=np.int64)
    previous_low = np.zeros(width + 2, dtype=np.int64)
    current_high = np.full(width + 2, _NEG_HIGH, dtype=np.int64)
    current_low = np.zeros(width + 2, dtype=np.int64)
    directions = np.zeros((n + 1 if want_blocks else 0, width), dtype=np.uint8)
    best_high = _NEG_HIGH
    best_low = np.int64(0)
    best_i = -1
    best_j = -1
    for i in range(n + 1):
        for c in range(width + 2):
            current_high[c] = _NEG_HIGH
            current_low[c] = 0
        j_first = max(0, i + diag_lo)
        j_last = min(m, i + diag_hi)
        for j in range(j_first, j_last + 1):
            c = j - i - diag_lo + 1
            # restart: the empty alignment starting here
            high = np.int64(0)
            low = ((m - j) << query_bits) + (n - i)
            direction = _START
            if i > 0 and j > 0:
                step = match_step if query[i - 1] == target[j - 1] else mismatch_step
                diagonal_high = previous_high[c] + step
                diagonal_low = previous_low[c]
                if not _greater(high, low, diagonal_high, diagonal_low):
                    high, low, direction = diagonal_high, diagonal_low, _DIAGONAL
            if i > 0:  # up: cell (i - 1, j), one diagonal higher in the previous row
                up_high = previous_high[c + 1] + gap_step
                up_low = previous_low[c + 1]
                if _greater(up_high, up_low, high, low):
                    high, low, direction = up_high, up_low, _UP
                elif up_high == high and up_low == low and direction == _START:
                    direction = _UP
            if j > 0:  # left: cell (i, j - 1), one diagonal lower in this row
                left_high = current_high[c - 1] + gap_step
                left_low = current_low[c - 1]
                if _greater(left_high, left_low, high, low):
                    high, low, direction = left_high, left_low, _LEFT
                elif left_high == high and left_low == low and direction == _START:
                    direction = _LEFT
            current_high[c] = high
            current_low[c] = low
            if want_blocks:
                directions[i, c - 1] = direction
            if _greater(high, low, best_high, best_low) or (
                high == best_high and low == best_low
                and (i + j < best_i + best_j or (i + j == best_i + best_j and j < best_j))
            ):
                best_high, best_low, best_i, best_j = high, low, i, j
        current_high, previous_high = previous_high, current_high
        current_low, previous_low = previous_low, current_low
    score = best_high >> match_bits
    if score <= 0:
        return 0, 0, 0, 0, 0, 0, 0
    matches = best_high & ((1 << match_bits) - 1)
    start_i = n - (best_low & ((1 << query_bits) - 1))
    start_j = m - (best_low >> query_bits)
    if not want_blocks:
        return score, start_i, best_i, start_j, best_j, matches, 0
    n_blocks = _trace(query, target, directions, diag_lo, start_i, start_j, best_i, best_j,
                      blocks_out)
    return score, start_i, best_i, start_j, best_j, matches, n_blocks


@jit
def _trace(query, target, directions, diag_lo, start_i, start_j, end_i, end_j, blocks_out):
    """Follow the stored directions from the end cell to the start; write the runs of
    matches to ``blocks_out`` in increasing order and return how many there are."""
    i = end_i
    j = end_j
    n_blocks = 0
    run_length = 0
    run_q = -1
    run_t = -1
    while i != start_i or j != start_j:
        direction = directions[i, j - i - diag_lo]
        if direction == _DIAGONAL:
            i -= 1
            j -= 1
            if query[i] == target[j]:
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
        elif direction == _UP:
            i -= 1
        elif direction == _LEFT:
            j -= 1
        else:
            raise RuntimeError("citekit internal error: wide traceback lost its path")
    if run_length > 0:
        blocks_out[n_blocks, 0] = run_q
        blocks_out[n_blocks, 1] = run_t
        blocks_out[n_blocks, 2] = run_length
        n_blocks += 1
    for b in range(n_blocks // 2):  # runs were collected from the end backwards
        for column in range(3):
            swap = blocks_out[b, column]
            blocks_out[b, column] = blocks_out[n_blocks - 1 - b, column]
            blocks_out[n_blocks - 1 - b, column] = swap
    return n_blocks
