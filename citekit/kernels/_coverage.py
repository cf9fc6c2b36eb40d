"""Kernels of the coverage stage: which sentence tokens a candidate covers.

Whether a passage holds a sentence token is asked for thousands of (passage, token)
cells per call: the token itself (its index column) or any word of the passage that folds
to the same form (the citation stages' ``fold_surface``: "grows" and "growing" both hold
"grow"), where a hyphenated word also holds the forms of its parts. One scan of the
passage's CSR row answers a cell; rows are a few dozen words. :func:`cover_runs` covers
the single letters of scripts tokenized letter by letter only inside runs the passage
holds in a row; :func:`contested_coverage` recomputes a sentence's coverage when some
evidence contradicts one of its values.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit

__all__ = [
    "candidate_coverage",
    "contested_coverage",
    "cover_runs",
    "near_passages",
    "rows_hold",
]


@jit
def contested_coverage(covers, rows, conflict_offsets, conflict_ranges, starts, ends, content,
                       weights, embedding_supported):
    """Coverage of a sentence some of whose evidence contradicts values (where
    :func:`records_batch` assumed none): ``covers`` (rows x tokens) the tokens each
    judged row covers, ``rows`` the sentence's evidence rows, row ``rows[i]``'s
    conflicts the answer character ranges ``conflict_ranges[conflict_offsets[i]:
    conflict_offsets[i + 1]]`` (none: conflict-free). A contradicted value is not covered
    by the evidence that contradicts it, and counts as covered only where conflict-free
    evidence covers it too. Returns ``(coverage, unresolved, runs)``: the covered share
    of the weights, whether some contradicted content token stays uncovered, and the
    character ranges of the runs of uncovered content tokens (none when
    ``embedding_supported``).

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> # the one evidence row covers both tokens but contradicts the second, a value
    >>> coverage, unresolved, runs = contested_coverage(
    ...     np.ones((1, 2), dtype=bool), i64(0), i64(0, 1), i64(5, 7).reshape(1, 2),
    ...     i64(0, 5), i64(4, 7), np.ones(2, dtype=bool), np.array([1.0, 2.0]), False)
    >>> coverage, unresolved, runs.tolist()
    (0.3333333333333333, True, [[5, 7]])
    """
    n_tokens = covers.shape[1]
    clean = np.zeros(n_tokens, dtype=np.bool_)
    dirty = np.zeros(n_tokens, dtype=np.bool_)
    disputed = np.zeros(n_tokens, dtype=np.bool_)
    inside = np.zeros(n_tokens, dtype=np.bool_)
    for i in range(rows.shape[0]):
        row = rows[i]
        if conflict_offsets[i] == conflict_offsets[i + 1]:
            for t in range(n_tokens):
                clean[t] = clean[t] or covers[row, t]
            continue
        inside[:] = False
        for c in range(conflict_offsets[i], conflict_offsets[i + 1]):
            for t in range(n_tokens):
                if starts[t] >= conflict_ranges[c, 0] and ends[t] <= conflict_ranges[c, 1]:
                    inside[t] = True
        for t in range(n_tokens):
            dirty[t] = dirty[t] or (covers[row, t] and not inside[t])
            disputed[t] = disputed[t] or inside[t]
    unresolved = False
    covered = np.zeros(n_tokens, dtype=np.bool_)
    for t in range(n_tokens):
        lost = disputed[t] and not clean[t] and content[t]
        unresolved = unresolved or lost
        covered[t] = (dirty[t] or clean[t]) and not lost
    runs = np.empty((n_tokens, 2), dtype=np.int64)
    n_runs = _uncovered_runs(  # (an int64 0: the evidence kernel's call has the same types)
        covered, content, starts, ends, not embedding_supported, runs, np.int64(0)
    )
    return _covered_share(covered, weights), unresolved, runs[:n_runs]


@jit
def _covered_share(covered, weights):
    """The share of the ``weights`` of the ``covered`` tokens (0 for no weight; the
    weights are 2, 1, 0.25 and 0: the sums are exact in any order)."""
    total = 0.0
    held = 0.0
    for t in range(covered.shape[0]):
        total += weights[t]
        if covered[t]:
            held += weights[t]
    return held / max(total, 1e-12)


@jit
def _uncovered_runs(covered, content, starts, ends, wanted, runs, n_runs):
    """Append to ``runs[n_runs:]`` the character ranges of the runs of uncovered content
    tokens (stop words between two of them join them; nothing unless ``wanted``);
    returns the new count."""
    if not wanted:
        return n_runs
    run_open = False
    for t in range(covered.shape[0]):
        if content[t] and not covered[t]:
            if not run_open:
                runs[n_runs, 0] = starts[t]
                run_open = True
            runs[n_runs, 1] = ends[t]
        elif content[t] and run_open:
            n_runs += 1
            run_open = False
    if run_open:
        n_runs += 1
    return n_runs


@jit
def _rows_hold_kernel(
    row_pointers,
    row_columns,
    column_form,
    part_start,
    part_count,
    part_forms,
    passages,
    columns,
    forms,
    out,
):
    for cell in range(passages.shape[0]):
        passage = passages[cell]
        column = columns[cell]
        form = forms[cell]
        found = False
        for entry in range(row_pointers[passage], row_pointers[passage + 1]):
            word = row_columns[entry]
            if word == column or column_form[word] == form:
                found = True
                break
            first = part_start[word]
            for part in range(first, first + part_count[word]):
                if part_forms[part] == form:
                    found = True
                    break
            if found:
                break
        out[cell] = found


def rows_hold(
    row_pointers: np.ndarray,
    row_columns: np.ndarray,
    column_form: np.ndarray,
    part_start: np.ndarray,
    part_count: np.ndarray,
    part_forms: np.ndarray,
    passages: np.ndarray,
    columns: np.ndarray,
    forms: np.ndarray,
) -> np.ndarray:
    """``out[i]``: whether row ``passages[i]`` holds column ``columns[i]`` or a word of form
    ``forms[i]``.

    A word (column ``c``) has the form ``column_form[c]`` and, if it has parts, the forms
    ``part_forms[part_start[c]:part_start[c] + part_count[c]]``. Every column in the rows
    asked about must have its form set (no sentinel check is made). A negative
    ``columns[i]`` or ``forms[i]`` matches nothing of its kind.

    Parameters
    ----------
    row_pointers, row_columns : ndarray of int64
        The rows, CSR (passages x index columns).
    column_form, part_start, part_count : ndarray of int64
        Per column: its form number, and where its part forms are in ``part_forms``.
    part_forms : ndarray of int64
        Part form numbers of every column with parts.
    passages, columns, forms : ndarray of int64
        The cells, one entry each.

    Returns
    -------
    ndarray of bool

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> # passage 0 holds columns 0 ("grows": form 7) and 1 ("twelve-bar": form 8, parts 9, 10)
    >>> rows_hold(i64(0, 2), i64(0, 1), i64(7, 8), i64(0, 0), i64(0, 2), i64(9, 10),
    ...           i64(0, 0, 0, 0), i64(5, 0, 5, 5), i64(1, 1, 10, 3)).tolist()
    [False, True, True, False]
    """
    out = np.zeros(passages.shape[0], dtype=np.bool_)
    if passages.shape[0]:
        _rows_hold_kernel(
            row_pointers,
            row_columns,
            column_form,
            part_start,
            part_count,
            part_forms,
            np.ascontiguousarray(passages, dtype=np.int64),
            np.ascontiguousarray(columns, dtype=np.int64),
            np.ascontiguousarray(forms, dtype=np.int64),
            out,
        )
    return out


@jit
def _slot(keys, key):
    """Slot of ``key`` (>= 0) in an open-addressing table of ``keys`` (-1: empty)."""
    mask = keys.shape[0] - 1
    slot = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & mask
    while keys[slot] != -1 and keys[slot] != key:
        slot = (slot + 1) & mask
    return slot


@jit
def _mark_chain(keys, heads, following, key, covered, base):
    """Flag every sentence token whose key (form or column) is ``key``."""
    if key < 0:
        return
    slot = _slot(keys, key)
    token = heads[slot] if keys[slot] == key else -1
    while token >= 0:
        covered[base + token] = True
        token = following[token]


@jit
def near_passages(passages, passage_source, neighbours):
    """``passages`` and every passage at most ``neighbours`` away in the same source (the
    ones :func:`candidate_coverage` reads), with repeats: ascending from each passage's
    lowest neighbour to its highest."""
    n_passages = passage_source.shape[0]
    out = np.empty(passages.shape[0] * (2 * neighbours + 1), dtype=np.int64)
    n = 0
    for i in range(passages.shape[0]):
        passage = passages[i]
        for near in range(max(0, passage - neighbours), min(n_passages, passage + neighbours + 1)):
            if passage_source[near] == passage_source[passage]:
                out[n] = near
                n += 1
    return out[:n]


@jit
def _coverage_kernel(
    row_pointers,
    row_columns,
    column_form,
    part_start,
    part_count,
    part_forms,
    passage_source,
    pair_passage,
    pair_query,
    pair_aligned,
    query_offsets,
    token_columns,
    token_forms,
    row_offsets,
    neighbours,
    block_starts,
    block_ends,
    blocks,
    covered,
):
    n_passages = passage_source.shape[0]
    n_pairs = pair_passage.shape[0]
    first = 0
    while first < n_pairs:
        # the pairs of one sentence share its tables: the sentence's token forms and
        # columns, each key chaining the tokens that have it
        query = pair_query[first]
        last = first
        while last < n_pairs and pair_query[last] == query:
            last += 1
        lo = query_offsets[query]
        n_tokens = query_offsets[query + 1] - lo
        size = 16
        while size < 2 * n_tokens:
            size *= 2
        form_keys = np.full(size, -1, dtype=np.int64)
        form_heads = np.full(size, -1, dtype=np.int64)
        column_keys = np.full(size, -1, dtype=np.int64)
        column_heads = np.full(size, -1, dtype=np.int64)
        next_form = np.full(max(n_tokens, 1), -1, dtype=np.int64)
        next_column = np.full(max(n_tokens, 1), -1, dtype=np.int64)
        for token in range(n_tokens - 1, -1, -1):
            form = token_forms[lo + token]
            if form >= 0:
                slot = _slot(form_keys, form)
                form_keys[slot] = form
                next_form[token] = form_heads[slot]
                form_heads[slot] = token
            column = token_columns[lo + token]
            if column >= 0:
                slot = _slot(column_keys, column)
                column_keys[slot] = column
                next_column[token] = column_heads[slot]
                column_heads[slot] = token
        for pair in range(first, last):
            if not pair_aligned[pair]:
                continue
            base = row_offsets[pair]
            passage = pair_passage[pair]
            source = passage_source[passage]
            stop = min(n_passages, passage + neighbours + 1)
            for near in range(max(0, passage - neighbours), stop):
                if passage_source[near] != source:
                    continue
                for entry in range(row_pointers[near], row_pointers[near + 1]):
                    word = row_columns[entry]
                    _mark_chain(column_keys, column_heads, next_column, word, covered, base)
                    _mark_chain(form_keys, form_heads, next_form, column_form[word], covered, base)
                    part = part_start[word]
                    for index in range(part, part + part_count[word]):
                        _mark_chain(
                            form_keys, form_heads, next_form, part_forms[index], covered, base
                        )
            for block in range(block_starts[pair], block_ends[pair]):
                start = min(max(blocks[block, 0], 0), n_tokens)
                end = min(max(blocks[block, 0] + blocks[block, 2], start), n_tokens)
                for token in range(start, end):
                    covered[base + token] = True
        first = last


def candidate_coverage(
    row_pointers: np.ndarray,
    row_columns: np.ndarray,
    column_form: np.ndarray,
    part_start: np.ndarray,
    part_count: np.ndarray,
    part_forms: np.ndarray,
    passage_source: np.ndarray,
    pair_passage: np.ndarray,
    pair_query: np.ndarray,
    pair_aligned: np.ndarray,
    query_offsets: np.ndarray,
    token_columns: np.ndarray,
    token_forms: np.ndarray,
    neighbours: int,
    block_starts: np.ndarray,
    block_ends: np.ndarray,
    blocks: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Which tokens of its sentence each candidate pair covers.

    Pair ``i`` (passage ``pair_passage[i]``, sentence ``pair_query[i]``) covers token
    ``t`` of the sentence (``query_offsets[q] + t`` in ``token_columns`` /
    ``token_forms``) when, for an aligned pair (``pair_aligned[i]``), a passage at most
    ``neighbours`` away in the same source holds the token's column or a word of its
    form (a word's own form or one of its part forms), or when one of the pair's
    alignment blocks ``blocks[block_starts[i]:block_ends[i]]`` (query position,
    target position, run; clipped to the sentence) matched it. Pairs of one sentence
    should be consecutive (each run of them builds the sentence's look-up tables once).
    Every word in the rows asked about must have its form set.

    Parameters
    ----------
    row_pointers, row_columns : ndarray of int64
        The passages' rows, CSR (passages x index columns).
    column_form, part_start, part_count, part_forms : ndarray of int64
        The words' forms, as in :func:`rows_hold`.
    passage_source : ndarray of int64
        Source of every passage (neighbours cross no source boundary).
    pair_passage, pair_query : ndarray of int64
        The pairs.
    pair_aligned : ndarray of bool
        Pairs that cover anything at all (not embedding-only ones).
    query_offsets : ndarray of int64
        Sentence ``q`` owns tokens ``query_offsets[q]:query_offsets[q + 1]``.
    token_columns, token_forms : ndarray of int64
        Every sentence token's index column (-1: none) and form.
    neighbours : int
        How many passages on each side count.
    block_starts, block_ends : ndarray of int64
        Each pair's range of ``blocks``.
    blocks : ndarray of int64, shape (n_blocks, 3)
        Alignment blocks.

    Returns
    -------
    covered, row_offsets : ndarray
        Pair ``i``'s flags are ``covered[row_offsets[i]:row_offsets[i + 1]]``, one per
        token of its sentence.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> # two passages of one source: columns {0} and {1}; forms 5 and 6
    >>> covered, offsets = candidate_coverage(
    ...     i64(0, 1, 2), i64(0, 1), i64(5, 6), i64(0, 0), i64(0, 0), i64(),
    ...     i64(0, 0), i64(0), i64(0), np.array([True]), i64(0, 4), i64(-1, 1, -1, -1),
    ...     i64(5, 9, 7, 8), 1, i64(0), i64(1), i64(2, 0, 1).reshape(1, 3))
    >>> # form 5 in passage 0, column 1 in its neighbour, token 2 aligned, form 8 nowhere
    >>> covered.tolist(), offsets.tolist()
    ([True, True, True, False], [0, 4])
    """
    pair_query = np.ascontiguousarray(pair_query, dtype=np.int64)
    query_offsets = np.ascontiguousarray(query_offsets, dtype=np.int64)
    lengths = query_offsets[pair_query + 1] - query_offsets[pair_query]
    row_offsets = np.zeros(pair_query.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=row_offsets[1:])
    covered = np.zeros(int(row_offsets[-1]), dtype=np.bool_)
    if covered.shape[0]:
        _coverage_kernel(
            row_pointers,
            row_columns,
            column_form,
            part_start,
            part_count,
            part_forms,
            np.ascontiguousarray(passage_source, dtype=np.int64),
            np.ascontiguousarray(pair_passage, dtype=np.int64),
            pair_query,
            np.ascontiguousarray(pair_aligned, dtype=np.bool_),
            query_offsets,
            np.ascontiguousarray(token_columns, dtype=np.int64),
            np.ascontiguousarray(token_forms, dtype=np.int64),
            row_offsets,
            int(neighbours),
            np.ascontiguousarray(block_starts, dtype=np.int64),
            np.ascontiguousarray(block_ends, dtype=np.int64),
            np.ascontiguousarray(blocks, dtype=np.int64).reshape(-1, 3),
            covered,
        )
    return covered, row_offsets


