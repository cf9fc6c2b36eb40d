"""Alignment kernels over integer token ids (numba).

Research users call these directly; the citation pipeline and the highlighter are built
on them. Every function takes lists or 1-D arrays of ints (any integer dtype, any
contiguity), converts them once to contiguous ``int64`` and returns plain Python values or
``int64`` arrays.

Smith-Waterman: definition and tie-breaking
-------------------------------------------
Local alignment with a linear gap penalty: ``match_score`` for an aligned pair of equal
tokens, ``mismatch_score`` for an aligned pair of different tokens, ``gap_score`` for a
token of either side aligned with nothing. Among all alignments with the maximal score,
the returned one has

1. the most matches, then
2. the earliest target start, then
3. the earliest query start, then
4. the shorter span ``(query_end - query_start) + (target_end - target_start)``, then
   the earliest target end, then the earliest query end.

Its path is recovered by a traceback that, at each cell, prefers the diagonal (a query
token aligned with a target token), then up (a query token against a gap), then left
(a target token against a gap). Because penalties are negative, an optimal alignment
starts and ends with a match; a pair with no token in common gives the *empty
alignment* (score 0, every index 0, no blocks).

Banding
-------
With ``band_width=w`` the DP only visits cells whose diagonal ``target_index -
query_index`` lies within ``w`` of a centre diagonal: the centre whose window of width
``2w + 1`` holds the most equal-token pairs (ties: the smallest centre, the earliest target
position). The result equals the full DP whenever the full DP's alignment lies inside the
band. Seeding costs one pass over the target with a hash table of the query's tokens.

Memory and limits
-----------------
The score pass keeps three anti-diagonals; only the rectangle spanned by the optimal
alignment is kept for the traceback, in an anti-diagonal layout of at most
``(n + m + 1) * (min(n, m) + 1)`` keys. With ``band_width=None`` the full DP runs while
that bound is within ``FULL_DP_CELL_BUDGET`` (4,194,304 keys, 32 MiB; e.g. 200 x 20,000
tokens) and a band of half-width ``AUTO_BAND_WIDTH`` is used beyond, so memory stays
O(budget) or O(n x band). Each DP cell is one int64 packing score, matches and start
(that is how ties are broken exactly at no cost) while those fields fit 61 bits (with the
default scores: up to about 32,000 x 32,000 tokens in the aligned region, i.e. the query
and the band's slice of the target). A larger region is aligned with the same four
fields in two int64 words (``score, matches`` and ``target_start, query_start``)
compared lexicographically: the same DP, the same choice of the best cell and the same
traceback preference, hence the same alignment and tie-breaking, at a few times the cost
per cell and one byte per band cell for the traceback (``(n + 1) x (2 x band + 1)`` bytes).
Only a region beyond about a billion tokens a side, which not even two words hold, raises
``ValueError``.

Blocks
------
Without ``return_blocks`` there is no traceback at all: score, start, end and matches are
read from the best cell's packed value.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from citekit._jit import check_threads, entry, run_on_threads
from citekit._validation import check_bool, check_int
from citekit.kernels._batch import (
    PAIRS_KERNELS,
    WITH_BAND,
    WITH_LANES,
    WORKERS,
    compact_blocks,
    plan_pairs,
    prepare_pairs,
)
from citekit.kernels._lcs import lcs_length_kernel, matching_blocks_kernel
from citekit.kernels._sw import MAX_KEY_BITS

__all__ = [
    "AUTO_BAND_WIDTH",
    "FULL_DP_CELL_BUDGET",
    "MAX_SCORE_MAGNITUDE",
    "LocalAlignment",
    "PairAlignments",
    "align_batch",
    "align_pairs",
    "lcs_length",
    "matching_blocks",
    "smith_waterman",
    "warmup",
]

#: Largest traceback store ``(n + m + 1) * (min(n, m) + 1)`` (int64 keys) of a problem
#: aligned with the full DP when ``band_width=None``; larger problems are banded.
FULL_DP_CELL_BUDGET: int = 1 << 22
#: Band half-width used when ``band_width=None`` and the problem exceeds the budget.
AUTO_BAND_WIDTH: int = 64
#: Bound on the magnitude of every score parameter.
MAX_SCORE_MAGNITUDE: int = 1000


class LocalAlignment(NamedTuple):
    """One local alignment: half-open token ranges of query and target.

    Attributes
    ----------
    score : int
        Alignment score (0 for the empty alignment).
    query_start, query_end : int
        Aligned range of the query, ``query[query_start:query_end]``.
    target_start, target_end : int
        Aligned range of the target.
    matches : int
        Number of aligned pairs of equal tokens.
    blocks : tuple of (int, int, int) or None
        Runs of consecutive matches as ``(query_start, target_start, length)`` in order,
        or None when blocks were not requested.
    """

    score: int
    query_start: int
    query_end: int
    target_start: int
    target_end: int
    matches: int
    blocks: tuple[tuple[int, int, int], ...] | None = None


class PairAlignments(NamedTuple):
    """Alignments of many pairs: one row per pair in every ``int64`` array.

    Attributes
    ----------
    score, query_start, query_end, target_start, target_end, matches : ndarray of int64
        As in :class:`LocalAlignment`, one entry per pair; positions are relative to the
        pair's own query and target.
    block_offsets : ndarray of int64
        ``blocks[block_offsets[p]:block_offsets[p + 1]]`` are the blocks of pair ``p``
        (shape ``(n_pairs + 1,)``; empty when blocks were not requested).
    blocks : ndarray of int64, shape (n_blocks, 3)
        Rows ``(query_pos, target_pos, length)``; empty when blocks were not requested.
    """

    score: np.ndarray
    query_start: np.ndarray
    query_end: np.ndarray
    target_start: np.ndarray
    target_end: np.ndarray
    matches: np.ndarray
    block_offsets: np.ndarray
    blocks: np.ndarray


def _token_array(values: Any, name: str) -> np.ndarray:
    """``values`` as a contiguous 1-D int64 array; TypeError/ValueError naming ``name``."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of ints, got {type(values).__name__}")
    if isinstance(values, np.ndarray):
        array = values
    else:
        try:
            array = np.asarray(values)
        except (ValueError, TypeError) as error:
            raise TypeError(f"{name} must be a sequence of ints: {error}") from None
        if array.size == 0 and array.dtype.kind == "f":
            array = array.astype(np.int64)  # an empty list converts to float64
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must contain ints, got dtype {array.dtype}")
    if array.dtype == np.uint64 and array.size and array.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} holds values above the int64 range")
    return np.ascontiguousarray(array, dtype=np.int64)


