"""Longest common subsequence and difflib-compatible matching blocks (numba, serial).

``lcs_length_kernel`` is the bit-parallel LCS of Allison-Dix / Hyyro: one pass over the
longer sequence, ``ceil(len(shorter) / 64)`` machine words per step.

``matching_blocks_kernel`` reproduces ``difflib.SequenceMatcher(None, a, b,
autojunk=False).get_matching_blocks()`` exactly: recursively take the longest common
substring of the current ranges (ties: smallest start in ``a``, then in ``b``), recurse
left and right of it, sort, merge adjacent blocks, append the ``(len(a), len(b), 0)``
sentinel. Without junk, difflib's extension steps never fire, so only its core loop is
reproduced, with arrays and generation stamps instead of per-row dictionaries.

difflib's loop visits every pair of equal tokens of the two ranges, so a range where one
token repeats (``'a ' * 10_000`` against ``'a ' * 1_000_000``) costs their product. When
the pairs outnumber the ranges' lengths several times over, the longest common substring
is found instead with a suffix automaton of the shorter range (linear time, memory
linear in the shorter range): walking the other range through it gives, at every
position, the longest run ending there, and the automaton the first occurrence of that
run in its own range, from which difflib's tie-breaking follows (the longest size, then
the smallest ``i``, then the smallest ``j``).
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._sort import stable_argsort

_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing
_STATE_MULTIPLIER = np.uint64(0xC2B2AE3D27D4EB4F)
# A range whose pairs of equal tokens exceed this many times its length (plus a floor)
# takes the suffix automaton instead of difflib's loop.
_AUTOMATON_FACTOR = 8
_AUTOMATON_FLOOR = 4096


@jit
def _group_tokens(tokens):
    """Positions of ``tokens`` grouped by value: ``(group_values, group_start, positions)``.

    ``positions[group_start[g]:group_start[g + 1]]`` are the ascending positions of
    ``group_values[g]``.
    """
    n = tokens.shape[0]
    positions = stable_argsort(tokens)  # stable: positions ascend per value
    group_start = np.empty(n + 1, dtype=np.int64)
    group_values = np.empty(n, dtype=np.int64)
    n_groups = 0
    for k in range(n):
        value = tokens[positions[k]]
        if k == 0 or value != group_values[n_groups - 1]:
            group_values[n_groups] = value
            group_start[n_groups] = k
            n_groups += 1
    group_start[n_groups] = n
    return group_values[:n_groups], group_start[: n_groups + 1], positions


@jit
def _group_of(group_values, queries):
    """For every value in ``queries``, the index of its group or -1 (open-addressing hash)."""
    n_groups = group_values.shape[0]
    table_bits = 1
    while (1 << table_bits) < 2 * n_groups:
        table_bits += 1
    table_mask = (1 << table_bits) - 1
    shift = np.uint64(64 - table_bits)
    table = np.full(1 << table_bits, -1, dtype=np.int64)
    for g in range(n_groups):
        slot = np.int64((np.uint64(group_values[g]) * _HASH_MULTIPLIER) >> shift)
        while table[slot] != -1:
            slot = (slot + 1) & table_mask
        table[slot] = g
    found = np.full(queries.shape[0], -1, dtype=np.int64)
    for k in range(queries.shape[0]):
        value = queries[k]
        slot = np.int64((np.uint64(value) * _HASH_MULTIPLIER) >> shift)
        while table[slot] != -1:
            if group_values[table[slot]] == value:
                found[k] = table[slot]
                break
            slot = (slot + 1) & table_mask
    return found


@jit
def _popcount(word):
    word = word - ((word >> np.uint64(1)) & np.uint64(0x5555555555555555))
    word = (word & np.uint64(0x3333333333333333)) + (
        (word >> np.uint64(2)) & np.uint64(0x3333333333333333)
    )
    word = (word + (word >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((word * np.uint64(0x0101010101010101)) >> np.uint64(56))


@jit
def lcs_length_kernel(a, b):
    """Length of the longest common subsequence of two int64 arrays."""
    if a.shape[0] > b.shape[0]:
        a, b = b, a
    n = a.shape[0]
    if n == 0:
        return 0
    n_words = (n + 63) // 64
    group_values, group_start, positions = _group_tokens(a)
    # match masks: bit k of word w of row g is set when a[64 * w + k] is group_values[g]
    masks = np.zeros((group_values.shape[0], n_words), dtype=np.uint64)
    for g in range(group_values.shape[0]):
        for k in range(group_start[g], group_start[g + 1]):
            position = positions[k]
            masks[g, position >> 6] |= np.uint64(1) << np.uint64(position & 63)
    b_groups = _group_of(group_values, b)
    state = np.full(n_words, np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
    for j in range(b.shape[0]):
        g = b_groups[j]
        if g < 0:
            continue  # a token absent from `a` leaves the state unchanged
        carry = np.uint64(0)
        for w in range(n_words):
            word = state[w]
            matched = word & masks[g, w]
            partial = word + carry
            carry_out = np.uint64(1) if partial < carry else np.uint64(0)
            total = partial + matched
            if total < matched:
                carry_out = np.uint64(1)
            carry = carry_out
            state[w] = total | (word - matched)
    length = 0
    for w in range(n_words):
        word = ~state[w]
        if w == n_words - 1 and (n & 63) != 0:
            word &= (np.uint64(1) << np.uint64(n & 63)) - np.uint64(1)
        length += _popcount(word)
    return length


@jit
def _find_edge(table, table_mask, edge_source, edge_token, state, token):
    """Index of the automaton edge ``(state, token)`` or -1 (open-addressing hash)."""
    slot = np.int64(
        ((np.uint64(token) * _HASH_MULTIPLIER) ^ (np.uint64(state) * _STATE_MULTIPLIER))
        >> np.uint64(16)
    ) & table_mask
    while table[slot] != -1:
        edge = table[slot]
        if edge_source[edge] == state and edge_token[edge] == token:
            return edge
        slot = (slot + 1) & table_mask
    return -1


@jit
def _add_edge(table, table_mask, edge_source, edge_token, edge_target, edge_next, head,
              n_edges, state, token, target):
    slot = np.int64(
        ((np.uint64(token) * _HASH_MULTIPLIER) ^ (np.uint64(state) * _STATE_MULTIPLIER))
        >> np.uint64(16)
    ) & table_mask
    while table[slot] != -1:
        slot = (slot + 1) & table_mask
    table[slot] = n_edges
    edge_source[n_edges] = state
    edge_token[n_edges] = token
    edge_target[n_edges] = target
    edge_next[n_edges] = head[state]
    head[state] = n_edges
    return n_edges + 1


@jit
def _suffix_automaton(sequence, lo, hi):
    """Suffix automaton of ``sequence[lo:hi]``: ``(state_length, link, first_end, table,
    table_mask, edge_source, edge_token, edge_target)``; ``first_end[v]`` is where the
    first occurrence of state ``v``'s strings ends (relative to ``lo``)."""
    length = hi - lo
    max_states = 2 * length + 2
    max_edges = 3 * length + 4
    state_length = np.zeros(max_states, dtype=np.int64)
    link = np.full(max_states, -1, dtype=np.int64)
    first_end = np.zeros(max_states, dtype=np.int64)  # end of the first occurrence
    head = np.full(max_states, -1, dtype=np.int64)
    edge_source = np.empty(max_edges, dtype=np.int64)
    edge_token = np.empty(max_edges, dtype=np.int64)
    edge_target = np.empty(max_edges, dtype=np.int64)
    edge_next = np.empty(max_edges, dtype=np.int64)
    table_bits = 1
    while (1 << table_bits) < 2 * max_edges:
        table_bits += 1
    table_mask = (1 << table_bits) - 1
    table = np.full(1 << table_bits, -1, dtype=np.int64)
    n_states = 1
    n_edges = 0
    last = 0
    for position in range(length):
        token = sequence[lo + position]
        current = n_states
        n_states += 1
        state_length[current] = state_length[last] + 1
        first_end[current] = position
        state = last
        while state != -1 and _find_edge(table, table_mask, edge_source, edge_token, state,
                                         token) == -1:
            n_edges = _add_edge(table, table_mask, edge_source, edge_token, edge_target,
                                edge_next, head, n_edges, state, token, current)
            state = link[state]
        if state == -1:
            link[current] = 0
        else:
            following = edge_target[_find_edge(table, table_mask, edge_source, edge_token,
                                               state, token)]
            if state_length[state] + 1 == state_length[following]:
                link[current] = following
            else:
                clone = n_states
                n_states += 1
                state_length[clone] = state_length[state] + 1
                link[clone] = link[following]
                first_end[clone] = first_end[following]
                edge = head[following]
                while edge != -1:
                    n_edges = _add_edge(table, table_mask, edge_source, edge_token,
                                        edge_target, edge_next, head, n_edges, clone,
                                        edge_token[edge], edge_target[edge])
                    edge = edge_next[edge]
                while state != -1:
                    edge = _find_edge(table, table_mask, edge_source, edge_token, state, token)
                    if edge == -1 or edge_target[edge] != following:
                        break
                    edge_target[edge] = clone
                    state = link[state]
                link[following] = clone
                link[current] = clone
        last = current
    return (state_length, link, first_end, table, table_mask, edge_source, edge_token,
            edge_target)


