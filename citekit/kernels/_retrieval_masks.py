"""The bitmask path of the retrieval kernels, for queries of up to 16 terms: one 32-bit
word per passage holds a bit per term and an integer bound of its score, so a posting
costs one integer addition; a sampled bound keeps the few passages that can be among the
best, whose exact scores come from tables of query-order sums of their term bits."""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._retrieval_select import _SAMPLE, _keep_best_estimates, _select


# Queries of at most this many ranking terms (all weights positive, their sum finite)
# are walked as 32-bit words per passage: a bit per term it holds and, above them, an
# integer bound of its score (see _mask_candidates); longer ones sum float weights.
_MASK_BITS = 16


# by default, only queries whose lists hold this many entries: on small corpora (a RAG
# call's few documents) the float sums cost as much or less (measured)
_MIN_MASK_ENTRIES = 2048


# the guessed bound of the k best is the sample's (numerator / 2 * k * sampled share +
# add)-th best: about 1.5 k passages reach it, rarely fewer than k
_GUESS_RANK_NUMERATOR = 3


_GUESS_RANK_ADD = 4


# a rank score's first 8 terms are summed by one table look-up (see _mask_tables)
_TABLE_BITS = 8


# by default, the passages whose words a scanning walk fills before moving on (128 KB of
# words: they stay in a core's L2 cache while every list adds into them), in corpora of
# this many passages or more (smaller ones' words stay in the cache anyway, and the blocked walk's
# extra test per posting made it 20-30% slower at 68,000 and 680,000 passages)
_SCAN_BLOCK = 32768


_SCAN_BLOCK_MIN_PASSAGES = 2097152


@jit
def _mask_tables(term_weights, terms, tables):
    """``tables[b, m]``: the weights of terms ``8 * b + i`` for the set bits ``i`` of
    ``m``, added to 0.0 in increasing ``i`` (query order). Row 0 is exact: the start of
    every rank score's additions. Only the entries of masks the query's terms can set
    are filled (row ``b`` past the terms: entry 0 only)."""
    n_terms = terms.shape[0]
    for byte in range(tables.shape[0]):
        tables[byte, 0] = 0.0
        n_bits = min(_TABLE_BITS, max(0, n_terms - _TABLE_BITS * byte))
        top = 0
        for mask in range(1, 1 << n_bits):
            if mask == 2 << top:
                top += 1
            weight = term_weights[terms[_TABLE_BITS * byte + top]]
            tables[byte, mask] = tables[byte, mask ^ (1 << top)] + weight


@jit
def _mask_score(mask, tables, term_weights, terms):
    """The rank score of a passage holding the terms of ``mask``: its terms' weights
    added to 0.0 in query order, as walking the lists adds them (bit for bit)."""
    bits = np.int64(mask)
    score = tables[0, bits & 255]
    term = _TABLE_BITS
    bits >>= _TABLE_BITS
    while bits:
        if bits & 1:
            score += term_weights[terms[term]]
        bits >>= 1
        term += 1
    return score


@jit
def _mask_estimate(mask, tables):
    """The sum of the per-byte partial sums of the rank score of ``mask``: within a
    relative ``n_terms * 2**-52`` of the exact one (positive weights), and branch-free."""
    bits = np.int64(mask)
    return tables[0, bits & 255] + tables[1, bits >> 8]


@jit
def _collect_marked(words, listed, touched, n_touched, bar, tables, hits, values):
    """Every passage (listed: of ``touched[:n_touched]``) whose word reaches ``bar``,
    into ``hits``, with its estimated score (from the word's low bits) in ``values``;
    returns how many."""
    low = (1 << _MASK_BITS) - 1
    n_hits = 0
    if listed:
        for i in range(n_touched):
            passage = touched[i]
            word = words[passage]
            if word >= bar:
                hits[n_hits] = passage
                values[n_hits] = _mask_estimate(word & low, tables)
                n_hits += 1
    else:
        for passage in range(words.shape[0]):
            word = words[passage]
            if word >= bar:
                hits[n_hits] = passage
                values[n_hits] = _mask_estimate(word & low, tables)
                n_hits += 1
    return n_hits


