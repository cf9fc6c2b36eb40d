"""Kernels of the overlap stage: which tokens of a sentence a candidate passage holds.

For every (sentence, passage) pair the pipeline needs, before aligning, how many of the
sentence's tokens the passage contains (all tokens and content tokens, counted with
their multiplicity in the sentence) and how many DISTINCT content tokens. These bound
what an alignment can achieve, so hopeless pairs are never aligned. The kernel marks the
sentence's columns in a per-column slot array once per sentence and scans the passage's
CSR row of the index: cost per pair is one look-up per word of the passage, independent
of the corpus size.

A query's terms (its distinct tokens, with their counts and flags) come from one grouping,
:func:`group_into_terms`, which the retrieval's terms
(:func:`citekit.kernels._retrieval.idf_query_terms`) are derived from too.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._sort import stable_argsort

__all__ = [
    "bag_counts_from_held",
    "group_into_terms",
    "pair_bag_counts",
    "query_terms",
    "row_contains",
    "warmup",
]


def warmup() -> None:
    """Compile (or load from the on-disk cache) this module's kernels.

    Examples
    --------
    >>> warmup()
    """
    one = np.zeros(1, dtype=np.int64)
    two = np.array([0, 1], dtype=np.int64)
    pair_bag_counts(
        two, one, one, two, np.ones(1, dtype=np.int64), np.ones(1, dtype=bool), one, one
    )
    row_contains(two, one, one, one)


@jit
def _row_holds(row_pointers, row_columns, row, column):
    """Whether the sorted CSR row ``row`` holds ``column`` (binary search)."""
    lo = row_pointers[row]
    row_hi = row_pointers[row + 1]
    hi = row_hi
    while lo < hi:
        mid = (lo + hi) >> 1
        if row_columns[mid] < column:
            lo = mid + 1
        else:
            hi = mid
    return lo < row_hi and row_columns[lo] == column


@jit
def _pair_bag_counts_kernel(
    row_pointers,
    row_columns,
    term_columns,
    term_offsets,
    term_counts,
    term_is_content,
    pair_query,
    pair_passage,
    slot_of_column,
    out_all,
    out_content,
    out_distinct,
):
    # The current query's terms are marked in ``slot_of_column`` (term + 1, 0 = none), so
    # a pair costs one look-up per word of the passage instead of a binary search per
    # query term; marks change only when the query does (pairs come grouped by query).
    n_pairs = pair_query.shape[0]
    # First every pair's first and last row column: the rows lie scattered over the index
    # and these loads do not depend on each other, so the CPU overlaps their cache misses
    # (the counting loop waits for each row in turn: the kernel took 1.5x as long on a
    # 1,000-document corpus with cold caches, 1.1x with warm ones). Columns are sorted
    # within rows, so a row outside the query's column range holds none of its terms, and
    # a scan stops past that range.
    row_first = np.empty(n_pairs, dtype=np.int64)
    row_last = np.empty(n_pairs, dtype=np.int64)
    for pair in range(n_pairs):
        lo = row_pointers[pair_passage[pair]]
        hi = row_pointers[pair_passage[pair] + 1]
        if hi > lo:
            row_first[pair] = row_columns[lo]
            row_last[pair] = row_columns[hi - 1]
        else:
            row_first[pair] = 1
            row_last[pair] = 0
    query = -1
    lowest = 0
    highest = -1
    for pair in range(n_pairs):
        if pair_query[pair] != query:
            if query >= 0:
                for term in range(term_offsets[query], term_offsets[query + 1]):
                    if term_columns[term] >= 0:
                        slot_of_column[term_columns[term]] = 0
            query = pair_query[pair]
            lowest = 0
            highest = -1
            for term in range(term_offsets[query], term_offsets[query + 1]):
                column = term_columns[term]
                if column >= 0:
                    slot_of_column[column] = term + 1
                    if highest < lowest:
                        lowest = column
                        highest = column
                    else:
                        lowest = min(lowest, column)
                        highest = max(highest, column)
        passage = pair_passage[pair]
        total_all = 0
        total_content = 0
        distinct_content = 0
        if row_first[pair] <= highest and row_last[pair] >= lowest:
            for entry in range(row_pointers[passage], row_pointers[passage + 1]):
                column = row_columns[entry]
                if column > highest:
                    break
                slot = slot_of_column[column]
                if slot > 0:
                    term = slot - 1
                    total_all += term_counts[term]
                    if term_is_content[term]:
                        total_content += term_counts[term]
                        distinct_content += 1
        out_all[pair] = total_all
        out_content[pair] = total_content
        out_distinct[pair] = distinct_content
    if query >= 0:
        for term in range(term_offsets[query], term_offsets[query + 1]):
            if term_columns[term] >= 0:
                slot_of_column[term_columns[term]] = 0


def pair_bag_counts(
    row_pointers: np.ndarray,
    row_columns: np.ndarray,
    term_columns: np.ndarray,
    term_offsets: np.ndarray,
    term_counts: np.ndarray,
    term_is_content: np.ndarray,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    n_columns: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair: query token occurrences in the passage (all, content) and distinct
    content tokens in the passage.

    Parameters
    ----------
    row_pointers, row_columns : ndarray of int64
        CSR structure of the passages x vocabulary matrix, columns sorted within rows.
    term_columns : ndarray of int64
        Column of each distinct query token (``-1``: in no passage), grouped by query.
    term_offsets : ndarray of int64
        Query ``q`` owns terms ``term_offsets[q]:term_offsets[q + 1]``.
    term_counts : ndarray of int64
        How often each distinct token occurs in its query.
    term_is_content : ndarray of bool
        Whether each distinct token is a content token.
    pair_query, pair_passage : ndarray of int64
        The pairs (fastest grouped by query).
    n_columns : int, optional
        Number of vocabulary columns (default: found from the columns given).

    Returns
    -------
    tuple of three int64 arrays

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> # passage 0 holds columns {0, 2}; the query has column 0 twice, 1 once, 2 once
    >>> counts = pair_bag_counts(i64(0, 2), i64(0, 2), i64(0, 1, 2), i64(0, 3), i64(2, 1, 1),
    ...                          np.array([True, True, False]), i64(0), i64(0))
    >>> [c.tolist() for c in counts]
    [[3], [2], [1]]
    """
    n_pairs = pair_query.shape[0]
    out_all = np.zeros(n_pairs, dtype=np.int64)
    out_content = np.zeros(n_pairs, dtype=np.int64)
    out_distinct = np.zeros(n_pairs, dtype=np.int64)
    if n_pairs:
        row_columns = np.ascontiguousarray(row_columns, dtype=np.int64)
        term_columns = np.ascontiguousarray(term_columns, dtype=np.int64)
        if n_columns is None:
            n_columns = 1 + max(
                int(row_columns.max()) if row_columns.size else -1,
                int(term_columns.max()) if term_columns.size else -1,
            )
        _pair_bag_counts_kernel(
            np.ascontiguousarray(row_pointers, dtype=np.int64),
            row_columns,
            term_columns,
            np.ascontiguousarray(term_offsets, dtype=np.int64),
            np.ascontiguousarray(term_counts, dtype=np.int64),
            np.ascontiguousarray(term_is_content, dtype=np.bool_),
            np.ascontiguousarray(pair_query, dtype=np.int64),
            np.ascontiguousarray(pair_passage, dtype=np.int64),
            np.zeros(max(int(n_columns), 1), dtype=np.int64),
            out_all,
            out_content,
            out_distinct,
        )
    return out_all, out_content, out_distinct


