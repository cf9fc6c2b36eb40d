"""One query against up to 8 or 16 small targets at once (numba, serial).

The full DP runs row by row over the query with ``lanes`` targets side by side
(``tokens[j, lane]``, ``keys[i, j, lane]``). Each row is two flat loops over
``x = j * lanes + lane``: first the diagonal, up and restart candidates (independent, so
SIMD over lanes and columns), then the left neighbour, a dependency at distance ``lanes``
that is still SIMD over the lanes. Shorter targets are padded with a token absent from
the query: padding cells only lose score, so they never hold a lane's best key and never
feed a real cell (columns only grow along a path). All lanes share the key layout of the
longest target; the packing order is the same, so every lane gets exactly the
single-pair alignment.

The kernel is compiled twice from one Python function: LANES int64 keys, and, for pairs
whose keys fit FLOAT_KEY_BITS, FLOAT_LANES float32 keys (twice the lanes per SIMD
register; small integers are exact in float32, so results are identical).
"""

from __future__ import annotations

import numpy as np

from citekit._copy_kernel import copy_range
from citekit._jit import jit
from citekit.kernels._sw import NEG_KEY, decode_key, key_shifts, traceback

#: int64 keys, 8 per 512-bit vector: any small pair
LANES = 8
#: float32 keys, 16 per vector, for pairs whose keys fit FLOAT_KEY_BITS: every key is an
#: integer below 2**23 in magnitude, which float32 holds, adds and compares exactly
FLOAT_LANES = 16
FLOAT_KEY_BITS = 23


@jit
def _absent_token(query):
    """An int64 value that does not occur in ``query`` (query is not empty)."""
    smallest = query[0]
    largest = query[0]
    for value in query:
        smallest = min(smallest, value)
        largest = max(largest, value)
    if smallest > np.iinfo(np.int64).min:
        return smallest - 1
    if largest < np.iinfo(np.int64).max:
        return largest + 1
    candidate = smallest + 1  # both extremes occur: probe upwards, at most n values
    while True:
        found = False
        for value in query:
            if value == candidate:
                found = True
                break
        if not found:
            return candidate
        candidate += 1


@jit
def lane_keys_size(n, longest, lanes):
    """Keys of scratch a group needs: (n + 1) * (longest + 1) * lanes."""
    return (n + 1) * (longest + 1) * lanes