@jit
def longest_match_automaton(a, a_lo, a_hi, b, b_lo, b_hi):
    """difflib's longest match of ``a[a_lo:a_hi]`` and ``b[b_lo:b_hi]`` as ``(i, j,
    size)`` (``(a_lo, b_lo, 0)`` when none), through a suffix automaton of the shorter
    range, the other one walked through it: O(len) time, O(shorter) memory, instead of
    O(pairs of equal tokens).

    Walking gives, at every position of the walked range, the longest common run ending
    there, and the automaton the first occurrence of that run in its own range. The
    longest size wins, then the smallest ``i``, then the smallest ``j`` (difflib's order).
    """
    walk_a = (b_hi - b_lo) <= (a_hi - a_lo)
    if walk_a:
        built, built_lo, built_hi, walked, walked_lo, walked_hi = b, b_lo, b_hi, a, a_lo, a_hi
    else:
        built, built_lo, built_hi, walked, walked_lo, walked_hi = a, a_lo, a_hi, b, b_lo, b_hi
    (state_length, link, first_end, table, table_mask, edge_source, edge_token,
     edge_target) = _suffix_automaton(built, built_lo, built_hi)
    best_i = a_lo
    best_j = b_lo
    best_size = 0
    state = 0
    size = 0
    for position in range(walked_lo, walked_hi):
        token = walked[position]
        edge = _find_edge(table, table_mask, edge_source, edge_token, state, token)
        while edge == -1 and state != 0:
            state = link[state]
            size = state_length[state]
            edge = _find_edge(table, table_mask, edge_source, edge_token, state, token)
        if edge == -1:
            state = 0
            size = 0
            continue
        state = edge_target[edge]
        size += 1
        walked_start = position - size + 1
        built_start = built_lo + first_end[state] - size + 1
        i = walked_start if walk_a else built_start
        j = built_start if walk_a else walked_start
        if size > best_size or (
            size == best_size and (i < best_i or (i == best_i and j < best_j))
        ):
            best_size = size
            best_i = i
            best_j = j
    return best_i, best_j, best_size