@jit
def _row_contains_kernel(row_pointers, row_columns, passages, columns, out):
    for i in range(passages.shape[0]):
        column = columns[i]
        if column >= 0:
            out[i] = _row_holds(row_pointers, row_columns, passages[i], column)


def row_contains(
    row_pointers: np.ndarray, row_columns: np.ndarray, passages: np.ndarray, columns: np.ndarray
) -> np.ndarray:
    """Whether CSR row ``passages[i]`` holds column ``columns[i]`` (negative: never).

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> row_contains(i64(0, 2, 3), i64(1, 4, 0), i64(0, 0, 1, 1), i64(4, 0, 0, -1)).tolist()
    [True, False, True, False]
    """
    out = np.zeros(passages.shape[0], dtype=np.bool_)
    if passages.shape[0]:
        _row_contains_kernel(
            np.ascontiguousarray(row_pointers, dtype=np.int64),
            np.ascontiguousarray(row_columns, dtype=np.int64),
            np.ascontiguousarray(passages, dtype=np.int64),
            np.ascontiguousarray(columns, dtype=np.int64),
            out,
        )
    return out


# (inlined: called once per batch, its ten arrays would otherwise be passed, counted and
# released in every call, a tenth of a microsecond of the few the batch costs)
@jit(inline="always")
def group_into_terms(ids, offsets, flags, values, term_values, term_counts, term_flags,
                     term_offsets, n_flagged, token_terms):
    """Group every query's tokens into its terms (its distinct ids, ascending); returns
    the number of terms.

    Query ``q``'s tokens are ``ids[offsets[q]:offsets[q + 1]]``; its terms are
    ``term_offsets[q]:term_offsets[q + 1]`` (``term_offsets[0]`` is left as given: 0).
    Term ``t`` gets ``term_values[t]``, the ``values`` entry of its first token (one
    entry per token, equal for equal ids: e.g. the ids themselves, or their index
    columns); ``term_counts[t]``, its number of occurrences; ``term_flags[t]``, whether
    any occurrence's ``flags`` is set. ``n_flagged[q]`` gets the number of flagged terms
    of query ``q``, ``token_terms[i]`` the term of token ``i``. An empty ``term_counts``,
    ``n_flagged`` or ``token_terms`` is not filled.

    The one grouping of tokens into terms: :func:`query_terms` (the overlap counts) and
    :func:`citekit.kernels._retrieval.idf_query_terms` (the index's terms, weights and
    token columns) derive their arrays from it.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> ids, offsets = i64(30, 10, 30, 5), i64(0, 3, 4)
    >>> flags = np.array([False, True, True, False])
    >>> values, counts, term_flags, of_token = (np.zeros(4, dtype=t) for t in (
    ...     np.int64, np.int64, np.bool_, np.int64))
    >>> term_offsets, n_flagged = np.zeros(3, dtype=np.int64), np.zeros(2)
    >>> group_into_terms(ids, offsets, flags, ids, values, counts, term_flags, term_offsets,
    ...                  n_flagged, of_token)
    3
    >>> values.tolist()[:3], counts.tolist()[:3], term_flags.tolist()[:3]
    ([10, 30, 5], [1, 2, 1], [True, True, False])
    >>> term_offsets.tolist(), n_flagged.tolist(), of_token.tolist()
    ([0, 2, 3], [2.0, 0.0], [1, 0, 1, 2])
    """
    want_counts = term_counts.shape[0] > 0
    want_flagged = n_flagged.shape[0] > 0
    want_token_terms = token_terms.shape[0] > 0
    n_terms = 0
    for q in range(offsets.shape[0] - 1):
        lo = offsets[q]
        hi = offsets[q + 1]
        order = stable_argsort(ids[lo:hi])
        flagged = 0
        k = 0
        while k < hi - lo:
            first = lo + order[k]
            token = ids[first]
            count = 0
            flag = False
            while k < hi - lo and ids[lo + order[k]] == token:
                if want_token_terms:
                    token_terms[lo + order[k]] = n_terms
                flag = flag or flags[lo + order[k]]
                count += 1
                k += 1
            term_values[n_terms] = values[first]
            if want_counts:
                term_counts[n_terms] = count
            term_flags[n_terms] = flag
            flagged += flag
            n_terms += 1
        term_offsets[q + 1] = n_terms
        if want_flagged:
            n_flagged[q] = flagged
    return n_terms