def _make_align_lanes(lanes, key_type):
    """The lane kernel for ``lanes`` lanes of ``key_type`` keys (int64 or float32)."""

    @jit
    def align_lanes(query, target_ids, target_starts, target_ends, targets, n_targets,
                    match_score, mismatch_score, gap_score, key_scratch, token_scratch, rows,
                    blocks_out, block_counts, want_blocks):
        """Align ``query`` with targets ``targets[:n_targets]`` (n_targets <= lanes); target
        ``t`` is ``target_ids[target_starts[t]:target_ends[t]]``.

        ``key_scratch`` holds ``key_type`` values. Writes ``rows[lane] = (score, qs, qe,
        ts, te, matches)``, blocks of lane ``lane`` to ``blocks_out[lane]`` (shape
        ``(lanes, >= min(n, m), 3)``) and their count to ``block_counts[lane]``; without
        ``want_blocks`` there is no traceback (the best key holds the rest).
        """
        n = query.shape[0]
        longest = 0
        for lane in range(n_targets):
            t = targets[lane]
            longest = max(longest, target_ends[t] - target_starts[t])
        query_bits, start_bits, score_shift = key_shifts(n, longest)
        match_step = match_score * (1 << score_shift) + (1 << start_bits)
        mismatch_step = mismatch_score * (1 << score_shift)
        gap_step = gap_score * (1 << score_shift)
        # the DP runs in key_type arithmetic only (no promotion to a wider type)
        match_key = key_type(match_step)
        mismatch_key = key_type(mismatch_step)
        gap_key = key_type(gap_step)
        one_key = key_type(1)

        padding = _absent_token(query)
        tokens = token_scratch[: max(longest, 1) * lanes].reshape((max(longest, 1), lanes))
        lengths = np.zeros(lanes, dtype=np.int64)
        for lane in range(lanes):
            if lane < n_targets:
                t = targets[lane]
                start = target_starts[t]
                lengths[lane] = target_ends[t] - start
                for j in range(lengths[lane]):
                    tokens[j, lane] = target_ids[start + j]
            for j in range(lengths[lane], longest):
                tokens[j, lane] = padding
        size = lane_keys_size(n, longest, lanes)
        keys = key_scratch[:size].reshape((n + 1, longest + 1, lanes))
        flat_keys = key_scratch[:size]
        flat_tokens = tokens.reshape(tokens.shape[0] * lanes)
        row_width = (longest + 1) * lanes
        # restart key of cell (i, j) in lane l: ((m_l - j) << query_bits) + (n - i), for
        # the current row i at index j * lanes + l (decremented once per row)
        restart = np.empty(row_width, dtype=key_type)
        for j in range(longest + 1):
            for lane in range(lanes):
                restart[j * lanes + lane] = ((lengths[lane] - j) << query_bits) + n
        copy_range(flat_keys, 0, restart, 0, row_width)
        running = np.empty(row_width, dtype=key_type)
        row_best = np.empty((n + 1, lanes), dtype=key_type)
        for i in range(1, n + 1):
            token = query[i - 1]
            previous = flat_keys[(i - 1) * row_width:i * row_width]
            current = flat_keys[i * row_width:(i + 1) * row_width]
            for x in range(row_width):
                restart[x] -= one_key
            for x in range(lanes):
                current[x] = restart[x]
                running[x] = current[x]
            # x = j * lanes + lane. First everything but the left neighbour: no dependency
            # along the row, so this loop is SIMD over lanes and columns alike.
            for x in range(lanes, row_width):
                diag = previous[x - lanes] + (
                    match_key if flat_tokens[x - lanes] == token else mismatch_key
                )
                current[x] = max(max(diag, previous[x] + gap_key), restart[x])
            # then the left neighbour: a dependency at distance lanes, still SIMD over
            # lanes; `running` keeps each lane's row maximum
            for x in range(lanes, row_width):
                key = max(current[x], current[x - lanes] + gap_key)
                current[x] = key
                running[x] = max(running[x - lanes], key)
            for lane in range(lanes):
                row_best[i, lane] = running[row_width - lanes + lane]
        # each lane's best key, reached first at the smallest i + j, then the smallest j
        best = np.empty(lanes, dtype=np.int64)
        best_i = np.zeros(lanes, dtype=np.int64)
        best_j = np.zeros(lanes, dtype=np.int64)
        for lane in range(n_targets):
            lane_best = row_best[1, lane] if n > 0 else key_type(NEG_KEY)
            for i in range(2, n + 1):
                lane_best = max(lane_best, row_best[i, lane])
            best[lane] = np.int64(lane_best)
            best_sum = -1
            for i in range(1, n + 1):
                if row_best[i, lane] != lane_best:
                    continue
                for j in range(longest + 1):
                    if keys[i, j, lane] == lane_best:
                        if best_sum < 0 or i + j < best_sum or (
                            i + j == best_sum and j < best_j[lane]
                        ):
                            best_sum = i + j
                            best_i[lane] = i
                            best_j[lane] = j
                        break
        for lane in range(n_targets):
            t = targets[lane]
            target = target_ids[target_starts[t]:target_ends[t]]
            score = best[lane] >> score_shift if n > 0 else 0
            if score <= 0 or target.shape[0] == 0:
                for c in range(6):
                    rows[lane, c] = 0
                block_counts[lane] = 0
                continue
            if want_blocks:
                start_i, start_j, matches, n_blocks = traceback(
                    query, target, -n, longest, match_step, mismatch_step, gap_step,
                    query_bits, start_bits, keys, lane, best_i[lane], best_j[lane],
                    blocks_out[lane],
                )
            else:
                _, start_i, start_j, matches = decode_key(
                    best[lane], n, target.shape[0], query_bits, start_bits, score_shift
                )
                n_blocks = 0
            rows[lane, 0] = score
            rows[lane, 1] = start_i
            rows[lane, 2] = best_i[lane]
            rows[lane, 3] = start_j
            rows[lane, 4] = best_j[lane]
            rows[lane, 5] = matches
            block_counts[lane] = n_blocks

    return align_lanes


align_lanes = _make_align_lanes(LANES, np.int64)
align_lanes_float = _make_align_lanes(FLOAT_LANES, np.float32)
