"""Batch drivers: many (query, target) pairs per call, ``prange`` over chunks of pairs.

Queries are packed CSR-style (concatenated ids + offsets); target ``t`` is
``target_ids[target_starts[t]:target_ends[t]]``, so targets may overlap or leave gaps (the
pipeline aligns against overlapping passage windows of the corpus's token array without
copying them; the public CSR form passes ``offsets[:-1]`` and ``offsets[1:]``). Small pairs that
share a query are grouped and aligned 8 or 16 at a time (``_lanes.py``); other pairs go one
by one through the anti-diagonal kernel (``_sw.py``). Work items are dealt round-robin to
one worker per thread, which allocates its scratch once; each pair writes only its own
output column and its own slice of the block scratch, so results do not depend on the
number of threads or on scheduling.

The drivers come in three variants (:data:`WORKERS`, :data:`PAIRS_KERNELS`): single
pairs on the full DP with 64-bit keys; with lane groups too; and with band seeding and
two-word keys as well. A kernel compiles every kernel it references, even on a path that
never runs, and the plan (:func:`plan_pairs`) knows which paths a call takes before it
runs, so the caller runs the variant that has only those: a first call on a few pairs
compiles neither the lane kernels nor band seeding nor two-word keys (the first
``align_citations``: 40 signatures fewer, about a seventh of its compile time); a call
that needs them compiles the variant that has them, once.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit, jit_parallel, prange
from citekit.kernels._sort import stable_argsort
from citekit.kernels._lanes import (
    FLOAT_KEY_BITS,
    FLOAT_LANES,
    LANES,
    align_lanes,
    align_lanes_float,
    lane_keys_size,
)
from citekit.kernels._sw import (
    STORE_CELLS,
    align_one,
    align_one_full_dp,
    key_bits,
    problem_region,
)
from citekit.kernels._sw_wide import wide_key_bits

# Pairs whose full DP has at most this many cells are aligned in lanes (see _lanes.py).
LANE_CELLS = 1 << 13


@jit
def _pair_shape(p, query_offsets, target_starts, target_ends, pair_query, pair_target):
    n = query_offsets[pair_query[p] + 1] - query_offsets[pair_query[p]]
    m = target_ends[pair_target[p]] - target_starts[pair_target[p]]
    return n, m


# kinds of work items
SINGLE = 0  # one pair, anti-diagonal kernel
INT_LANES = 1  # up to LANES pairs of one query, int64 lane kernel
FLOAT_LANES_GROUP = 2  # up to FLOAT_LANES pairs of one query, float32 lane kernel


@jit
def plan_ranges(query_offsets, target_starts, target_ends, pair_query, pair_target,
                band_width, match_score, max_penalty):
    """Order pairs into work items: lane groups (same query, similar target lengths) for
    small full-DP pairs, single pairs for the rest.

    A group takes up to FLOAT_LANES pairs in float32 lanes when the keys of its longest
    pair fit FLOAT_KEY_BITS, else up to LANES pairs in int64 lanes; a lone pair is cheaper
    on its own. Returns ``(order, item_offsets, item_kind)``: item ``w`` covers pairs
    ``order[item_offsets[w]:item_offsets[w + 1]]``.
    """
    n_pairs = pair_query.shape[0]
    longest = 1
    for p in range(n_pairs):
        longest = max(longest, _pair_shape(p, query_offsets, target_starts, target_ends,
                                           pair_query, pair_target)[1] + 1)
    sort_key = np.empty(n_pairs, dtype=np.int64)
    n_lane_pairs = 0
    for p in range(n_pairs):
        n, m = _pair_shape(p, query_offsets, target_starts, target_ends, pair_query,
                           pair_target)
        if band_width < 0 and n > 0 and m > 0 and (n + 1) * (m + 1) <= LANE_CELLS:
            sort_key[p] = pair_query[p] * longest + m
            n_lane_pairs += 1
        else:
            sort_key[p] = -1  # single pairs first
    order = stable_argsort(sort_key)
    n_single = n_pairs - n_lane_pairs
    item_offsets = np.empty(n_pairs + 1, dtype=np.int64)
    item_kind = np.empty(n_pairs, dtype=np.int64)
    n_items = 0
    for k in range(n_single):
        item_offsets[n_items] = k
        item_kind[n_items] = SINGLE
        n_items += 1
    k = n_single
    while k < n_pairs:
        query = pair_query[order[k]]
        size = 1
        while (size < FLOAT_LANES and k + size < n_pairs
               and pair_query[order[k + size]] == query):
            size += 1
        # targets ascend in length within a query: the last one is the longest
        n, m = _pair_shape(order[k + size - 1], query_offsets, target_starts, target_ends,
                           pair_query, pair_target)
        kind = FLOAT_LANES_GROUP
        if key_bits(n, m, match_score, max_penalty) > FLOAT_KEY_BITS:
            kind = INT_LANES
            size = min(size, LANES)
        if size == 1:
            kind = SINGLE
        item_offsets[n_items] = k
        item_kind[n_items] = kind
        n_items += 1
        k += size
    item_offsets[n_items] = n_pairs
    return order, item_offsets[: n_items + 1], item_kind[:n_items]


@jit
def _scratch(longest, with_key_scratch=True):
    buffers = np.empty((5, longest + 3), dtype=np.int64)
    key_scratch = np.empty(STORE_CELLS if with_key_scratch else 1, dtype=np.int64)
    return buffers, key_scratch


# Variants of the drivers (an index into WORKERS and PAIRS_KERNELS, chosen from the plan,
# :func:`plan_pairs`): a kernel compiles every kernel it references, even on a path that
# never runs, so each variant references only the paths its switches allow.
#: bit of a variant that aligns lane groups (``_lanes.py``)
WITH_LANES = 1
#: bit of a variant that aligns pairs needing band seeding or two-word keys
#: (:func:`~citekit.kernels._sw.needs_band_or_wide_keys`)
WITH_BAND = 2


def _make_worker(with_lanes, with_band):
    """The serial driver of one variant; the switches are closure constants, so numba
    prunes the paths they exclude before typing (their kernels are not compiled). A work
    item the variant excludes raises RuntimeError (the caller chose the wrong variant)."""

    def align_worker(worker, n_workers, order, item_offsets, item_kind, query_ids,
                     query_offsets, target_ids, target_starts, target_ends, pair_query,
                     pair_target, band_width, full_cell_budget, auto_band_width, match_score,
                     mismatch_score, gap_score, scratch_offsets, rows, block_counts,
                     block_scratch, want_blocks, key_bits_limit):
        """Align the pairs of work items worker, worker + n_workers, ... (serial).

        Items are dealt round-robin (they are sorted by size, so every worker gets a
        similar mix) and scratch is allocated once per worker, sized for its largest item.
        With ``worker=0, n_workers=1`` this is the serial driver (``smith_waterman`` uses
        it). Pairs whose 64-bit keys would need more than ``key_bits_limit`` bits are
        aligned with two-word keys (``_sw_wide.py``). One variant of :data:`WORKERS`.
        """
        n_items = item_kind.shape[0]
        # (np.int64, np.bool_: from literals, type inference would also compile _scratch
        # for Literal[int](0) and Literal[bool](False), a signature never called)
        longest = np.int64(0)
        int_cells = np.int64(0)
        float_cells = np.int64(0)
        has_single = np.bool_(False)
        for item in range(worker, n_items, n_workers):
            kind = item_kind[item]
            for k in range(item_offsets[item], item_offsets[item + 1]):
                n, m = _pair_shape(order[k], query_offsets, target_starts, target_ends,
                                   pair_query, pair_target)
                longest = max(longest, n, m)
                if kind == SINGLE:
                    has_single = True
                elif with_lanes:
                    if kind == INT_LANES:
                        int_cells = max(int_cells, lane_keys_size(n, m, LANES))
                    else:
                        float_cells = max(float_cells, lane_keys_size(n, m, FLOAT_LANES))
        buffers, key_scratch = _scratch(longest, has_single)
        if with_lanes:
            int_keys = np.empty(int_cells, dtype=np.int64)
            float_keys = np.empty(float_cells, dtype=np.float32)
            lane_tokens = np.empty(max(longest, 1) * FLOAT_LANES, dtype=np.int64)
            lane_rows = np.empty((FLOAT_LANES, 6), dtype=np.int64)
            lane_blocks = np.empty((FLOAT_LANES, longest, 3), dtype=np.int64)
            lane_counts = np.empty(FLOAT_LANES, dtype=np.int64)
            lane_targets = np.empty(FLOAT_LANES, dtype=np.int64)
        for item in range(worker, n_items, n_workers):
            first = item_offsets[item]
            last = item_offsets[item + 1]
            if item_kind[item] != SINGLE:
                if with_lanes:
                    # (written here, not in a kernel of its own: the call cost the pairs
                    # benchmark a few percent)
                    qi = pair_query[order[first]]
                    query = query_ids[query_offsets[qi]:query_offsets[qi + 1]]
                    for k in range(first, last):
                        lane_targets[k - first] = pair_target[order[k]]
                    if item_kind[item] == FLOAT_LANES_GROUP:
                        align_lanes_float(
                            query, target_ids, target_starts, target_ends, lane_targets,
                            last - first, match_score, mismatch_score, gap_score, float_keys,
                            lane_tokens, lane_rows, lane_blocks, lane_counts, want_blocks,
                        )
                    else:
                        align_lanes(
                            query, target_ids, target_starts, target_ends, lane_targets,
                            last - first, match_score, mismatch_score, gap_score, int_keys,
                            lane_tokens, lane_rows, lane_blocks, lane_counts, want_blocks,
                        )
                    for k in range(first, last):
                        p = order[k]
                        lane = k - first
                        for c in range(6):
                            rows[c, p] = lane_rows[lane, c]
                        block_counts[p] = lane_counts[lane]
                        for b in range(lane_counts[lane]):
                            for c in range(3):
                                block_scratch[scratch_offsets[p] + b, c] = (
                                    lane_blocks[lane, b, c]
                                )
                    continue
                raise RuntimeError("citekit internal error: a lane group reached an "
                                   "alignment driver compiled without lanes")
            p = order[first]
            qi = pair_query[p]
            ti = pair_target[p]
            query = query_ids[query_offsets[qi]:query_offsets[qi + 1]]
            target = target_ids[target_starts[ti]:target_ends[ti]]
            blocks_out = block_scratch[scratch_offsets[p]:scratch_offsets[p + 1]]
            if with_band:
                aligned = align_one(
                    query, target, band_width, full_cell_budget, auto_band_width,
                    match_score, mismatch_score, gap_score, buffers, key_scratch, blocks_out,
                    want_blocks, key_bits_limit,
                )
            else:
                aligned = align_one_full_dp(
                    query, target, band_width, full_cell_budget, auto_band_width,
                    match_score, mismatch_score, gap_score, buffers, key_scratch, blocks_out,
                    want_blocks, key_bits_limit,
                )
            score, qs, qe, ts, te, matches, n_blocks = aligned
            rows[0, p] = score
            rows[1, p] = qs
            rows[2, p] = qe
            rows[3, p] = ts
            rows[4, p] = te
            rows[5, p] = matches
            block_counts[p] = n_blocks

    name = _variant_name("align_worker", with_lanes, with_band)
    align_worker.__name__ = align_worker.__qualname__ = name
    return jit(align_worker, entry=True)  # (called from Python and from the parallel driver)


def _variant_name(base, with_lanes, with_band):
    """``base``, then ``_lanes`` and ``_band`` for the paths the variant includes: the
    module attribute (and kernel name) of the variant."""
    return base + ("_lanes" if with_lanes else "") + ("_band" if with_band else "")


# Three variants, not four: band seeding takes the one with lanes too (a band is rare, and
# every variant costs the warm-up its own compilation of the worker and parallel driver)
align_worker = _make_worker(False, False)
align_worker_lanes = _make_worker(True, False)
align_worker_lanes_band = _make_worker(True, True)
#: the serial drivers by variant (WITH_LANES | WITH_BAND bits)
WORKERS = (align_worker, align_worker_lanes, align_worker_lanes_band, align_worker_lanes_band)


def _make_pairs_kernel(with_lanes, with_band):
    """The parallel driver of one variant: it calls the serial driver of the same variant
    (the switches prune the others before typing)."""

    def align_pairs_kernel(n_workers, order, item_offsets, item_kind, query_ids,
                           query_offsets, target_ids, target_starts, target_ends, pair_query,
                           pair_target, band_width, full_cell_budget, auto_band_width,
                           match_score, mismatch_score, gap_score, scratch_offsets, rows,
                           block_counts, block_scratch, want_blocks, key_bits_limit):
        """Fill column ``rows[:, p] = (score, qs, qe, ts, te, matches)`` and the blocks of
        every pair.

        The parallel loop only starts ``n_workers`` workers (one per thread); all work is
        in the serial driver of the same variant, which keeps the parallel compilation
        small.
        """
        for worker in prange(n_workers):
            # (prange numbers its iterations as uint64: one specialization of the worker,
            # not two)
            if with_lanes and with_band:
                align_worker_lanes_band(
                    np.int64(worker), n_workers, order, item_offsets, item_kind, query_ids,
                    query_offsets, target_ids, target_starts, target_ends, pair_query,
                    pair_target, band_width, full_cell_budget, auto_band_width, match_score,
                    mismatch_score, gap_score, scratch_offsets, rows, block_counts,
                    block_scratch, want_blocks, key_bits_limit,
                )
            elif with_lanes:
                align_worker_lanes(
                    np.int64(worker), n_workers, order, item_offsets, item_kind, query_ids,
                    query_offsets, target_ids, target_starts, target_ends, pair_query,
                    pair_target, band_width, full_cell_budget, auto_band_width, match_score,
                    mismatch_score, gap_score, scratch_offsets, rows, block_counts,
                    block_scratch, want_blocks, key_bits_limit,
                )
            else:
                align_worker(
                    np.int64(worker), n_workers, order, item_offsets, item_kind, query_ids,
                    query_offsets, target_ids, target_starts, target_ends, pair_query,
                    pair_target, band_width, full_cell_budget, auto_band_width, match_score,
                    mismatch_score, gap_score, scratch_offsets, rows, block_counts,
                    block_scratch, want_blocks, key_bits_limit,
                )

    name = _variant_name("align_pairs_kernel", with_lanes, with_band)
    align_pairs_kernel.__name__ = align_pairs_kernel.__qualname__ = name
    return jit_parallel(align_pairs_kernel)


align_pairs_kernel = _make_pairs_kernel(False, False)
align_pairs_kernel_lanes = _make_pairs_kernel(True, False)
align_pairs_kernel_lanes_band = _make_pairs_kernel(True, True)
#: the parallel drivers by variant (WITH_LANES | WITH_BAND bits)
PAIRS_KERNELS = (align_pairs_kernel, align_pairs_kernel_lanes, align_pairs_kernel_lanes_band,
                 align_pairs_kernel_lanes_band)


# error codes of prepare_pairs, decoded into messages by the Python wrapper
OK = 0
BAD_QUERY_OFFSET_ENDS = 1
DECREASING_QUERY_OFFSETS = 2
BAD_TARGET_OFFSET_ENDS = 3
DECREASING_TARGET_OFFSETS = 4
PAIR_QUERY_OUT_OF_RANGE = 5
PAIR_TARGET_OUT_OF_RANGE = 6


@jit
def _offsets_error(offsets, n_ids, bad_ends, decreasing):
    if offsets[0] != 0 or offsets[offsets.shape[0] - 1] != n_ids:
        return bad_ends
    for k in range(offsets.shape[0] - 1):
        if offsets[k + 1] < offsets[k]:
            return decreasing
    return OK


@jit
def _indices_error(indices, n_items, code):
    for index in indices:
        if index < 0 or index >= n_items:
            return code
    return OK


@jit
def prepare_pairs(query_offsets, n_query_ids, target_offsets, n_target_ids, pair_query,
                  pair_target, band_width, full_cell_budget, auto_band_width, match_score,
                  max_penalty, key_bits_limit):
    """Validate the CSR inputs and plan the work, in one call.

    Returns ``(error, widest_bits, widest_pair, scratch_offsets, order, item_offsets,
    item_kind, variant)``: ``error`` is OK or one of the codes above (then the rest is
    empty); the rest as in :func:`plan_pairs`.
    """
    empty = np.zeros(0, dtype=np.int64)
    error = _offsets_error(query_offsets, n_query_ids, BAD_QUERY_OFFSET_ENDS,
                           DECREASING_QUERY_OFFSETS)
    if error == OK:
        error = _offsets_error(target_offsets, n_target_ids, BAD_TARGET_OFFSET_ENDS,
                               DECREASING_TARGET_OFFSETS)
    if error == OK:
        error = _indices_error(pair_query, query_offsets.shape[0] - 1, PAIR_QUERY_OUT_OF_RANGE)
    if error == OK:
        error = _indices_error(pair_target, target_offsets.shape[0] - 1,
                               PAIR_TARGET_OUT_OF_RANGE)
    if error != OK:
        return error, 0, -1, empty, empty, empty, empty, 0
    (widest, widest_pair, scratch_offsets, order, item_offsets, item_kind, _,
     variant) = plan_pairs(
        query_offsets, target_offsets[:-1], target_offsets[1:], pair_query, pair_target,
        band_width, full_cell_budget, auto_band_width, match_score, max_penalty,
        key_bits_limit,
    )
    return OK, widest, widest_pair, scratch_offsets, order, item_offsets, item_kind, variant


@jit(entry=True)  # (called from Python and from the alignment kernels)
def plan_pairs(query_offsets, target_starts, target_ends, pair_query, pair_target,
               band_width, full_cell_budget, auto_band_width, match_score, max_penalty,
               key_bits_limit):
    """Plan the work of valid inputs (targets as ranges, see the module docstring).

    Returns ``(widest_bits, widest_pair, scratch_offsets, order, item_offsets,
    item_kind, cells, variant)``: ``widest_bits`` the widest word of a two-word key any
    pair's region would need (``_sw_wide.wide_key_bits``; a region aligned with one 64-bit
    key needs less); ``scratch_offsets``
    the prefix sums of min(n, m), an upper bound on each pair's number of blocks;
    ``cells`` the sum of n * m (the full DP's size, for the thread decision); ``variant``
    the driver the work needs (an index into :data:`WORKERS` and :data:`PAIRS_KERNELS`):
    WITH_LANES when there is a lane group, WITH_BAND when a pair needs band seeding or
    two-word keys (64-bit keys of more than ``key_bits_limit`` bits); the rest as in
    :func:`plan_ranges`.
    """
    n_pairs = pair_query.shape[0]
    scratch_offsets = np.zeros(n_pairs + 1, dtype=np.int64)
    widest = 0
    widest_pair = -1
    cells = 0
    variant = 0
    full_n = 0  # largest n and m of the pairs aligned with the full DP
    full_m = 0
    for p in range(n_pairs):
        n, m = _pair_shape(p, query_offsets, target_starts, target_ends, pair_query,
                           pair_target)
        cells += n * m
        scratch_offsets[p + 1] = scratch_offsets[p] + min(n, m)
        banded, half_width = problem_region(n, m, band_width, full_cell_budget,
                                            auto_band_width)
        # (banding narrows the region the keys must cover to the band's columns)
        bits = wide_key_bits(n, min(m, n + 2 * half_width) if banded else m, match_score,
                             max_penalty)
        if bits > widest:
            widest = bits
            widest_pair = p
        if n > 0 and m > 0:
            if banded:
                variant |= WITH_BAND
            else:
                full_n = max(full_n, n)
                full_m = max(full_m, m)
    # two-word keys (needs_band_or_wide_keys' other case), checked once: key_bits grows
    # with n and m, so the largest of each covers every pair (the per-pair check took
    # more time than the rest of the plan)
    if full_n > 0 and key_bits(full_n, full_m, match_score, max_penalty) > key_bits_limit:
        variant |= WITH_BAND
    order, item_offsets, item_kind = plan_ranges(query_offsets, target_starts, target_ends,
                                                 pair_query, pair_target, band_width,
                                                 match_score, max_penalty)
    for kind in item_kind:
        if kind != SINGLE:
            variant |= WITH_LANES
            break
    return (widest, widest_pair, scratch_offsets, order, item_offsets, item_kind, cells,
            variant)


@jit
def compact_blocks(scratch_offsets, block_counts, block_scratch):
    """Gather each pair's blocks into one contiguous (n_blocks, 3) array + CSR offsets."""
    n_pairs = block_counts.shape[0]
    block_offsets = np.zeros(n_pairs + 1, dtype=np.int64)
    for p in range(n_pairs):
        block_offsets[p + 1] = block_offsets[p] + block_counts[p]
    blocks = np.empty((block_offsets[n_pairs], 3), dtype=np.int64)
    for p in range(n_pairs):
        for b in range(block_counts[p]):
            for c in range(3):
                blocks[block_offsets[p] + b, c] = block_scratch[scratch_offsets[p] + b, c]
    return block_offsets, blocks