@jit
def query_terms(query_ids, query_offsets, query_content, columns):
    """The distinct tokens (terms) of every query, for
    :func:`citekit.kernels._overlap.pair_bag_counts`.

    Query ``q``'s tokens are ``query_ids[query_offsets[q]:query_offsets[q + 1]]``, with
    content flags ``query_content`` and index columns ``columns`` (``-1``: in no passage).
    Returns ``(term_columns, term_offsets, term_counts, term_is_content,
    distinct_content)``: query ``q`` owns terms ``term_offsets[q]:term_offsets[q + 1]``,
    ascending by token id; a term's count is its number of occurrences in the query and it
    is content when any occurrence is; ``distinct_content[q]`` (float64) counts the
    query's content terms, whether or not the index knows them.

    The terms are those of :func:`group_into_terms`. Why a kernel: the same grouping in
    numpy (lexsort, boundary flags, cumsum, three bincounts) cost a dozen calls of
    microseconds each per batch of sentences.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> columns, offsets, counts, content, distinct = query_terms(
    ...     i64(30, 10, 30, 5), i64(0, 3, 4), np.array([False, True, False, True]),
    ...     i64(2, -1, 2, 0))
    >>> columns.tolist(), offsets.tolist(), counts.tolist(), content.tolist()
    ([-1, 2, 0], [0, 2, 3], [1, 2, 1], [True, False, True])
    >>> distinct.tolist()
    [1.0, 1.0]
    """
    n_queries = query_offsets.shape[0] - 1
    n_tokens = query_ids.shape[0]
    term_columns = np.empty(n_tokens, dtype=np.int64)
    term_counts = np.empty(n_tokens, dtype=np.int64)
    term_is_content = np.empty(n_tokens, dtype=np.bool_)
    term_offsets = np.zeros(n_queries + 1, dtype=np.int64)
    distinct_content = np.zeros(n_queries, dtype=np.float64)
    n_terms = group_into_terms(
        query_ids, query_offsets, query_content, columns, term_columns, term_counts,
        term_is_content, term_offsets, distinct_content, term_counts[:0],
    )
    return (
        term_columns[:n_terms],
        term_offsets,
        term_counts[:n_terms],
        term_is_content[:n_terms],
        distinct_content,
    )


