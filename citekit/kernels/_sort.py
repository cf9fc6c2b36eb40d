"""One stable argsort shared by every kernel (int64 keys, and float64 ones in retrieval).

numba compiles each ``np.sort`` / ``np.argsort`` variant it meets separately, and each
costs seconds of JIT time; one small bottom-up merge sort used everywhere keeps the
first-call compile time of the package low (retrieval moving to it from numba's sorts:
42 -> 32 s cold). NaN keys end up in no particular order.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit

_RUN = 16  # runs sorted by insertion before merging


@jit
def stable_argsort(values):
    """Indices that sort ``values`` ascending; equal values keep their input order."""
    n = values.shape[0]
    # sort (key, index) pairs directly: no indirection in the comparisons
    keys = values.copy()
    order = np.arange(n)
    for start in range(0, n, _RUN):
        stop = min(start + _RUN, n)
        for k in range(start + 1, stop):
            key = keys[k]
            index = order[k]
            position = k
            while position > start and keys[position - 1] > key:
                keys[position] = keys[position - 1]
                order[position] = order[position - 1]
                position -= 1
            keys[position] = key
            order[position] = index
    if n <= _RUN:
        return order
    other_keys = np.empty(n, dtype=keys.dtype)
    other_order = np.empty(n, dtype=np.int64)
    width = _RUN
    while width < n:
        for start in range(0, n, 2 * width):
            middle = min(start + width, n)
            stop = min(start + 2 * width, n)
            left = start
            right = middle
            out = start
            while left < middle and right < stop:
                if keys[right] < keys[left]:
                    other_keys[out] = keys[right]
                    other_order[out] = order[right]
                    right += 1
                else:
                    other_keys[out] = keys[left]
                    other_order[out] = order[left]
                    left += 1
                out += 1
            while left < middle:
                other_keys[out] = keys[left]
                other_order[out] = order[left]
                left += 1
                out += 1
            while right < stop:
                other_keys[out] = keys[right]
                other_order[out] = order[right]
                right += 1
                out += 1
        keys, other_keys = other_keys, keys
        order, other_order = other_order, order
        width *= 2
    return order