def _offsets_array(offsets: Any, name: str) -> np.ndarray:
    array = _token_array(offsets, name)
    if array.size == 0:
        raise ValueError(f"{name} must hold at least one offset (0)")
    return array


_PREPARE_ERRORS = {
    1: "query_offsets must start at 0 and end at len(query_ids) = {n_query_ids}",
    2: "query_offsets must be non-decreasing",
    3: "target_offsets must start at 0 and end at len(target_ids) = {n_target_ids}",
    4: "target_offsets must be non-decreasing",
    5: "pair_query holds indices outside [0, {n_queries})",
    6: "pair_target holds indices outside [0, {n_targets})",
}


def _scores(match_score: Any, mismatch_score: Any, gap_score: Any) -> tuple[int, int, int]:
    match = check_int(match_score, "match_score", minimum=1, maximum=MAX_SCORE_MAGNITUDE)
    mismatch = check_int(
        mismatch_score, "mismatch_score", minimum=-MAX_SCORE_MAGNITUDE, maximum=-1
    )
    gap = check_int(gap_score, "gap_score", minimum=-MAX_SCORE_MAGNITUDE, maximum=-1)
    return match, mismatch, gap


def align_pairs(
    query_ids: Any,
    query_offsets: Any,
    target_ids: Any,
    target_offsets: Any,
    pair_query: Any,
    pair_target: Any,
    *,
    match_score: int = 2,
    mismatch_score: int = -1,
    gap_score: int = -1,
    band_width: int | None = None,
    return_blocks: bool = False,
    n_threads: int | None = None,
) -> PairAlignments:
    """Smith-Waterman alignment of many (query, target) pairs in one parallel call.

    Queries and targets are packed CSR-style: query ``k`` is
    ``query_ids[query_offsets[k]:query_offsets[k + 1]]``, and likewise for targets.
    Pair ``p`` aligns query ``pair_query[p]`` with target ``pair_target[p]`` exactly as
    :func:`smith_waterman` would. Pairs are spread over threads; the output does not
    depend on the number of threads.

    Parameters
    ----------
    query_ids, target_ids : array_like of int
        Concatenated token ids of all queries / all targets.
    query_offsets, target_offsets : array_like of int
        CSR offsets: non-decreasing, first 0, last ``len(query_ids)`` / ``len(target_ids)``.
    pair_query, pair_target : array_like of int
        Equal-length arrays of query and target indices, one entry per pair.
    match_score, mismatch_score, gap_score : int
        Scoring, as in :func:`smith_waterman`.
    band_width : int or None
        As in :func:`smith_waterman`, applied to every pair.
    return_blocks : bool
        Also return the runs of exact matches of every pair.
    n_threads : int or None
        Threads to use (default: numba's current setting).

    Returns
    -------
    PairAlignments
        One row per pair; positions relative to the pair's own query and target.

    Raises
    ------
    TypeError
        Non-integer ids, offsets or indices; non-int scores, band width or thread count.
    ValueError
        Non-1-D inputs, malformed offsets, indices out of range, unequal pair arrays,
        scores or band width out of range, too many threads, or a pair too long even for
        two-word keys (see the module documentation).

    Examples
    --------
    >>> from citekit.kernels import align_pairs
    >>> result = align_pairs([1, 2, 3, 7, 8], [0, 3, 5], [9, 1, 2, 3, 7, 8], [0, 6],
    ...                      [0, 1], [0, 0], return_blocks=True)
    >>> result.score.tolist(), result.target_start.tolist(), result.target_end.tolist()
    ([6, 4], [1, 4], [4, 6])
    >>> result.blocks[result.block_offsets[1]:result.block_offsets[2]].tolist()
    [[0, 4, 2]]
    """
    threads = check_int(n_threads, "n_threads", minimum=1, allow_none=True)
    check_bool(return_blocks, "return_blocks")
    return _align_pairs_checked(
        _token_array(query_ids, "query_ids"), _offsets_array(query_offsets, "query_offsets"),
        _token_array(target_ids, "target_ids"), _offsets_array(target_offsets, "target_offsets"),
        _token_array(pair_query, "pair_query"), _token_array(pair_target, "pair_target"),
        match_score, mismatch_score, gap_score, band_width, return_blocks, n_threads=threads,
    )


