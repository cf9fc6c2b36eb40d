"""Kernels of the alignment rounds: the bookkeeping of the best-first alignment.

The pipeline aligns candidate pairs in one or more aligner calls (rounds, plus a retry on
content words). Doing the per-call bookkeeping with numpy took a dozen array operations
per call (scatter six result columns, expand blocks per pair, a weighted bincount,
rebuilding the per-pair block arrays), each costing microseconds of call overhead on
arrays of a few hundred pairs: more than the alignment kernel itself for a typical
answer. These kernels do the same in one pass each.

Each call's blocks are appended to one growing array (the *arena*) and each pair points
to its latest blocks by ``(block_start, block_count)``; :func:`assemble_blocks` gathers
them into the CSR form of :class:`~citekit.kernels.PairAlignments` when a round needs
them. :func:`close_queries` closes the sentences whose unaligned pairs can no longer
change their citations.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._ranking import _walk

__all__ = [
    "assemble_blocks",
    "close_queries",
    "record_alignments",
]


@jit
def record_alignments(
    pairs,
    rows,
    block_counts,
    block_starts,
    blocks,
    query_offsets,
    pair_query,
    content_prefix,
    word_prefix,
    min_letter_run,
    content_present,
    aligned_rows,
    pair_block_start,
    pair_block_count,
    content_matched,
    arena,
    arena_size,
):
    """Store one aligner call's results for ``pairs`` and list the pairs to retry.

    For call row ``k`` and pair ``p = pairs[k]``: ``aligned_rows[:, p] = rows[:, k]``
    (score, query_start, query_end, target_start, target_end, matches); the pair's blocks
    ``blocks[block_starts[k]:block_starts[k] + block_counts[k]]`` (rows ``(query_pos,
    target_pos, length)``) are appended to ``arena`` after its first ``arena_size`` rows
    (the caller makes room for ``block_counts.sum()`` more) and located by
    ``pair_block_start[p]``, ``pair_block_count[p]``; ``content_matched[p]`` counts the
    content tokens of the query inside those blocks (``content_prefix`` is the prefix sum
    of the query tokens' content flags), but in a block of fewer than ``min_letter_run``
    tokens (and than the query's) only its content words (``word_prefix``: the same
    without single letters of Thai, kana, ..., which two in a row match by chance). A
    later call for the same pair overwrites all of it (its old blocks stay in the arena,
    unused).

    Returns the pairs (in call order) that matched no content token although their
    passage contains some (``content_present[p] >= 1``): their best alignment is a run of
    stop words, and the pipeline aligns them again on content words only.
    """
    n = pairs.shape[0]
    retry = np.empty(n, dtype=np.int64)
    n_retry = 0
    end = arena_size
    for k in range(n):
        p = pairs[k]
        for c in range(6):
            aligned_rows[c, p] = rows[c, k]
        count = block_counts[k]
        pair_block_start[p] = end
        pair_block_count[p] = count
        query_base = query_offsets[pair_query[p]]
        # (a sentence shorter than a run: a block of all its tokens)
        letter_run = min(min_letter_run, query_offsets[pair_query[p] + 1] - query_base)
        matched = 0.0
        for b in range(count):
            source = block_starts[k] + b
            for c in range(3):
                arena[end + b, c] = blocks[source, c]
            begin = query_base + blocks[source, 0]
            length = blocks[source, 2]
            if length >= letter_run:
                matched += content_prefix[begin + length] - content_prefix[begin]
            else:
                matched += word_prefix[begin + length] - word_prefix[begin]
        end += count
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


@jit
def close_queries(
    open_query,
    limit,
    query_first,
    order,
    score_bound,
    ranked,
    ranked_bounds,
    final,
    passage_source,
    char_start,
    char_end,
    top_k,
    max_per_source,
    pool_size,
):
    """The close test of a best-first round, for every open query (updates
    ``open_query`` and ``limit`` in place).

    Query ``q`` has aligned its first ``limit[q]`` pairs of ``order[query_first[q]:
    query_first[q + 1]]`` (most promising first). It closes when none is left, or when
    its accepted pairs (``ranked[ranked_bounds[q]:ranked_bounds[q + 1]]``, best first)
    whose ``final`` score beats ``score_bound`` of its next unaligned pair already give
    ``top_k`` citations and ``pool_size`` evidence candidates, walked as
    :func:`choose_all` walks them (duplicate evidence
    ``(source, char_start, char_end)`` skipped, at most ``max_per_source`` citations per
    source). Otherwise its limit grows fourfold.

    Why a kernel: the same walk in Python cost a list, a set and a dict per open query
    per round, more than the alignment itself on batches of many sentences.
    """
    chosen = np.empty(top_k, dtype=np.int64)
    judged = np.empty(pool_size, dtype=np.int64)
    for q in range(open_query.shape[0]):
        if not open_query[q]:
            continue
        next_rank = limit[q]
        if next_rank >= query_first[q + 1] - query_first[q]:
            open_query[q] = False
            continue
        best_rest = score_bound[order[query_first[q] + next_rank]]
        n_chosen, n_judged = _walk(
            ranked, ranked_bounds[q], ranked_bounds[q + 1], True, final, best_rest,
            passage_source, char_start, char_end, top_k, max_per_source, pool_size, chosen,
            judged,
        )
        if n_chosen >= top_k and n_judged >= pool_size:
            open_query[q] = False
        else:
            limit[q] *= 4