@jit
def _cover_runs_kernel(
    token_ids,
    passage_token_start,
    passage_token_end,
    passage_source,
    pair_passage,
    pair_query,
    pair_aligned,
    query_offsets,
    query_ids,
    letters,
    neighbours,
    run,
    covered,
    row_offsets,
):
    n_passages = passage_source.shape[0]
    for i in range(pair_passage.shape[0]):
        if not pair_aligned[i]:
            continue
        q = pair_query[i]
        lo = query_offsets[q]
        n = query_offsets[q + 1] - lo
        if n < run:
            continue
        has_letter = False
        for t in range(n):
            has_letter = has_letter or letters[lo + t]
        if not has_letter:
            continue
        passage = pair_passage[i]
        base = row_offsets[i]
        # a letter is covered by a run held in a row, not by a block of the alignment
        # shorter than a run (those runs are held too) or by the passage holding it
        for t in range(n):
            if letters[lo + t]:
                covered[base + t] = False
        for start in range(n - run + 1):
            # only runs holding a letter not yet covered are worth looking for
            wanted = False
            for k in range(run):
                wanted = wanted or (letters[lo + start + k] and not covered[base + start + k])
            if not wanted:
                continue
            found = False
            first = max(0, passage - neighbours)
            for near in range(first, min(n_passages, passage + neighbours + 1)):
                if found or passage_source[near] != passage_source[passage]:
                    continue
                for at in range(passage_token_start[near], passage_token_end[near] - run + 1):
                    same = True
                    for k in range(run):
                        if token_ids[at + k] != query_ids[lo + start + k]:
                            same = False
                            break
                    if same:
                        found = True
                        break
            if found:
                for k in range(run):
                    if letters[lo + start + k]:
                        covered[base + start + k] = True