@jit
def matching_blocks_kernel(a, b):
    """difflib's matching blocks as an int64 array of rows ``(i, j, size)`` + sentinel."""
    len_a = a.shape[0]
    len_b = b.shape[0]
    group_values, group_start, positions = _group_tokens(b)
    a_groups = _group_of(group_values, a)
    # j2len rows of difflib, as two alternating arrays stamped with a row generation
    lengths = np.zeros((2, len_b + 1), dtype=np.int64)
    stamps = np.full((2, len_b + 1), -1, dtype=np.int64)
    generation = 0
    capacity = 2 * min(len_a, len_b) + 2
    stack = np.empty((capacity, 4), dtype=np.int64)
    found = np.empty((min(len_a, len_b) + 1, 3), dtype=np.int64)
    n_found = 0
    stack[0, 0] = 0
    stack[0, 1] = len_a
    stack[0, 2] = 0
    stack[0, 3] = len_b
    depth = 1
    while depth > 0:
        depth -= 1
        a_lo = stack[depth, 0]
        a_hi = stack[depth, 1]
        b_lo = stack[depth, 2]
        b_hi = stack[depth, 3]
        pairs = 0
        for i in range(a_lo, a_hi):
            g = a_groups[i]
            if g >= 0:
                pairs += group_start[g + 1] - group_start[g]
        best_i = a_lo
        best_j = b_lo
        best_size = 0
        generation += 1  # rows of an earlier call must not be read as the previous row
        loop_end = a_hi
        if pairs > _AUTOMATON_FACTOR * (a_hi - a_lo + b_hi - b_lo) + _AUTOMATON_FLOOR:
            best_i, best_j, best_size = longest_match_automaton(a, a_lo, a_hi, b, b_lo, b_hi)
            loop_end = a_lo  # (difflib's loop below is skipped)
        for i in range(a_lo, loop_end):
            generation += 1
            current = generation & 1
            previous = 1 - current
            g = a_groups[i]
            if g < 0:
                continue
            first = group_start[g]
            last = group_start[g + 1]
            # first position >= b_lo (positions ascend within the group)
            lo = first
            hi = last
            while lo < hi:
                mid = (lo + hi) >> 1
                if positions[mid] < b_lo:
                    lo = mid + 1
                else:
                    hi = mid
            for k in range(lo, last):
                j = positions[k]
                if j >= b_hi:
                    break
                size = 1
                if j > 0 and stamps[previous, j - 1] == generation - 1:
                    size = lengths[previous, j - 1] + 1
                lengths[current, j] = size
                stamps[current, j] = generation
                if size > best_size:
                    best_i = i - size + 1
                    best_j = j - size + 1
                    best_size = size
        if best_size > 0:
            found[n_found, 0] = best_i
            found[n_found, 1] = best_j
            found[n_found, 2] = best_size
            n_found += 1
            if a_lo < best_i and b_lo < best_j:
                stack[depth, 0] = a_lo
                stack[depth, 1] = best_i
                stack[depth, 2] = b_lo
                stack[depth, 3] = best_j
                depth += 1
            if best_i + best_size < a_hi and best_j + best_size < b_hi:
                stack[depth, 0] = best_i + best_size
                stack[depth, 1] = a_hi
                stack[depth, 2] = best_j + best_size
                stack[depth, 3] = b_hi
                depth += 1
    order = stable_argsort(found[:n_found, 0].copy())
    merged = np.empty((n_found + 1, 3), dtype=np.int64)
    n_merged = 0
    run_i = 0
    run_j = 0
    run_size = 0
    for k in range(n_found):
        i = found[order[k], 0]
        j = found[order[k], 1]
        size = found[order[k], 2]
        if run_i + run_size == i and run_j + run_size == j:
            run_size += size
        else:
            if run_size > 0:
                merged[n_merged, 0] = run_i
                merged[n_merged, 1] = run_j
                merged[n_merged, 2] = run_size
                n_merged += 1
            run_i = i
            run_j = j
            run_size = size
    if run_size > 0:
        merged[n_merged, 0] = run_i
        merged[n_merged, 1] = run_j
        merged[n_merged, 2] = run_size
        n_merged += 1
    merged[n_merged, 0] = len_a
    merged[n_merged, 1] = len_b
    merged[n_merged, 2] = 0
    return merged[: n_merged + 1]