@jit
def _mask_candidates(
    posting_pointers, posting_passages, term_columns, term_weights, terms, k, scan,
    scan_block, words, tables, touched, hits, values,
):
    """The passages that can be among the ``k`` best by rank score, into ``hits`` with
    their exact rank scores in ``values``; returns how many (every passage scoring at
    least the k-th best is there). ``words`` (uint32, all zero, left all zero) gets a
    word per passage; at most ``_MASK_BITS`` ranking terms, positive weights.

    A passage's word holds, in its low bits, a bit per ranking term it holds (a mask)
    and, above them, a bound of its rank score: the sum of the integer weights
    ``ceil(weight * scale)`` of those terms. Each posting list adds its term's bit and
    integer weight to the words of its passages in one integer addition (a list names a
    passage once: adding the bit sets it).

    The rank score is a function of the mask: the byte tables turn it into an estimate
    (two look-ups) or into the exact score (the first 8 terms looked up, the held ones
    after them added in query order: the same additions in the same order as summing
    the lists, hence bit for bit the same). The integer bounds are compared as words:
    a sample guesses the bound that about ``1.5 k`` passages reach, one pass over the
    words keeps the passages that reach it (less the rounding of the integer weights),
    and their estimates the ones that may reach the k-th best score, which are scored
    exactly. If that does not settle the k best (fewer than ``k`` reach the guess), every
    touched passage is examined instead.
    """
    n_terms = terms.shape[0]
    n_passages = words.shape[0]
    # A sum of n positive weights in any grouping lies within a relative n * 2**-53 of
    # the exact sum: comparing an estimate or a bound with an exact score times ``down``
    # (once per rounding that separates them) can only keep more passages.
    down = 1.0 - (n_terms + 2) * 2.0**-50
    total = 0.0
    lightest = term_weights[terms[0]]
    for j in range(n_terms):
        total += term_weights[terms[j]]
        lightest = min(lightest, term_weights[terms[j]])
    # the integer weights of all terms sum to less than 2**(32 - _MASK_BITS)
    scale = (2.0 ** (32 - _MASK_BITS) - 2.0 - 2.0 * n_terms) * down / total
    n_touched = np.int64(0)  # (int64, not Literal[int](0): one signature of the callee)
    increments = np.empty(n_terms, dtype=np.int64)
    cursors = np.empty(n_terms, dtype=np.int64)
    ends = np.empty(n_terms, dtype=np.int64)
    for j in range(n_terms):
        term = terms[j]
        column = term_columns[term]
        increments[j] = (np.int64(np.ceil(term_weights[term] * scale)) << _MASK_BITS) | (1 << j)
        cursors[j] = posting_pointers[column]
        ends[j] = posting_pointers[column + 1]
    if scan and scan_block > 0:
        # block by block of ``scan_block`` passages, every list in query order within a
        # block: each word gets the same additions in the same order as walking list
        # after list, while the block's words stay in the cache (a corpus of millions of passages
        # has tens of MB of words: walking each list over all of them is bound by memory;
        # measured 10-15% faster at 100,000 documents, 6.8 million passages)
        for block_end in range(scan_block, n_passages + scan_block, scan_block):
            for j in range(n_terms):
                entry = cursors[j]
                hi = ends[j]
                increment = increments[j]
                while entry < hi and posting_passages[entry] < block_end:
                    passage = posting_passages[entry]
                    words[passage] = words[passage] + increment
                    entry += 1
                cursors[j] = entry
    for j in range(n_terms):
        increment = increments[j]
        lo = cursors[j]
        hi = ends[j]
        if scan:
            for entry in range(lo, hi):
                passage = posting_passages[entry]
                words[passage] = words[passage] + increment
        else:
            # list each passage when first touched (branch-free: ``touched`` has room
            # for one entry past the corpus)
            for entry in range(lo, hi):
                passage = posting_passages[entry]
                word = words[passage]
                touched[n_touched] = passage
                n_touched += word == 0
                words[passage] = word + increment
    _mask_tables(term_weights, terms, tables)
    # the guessed bound, from a regular sample of the touched passages (scan: of all
    # passages, the untouched ones bounded by 0)
    population = n_passages if scan else n_touched
    step = max(1, population // _SAMPLE)
    n_drawn = 0
    n_sample = np.int64(0)  # (int64, not Literal[int](0): one signature of the callee)
    for i in range(0, population, step):
        bound = np.int64(words[i] if scan else words[touched[i]]) >> _MASK_BITS
        n_drawn += 1
        if bound > 0:
            values[n_sample] = bound
            n_sample += 1
    rank = _GUESS_RANK_NUMERATOR * k * n_drawn // max(population, 1) // 2 + _GUESS_RANK_ADD
    n_hits = -1
    if rank <= n_sample:
        guess = np.int64(_select(values, n_sample, n_sample - rank))
        # Integer weights are rounded up, by less than one each: the passages bounded by
        # the guess less n_terms are kept, so that every passage scoring what those
        # bounded by the guess score is kept; any other passage's bound is at most
        # ``below``, so it scores at most ``outside``.
        below = max(guess - n_terms - 1, 0)
        n_hits = _collect_marked(
            words, not scan, touched, n_touched, (below + 1) << _MASK_BITS, tables, hits,
            values,
        )
        outside = below / scale / (down * down * down)
        n_hits = _keep_best_estimates(k, outside, down, hits, n_hits, values)
    if n_hits < 0:
        # no guess, or too high a guess: every touched passage (nonzero word)
        n_hits = _collect_marked(
            words, not scan, touched, n_touched, np.int64(1), tables, hits, values
        )
        n_hits = _keep_best_estimates(k, -1.0, down, hits, n_hits, values)
    low = (1 << _MASK_BITS) - 1
    for i in range(n_hits):
        values[i] = _mask_score(words[hits[i]] & low, tables, term_weights, terms)
    return n_hits, n_touched


@jit
def _reset_words(words, scan, touched, n_touched):
    """Set the words :func:`_mask_candidates` touched back to zero."""
    if scan:
        words[:] = 0
    else:
        for i in range(n_touched):
            words[touched[i]] = 0


@jit
def _held_from_words(words, terms, first, passages, start, n, out_held):
    """``out_held[start:start + n]``: the bits ``term - first`` of the ranking ``terms``
    that each passage's word holds (bit ``j`` of its mask is ``terms[j]``)."""
    low = (1 << _MASK_BITS) - 1
    for i in range(start, start + n):
        mask = np.int64(words[passages[i]]) & low
        held = np.int64(0)
        j = 0
        while mask:
            if mask & 1:
                held |= np.int64(1) << (terms[j] - first)
            mask >>= 1
            j += 1
        out_held[i] = held


@jit
def _held_from_rows(
    row_pointers, row_columns, term_columns, first, last, passages, start, n, slots, out_held
):
    """``out_held[start:start + n]``: the bits ``term - first`` of the query's terms found
    in the corpus (``first:last``) that each passage's CSR row holds. Their columns are
    numbered in ``slots`` (one entry per column, all zero, left all zero; terms of one
    column share a number), so a passage costs one look-up per word of its row."""
    slot_of_term = np.zeros(last - first, dtype=np.int64)
    n_slots = 0
    for term in range(first, last):
        column = term_columns[term]
        if column >= 0:
            if slots[column] == 0:
                n_slots += 1
                slots[column] = n_slots
            slot_of_term[term - first] = slots[column]
    # held[0]: the columns of no term
    held = np.zeros(n_slots + 1, dtype=np.bool_)
    for i in range(start, start + n):
        passage = passages[i]
        for entry in range(row_pointers[passage], row_pointers[passage + 1]):
            held[slots[row_columns[entry]]] = True
        bits = np.int64(0)
        for t in range(last - first):
            if slot_of_term[t] > 0 and held[slot_of_term[t]]:
                bits |= np.int64(1) << t
        out_held[i] = bits
        held[:] = False
    for term in range(first, last):
        column = term_columns[term]
        if column >= 0:
            slots[column] = 0


@jit
def _add_unranked(
    row_pointers, row_columns, term_columns, term_weights, term_ranks, first, last,
    passages, rank_scores, scores, start, n, slots, frequent_bits, bit_of_column,
    want_held, out_held,
):
    """``scores[start:start + n]``: the rank scores plus, in query order, the weights of
    the query's terms (``first:last``) found in the corpus that do not rank and that
    each passage's CSR row holds.

    When every such term is among the corpus's most frequent columns (the stop words
    that do not rank usually are), one word per passage says which of those it holds
    (``frequent_bits``, bit ``bit_of_column[column]``; -1: not frequent; empty: none).
    Otherwise their columns are numbered in ``slots`` (one entry per column, all zero,
    left all zero), so a passage costs one look-up per word of its row. Either way the
    words or rows are touched all at once first: they are rarely in cache, and
    independent loads overlap the misses. With ``want_held``, the bit ``term - first`` of
    each such term a passage holds is set in its ``out_held`` entry.
    """
    if bit_of_column.shape[0] > 0:
        frequent = True
        for term in range(first, last):
            column = term_columns[term]
            if column >= 0 and not term_ranks[term] and bit_of_column[column] < 0:
                frequent = False
        if frequent:
            touched = 0
            for i in range(start, start + n):
                touched += frequent_bits[passages[i]]
            for i in range(start, start + n):
                bits = frequent_bits[passages[i]]
                total = rank_scores[i]
                for term in range(first, last):
                    column = term_columns[term]
                    if column >= 0 and not term_ranks[term]:
                        if (bits >> bit_of_column[column]) & 1:
                            total += term_weights[term]
                            if want_held:
                                out_held[i] |= np.int64(1) << (term - first)
                scores[i] = total
            return touched
    slot_of_term = np.zeros(last - first, dtype=np.int64)
    n_slots = 0
    for term in range(first, last):
        column = term_columns[term]
        if column >= 0 and not term_ranks[term]:
            if slots[column] == 0:
                n_slots += 1
                slots[column] = n_slots
            slot_of_term[term - first] = slots[column]
    # one load per cache line of the first rows' words (no branch on row lengths, which
    # would be mispredicted and hold the next loads back); may read into the next row
    touched = 0
    last_entry = row_columns.shape[0] - 1
    for i in range(start, start + n):
        entry = row_pointers[passages[i]]
        touched += row_columns[min(entry, last_entry)] + row_columns[min(entry + 8, last_entry)]
        touched += row_columns[min(entry + 16, last_entry)]
    # held[0]: the columns of no such term
    held = np.zeros(n_slots + 1, dtype=np.bool_)
    for i in range(start, start + n):
        passage = passages[i]
        for entry in range(row_pointers[passage], row_pointers[passage + 1]):
            held[slots[row_columns[entry]]] = True
        total = rank_scores[i]
        for term in range(first, last):
            slot = slot_of_term[term - first]
            if slot > 0 and held[slot]:
                total += term_weights[term]
                if want_held:
                    out_held[i] |= np.int64(1) << (term - first)
        scores[i] = total
        held[:] = False
    for term in range(first, last):
        if slot_of_term[term - first] > 0:
            slots[term_columns[term]] = 0
    return touched
