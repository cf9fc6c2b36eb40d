"""64-bit FNV-1a: the hash of token keys (token ids), abbreviation keys (the segmenter)
and token spans (the highlighter), defined once.

FNV-1a is simple enough to compute identically inside numba kernels (``uint64``
arithmetic wraps) and in Python (masked to 64 bits), so an id computed by a kernel
equals the one :func:`fnv1a` gives for the same values.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

__all__ = ["FNV_OFFSET", "FNV_PRIME", "FNV_OFFSET_U64", "FNV_PRIME_U64", "fnv1a"]

#: FNV-1a's 64-bit offset basis and prime (Python ints, for Python code).
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
#: The same as ``numpy.uint64``, the type kernels hash in (their products wrap).
FNV_OFFSET_U64 = np.uint64(FNV_OFFSET)
FNV_PRIME_U64 = np.uint64(FNV_PRIME)

_MASK64 = (1 << 64) - 1


def fnv1a(values: Iterable[int]) -> int:
    """64-bit FNV-1a of a sequence of integers (bytes, code points), as kernels compute it.

    Examples
    --------
    >>> hex(fnv1a(b"a"))
    '0xaf63dc4c8601ec8c'
    """
    value = FNV_OFFSET
    for item in values:
        value = ((value ^ item) * FNV_PRIME) & _MASK64
    return value
