"""One query against up to 8 or 16 small targets at once (numba, serial).

The full DP runs row by row over the query with ``lanes`` targets side by side
(``keys[i, j, lane]``; target tokens as int32 halves). Each row is one flat loop over
``y = (j - 1) * lanes + lane`` (:func:`_make_lane_rows`): the diagonal, up and restart
candidates, then the left neighbour, a dependency at distance ``lanes`` that is still SIMD
over the lanes. Shorter targets are padded with a token absent from the query: padding
cells only lose score, so they never hold a lane's best key and never feed a real cell
(columns only grow along a path). All lanes share the key layout of the longest target;
the packing order is the same, so every lane gets exactly the single-pair alignment.

The kernel is compiled twice from one Python function: LANES int64 keys, and, for pairs
whose keys fit FLOAT_KEY_BITS, FLOAT_LANES float32 keys (twice the lanes per SIMD
register; small integers are exact in float32, so results are identical).
"""

from __future__ import annotations

import numpy as np

from citekit.kernels._copy import copy_range
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


def _make_lane_rows(lanes, key_type):
    """The DP rows of the lane kernel for ``lanes`` lanes of ``key_type`` keys."""

    @jit
    def lane_rows(query, low, high, restart, flat_keys, running, row_best, n, row_width,
                  match_key, mismatch_key, gap_key):
        """Fill rows 1..n of ``flat_keys`` (row 0 holds the restart keys) and
        ``row_best[i, lane]``, the best key of row ``i`` in lane ``lane``.

        Row ``i`` is ``flat_keys[i * row_width:(i + 1) * row_width]``, cell ``(i, j)`` of
        lane ``l`` at ``j * lanes + l``. Target token ``(j, l)`` is the int32 pair
        ``(low[(j - 1) * lanes + l], high[...])``; ``restart[x] - i`` is the restart key of
        row ``i``. A separate function: written inline in the lane kernel, the same loop
        measured about twice as slow (16 lanes, 25 x 70 cells; not pinned down further).
        """
        for i in range(1, n + 1):
            token_low = np.int32(query[i - 1] & 0xFFFFFFFF)
            token_high = np.int32(query[i - 1] >> 32)
            previous = flat_keys[(i - 1) * row_width:i * row_width]
            current = flat_keys[i * row_width:(i + 1) * row_width]
            row_offset = key_type(i)
            for x in range(lanes):
                current[x] = restart[x] - row_offset
                running[x] = current[x]
            # One pass, cell (i, j) of a lane at current[y + lanes]: the diagonal, up and
            # restart candidates, then the left neighbour current[y], a dependency at
            # distance `lanes`, still SIMD over the lanes. Indices are y and y + lanes
            # (never negative: no wraparound code), and every cell is stored once with a
            # new value: a second pass that re-reads and rewrites each cell only where its
            # left neighbour wins compiles to a masked store, microcoded on x86 (that
            # layout took four times as long). `running` keeps each lane's row maximum.
            for y in range(row_width - lanes):
                diag = previous[y] + (
                    match_key if (low[y] == token_low) & (high[y] == token_high)
                    else mismatch_key
                )
                up = previous[y + lanes] + gap_key
                key = diag if diag > up else up
                restart_key = restart[y + lanes] - row_offset
                key = key if key > restart_key else restart_key
                left = current[y] + gap_key
                key = key if key > left else left
                current[y + lanes] = key
                run = running[y]
                running[y + lanes] = run if run > key else key
            for lane in range(lanes):
                row_best[i, lane] = running[row_width - lanes + lane]

    return lane_rows


def _make_align_lanes(lanes, key_type):
    """The lane kernel for ``lanes`` lanes of ``key_type`` keys (int64 or float32)."""
    lane_rows = _make_lane_rows(lanes, key_type)

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
        # (np.int64: from a literal 0, type inference would also compile the callees of
        # `longest` for Literal[int](0), a signature that is never called)
        longest = np.int64(0)
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

        padding = _absent_token(query)
        # target token (j, lane) as two int32 halves at j * lanes + lane: 32-bit compares
        # keep the float32 kernel's vectors at 8 lanes (64-bit ones would halve them), and
        # both halves are equal exactly when the ids are
        width = max(longest, 1) * lanes
        halves = token_scratch[:width].view(np.int32)
        low = halves[:width]
        high = halves[width:]
        lengths = np.zeros(lanes, dtype=np.int64)
        for lane in range(lanes):
            if lane < n_targets:
                t = targets[lane]
                start = target_starts[t]
                lengths[lane] = target_ends[t] - start
                for j in range(lengths[lane]):
                    value = target_ids[start + j]
                    low[j * lanes + lane] = np.int32(value & 0xFFFFFFFF)
                    high[j * lanes + lane] = np.int32(value >> 32)
            for j in range(lengths[lane], longest):
                low[j * lanes + lane] = np.int32(padding & 0xFFFFFFFF)
                high[j * lanes + lane] = np.int32(padding >> 32)
        size = lane_keys_size(n, longest, lanes)
        keys = key_scratch[:size].reshape((n + 1, longest + 1, lanes))
        flat_keys = key_scratch[:size]
        row_width = (longest + 1) * lanes
        # restart key of cell (i, j) in lane l: ((m_l - j) << query_bits) + (n - i), that is
        # restart[j * lanes + l] - i
        restart = np.empty(row_width, dtype=key_type)
        for j in range(longest + 1):
            for lane in range(lanes):
                restart[j * lanes + lane] = ((lengths[lane] - j) << query_bits) + n
        # (literal offsets: with np.int64 ones, one signature fewer to compile, the pairs
        # benchmark ran 8% slower)
        copy_range(flat_keys, 0, restart, 0, row_width)
        running = np.empty(row_width, dtype=key_type)
        row_best = np.empty((n + 1, lanes), dtype=key_type)
        lane_rows(query, low, high, restart, flat_keys, running, row_best, n, row_width,
                  match_key, mismatch_key, gap_key)
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
