"""The one place where numba JIT options are decided.

Every kernel is decorated with :func:`jit` (serial) or :func:`jit_parallel` (batch drivers
with ``prange``). Compilation is lazy: decorating compiles nothing, and ``import citekit``
does not even import numba (only the kernel modules do, when first used: ``citekit.kernels``,
``citekit._bag``, ``citekit._evidence_kernel``, ``citekit._forms_kernel``,
``citekit._highlight_kernels``, ``citekit._segment_kernel``,
``citekit.tokenizers._ascii_kernel``).

On-disk caching is on by default so a fresh process reuses machine code compiled by an
earlier one; set ``CITEKIT_NUMBA_CACHE=0`` to turn it off (for example on a read-only
install). ``fastmath`` is never used: dynamic-programming kernels depend on exact integer
and sentinel arithmetic.
"""

from __future__ import annotations

import os
from itertools import count
from typing import Any, Callable

import numba
from numba import prange

__all__ = [
    "CACHE", "check_threads", "jit", "jit_parallel", "prange", "run_on_threads", "share_work"
]

CACHE: bool = os.environ.get("CITEKIT_NUMBA_CACHE", "1").strip().lower() not in {
    "0",
    "false",
    "no",
    "off",
}


def jit(func: Callable | None = None, **options: Any) -> Callable:
    """``numba.njit`` with citekit's options (lazy, cached, ``nogil``, no fastmath)."""
    options.setdefault("cache", CACHE)
    options.setdefault("nogil", True)
    decorator = numba.njit(**options)
    return decorator(func) if func is not None else decorator


def jit_parallel(func: Callable | None = None, **options: Any) -> Callable:
    """Like :func:`jit` with ``parallel=True``, for batch drivers that use :data:`prange`."""
    options.setdefault("parallel", True)
    return jit(func, **options)


def check_threads(n_threads: Any) -> int:
    """``n_threads`` as an int from 1 to numba's thread pool (``NUMBA_NUM_THREADS``).

    Raises ``TypeError`` or ``ValueError`` naming ``n_threads``.

    Examples
    --------
    >>> check_threads(1)
    1
    """
    from citekit._validation import check_int

    threads = int(check_int(n_threads, "n_threads", minimum=1))
    if threads > numba.config.NUMBA_NUM_THREADS:
        raise ValueError(
            f"n_threads must be <= {numba.config.NUMBA_NUM_THREADS} (numba's thread pool), "
            f"got {threads}"
        )
    return threads


def run_on_threads(threads: int, kernel: Callable, *arguments: Any) -> Any:
    """``kernel(*arguments)`` (a ``prange`` driver) with numba's thread count set to
    ``threads`` for the call and restored afterwards (untouched when already so).

    Examples
    --------
    >>> run_on_threads(1, lambda: numba.get_num_threads())
    1
    """
    previous = numba.get_num_threads()
    if threads == previous:
        return kernel(*arguments)
    numba.set_num_threads(threads)
    try:
        return kernel(*arguments)
    finally:
        numba.set_num_threads(previous)


def share_work(n_workers: int, n_items: int, task: Callable[[int], Any]) -> None:
    """``task(i)`` for every ``i`` in ``range(n_items)``, on the calling thread and on up to
    ``n_workers - 1`` threads started for the call, each taking the next item from one
    counter (kernels that release the GIL run side by side); return when every item is
    done, raising the first error.

    The threads are the call's own: none is left running, none is inherited by a forked
    worker process. With one worker (or item) the items run on the calling thread alone.

    Examples
    --------
    >>> done = []
    >>> share_work(2, 5, done.append)
    >>> sorted(done)
    [0, 1, 2, 3, 4]
    """
    claim = count()  # the next item (atomic under the GIL)

    def work() -> None:
        while True:
            item = next(claim)
            if item >= n_items:
                return
            task(item)

    n_workers = min(n_workers, n_items)
    if n_workers <= 1:
        work()
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(n_workers - 1) as pool:
        others = [pool.submit(work) for _ in range(n_workers - 1)]
        # (an error here leaves the block once the others have returned)
        work()
        for other in others:
            other.result()
