"""Copying ranges of arrays inside kernels, one element at a time.

numba compiles a slice assignment between arrays (``out[a:b] = values[c:d]``) with its
broadcasting and the formatting of its shape-mismatch error: seconds of the first
compilation of every module that uses one (the segmenter compiled in 30 s with its two,
23 s with loops; the ASCII tokenizer in 15.5 s and 10 s). A loop compiles in a fraction
of that and copies at least as fast (int64, 100 to 1,000,000 elements: 0.09-0.59 against
0.35-0.64 ns per element).
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit

__all__ = ["copy_range", "copy_rows", "gather_ranges_kernel"]


@jit
def copy_range(target, target_start, source, source_start, n):
    """``target[target_start:target_start + n] = source[source_start:source_start + n]``
    (1-D arrays; the ranges must lie inside them and not overlap)."""
    for i in range(n):
        target[target_start + i] = source[source_start + i]


@jit
def copy_rows(target, target_start, source, source_start, n):
    """Rows ``source_start:source_start + n`` of the 2-D ``source`` into rows
    ``target_start:...`` of ``target`` (as many columns; inside both, not overlapping)."""
    for i in range(n):
        for j in range(source.shape[1]):
            target[target_start + i, j] = source[source_start + i, j]


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