@jit
def bag_counts_from_held(held, pair_query, term_offsets, term_counts, term_is_content):
    """:func:`citekit.kernels._overlap.pair_bag_counts` from the terms each pair's passage holds:
    ``held[p]`` has bit ``t`` set when it holds term ``term_offsets[q] + t`` of its query
    ``q = pair_query[p]`` (terms as :func:`query_terms` gives them; -1: not known, then
    the pair's counts are -1 too). Returns ``(all, content, distinct_content)``: the
    query's tokens, its content tokens (with multiplicity) and its distinct content
    tokens that the passage holds.

    Why: the retrieval walk knows the terms of its candidates (the bits of its words), so
    the counts need not read every candidate's row again.
    """
    n_pairs = held.shape[0]
    out_all = np.empty(n_pairs, dtype=np.int64)
    out_content = np.empty(n_pairs, dtype=np.int64)
    out_distinct = np.empty(n_pairs, dtype=np.int64)
    for p in range(n_pairs):
        bits = held[p]
        if bits < 0:
            out_all[p] = -1
            out_content[p] = -1
            out_distinct[p] = -1
            continue
        first = term_offsets[pair_query[p]]
        total_all = 0
        total_content = 0
        distinct = 0
        t = 0
        while bits:
            if bits & 1:
                total_all += term_counts[first + t]
                if term_is_content[first + t]:
                    total_content += term_counts[first + t]
                    distinct += 1
            bits >>= 1
            t += 1
        out_all[p] = total_all
        out_content[p] = total_content
        out_distinct[p] = distinct
    return out_all, out_content, out_distinct
