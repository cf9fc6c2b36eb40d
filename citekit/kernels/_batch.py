"""Batch driver: many (query, target) pairs in one call, ``prange`` over pairs.

Queries and targets are packed CSR-style (concatenated ids + offsets). Each pair writes
only its own output row and its own slice of the block scratch buffer, so the result does
not depend on the number of threads or on scheduling.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit, jit_parallel, prange
from citekit.kernels._sw import align_one, key_bits


@jit_parallel
def align_pairs_kernel(
    query_ids, query_offsets, target_ids, target_offsets, pair_query, pair_target,
    band_width, full_cell_budget, auto_band_width, match_score, mismatch_score, gap_score,
    scratch_offsets, rows, block_counts, block_scratch,
):
    """Fill ``rows[p] = (score, qs, qe, ts, te, matches)`` and the blocks of every pair."""
    for p in prange(pair_query.shape[0]):
        qi = pair_query[p]
        ti = pair_target[p]
        query = query_ids[query_offsets[qi]:query_offsets[qi + 1]]
        target = target_ids[target_offsets[ti]:target_offsets[ti + 1]]
        blocks_out = block_scratch[scratch_offsets[p]:scratch_offsets[p + 1]]
        score, qs, qe, ts, te, matches, n_blocks = align_one(
            query, target, band_width, full_cell_budget, auto_band_width,
            match_score, mismatch_score, gap_score, blocks_out,
        )
        rows[p, 0] = score
        rows[p, 1] = qs
        rows[p, 2] = qe
        rows[p, 3] = ts
        rows[p, 4] = te
        rows[p, 5] = matches
        block_counts[p] = n_blocks


@jit
def widest_key_bits(query_offsets, target_offsets, pair_query, pair_target, match_score,
                    max_penalty):
    """Largest key width over all pairs and the index of the pair that needs it."""
    widest = 0
    widest_pair = -1
    for p in range(pair_query.shape[0]):
        n = query_offsets[pair_query[p] + 1] - query_offsets[pair_query[p]]
        m = target_offsets[pair_target[p] + 1] - target_offsets[pair_target[p]]
        bits = key_bits(n, m, match_score, max_penalty)
        if bits > widest:
            widest = bits
            widest_pair = p
    return widest, widest_pair


@jit
def block_scratch_offsets(query_offsets, target_offsets, pair_query, pair_target):
    """Prefix sums of min(n, m) per pair: an upper bound on each pair's number of blocks."""
    offsets = np.zeros(pair_query.shape[0] + 1, dtype=np.int64)
    for p in range(pair_query.shape[0]):
        n = query_offsets[pair_query[p] + 1] - query_offsets[pair_query[p]]
        m = target_offsets[pair_target[p] + 1] - target_offsets[pair_target[p]]
        offsets[p + 1] = offsets[p] + min(n, m)
    return offsets


@jit
def compact_blocks(scratch_offsets, block_counts, block_scratch):
    """Gather each pair's blocks into one contiguous (n_blocks, 3) array + CSR offsets."""
    n_pairs = block_counts.shape[0]
    block_offsets = np.zeros(n_pairs + 1, dtype=np.int64)
    for p in range(n_pairs):
        block_offsets[p + 1] = block_offsets[p] + block_counts[p]
    blocks = np.empty((block_offsets[n_pairs], 3), dtype=np.int64)
    for p in range(n_pairs):
        for k in range(block_counts[p]):
            for c in range(3):
                blocks[block_offsets[p] + k, c] = block_scratch[scratch_offsets[p] + k, c]
    return block_offsets, blocks
