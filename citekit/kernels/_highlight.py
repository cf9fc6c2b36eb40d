"""numba kernels behind :mod:`citekit.highlight`.

Plain ndarrays in, plain ndarrays out; :mod:`citekit.highlight` validates arguments, turns
strings into code-point arrays and builds the Python results. Slow, obviously correct
references for every kernel live in ``tests/kernels/test_highlight_kernels.py``.

Text arrives as ``uint32`` code points. Two arrays describe one text:

- ``code_points``: the text as passed, used for token boundaries (Python ``re``'s ``\\w``
  and ``\\s`` looked up in a per-code-point class table) and sentence breaks;
- ``pool``: the lower-cased text aligned one-to-one with ``code_points``, followed by a
  tail holding the lower-cased forms of the few tokens whose lower-casing is not
  one-to-one (``İ`` -> ``i̇``, context-dependent final sigma). Tokens are compared by their
  ``pool`` slices, so two tokens are equal exactly when their ``str.lower()`` are.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._hash import FNV_OFFSET_U64, FNV_PRIME_U64

__all__ = [
    "WORD_BIT",
    "SPACE_BIT",
    "scan_tokens",
    "hash_spans",
    "intern_spans",
    "lookup_spans",
    "match_tokens",
    "select_runs",
    "SELECT_RUNS_OPTIONS",
]

#: Bit set in the class table for characters Python ``re`` matches with ``\w``.
WORD_BIT = 1
#: Bit set in the class table for characters Python ``re`` matches with ``\s``
#: (the same as ``str.isspace``).
SPACE_BIT = 2

_EMPTY_SLOT = -1


@jit
def _is_sentence_punctuation(code_point):
    # the characters of the sentence-break class [.!?…]
    return code_point == 0x2E or code_point == 0x21 or code_point == 0x3F or code_point == 0x2026


@jit
def scan_tokens(code_points, char_class, lower_table, char_mode, special_starts, special_lengths,
                special_tail):
    """Tokenize, lower-case, hash each token and flag sentence breaks, in one pass.

    Word mode (``char_mode`` false): a token is a maximal run of ``\\w`` characters.
    Char mode: every non-whitespace character is a token.

    The pool is ``lower_table[code_points]`` followed by ``special_tail``, the
    concatenated ``str.lower()`` (of lengths ``special_lengths``) of the tokens starting at
    ``special_starts`` (sorted), whose lower-casing is not one character per character;
    those tokens' pool ranges point into the tail.

    Returns ``(starts, ends, pool, pool_starts, pool_ends, hashes, gap_breaks,
    punctuation)``: ``hashes`` is the FNV-1a hash of each token's pool range;
    ``gap_breaks[k]`` is 1 when the text between token ``k`` and token ``k + 1`` contains a
    sentence break (one of ``.!?…``, or two newlines with only whitespace between them);
    ``punctuation[k]`` is 1 when token ``k`` is one of ``.!?…`` (char mode).
    """
    n_chars = code_points.shape[0]
    pool = np.empty(n_chars + special_tail.shape[0], np.uint32)
    for position in range(n_chars):
        pool[position] = lower_table[code_points[position]]
    for position in range(special_tail.shape[0]):
        pool[n_chars + position] = special_tail[position]
    starts = np.empty(n_chars, np.int64)
    ends = np.empty(n_chars, np.int64)
    hashes = np.empty(n_chars, np.uint64)
    gap_breaks = np.zeros(n_chars, np.uint8)
    punctuation = np.zeros(n_chars, np.uint8)
    n_tokens = 0
    newlines = 0
    position = 0
    while position < n_chars:
        code_point = code_points[position]
        char_flags = char_class[code_point]
        if char_mode and char_flags & SPACE_BIT == 0:
            starts[n_tokens] = position
            ends[n_tokens] = position + 1
            hashes[n_tokens] = (FNV_OFFSET_U64 ^ np.uint64(pool[position])) * FNV_PRIME_U64
            if _is_sentence_punctuation(code_point):
                punctuation[n_tokens] = 1
            n_tokens += 1
            newlines = 0
            position += 1
        elif not char_mode and char_flags & WORD_BIT:
            starts[n_tokens] = position
            value = FNV_OFFSET_U64
            while position < n_chars and char_class[code_points[position]] & WORD_BIT:
                value = (value ^ np.uint64(pool[position])) * FNV_PRIME_U64
                position += 1
            ends[n_tokens] = position
            hashes[n_tokens] = value
            n_tokens += 1
            newlines = 0
        else:
            # between tokens: the gap after token n_tokens - 1
            if n_tokens > 0:
                if _is_sentence_punctuation(code_point):
                    gap_breaks[n_tokens - 1] = 1
                elif char_flags & SPACE_BIT:
                    if code_point == 0x0A:
                        newlines += 1
                        if newlines >= 2:
                            gap_breaks[n_tokens - 1] = 1
                else:
                    newlines = 0
            position += 1
    if n_tokens > 0:
        gap_breaks[n_tokens - 1] = 0  # nothing follows the last token
    starts = starts[:n_tokens]
    ends = ends[:n_tokens]
    hashes = hashes[:n_tokens]
    pool_starts = starts.copy()
    pool_ends = ends.copy()
    tail_position = n_chars
    special = 0
    for token in range(n_tokens):
        if special == special_starts.shape[0]:
            break
        if special_starts[special] == starts[token]:
            length = special_lengths[special]
            pool_starts[token] = tail_position
            pool_ends[token] = tail_position + length
            tail_position += length
            value = FNV_OFFSET_U64
            for index in range(pool_starts[token], pool_ends[token]):
                value = (value ^ np.uint64(pool[index])) * FNV_PRIME_U64
            hashes[token] = value
            special += 1
    return (starts, ends, pool, pool_starts, pool_ends, hashes, gap_breaks[:n_tokens],
            punctuation[:n_tokens])


@jit
def hash_spans(pool, starts, ends):
    """64-bit FNV-1a hash of each ``pool[starts[k]:ends[k]]`` (as :func:`scan_tokens`)."""
    hashes = np.empty(starts.shape[0], np.uint64)
    for index in range(starts.shape[0]):
        value = FNV_OFFSET_U64
        for position in range(starts[index], ends[index]):
            value = (value ^ np.uint64(pool[position])) * FNV_PRIME_U64
        hashes[index] = value
    return hashes


@jit
def _same_span(pool_a, start_a, end_a, pool_b, start_b, end_b):
    if end_a - start_a != end_b - start_b:
        return False
    for offset in range(end_a - start_a):
        if pool_a[start_a + offset] != pool_b[start_b + offset]:
            return False
    return True


@jit
def intern_spans(pool, starts, ends, hashes):
    """Give equal spans equal ids, numbered by first occurrence.

    Returns ``(ids, first_index, table)``: ``ids[k]`` is the id of span ``k``,
    ``first_index[i]`` the first span with id ``i``, and ``table`` an open-addressing hash
    table of ids (``-1`` = empty slot, size a power of two) for :func:`lookup_spans`.
    """
    n_spans = starts.shape[0]
    capacity = 8
    while capacity < 2 * n_spans:
        capacity *= 2
    mask = np.uint64(capacity - 1)
    table = np.full(capacity, _EMPTY_SLOT, np.int64)
    ids = np.empty(n_spans, np.int64)
    first_index = np.empty(n_spans, np.int64)
    n_ids = 0
    for index in range(n_spans):
        slot = np.int64(hashes[index] & mask)
        while True:
            existing_id = table[slot]
            if existing_id == _EMPTY_SLOT:
                table[slot] = n_ids
                first_index[n_ids] = index
                ids[index] = n_ids
                n_ids += 1
                break
            first = first_index[existing_id]
            if hashes[first] == hashes[index] and _same_span(
                pool, starts[first], ends[first], pool, starts[index], ends[index]
            ):
                ids[index] = existing_id
                break
            slot = (slot + 1) & (capacity - 1)
    return ids, first_index[:n_ids].copy(), table


@jit
def lookup_spans(pool, starts, ends, hashes, table, key_pool, key_starts, key_ends,
                 key_hashes, key_first_index, missing):
    """Id of each span among interned keys, ``missing`` when absent.

    ``table`` and ``key_first_index`` come from :func:`intern_spans` over the key spans.
    """
    capacity = table.shape[0]
    mask = np.uint64(capacity - 1)
    result = np.empty(starts.shape[0], np.int64)
    for index in range(starts.shape[0]):
        found = missing
        slot = np.int64(hashes[index] & mask)
        while True:
            key_id = table[slot]
            if key_id == _EMPTY_SLOT:
                break
            key = key_first_index[key_id]
            if key_hashes[key] == hashes[index] and _same_span(
                key_pool, key_starts[key], key_ends[key], pool, starts[index], ends[index]
            ):
                found = key_id
                break
            slot = (slot + 1) & (capacity - 1)
        result[index] = found
    return result


@jit
def match_tokens(pool, pool_starts, pool_ends, hashes,
                 answer_pool, answer_starts, answer_ends, answer_hashes, answer_first_index,
                 answer_table, stop_pool, stop_starts, stop_ends, stop_hashes, stop_first_index,
                 stop_table):
    """Answer id and stop-word flag of every chunk token, and the chunk compressed for LCS.

    ``answer_ids[k]`` is the answer vocabulary id of chunk token ``k`` or ``n_ids`` (the
    vocabulary size) when the answer lacks it. ``compressed`` replaces each maximal run of
    such absent tokens by one ``n_ids``; ``positions`` maps it back to chunk tokens. Absent
    tokens never match, so difflib's matching blocks of ``(answer, compressed)`` are those
    of ``(answer, chunk)`` with ``j`` mapped through ``positions``: the recursion sees the
    same candidate runs in the same order, and a run of absent tokens still separates
    blocks, as one absent token does.
    """
    n_ids = answer_first_index.shape[0]
    answer_ids = lookup_spans(
        pool, pool_starts, pool_ends, hashes, answer_table, answer_pool, answer_starts,
        answer_ends, answer_hashes, answer_first_index, n_ids,
    )
    stop_ids = lookup_spans(
        pool, pool_starts, pool_ends, hashes, stop_table, stop_pool, stop_starts, stop_ends,
        stop_hashes, stop_first_index, -1,
    )
    n_tokens = pool_starts.shape[0]
    is_stop = np.empty(n_tokens, np.bool_)
    compressed = np.empty(n_tokens, np.int64)
    positions = np.empty(n_tokens, np.int64)
    n_compressed = 0
    for token in range(n_tokens):
        is_stop[token] = stop_ids[token] >= 0
        token_id = answer_ids[token]
        if token_id < n_ids or n_compressed == 0 or compressed[n_compressed - 1] != n_ids:
            compressed[n_compressed] = token_id
            positions[n_compressed] = token
            n_compressed += 1
    return answer_ids, is_stop, compressed[:n_compressed], positions[:n_compressed]


@jit
def _prefix_sums(flags):
    sums = np.zeros(flags.shape[0] + 1, np.int64)
    for index in range(flags.shape[0]):
        sums[index + 1] = sums[index] + flags[index]
    return sums


@jit
def _merge_close_runs(run_starts, run_ends, gap_tokens, gap_break_sums, punctuation_sums):
    """Fuse runs (sorted by start) that are at most ``gap_tokens`` apart.

    Runs that overlap always fuse; runs that do not are kept apart when the text between
    them holds a sentence break, so one highlight never spans two sentences.
    """
    n_runs = run_starts.shape[0]
    merged_starts = np.empty(n_runs, np.int64)
    merged_ends = np.empty(n_runs, np.int64)
    n_merged = 0
    for index in range(n_runs):
        start = run_starts[index]
        end = run_ends[index]
        if n_merged > 0:
            previous_end = merged_ends[n_merged - 1]
            gap = start - previous_end
            if gap <= gap_tokens:
                blocked = False
                if gap >= 0:
                    # breaks in the gaps after tokens previous_end-1 .. start-1, and
                    # sentence punctuation tokens previous_end .. start-1
                    blocked = (
                        gap_break_sums[start] - gap_break_sums[previous_end - 1]
                        + punctuation_sums[start] - punctuation_sums[previous_end]
                    ) > 0
                if not blocked:
                    if end > previous_end:
                        merged_ends[n_merged - 1] = end
                    continue
        merged_starts[n_merged] = start
        merged_ends[n_merged] = end
        n_merged += 1
    return merged_starts[:n_merged].copy(), merged_ends[:n_merged].copy()


@jit
def _longest_first(char_starts, char_ends):
    # index of the first longest span (ties go to the earliest, like Python's max)
    best = 0
    for index in range(1, char_starts.shape[0]):
        if char_ends[index] - char_starts[index] > char_ends[best] - char_starts[best]:
            best = index
    return best


#: Order of the integer options in the ``int_options`` array of :func:`select_runs`.
SELECT_RUNS_OPTIONS = (
    "lcs_merge_gap_tokens",
    "lcs_min_run_tokens",
    "lcs_min_single_token_chars",
    "neighborhood_tokens",
    "min_span_words",
    "min_vocab_token_chars",
)


@jit
def select_runs(blocks, positions, answer_ids, n_answer_ids, is_stop, pool_starts, pool_ends,
                gap_breaks, punctuation, token_starts, token_ends, n_chars, int_options,
                max_highlight_ratio, keep_longest_only):
    """Everything between the LCS matching blocks and span expansion.

    ``blocks`` are difflib's matching blocks ``(i, j, size)`` (sentinel included) of the
    answer against the compressed chunk of :func:`match_tokens`, whose ``positions`` map
    ``j`` back to chunk tokens. Per chunk token: ``answer_ids`` (``n_answer_ids`` when the
    token is not in the answer), ``is_stop``, the lower-cased form's ``pool_starts`` /
    ``pool_ends``, ``gap_breaks`` / ``punctuation`` from :func:`scan_tokens`, and the
    character offsets ``token_starts`` / ``token_ends`` reported for it. ``int_options``
    holds the integer options in :data:`SELECT_RUNS_OPTIONS` order.

    Steps: merge LCS runs (``lcs_merge_gap_tokens``), keep runs with enough non-stop
    content, apply the ``max_highlight_ratio`` valve to them; the survivors are anchors.
    Answer content words in the chunk, merged within ``neighborhood_tokens``, join when
    they lie within ``neighborhood_tokens`` of an anchor; everything is merged again with
    that gap, runs shorter than ``min_span_words`` tokens are dropped, and with
    ``keep_longest_only`` only the first longest character span is kept.

    Returns ``(token_runs, char_spans)``, two ``(k, 2)`` arrays of half-open ranges.
    """
    lcs_merge_gap_tokens = int_options[0]
    lcs_min_run_tokens = int_options[1]
    lcs_min_single_token_chars = int_options[2]
    neighborhood_tokens = int_options[3]
    min_span_words = int_options[4]
    min_vocab_token_chars = int_options[5]
    lowered_lengths = pool_ends - pool_starts
    n_blocks = 0
    for index in range(blocks.shape[0]):
        if blocks[index, 2] > 0:
            n_blocks += 1
    run_starts = np.empty(n_blocks, np.int64)
    run_ends = np.empty(n_blocks, np.int64)
    n_blocks = 0
    for index in range(blocks.shape[0]):
        if blocks[index, 2] > 0:
            # a block never contains an absent token, so its tokens are consecutive
            run_starts[n_blocks] = positions[blocks[index, 1]]
            run_ends[n_blocks] = run_starts[n_blocks] + blocks[index, 2]
            n_blocks += 1
    gap_break_sums = _prefix_sums(gap_breaks)
    punctuation_sums = _prefix_sums(punctuation)
    empty = np.empty((0, 2), np.int64)

    # LCS anchors
    lcs_starts, lcs_ends = _merge_close_runs(
        run_starts, run_ends, lcs_merge_gap_tokens, gap_break_sums, punctuation_sums
    )
    keep = np.zeros(lcs_starts.shape[0], np.bool_)
    for index in range(lcs_starts.shape[0]):
        content_tokens = 0
        long_token = False
        for token in range(lcs_starts[index], lcs_ends[index]):
            if not is_stop[token]:
                content_tokens += 1
                if lowered_lengths[token] >= lcs_min_single_token_chars:
                    long_token = True
        keep[index] = content_tokens >= lcs_min_run_tokens or long_token
    anchor_starts = lcs_starts[keep]
    anchor_ends = lcs_ends[keep]
    if anchor_starts.shape[0] == 0:
        return empty, empty
    anchor_chars = token_ends[anchor_ends - 1] - token_starts[anchor_starts]
    if n_chars > 0 and anchor_chars.sum() / n_chars > max_highlight_ratio:
        best = _longest_first(token_starts[anchor_starts], token_ends[anchor_ends - 1])
        anchor_starts = anchor_starts[best:best + 1].copy()
        anchor_ends = anchor_ends[best:best + 1].copy()

    # bag-of-words matches of the answer's content words
    n_tokens = answer_ids.shape[0]
    bow_tokens = np.empty(n_tokens, np.int64)
    n_bow = 0
    for token in range(n_tokens):
        if (answer_ids[token] < n_answer_ids and not is_stop[token]
                and lowered_lengths[token] >= min_vocab_token_chars):
            bow_tokens[n_bow] = token
            n_bow += 1
    bow_starts, bow_ends = _merge_close_runs(
        bow_tokens[:n_bow], bow_tokens[:n_bow] + 1, neighborhood_tokens,
        gap_break_sums, punctuation_sums,
    )

    # keep those within the neighbourhood of an anchor; anchors are sorted and disjoint,
    # so the first anchor ending after a run's start has the smallest start of those left
    near = np.zeros(bow_starts.shape[0], np.bool_)
    anchor = 0
    n_anchors = anchor_starts.shape[0]
    for index in range(bow_starts.shape[0]):
        while anchor < n_anchors and anchor_ends[anchor] + neighborhood_tokens <= bow_starts[index]:
            anchor += 1
        if anchor < n_anchors and bow_ends[index] > anchor_starts[anchor] - neighborhood_tokens:
            near[index] = True
    near_starts = bow_starts[near]
    near_ends = bow_ends[near]

    # anchors and near runs in (start, end) order, then one more merge
    n_combined = n_anchors + near_starts.shape[0]
    combined_starts = np.empty(n_combined, np.int64)
    combined_ends = np.empty(n_combined, np.int64)
    left = 0
    right = 0
    for index in range(n_combined):
        take_left = right >= near_starts.shape[0] or (
            left < n_anchors and (
                anchor_starts[left] < near_starts[right]
                or (anchor_starts[left] == near_starts[right]
                    and anchor_ends[left] <= near_ends[right])
            )
        )
        if take_left:
            combined_starts[index] = anchor_starts[left]
            combined_ends[index] = anchor_ends[left]
            left += 1
        else:
            combined_starts[index] = near_starts[right]
            combined_ends[index] = near_ends[right]
            right += 1
    final_starts, final_ends = _merge_close_runs(
        combined_starts, combined_ends, neighborhood_tokens, gap_break_sums, punctuation_sums
    )
    long_enough = (final_ends - final_starts) >= min_span_words
    final_starts = final_starts[long_enough]
    final_ends = final_ends[long_enough]
    if final_starts.shape[0] == 0:
        return empty, empty
    char_starts = token_starts[final_starts]
    char_ends = token_ends[final_ends - 1]
    first = 0
    last = final_starts.shape[0]
    if keep_longest_only:
        first = _longest_first(char_starts, char_ends)
        last = first + 1
    token_runs = np.empty((last - first, 2), np.int64)
    char_spans = np.empty((last - first, 2), np.int64)
    for row in range(last - first):
        token_runs[row, 0] = final_starts[first + row]
        token_runs[row, 1] = final_ends[first + row]
        char_spans[row, 0] = char_starts[first + row]
        char_spans[row, 1] = char_ends[first + row]
    return token_runs, char_spans