def _align_pairs_checked(
    query_ids: np.ndarray,
    query_offsets: np.ndarray,
    target_ids: np.ndarray,
    target_offsets: np.ndarray,
    pair_query: np.ndarray,
    pair_target: np.ndarray,
    match_score: Any,
    mismatch_score: Any,
    gap_score: Any,
    band_width: Any,
    return_blocks: bool,
    n_threads: int | None = None,
    serial: bool = False,
    key_bits_limit: int = MAX_KEY_BITS,
    exact_variant: bool = False,
) -> PairAlignments:
    """align_pairs on int64 arrays: validates the rest, then runs the (parallel or serial)
    driver. Regions whose 64-bit keys would need more than ``key_bits_limit`` bits are
    aligned with two-word keys (the tests lower it to force that path). ``exact_variant``:
    run the driver variant of the plan even when a variant that covers it is compiled
    already (see :func:`_driver`; the warm-up compiles every variant so)."""
    if len(pair_query) != len(pair_target):
        raise ValueError(
            f"pair_query and pair_target must have equal lengths, got {len(pair_query)} "
            f"and {len(pair_target)}"
        )
    match, mismatch, gap = _scores(match_score, mismatch_score, gap_score)
    width = check_int(band_width, "band_width", minimum=0, allow_none=True)
    band = -1 if width is None else width
    (error, widest, widest_pair, scratch_offsets, order, item_offsets, item_kind,
     variant) = prepare_pairs(
        query_offsets, len(query_ids), target_offsets, len(target_ids), pair_query,
        pair_target, band, FULL_DP_CELL_BUDGET, AUTO_BAND_WIDTH, match, max(-mismatch, -gap),
        key_bits_limit,
    )
    if error:
        raise ValueError(_PREPARE_ERRORS[error].format(
            n_query_ids=len(query_ids), n_target_ids=len(target_ids),
            n_queries=len(query_offsets) - 1, n_targets=len(target_offsets) - 1,
        ))
    _check_key_bits(widest, "the inputs" if serial else f"query and target of pair {widest_pair}")
    n_pairs = len(pair_query)
    rows = np.zeros((6, n_pairs), dtype=np.int64)
    block_counts = np.zeros(n_pairs, dtype=np.int64)
    block_scratch = np.empty((scratch_offsets[-1] if return_blocks else 0, 3), dtype=np.int64)
    if not return_blocks:
        scratch_offsets = np.zeros(n_pairs + 1, dtype=np.int64)
    arguments = (
        order, item_offsets, item_kind, query_ids, query_offsets, target_ids,
        target_offsets[:-1], target_offsets[1:], pair_query, pair_target, band,
        FULL_DP_CELL_BUDGET, AUTO_BAND_WIDTH, match, mismatch, gap, scratch_offsets, rows,
        block_counts, block_scratch, return_blocks, key_bits_limit,
    )
    if serial:
        _driver(WORKERS, variant, exact_variant)(0, 1, *arguments)
    else:
        _run_parallel(n_threads, variant, *arguments, exact_variant=exact_variant)
    if return_blocks:
        block_offsets, blocks = compact_blocks(scratch_offsets, block_counts, block_scratch)
    else:
        block_offsets = np.zeros(0, dtype=np.int64)
        blocks = np.zeros((0, 3), dtype=np.int64)
    return PairAlignments(*rows, block_offsets, blocks)


