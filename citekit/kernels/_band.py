"""Seeding the alignment band from the diagonals of shared tokens (numba, serial).

A token pair ``query[i] == target[j]`` lies on diagonal ``j - i``. The band of half-width
``w`` is centred on the diagonal ``c`` whose window ``[c - w, c + w]`` holds the most
shared-token pairs (ties: the smallest ``c``, i.e. the earliest target position). Counting
uses a hash table of the query's tokens and takes runs of a repeated token whole, so it
costs O(n log n + m + pairs of runs): never n * m unless nearly every pair of runs
matches (a text repeating a short period of several tokens, e.g. ``a b a b ...``).
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._sort import stable_argsort

_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing


@jit
def _diagonal_counts(query, target):
    """``counts[d + n]`` = number of pairs ``query[i] == target[j]`` with ``j - i == d``.

    Equal tokens in a row are taken as runs: a run of ``r`` equal query tokens and a run
    of ``s`` equal target tokens add a trapezoid of pairs to the diagonals (the
    convolution of two boxes), written as four entries of a second difference; so a
    repeated token costs one step per pair of runs, not per pair of tokens.
    """
    n = query.shape[0]
    m = target.shape[0]
    counts = np.zeros(n + m + 1, dtype=np.int64)
    if n == 0 or m == 0:
        return counts
    order = stable_argsort(query)
    sorted_tokens = query[order]
    # runs of equal consecutive query tokens, grouped by token (ascending positions)
    run_start = np.empty(n, dtype=np.int64)
    run_length = np.empty(n, dtype=np.int64)
    group_first_run = np.empty(n + 1, dtype=np.int64)
    group_token = np.empty(n, dtype=np.int64)
    n_runs = 0
    n_groups = 0
    for k in range(n):
        position = order[k]
        if k == 0 or sorted_tokens[k] != sorted_tokens[k - 1]:
            group_first_run[n_groups] = n_runs
            group_token[n_groups] = sorted_tokens[k]
            n_groups += 1
        elif position == run_start[n_runs - 1] + run_length[n_runs - 1]:
            run_length[n_runs - 1] += 1
            continue
        run_start[n_runs] = position
        run_length[n_runs] = 1
        n_runs += 1
    group_first_run[n_groups] = n_runs
    table_bits = 1
    while (1 << table_bits) < 8 * n_groups:  # sparse: absent tokens mostly hit an empty slot
        table_bits += 1
    table_mask = (1 << table_bits) - 1
    table = np.full(1 << table_bits, -1, dtype=np.int64)
    shift = np.uint64(64 - table_bits)
    for g in range(n_groups):
        slot = np.int64((np.uint64(group_token[g]) * _HASH_MULTIPLIER) >> shift)
        while table[slot] != -1:
            slot = (slot + 1) & table_mask
        table[slot] = g
    second = np.zeros(n + m + 3, dtype=np.int64)  # second difference of counts
    j = 0
    while j < m:
        token = target[j]
        s = 1
        while j + s < m and target[j + s] == token:
            s += 1
        slot = np.int64((np.uint64(token) * _HASH_MULTIPLIER) >> shift)
        while True:
            g = table[slot]
            if g == -1:
                break
            if group_token[g] == token:
                for run in range(group_first_run[g], group_first_run[g + 1]):
                    r = run_length[run]
                    # diagonals j - i of the pairs run from j - (start + r - 1) up
                    low = j - run_start[run] - r + 1 + n
                    second[low] += 1
                    second[low + r] -= 1
                    second[low + s] -= 1
                    second[low + r + s] += 1
                break
            slot = (slot + 1) & table_mask
        j += s
    slope = 0
    value = 0
    for k in range(n + m + 1):
        slope += second[k]
        value += slope
        counts[k] = value
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
