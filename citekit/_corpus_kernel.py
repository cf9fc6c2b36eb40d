"""One compiled pass for the arrays of :meth:`citekit.corpus.Corpus.build` after tokenizing.

For a handful of retrieved documents (the RAG call: five documents, ~6,000 tokens) the
numpy version of this work was some forty array operations of 1-5 us each, several times
the cost of the work itself. Here it is two kernels:

- :func:`index_arrays` (also used by :meth:`citekit.index.IdfIndex.build`): the sorted
  vocabulary of the token ids (a hash table numbers each id by first appearance, then
  only the distinct ids are sorted, by radix), where each first occurs, and the binary
  passages x vocabulary CSR rows with their transpose, the postings;
- :func:`corpus_arrays`: the passage windows of every source, their character and token
  ranges, then :func:`index_arrays`' work on those windows, in one call.

Every array equals what the numpy code computed (``tests/naive.py`` holds plain-Python
references; parity tests in ``tests/test_corpus_kernel.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from citekit._jit import jit

__all__ = ["corpus_arrays", "index_arrays", "warmup"]

# Fibonacci hashing: the product's top bits are the slot (token ids may be small
# integers, e.g. a subword vocabulary, or 64-bit hashes; both spread evenly)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
# the first table: 2 ** 11 slots (32 KB), room for 1,024 distinct ids at half load (a few
# documents' vocabulary); it doubles when half full
_FIRST_TABLE_BITS = 11
_SIGN_BIT = np.uint64(1 << 63)


@jit
def _number_by_first_appearance(values, codes, firsts):
    """``codes[i]``: the number of ``values[i]`` in order of first appearance;
    ``firsts[c]``: where value number ``c`` first appears. Returns the distinct values in
    that order."""
    n = values.shape[0]
    bits = _FIRST_TABLE_BITS
    capacity = 1 << bits
    # slot s: its value at 2 * s, its number at 2 * s + 1 (-1: empty), one cache line
    table = np.empty(2 * capacity, dtype=np.int64)
    table[1::2] = -1
    distinct = np.empty(n, dtype=np.int64)
    n_distinct = 0
    for i in range(n):
        if 2 * n_distinct >= capacity:
            # half full: double the table and insert the distinct values again
            bits += 1
            capacity = 1 << bits
            table = np.empty(2 * capacity, dtype=np.int64)
            table[1::2] = -1
            for code in range(n_distinct):
                slot = np.int64((np.uint64(distinct[code]) * _GOLDEN) >> np.uint64(64 - bits))
                while table[2 * slot + 1] != -1:
                    slot = (slot + 1) & (capacity - 1)
                table[2 * slot] = distinct[code]
                table[2 * slot + 1] = code
        value = values[i]
        slot = np.int64((np.uint64(value) * _GOLDEN) >> np.uint64(64 - bits))
        while True:
            code = table[2 * slot + 1]
            if table[2 * slot] == value and code != -1:  # (an empty slot's value is junk)
                codes[i] = code
                break
            if code == -1:
                table[2 * slot] = value
                table[2 * slot + 1] = n_distinct
                distinct[n_distinct] = value
                firsts[n_distinct] = i
                codes[i] = n_distinct
                n_distinct += 1
                break
            slot = (slot + 1) & (capacity - 1)
    return distinct[:n_distinct]


@jit
def _ascending_order(values):
    """``np.argsort(values, kind="stable")``: a least-significant-byte-first radix sort
    (eight passes at most, each a histogram and a scatter; a byte that all values share is
    skipped). Sorting a few hundred random ids this way costs about half of quicksort's
    mispredicted comparisons."""
    n = values.shape[0]
    keys = np.empty(n, dtype=np.uint64)
    counts = np.zeros((8, 257), dtype=np.int64)
    for i in range(n):
        # flipping the sign bit orders int64 values as unsigned integers
        key = np.uint64(values[i]) ^ _SIGN_BIT
        keys[i] = key
        for byte in range(8):
            counts[byte, np.int64((key >> np.uint64(8 * byte)) & np.uint64(255)) + 1] += 1
    order = np.arange(n)
    other_keys = np.empty(n, dtype=np.uint64)
    other_order = np.empty(n, dtype=np.int64)
    for byte in range(8):
        fill = counts[byte]
        if fill[1:].max() == n:
            continue  # one value of this byte: the order stays
        for digit in range(256):
            fill[digit + 1] += fill[digit]
        shift = np.uint64(8 * byte)
        for i in range(n):
            key = keys[i]
            digit = np.int64((key >> shift) & np.uint64(255))
            position = fill[digit]
            other_keys[position] = key
            other_order[position] = order[i]
            fill[digit] = position + 1
        keys, other_keys = other_keys, keys
        order, other_order = other_order, order
    return order


@jit
def _index_kernel(ids, starts, ends, passage_type):
    """Vocabulary, first positions, rows and postings of ranges of ``ids``
    (:func:`index_arrays`); the postings' passage numbers of the dtype of the empty array
    ``passage_type`` (:func:`_passage_type`)."""
    n = ids.shape[0]
    codes = np.empty(n, dtype=np.int64)
    firsts = np.empty(n, dtype=np.int64)
    distinct = _number_by_first_appearance(ids, codes, firsts)
    n_terms = distinct.shape[0]
    order = _ascending_order(distinct)
    column_of_code = np.empty(n_terms, dtype=np.int64)
    vocabulary = np.empty(n_terms, dtype=np.int64)
    first_positions = np.empty(n_terms, dtype=np.int64)
    for column in range(n_terms):
        code = order[column]
        column_of_code[code] = column
        vocabulary[column] = distinct[code]
        first_positions[column] = firsts[code]
    # each range's distinct columns in order of appearance, and how many ranges hold each
    n_ranges = starts.shape[0]
    capacity = 0
    for p in range(n_ranges):
        capacity += ends[p] - starts[p]
    unsorted = np.empty(capacity, dtype=np.int64)
    row_indptr = np.zeros(n_ranges + 1, dtype=np.int64)
    posting_indptr = np.zeros(n_terms + 1, dtype=np.int64)
    last_range = np.full(n_terms, -1, dtype=np.int64)
    filled = 0
    for p in range(n_ranges):
        for i in range(starts[p], ends[p]):
            column = column_of_code[codes[i]]
            if last_range[column] != p:
                last_range[column] = p
                unsorted[filled] = column
                filled += 1
                posting_indptr[column + 1] += 1
        row_indptr[p + 1] = filled
    # the postings: ranges in ascending order, so each column's list comes out sorted
    document_frequency = posting_indptr[1:].copy()
    # the IDF's argument (IEEE division, as numpy's; the logarithm is left to numpy, whose
    # vectorized log may round differently from the one compiled here)
    idf_ratio = np.empty(n_terms, dtype=np.float64)
    for column in range(n_terms):
        idf_ratio[column] = (n_ranges + 1.0) / (document_frequency[column] + 1.0)
    for column in range(n_terms):
        posting_indptr[column + 1] += posting_indptr[column]
    fill = posting_indptr[:-1].copy()
    posting_indices = np.empty(filled, dtype=passage_type.dtype)
    for p in range(n_ranges):
        for k in range(row_indptr[p], row_indptr[p + 1]):
            column = unsorted[k]
            posting_indices[fill[column]] = p
            fill[column] += 1
    # the rows again from the postings, columns in ascending order: sorted rows (cheaper
    # than sorting each row)
    fill = row_indptr[:-1].copy()
    row_indices = np.empty(filled, dtype=np.int64)
    for column in range(n_terms):
        for k in range(posting_indptr[column], posting_indptr[column + 1]):
            p = posting_indices[k]
            row_indices[fill[p]] = column
            fill[p] += 1
    return (
        vocabulary,
        first_positions,
        row_indptr,
        row_indices,
        posting_indptr,
        posting_indices,
        document_frequency,
        idf_ratio,
    )


@jit
def _windows_reaching(n_sentences, size, stride):
    """Number of the first window that reaches the last sentence (ceil((n - size) /
    stride), at least 0)."""
    if n_sentences <= size:
        return 0
    return (n_sentences - size + stride - 1) // stride


@jit
def _corpus_kernel(
    token_ids, token_starts, token_ends, token_offsets, sentences, sentence_offsets, size,
    stride, passage_type,
):
    """Passage rows and the index of :func:`corpus_arrays`."""
    n_sources = token_offsets.shape[0] - 1
    n_passages = 0
    for source in range(n_sources):
        n_sentences = sentence_offsets[source + 1] - sentence_offsets[source]
        if n_sentences > 0:
            n_passages += _windows_reaching(n_sentences, size, stride) + 1
    passages = np.empty((7, n_passages), dtype=np.int64)
    p = 0
    for source in range(n_sources):
        base = sentence_offsets[source]
        n_sentences = sentence_offsets[source + 1] - base
        if n_sentences == 0:
            continue
        token_hi = token_offsets[source + 1]
        # windows' first and last sentences never go back (the first grows by the stride,
        # and a jumped window starts after the one before it, which ended before
        # n_sentences - 1, i.e. started before n_sentences - size), so their tokens are
        # found by two cursors moving forward through the source's tokens
        token_start = token_end = token_offsets[source]
        reaching = _windows_reaching(n_sentences, size, stride)
        for number in range(reaching + 1):
            first = number * stride
            if number == reaching and first >= n_sentences:
                # the stride jumped over the tail: one last window ends at the last sentence
                first = max(n_sentences - size, 0)
            last = min(first + size, n_sentences)
            char_start = sentences[base + first, 0]
            char_end = sentences[base + last - 1, 1]
            # the tokens lying wholly inside the window's characters (none: an empty
            # range where the next token would start)
            while token_start < token_hi and token_starts[token_start] < char_start:
                token_start += 1
            while token_end < token_hi and token_ends[token_end] <= char_end:
                token_end += 1
            passages[0, p] = source
            passages[1, p] = token_start
            passages[2, p] = max(token_end, token_start)
            passages[3, p] = char_start
            passages[4, p] = char_end
            passages[5, p] = first
            passages[6, p] = last
            p += 1
    index = _index_kernel(token_ids, passages[1], passages[2], passage_type)
    return passages, index


def _passage_type(max_passages: int) -> np.ndarray:
    """An empty array of the dtype the postings keep passage numbers in
    (:func:`citekit._bag.passage_dtype`: as the retrieval walk reads them, so the index
    installs them without a copy)."""
    from citekit._bag import passage_dtype

    return np.zeros(0, dtype=passage_dtype(max_passages))


def index_arrays(
    ids: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[Any, ...]:
    """The index of passages given as ranges of one token-id array.

    Parameters
    ----------
    ids : ndarray of int64
        Token ids.
    starts, ends : ndarray of int64
        One half-open range of ``ids`` per passage, ``0 <= start <= end <= len(ids)``
        (not checked: callers pass checked ranges); ranges may overlap.

    Returns
    -------
    vocabulary : ndarray of int64
        The distinct ids, sorted: column ``j`` is the id ``vocabulary[j]``.
    first_positions : ndarray of int64
        Where column ``j``'s id first occurs in ``ids``.
    rows : tuple of ndarray
        CSR ``(indptr, indices)`` of the binary passages x vocabulary matrix, the columns
        of each row sorted and distinct.
    postings : tuple of ndarray
        Its transpose: the passages holding each column, ascending (``indptr`` int64,
        ``indices`` uint32; int64 for 2**32 passages or more).
    document_frequency : ndarray of int64
        How many passages hold each column (the lengths of the postings).
    idf_ratio : ndarray of float64
        ``(n_passages + 1.0) / (document_frequency + 1.0)``, bit for bit as numpy computes
        it (the IDF is its logarithm plus one).

    Examples
    --------
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> vocabulary, first, rows, postings, frequency, ratio = index_arrays(
    ...     i64(30, 10, 30, 20), i64(0, 1), i64(3, 4))
    >>> vocabulary.tolist(), first.tolist(), frequency.tolist(), ratio.tolist()
    ([10, 20, 30], [1, 3, 0], [2, 1, 2], [1.0, 1.5, 1.0])
    >>> [a.tolist() for a in rows], [a.tolist() for a in postings]
    ([[0, 2, 5], [0, 2, 0, 1, 2]], [[0, 2, 3, 5], [0, 1, 1, 0, 1]])
    """
    vocabulary, first, row_indptr, row_indices, posting_indptr, posting_indices, *rest = (
        _index_kernel(ids, starts, ends, _passage_type(starts.shape[0]))
    )
    rows, postings = (row_indptr, row_indices), (posting_indptr, posting_indices)
    return (vocabulary, first, rows, postings, *rest)


def corpus_arrays(
    token_ids: np.ndarray,
    token_starts: np.ndarray,
    token_ends: np.ndarray,
    token_offsets: np.ndarray,
    sentences: np.ndarray,
    sentence_offsets: np.ndarray,
    size: int,
    stride: int,
) -> tuple[np.ndarray, tuple[Any, ...]]:
    """Passage windows of every source, their ranges, and the index over them.

    Parameters
    ----------
    token_ids, token_starts, token_ends : ndarray of int64
        Every source's tokens, concatenated; offsets relative to the source's text, each
        source's tokens ordered and non-empty (as :func:`~citekit.tokenizers.base.
        tokenize_checked` returns them).
    token_offsets : ndarray of int64
        Source ``s`` owns tokens ``token_offsets[s]:token_offsets[s + 1]``.
    sentences : ndarray of int64, shape (n, 2)
        Every source's sentence spans (ordered, non-empty), concatenated.
    sentence_offsets : ndarray of int64
        Source ``s`` owns sentences ``sentence_offsets[s]:sentence_offsets[s + 1]``.
    size, stride : int
        Passage window size and stride in sentences (``>= 1``).

    Returns
    -------
    passages : ndarray of int64, shape (7, n_passages)
        Rows: source, token start, token end, char start, char end, and the first and
        end (exclusive) sentence numbers within the source. Windows are those of
        :func:`~citekit.segment.passage_window_array`, source after source; a window's
        tokens are those lying wholly inside its characters.
    index : tuple
        ``(vocabulary, first_positions, rows, postings, document_frequency, idf_ratio)``
        of the windows' token ranges, as :func:`index_arrays` returns them.

    Examples
    --------
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> # "ab. cd ef." : sentences (0, 3) and (4, 10); tokens ab, cd, ef (ids 7, 8, 7)
    >>> passages, index = corpus_arrays(
    ...     i64(7, 8, 7), i64(0, 4, 7), i64(2, 6, 9), i64(0, 3),
    ...     i64(0, 3, 4, 10).reshape(2, 2), i64(0, 2), 1, 1)
    >>> passages.tolist()
    [[0, 0], [0, 1], [1, 3], [0, 4], [3, 10], [0, 1], [1, 2]]
    >>> index[0].tolist(), index[2][1].tolist()
    ([7, 8], [0, 0, 1])
    """
    passages, index = _corpus_kernel(
        token_ids,
        token_starts,
        token_ends,
        token_offsets,
        sentences,
        sentence_offsets,
        int(size),
        int(stride),
        # (a source has at most one window per sentence)
        _passage_type(sentences.shape[0]),
    )
    vocabulary, first, row_indptr, row_indices, posting_indptr, posting_indices, *rest = index
    rows, postings = (row_indptr, row_indices), (posting_indptr, posting_indices)
    return passages, (vocabulary, first, rows, postings, *rest)


def warmup() -> None:
    """Compile (or load from the on-disk cache) this module's kernels.

    Examples
    --------
    >>> warmup()
    """
    one = np.zeros(1, dtype=np.int64)
    corpus_arrays(one, one, one + 1, np.array([0, 1]), np.array([[0, 1]]), np.array([0, 1]), 1, 1)
    index_arrays(one, one, one)
