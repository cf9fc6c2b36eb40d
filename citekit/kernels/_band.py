"""Seeding the alignment band from the diagonals of shared tokens (numba, serial).

A token pair ``query[i] == target[j]`` lies on diagonal ``j - i``. The band of half-width
``w`` is centred on the diagonal ``c`` whose window ``[c - w, c + w]`` holds the most
shared-token pairs (ties: the smallest ``c``, i.e. the earliest target position). Counting
uses a hash table of the query's tokens, takes the query's positions of a token as
arithmetic progressions (a run of one token, or ``a`` in ``a b a b ...``) and the
target's in runs, so it costs O(n log n + m + pairs of progressions and runs): never n * m
unless nearly every such pair matches (a text repeating a period longer than eight
tokens).
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._sort import stable_argsort

_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing
# Longest period of a repeating text whose pairs of tokens are counted in trapezoids.
_MAX_PERIOD = 8


@jit
def _progressions(tokens):
    """The positions of every token of ``tokens`` as arithmetic progressions.

    Positions of one token, ascending, are cut greedily into maximal progressions
    ``(start, step, length)`` (a lone position has step 0). Returns ``(group_token,
    group_first, starts, steps, lengths)``: the progressions of token ``group_token[g]``
    are ``group_first[g]:group_first[g + 1]``.
    """
    n = tokens.shape[0]
    order = stable_argsort(tokens)
    group_token = np.empty(n, dtype=np.int64)
    group_first = np.empty(n + 1, dtype=np.int64)
    starts = np.empty(n, dtype=np.int64)
    steps = np.zeros(n, dtype=np.int64)
    lengths = np.empty(n, dtype=np.int64)
    n_groups = 0
    n_progressions = 0
    for k in range(n):
        position = order[k]
        token = tokens[position]
        if k == 0 or token != tokens[order[k - 1]]:
            group_token[n_groups] = token
            group_first[n_groups] = n_progressions
            n_groups += 1
        else:
            last = n_progressions - 1
            if lengths[last] == 1:
                steps[last] = position - starts[last]
                lengths[last] = 2
                continue
            if position == starts[last] + steps[last] * lengths[last]:
                lengths[last] += 1
                continue
        starts[n_progressions] = position
        steps[n_progressions] = 0
        lengths[n_progressions] = 1
        n_progressions += 1
    group_first[n_groups] = n_progressions
    return (group_token[:n_groups], group_first[:n_groups + 1], starts[:n_progressions],
            steps[:n_progressions], lengths[:n_progressions])


@jit
def _diagonal_counts(query, target):
    """``counts[d + n]`` = number of pairs ``query[i] == target[j]`` with ``j - i == d``.

    The query's positions of each token are taken as arithmetic progressions (a run of one
    repeated token has step 1; ``a b a b ...`` gives two of step 2) and the target is read
    in runs of one repeated token. A progression and a run pair up along diagonals ``d0,
    d0 + p, d0 + 2p, ...`` in a trapezoid (the convolution of two boxes) when one of them
    is a single position or both have step 1, written as four entries of a second
    difference of stride ``p``; other pairs are counted pair by pair. So a text repeating
    a period of up to ``_MAX_PERIOD`` tokens costs about one step per target token, not
    one per pair of equal tokens.
    """
    n = query.shape[0]
    m = target.shape[0]
    counts = np.zeros(n + m + 1, dtype=np.int64)
    if n == 0 or m == 0:
        return counts
    q_token, q_first, q_start, q_step, q_length = _progressions(query)
    n_groups = q_token.shape[0]
    widest_stride = 1  # rows of the second differences: strides 1..widest_stride
    for v in range(q_start.shape[0]):
        if q_length[v] >= 3 and q_step[v] <= _MAX_PERIOD:
            widest_stride = max(widest_stride, q_step[v])
    table_bits = 1
    while (1 << table_bits) < 8 * n_groups:  # sparse: absent tokens mostly hit an empty slot
        table_bits += 1
    table_mask = (1 << table_bits) - 1
    table = np.full(1 << table_bits, -1, dtype=np.int64)
    shift = np.uint64(64 - table_bits)
    for g in range(n_groups):
        slot = np.int64((np.uint64(q_token[g]) * _HASH_MULTIPLIER) >> shift)
        while table[slot] != -1:
            slot = (slot + 1) & table_mask
        table[slot] = g
    # (longer than counts by the reach of a trapezoid's last entry)
    width = n + m + 2 * widest_stride + 3
    second = np.zeros((widest_stride + 1, width), dtype=np.int64)
    b = 0
    while b < m:
        token = target[b]
        s = 1
        while b + s < m and target[b + s] == token:
            s += 1
        slot = np.int64((np.uint64(token) * _HASH_MULTIPLIER) >> shift)
        g = -1
        while table[slot] != -1:
            if q_token[table[slot]] == token:
                g = table[slot]
                break
            slot = (slot + 1) & table_mask
        if g >= 0:
            for v in range(q_first[g], q_first[g + 1]):
                a = q_start[v]
                p = q_step[v]
                r = q_length[v]
                stride = 0
                if r == 1 or p == 1:
                    stride = 1
                elif s == 1 and r >= 3 and p <= _MAX_PERIOD:
                    stride = p
                if stride:
                    low = b - a - stride * (r - 1) + n
                    row = second[stride]
                    row[low] += 1
                    row[low + stride * r] -= 1
                    row[low + stride * s] -= 1
                    row[low + stride * (r + s)] += 1
                else:
                    for x in range(r):
                        for y in range(s):
                            counts[b + y - a - p * x + n] += 1
        b += s
    for stride in range(1, widest_stride + 1):
        row = second[stride]
        for _ in range(2):  # second difference -> values, along the stride
            for k in range(stride, width):
                row[k] += row[k - stride]
        for k in range(n + m + 1):
            counts[k] += row[k]
    return counts


@jit
def seeded_band(query, target, band_width):
    """Return ``(has_shared_tokens, diag_lo, diag_hi)`` for a band of half-width band_width."""
    n = query.shape[0]
    m = target.shape[0]
    counts = _diagonal_counts(query, target)
    prefix = np.zeros(n + m + 2, dtype=np.int64)
    for k in range(n + m + 1):
        prefix[k + 1] = prefix[k] + counts[k]
    if prefix[n + m + 1] == 0:
        return False, 0, 0
    # window sums for every centre first (a loop without branches), then the first maximum
    n_centers = n + m - 1  # token diagonals run from -(n - 1) to m - 1
    window = np.empty(n_centers, dtype=np.int64)
    largest = 0
    for c in range(n_centers):
        center_index = c + 1  # index of diagonal -(n - 1) + c in counts is c + 1
        lo = max(center_index - band_width, 0)
        hi = min(center_index + band_width, n + m)
        window[c] = prefix[hi + 1] - prefix[lo]
        largest = max(largest, window[c])
    best_center = 0
    for c in range(n_centers):
        if window[c] == largest:
            best_center = c - (n - 1)
            break
    return True, max(best_center - band_width, -n), min(best_center + band_width, m)
