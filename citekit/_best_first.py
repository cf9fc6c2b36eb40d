"""Bookkeeping kernels of the pipeline's best-first alignment (numba).

:meth:`citekit.pipeline.Pipeline._align_best_first` aligns candidate pairs in one or more
aligner calls (rounds, plus a retry on content words). Doing the per-call bookkeeping
with numpy took a dozen array operations per call (scatter six result columns, expand
blocks per pair, a weighted bincount, rebuilding the per-pair block arrays), each costing
microseconds of call overhead on arrays of a few hundred pairs: more than the alignment
kernel itself for a typical answer. These kernels do the same in one pass each.

Blocks are never copied per round: every aligner call's blocks stay in their own array
(an *arena*), and each pair points to its latest blocks by ``(block_start, block_count)``
in the concatenation of the arenas; :func:`assemble_blocks` gathers them once into the
CSR form of :class:`~citekit.kernels.PairAlignments`.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit

__all__ = ["assemble_blocks", "record_alignments"]


@jit
def record_alignments(
    pairs,
    rows,
    block_counts,
    block_starts,
    blocks,
    arena_base,
    query_offsets,
    pair_query,
    content_prefix,
    content_present,
    aligned_rows,
    pair_block_start,
    pair_block_count,
    content_matched,
):
    """Store one aligner call's results for ``pairs`` and list the pairs to retry.

    For call row ``k`` and pair ``p = pairs[k]``: ``aligned_rows[:, p] = rows[:, k]``
    (score, query_start, query_end, target_start, target_end, matches); the pair's blocks
    are ``blocks[block_starts[k]:block_starts[k] + block_counts[k]]`` (rows ``(query_pos,
    target_pos, length)``), recorded as starting at ``arena_base + block_starts[k]`` of the
    arenas' concatenation; ``content_matched[p]`` counts the content tokens of the query
    inside those blocks (``content_prefix`` is the prefix sum of the query tokens' content
    flags). A later call for the same pair overwrites all of it.

    Returns the pairs (in call order) that matched no content token although their
    passage contains some (``content_present[p] >= 1``): their best alignment is a run of
    stop words, and the pipeline aligns them again on content words only.
    """
    n = pairs.shape[0]
    retry = np.empty(n, dtype=np.int64)
    n_retry = 0
    for k in range(n):
        p = pairs[k]
        for c in range(6):
            aligned_rows[c, p] = rows[c, k]
        start = block_starts[k]
        count = block_counts[k]
        pair_block_start[p] = arena_base + start
        pair_block_count[p] = count
        query_base = query_offsets[pair_query[p]]
        matched = 0.0
        for b in range(start, start + count):
            begin = query_base + blocks[b, 0]
            matched += content_prefix[begin + blocks[b, 2]] - content_prefix[begin]
        content_matched[p] = matched
        if matched == 0 and content_present[p] >= 1:
            retry[n_retry] = p
            n_retry += 1
    return retry[:n_retry]


@jit
def assemble_blocks(pair_block_start, pair_block_count, arena):
    """Gather every pair's blocks from ``arena`` into ``(block_offsets, blocks)``: pair
    ``p`` owns ``blocks[block_offsets[p]:block_offsets[p + 1]]``, which are
    ``arena[pair_block_start[p]:pair_block_start[p] + pair_block_count[p]]``."""
    n_pairs = pair_block_start.shape[0]
    block_offsets = np.zeros(n_pairs + 1, dtype=np.int64)
    for p in range(n_pairs):
        block_offsets[p + 1] = block_offsets[p] + pair_block_count[p]
    blocks = np.empty((block_offsets[n_pairs], 3), dtype=np.int64)
    for p in range(n_pairs):
        source = pair_block_start[p]
        destination = block_offsets[p]
        for b in range(pair_block_count[p]):
            for c in range(3):
                blocks[destination + b, c] = arena[source + b, c]
    return block_offsets, blocks