def cover_runs(
    token_ids: np.ndarray,
    passage_token_start: np.ndarray,
    passage_token_end: np.ndarray,
    passage_source: np.ndarray,
    pair_passage: np.ndarray,
    pair_query: np.ndarray,
    pair_aligned: np.ndarray,
    query_offsets: np.ndarray,
    query_ids: np.ndarray,
    letters: np.ndarray,
    neighbours: int,
    run: int,
    covered: np.ndarray,
    row_offsets: np.ndarray,
) -> None:
    """Set, in each aligned pair's row of ``covered``, the flags of the ``letters`` of
    its sentence: True when the letter lies in a run of ``run`` consecutive sentence
    tokens which its passage, or one at most ``neighbours`` away in the same source, holds
    in a row (same token ids), else False (a sentence shorter than ``run``: unchanged).

    Pair ``i``'s row is ``covered[row_offsets[i]:...]``, one flag per token of sentence
    ``pair_query[i]`` (``query_ids[query_offsets[q]:query_offsets[q + 1]]``); passage
    ``p``'s tokens are ``token_ids[passage_token_start[p]:passage_token_end[p]]``. The
    other flags are left as they are; a run whose letters are all covered is not looked
    for. The
    passages and sentences of a pipeline call are a few dozen tokens: each run is looked
    for by a scan of the passages near the pair's.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> # one passage of tokens 7 8 9 1; the sentence 5 7 8 9 6, all letters but 5
    >>> covered = np.array([False, False, False, False, True])
    >>> cover_runs(i64(7, 8, 9, 1), i64(0), i64(4), i64(0), i64(0), i64(0),
    ...            np.array([True]), i64(0, 5), i64(5, 7, 8, 9, 6),
    ...            np.array([False, True, True, True, True]), 1, 3, covered, i64(0, 5))
    >>> covered.tolist()  # (6 is in no run the passage holds)
    [False, True, True, True, False]
    >>> covered = np.zeros(4, dtype=bool)
    >>> cover_runs(i64(7, 8, 9, 1), i64(0), i64(4), i64(0), i64(0), i64(0),
    ...            np.array([True]), i64(0, 4), i64(5, 7, 8, 9),
    ...            np.array([False, True, True, True]), 1, 3, covered, i64(0, 4))
    >>> covered.tolist()
    [False, True, True, True]
    """
    _cover_runs_kernel(
        token_ids, passage_token_start, passage_token_end, passage_source, pair_passage,
        pair_query, pair_aligned, query_offsets, query_ids, letters, neighbours, run,
        covered, row_offsets,
    )