def align_ranges_unchecked(
    query_ids: np.ndarray,
    query_offsets: np.ndarray,
    target_ids: np.ndarray,
    target_starts: np.ndarray,
    target_ends: np.ndarray,
    pair_query: np.ndarray,
    pair_target: np.ndarray,
    match_score: int,
    mismatch_score: int,
    gap_score: int,
    band_width: int | None,
    n_threads: int | None,
    parallel_min_cells: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`align_pairs` with blocks, for the pipeline's trusted inputs.

    Target ``t`` is ``target_ids[target_starts[t]:target_ends[t]]`` (ranges may overlap:
    the pipeline passes its corpus's token array and passage windows, so no target is
    copied). All arrays must already be contiguous int64, offsets and indices valid and
    the scores checked (:class:`~citekit.config.CitationConfig` does): only the bound of
    the two-word keys is checked. Skipping :func:`align_pairs`'s conversions and checks
    and returning the blocks uncompacted saves the per-call overhead that dominated small batches.

    ``n_threads=None`` runs on one thread when the pairs have fewer than
    ``parallel_min_cells`` DP cells in all (waking worker threads costs more than such a
    batch takes), else on numba's current thread count. Results never depend on it.

    Returns ``(rows, block_counts, block_starts, blocks)``: ``rows`` of shape ``(6,
    n_pairs)`` as the fields of :class:`PairAlignments`; pair ``p``'s blocks are
    ``blocks[block_starts[p]:block_starts[p] + block_counts[p]]``.
    """
    band = -1 if band_width is None else band_width
    (widest, widest_pair, scratch_offsets, order, item_offsets, item_kind, cells,
     variant) = plan_pairs(
        query_offsets, target_starts, target_ends, pair_query, pair_target, band,
        FULL_DP_CELL_BUDGET, AUTO_BAND_WIDTH, match_score, max(-mismatch_score, -gap_score),
        MAX_KEY_BITS,
    )
    _check_key_bits(widest, f"query and target of pair {widest_pair}")
    n_pairs = len(pair_query)
    rows = np.zeros((6, n_pairs), dtype=np.int64)
    block_counts = np.zeros(n_pairs, dtype=np.int64)
    blocks = np.empty((scratch_offsets[-1], 3), dtype=np.int64)
    arguments = (
        order, item_offsets, item_kind, query_ids, query_offsets, target_ids, target_starts,
        target_ends, pair_query, pair_target, band, FULL_DP_CELL_BUDGET, AUTO_BAND_WIDTH,
        match_score, mismatch_score, gap_score, scratch_offsets, rows, block_counts, blocks,
        True, MAX_KEY_BITS,
    )
    if n_threads is None and cells < parallel_min_cells:
        _driver(WORKERS, variant)(0, 1, *arguments)
    else:
        _run_parallel(n_threads, variant, *arguments)
    return rows, block_counts, scratch_offsets[:-1], blocks


def _run_parallel(
    n_threads: int | None, variant: int, *arguments: Any, exact_variant: bool = False
) -> None:
    """Run the pair driver ``variant`` (the plan's, see
    :func:`~citekit.kernels._batch.plan_pairs`; ``exact_variant`` as in :func:`_driver`)
    on ``n_threads`` threads (default: numba's current setting).

    One thread runs the serial worker directly (no parallel launch); otherwise numba's
    thread count is set for the call and restored afterwards.
    """
    import numba

    threads = numba.get_num_threads() if n_threads is None else check_threads(n_threads)
    if threads == 1:
        _driver(WORKERS, variant, exact_variant)(0, 1, *arguments)
    else:
        run_on_threads(threads, _driver(PAIRS_KERNELS, variant, exact_variant), threads,
                       *arguments)


def _driver(kernels: tuple, variant: int, exact_variant: bool = False) -> Any:
    """``kernels[variant]`` (``_batch.WORKERS`` or ``PAIRS_KERNELS``), or, when this process
    has not compiled or loaded that one yet but has one whose paths include it, that one
    (not with ``exact_variant``): the results are the same, and a call needing fewer paths
    than an earlier one compiles nothing more."""
    chosen = kernels[variant]
    # (what Python calls: a kernel's entry twin; plain functions under NUMBA_DISABLE_JIT
    # have no signatures)
    if exact_variant or getattr(entry(chosen), "signatures", True):
        return chosen
    for other, kernel in enumerate(kernels):
        if other & variant == variant and entry(kernel).signatures:
            return kernel
    return chosen


def align_batch(
    query_ids: Any,
    target_ids: Any,
    target_offsets: Any,
    *,
    match_score: int = 2,
    mismatch_score: int = -1,
    gap_score: int = -1,
    band_width: int | None = None,
    return_blocks: bool = False,
    n_threads: int | None = None,
) -> PairAlignments:
    """Align one query against many targets packed CSR-style.

    Target ``k`` is ``target_ids[target_offsets[k]:target_offsets[k + 1]]``; row ``k`` of
    the result is ``smith_waterman(query_ids, target k)``.

    Parameters
    ----------
    query_ids : array_like of int
        The query's token ids.
    target_ids, target_offsets : array_like of int
        Concatenated targets and their CSR offsets.
    match_score, mismatch_score, gap_score, band_width, return_blocks, n_threads
        As in :func:`align_pairs`.

    Returns
    -------
    PairAlignments
        One row per target.

    Examples
    --------
    >>> from citekit.kernels import align_batch
    >>> result = align_batch([4, 5, 6], [4, 5, 6, 9, 5, 6], [0, 3, 4, 6])
    >>> result.score.tolist(), result.matches.tolist()
    ([6, 0, 4], [3, 0, 2])
    """
    query = _token_array(query_ids, "query_ids")
    targets = _token_array(target_ids, "target_ids")
    offsets = _offsets_array(target_offsets, "target_offsets")
    threads = check_int(n_threads, "n_threads", minimum=1, allow_none=True)
    check_bool(return_blocks, "return_blocks")
    n_targets = len(offsets) - 1
    return _align_pairs_checked(
        query, np.array([0, len(query)]), targets, offsets, np.zeros(n_targets, dtype=np.int64),
        np.arange(n_targets, dtype=np.int64), match_score, mismatch_score, gap_score,
        band_width, return_blocks, n_threads=threads,
    )


def smith_waterman(
    query_ids: Any,
    target_ids: Any,
    *,
    match_score: int = 2,
    mismatch_score: int = -1,
    gap_score: int = -1,
    band_width: int | None = None,
    return_blocks: bool = False,
) -> LocalAlignment:
    """Best local alignment of two token-id sequences (Smith-Waterman, linear gaps).

    Among the alignments with the maximal score the one returned has the most matches,
    then the earliest target start, then the earliest query start, then the shorter span
    (then the earliest target end, then query end); its traceback prefers diagonal, then
    up (query token against a gap), then left (target token against a gap). See the
    module documentation for banding and the cell budget.

    Parameters
    ----------
    query_ids, target_ids : array_like of int
        Token ids (lists or 1-D integer arrays of any dtype/contiguity).
    match_score : int
        Score of an aligned pair of equal tokens, in ``[1, 1000]``.
    mismatch_score, gap_score : int
        Score of an aligned pair of different tokens / of a gap, in ``[-1000, -1]``.
    band_width : int or None
        Half-width of the band of diagonals (``>= 0``), centred on the shared-token
        diagonals; None: full DP within ``FULL_DP_CELL_BUDGET``, else ``AUTO_BAND_WIDTH``.
    return_blocks : bool
        Also return the runs of exact matches in ``blocks``.

    Returns
    -------
    LocalAlignment
        Score, half-open token ranges, match count and (optionally) blocks; the empty
        alignment (all zeros) when the sequences share no token.

    Raises
    ------
    TypeError
        Non-integer ids (floats, objects, strings, bools) or non-int parameters.
    ValueError
        Non-1-D ids, scores or band width out of range, or inputs too long even for
        two-word keys (see the module documentation).

    Examples
    --------
    >>> from citekit.kernels import smith_waterman
    >>> smith_waterman([7, 1, 2, 3, 4], [1, 2, 9, 3, 4, 8], return_blocks=True)
    LocalAlignment(score=7, query_start=1, query_end=5, target_start=0, target_end=5, \
matches=4, blocks=((1, 0, 2), (3, 3, 2)))
    >>> smith_waterman([1, 2], [3, 4])
    LocalAlignment(score=0, query_start=0, query_end=0, target_start=0, target_end=0, \
matches=0, blocks=None)
    """
    query = _token_array(query_ids, "query_ids")
    target = _token_array(target_ids, "target_ids")
    check_bool(return_blocks, "return_blocks")
    result = _align_pairs_checked(
        query, np.array([0, len(query)]), target, np.array([0, len(target)]),
        np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), match_score,
        mismatch_score, gap_score, band_width, return_blocks, serial=True,
    )
    score, query_start, query_end, target_start, target_end, matches = result[:6]
    return LocalAlignment(
        int(score[0]), int(query_start[0]), int(query_end[0]), int(target_start[0]),
        int(target_end[0]), int(matches[0]),
        tuple(map(tuple, result.blocks.tolist())) if return_blocks else None,
    )


def _check_key_bits(bits: int, what: str) -> None:
    """Refuse a region even two-word keys cannot hold (about a billion tokens a side)."""
    if bits > MAX_KEY_BITS:
        raise ValueError(
            f"{what} are too long for exact tie-breaking even in two 64-bit words ({bits} "
            f"bits needed, {MAX_KEY_BITS} available); split the inputs"
        )


def lcs_length(a: Any, b: Any) -> int:
    """Length of the longest common subsequence of two token-id sequences.

    Bit-parallel (``ceil(min(len(a), len(b)) / 64)`` words per token of the longer one).

    Parameters
    ----------
    a, b : array_like of int
        Token ids.

    Returns
    -------
    int

    Examples
    --------
    >>> from citekit.kernels import lcs_length
    >>> lcs_length([1, 2, 3, 4, 5], [2, 9, 4, 5, 1])
    3
    >>> lcs_length([], [1, 2])
    0
    """
    return int(lcs_length_kernel(_token_array(a, "a"), _token_array(b, "b")))


def matching_blocks(a: Any, b: Any) -> list[tuple[int, int, int]]:
    """Matching blocks exactly as difflib returns them, computed in numba.

    Equal to ``[tuple(m) for m in difflib.SequenceMatcher(None, a, b,
    autojunk=False).get_matching_blocks()]``: the longest common run (earliest in ``a``,
    then earliest in ``b``), recursively on both sides of it, adjacent blocks merged, and
    the final ``(len(a), len(b), 0)`` sentinel. (These blocks need not form a longest
    common subsequence.)

    Parameters
    ----------
    a, b : array_like of int
        Token ids.

    Returns
    -------
    list of (int, int, int)
        ``(i, j, size)`` with ``a[i:i + size] == b[j:j + size]``, increasing in ``i`` and
        ``j``.

    Examples
    --------
    >>> from citekit.kernels import matching_blocks
    >>> matching_blocks([1, 2, 3, 4, 5], [1, 2, 9, 4, 5])
    [(0, 0, 2), (3, 3, 2), (5, 5, 0)]
    """
    blocks = matching_blocks_kernel(_token_array(a, "a"), _token_array(b, "b"))
    return [(int(i), int(j), int(size)) for i, j, size in blocks.tolist()]


def _warm_drivers() -> None:
    """Run every variant of the pair drivers (``_batch.WORKERS`` and ``PAIRS_KERNELS``),
    serially and on numba's threads, on tiny inputs whose plan needs that variant: a first
    call compiles only the variant its pairs need, a warm-up all of them."""
    query_ids = np.array([1, 2, 1, 2, 3], dtype=np.int64)
    query_offsets = np.array([0, 2, 5], dtype=np.int64)
    target_ids = np.array([2, 1, 2, 1, 2, 3], dtype=np.int64)
    target_offsets = np.array([0, 3, 6], dtype=np.int64)
    # (pairs, band_width, key_bits_limit) by variant: one pair; a lane group (two pairs of
    # one query); a lane group and a pair whose keys need two words (a banded pair takes
    # that variant too)
    shapes = {
        0: ([0], [0], None, MAX_KEY_BITS),
        WITH_LANES: ([0, 0], [0, 1], None, MAX_KEY_BITS),
        WITH_LANES | WITH_BAND: ([0, 0, 1], [0, 1, 0], None, 0),
    }
    for pairs_query, pairs_target, band_width, key_bits_limit in shapes.values():
        for serial in (True, False):
            _align_pairs_checked(
                query_ids, query_offsets, target_ids, target_offsets,
                np.array(pairs_query, dtype=np.int64), np.array(pairs_target, dtype=np.int64),
                2, -1, -1, band_width, True, serial=serial, key_bits_limit=key_bits_limit,
                exact_variant=True,
            )


def warmup() -> None:
    """Compile (or load from numba's on-disk cache) every kernel of this package.

    Examples
    --------
    >>> from citekit.kernels import warmup
    >>> warmup()
    """
    smith_waterman([1, 2, 3], [1, 2, 3], return_blocks=True)
    _warm_drivers()
    lcs_length([1, 2], [2, 1])
    matching_blocks([1, 2], [2, 1])
