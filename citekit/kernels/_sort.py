"""One stable int64 argsort shared by every kernel.

numba compiles each ``np.sort`` / ``np.argsort`` variant it meets separately, and each
costs seconds of JIT time; one small bottom-up merge sort used everywhere keeps the
first-call compile time of the package low.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit


@jit
def stable_argsort(values):
    """Indices that sort ``values`` ascending; equal values keep their input order."""
    n = values.shape[0]
    order = np.arange(n)
    if n < 2:
        return order
    buffer = np.empty(n, dtype=np.int64)
    # insertion sort of runs of RUN elements, then merge runs of doubling width
    run = 16
    for start in range(0, n, run):
        stop = min(start + run, n)
        for k in range(start + 1, stop):
            index = order[k]
            value = values[index]
            position = k
            while position > start and values[order[position - 1]] > value:
                order[position] = order[position - 1]
                position -= 1
            order[position] = index
    width = run
    source = order
    target = buffer
    while width < n:
        for start in range(0, n, 2 * width):
            middle = min(start + width, n)
            stop = min(start + 2 * width, n)
            left = start
            right = middle
            out = start
            while left < middle and right < stop:
                if values[source[right]] < values[source[left]]:
                    target[out] = source[right]
                    right += 1
                else:
                    target[out] = source[left]
                    left += 1
                out += 1
            while left < middle:
                target[out] = source[left]
                left += 1
                out += 1
            while right < stop:
                target[out] = source[right]
                right += 1
                out += 1
        source, target = target, source
        width *= 2
    return source
