"""Kernels of the evidence stage: each pair's evidence characters, the facts the records
read of every judged pair, and the records of a batch's sentences (the choice of each
sentence's evidence set and shown citations, their evidence spans, coverage and
uncovered runs).

A claim often fuses facts stated in two or three source sentences, while the best
citations by score are often near-copies of one sentence; so the pipeline chooses the
evidence of a sentence as a greedy set cover over its best candidates
(:func:`evidence_set`). The arrays are tiny (a dozen candidates, a few dozen tokens), so
the cost was numpy's and Python's per-call overhead, dozens of calls per sentence: here
one compiled call (:func:`records_batch`) does it for every sentence of a batch, and the
records stage only reads the values of the few alignments that may contradict one and
builds the result objects.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit
from citekit.kernels._coverage import _covered_share, _uncovered_runs

__all__ = [
    "EVIDENCE_REACH",
    "FACT_ANSWER_FIRST",
    "FACT_ANSWER_LAST",
    "FACT_BASE",
    "FACT_BLOCK_HI",
    "FACT_BLOCK_LO",
    "FACT_CHAR_END",
    "FACT_CHAR_START",
    "FACT_PASSAGE",
    "FACT_PASSAGE_CHAR_END",
    "FACT_PASSAGE_CHAR_START",
    "FACT_SOURCE",
    "FACT_SOURCE_INDEX",
    "FACT_TOKEN_HI",
    "FACT_TOKEN_LO",
    "N_FACTS",
    "RECORD_CANDIDATE",
    "RECORD_CHECK_VALUES",
    "RECORD_SHOWN",
    "evidence_chars",
    "evidence_set",
    "judged_int_facts",
    "records_batch",
    "widen_evidence",
]

# The rows of judged_int_facts' table (one column per judged pair); the kernels below read
# them by these names, and so does the records stage (compiled in as constants).
FACT_SOURCE = 0  # (records_batch's per-source cap counts this row)
FACT_SOURCE_INDEX = 1
FACT_PASSAGE = 2
FACT_BASE = 3  # the source's offset in its document
FACT_BLOCK_LO = 4  # the pair's matched blocks: rows FACT_BLOCK_LO:FACT_BLOCK_HI of blocks
FACT_BLOCK_HI = 5
FACT_TOKEN_LO = 6  # the passage's tokens in the corpus
FACT_TOKEN_HI = 7
FACT_CHAR_START = 8  # the evidence characters in the source's text
FACT_CHAR_END = 9
FACT_ANSWER_FIRST = 10  # the first and last answer tokens of the alignment
FACT_ANSWER_LAST = 11
FACT_PASSAGE_CHAR_START = 12  # the passage's characters, absolute in the document
FACT_PASSAGE_CHAR_END = 13
N_FACTS = 14

# The flags of records_batch's rows
RECORD_SHOWN = 1  # a shown citation (else in the evidence set only)
RECORD_CHECK_VALUES = 2  # its values may face the sentence's: find_conflicts reads them
# outside the evidence set and the shown rows: shown only when it carries a conflict the
# shown citations do not (the records stage decides), never judged on
RECORD_CANDIDATE = 4


@jit
def evidence_chars(
    pair_passage,
    target_start,
    target_end,
    embedding_only,
    passage_token_start,
    passage_char_start,
    passage_char_end,
    token_starts,
    token_ends,
):
    """Character range of each pair's evidence (see
    :func:`citekit._citations.ranking.evidence_char_ranges`); one pass instead of ten array
    operations."""
    n_pairs = pair_passage.shape[0]
    char_start = np.zeros(n_pairs, dtype=np.int64)
    char_end = np.zeros(n_pairs, dtype=np.int64)
    last_index = token_starts.shape[0] - 1
    for p in range(n_pairs):
        passage = pair_passage[p]
        if embedding_only[p]:
            char_start[p] = passage_char_start[passage]
            char_end[p] = passage_char_end[passage]
        elif last_index >= 0:
            first_token = passage_token_start[passage] + target_start[p]
            last_token = passage_token_start[passage] + max(target_end[p] - 1, target_start[p])
            char_start[p] = token_starts[min(first_token, last_index)]
            char_end[p] = token_ends[min(last_token, last_index)]
    return char_start, char_end


@jit
def judged_int_facts(pairs, pair_passage, passage_source, base_offsets, source_indices,
                     block_offsets, passage_token_start, passage_token_end, char_start,
                     char_end, query_start, query_end, passage_char_start,
                     passage_char_end):
    """The integer facts the records need of each judged pair, one row each (see
    :class:`citekit._citations.records._JudgedFacts`), so that one ``tolist`` gives them
    all, in the rows named ``FACT_*``: source, source index, passage, base offset, block
    range (lo, hi), token range (lo, hi), evidence characters (start, end), answer token
    range (start, last: ``query_end - 1``, at least the start), passage characters (start,
    end; absolute)."""
    n = pairs.shape[0]
    out = np.empty((N_FACTS, n), dtype=np.int64)
    for i in range(n):
        pair = pairs[i]
        passage = pair_passage[pair]
        source = passage_source[passage]
        base = base_offsets[source]
        out[FACT_SOURCE, i] = source
        out[FACT_SOURCE_INDEX, i] = source_indices[source]
        out[FACT_PASSAGE, i] = passage
        out[FACT_BASE, i] = base
        out[FACT_BLOCK_LO, i] = block_offsets[pair]
        out[FACT_BLOCK_HI, i] = block_offsets[pair + 1]
        out[FACT_TOKEN_LO, i] = passage_token_start[passage]
        out[FACT_TOKEN_HI, i] = passage_token_end[passage]
        out[FACT_CHAR_START, i] = char_start[pair]
        out[FACT_CHAR_END, i] = char_end[pair]
        out[FACT_ANSWER_FIRST, i] = query_start[pair]
        out[FACT_ANSWER_LAST, i] = max(query_end[pair] - 1, query_start[pair])
        out[FACT_PASSAGE_CHAR_START, i] = base + passage_char_start[passage]
        out[FACT_PASSAGE_CHAR_END, i] = base + passage_char_end[passage]
    return out


# how far the evidence reaches past its aligned tokens for content of the sentence that the
# passage states beside them: this many passage tokens in a row without such content end
# the reach ("revenue of $2.4 billion, up 15%" for "Revenue rose 15% to $2.4 billion", whose
# alignment matched "$2.4 billion")
EVIDENCE_REACH = 5


@jit
def _takes(token_id, query_ids, content, taken, lo, hi):
    """Whether a passage token of id ``token_id`` states a content token of the sentence
    (tokens ``lo:hi`` of ``query_ids``) not yet in the evidence (``taken``, per sentence
    token); marks that token taken."""
    for k in range(lo, hi):
        if content[k] and not taken[k - lo] and query_ids[k] == token_id:
            taken[k - lo] = True
            return True
    return False


@jit
def _in_sentence(token_id, query_ids, lo, hi):
    """Whether some token of the sentence (tokens ``lo:hi`` of ``query_ids``) has this id."""
    for k in range(lo, hi):
        if query_ids[k] == token_id:
            return True
    return False


@jit
def widen_evidence(facts, pair_query, query_offsets, query_ids, content, blocks, token_ids,
                   token_starts, token_ends, embedding_only, reach):
    """Widen each judged pair's evidence characters (rows ``FACT_CHAR_START`` and
    ``FACT_CHAR_END`` of :func:`judged_int_facts`' table ``facts``, in place) to the
    content its passage states beside the aligned tokens, so that the evidence holds what
    the sentence's status rests on.

    Column ``i`` is a pair of sentence ``pair_query[i]`` (tokens ``query_offsets[q]:
    query_offsets[q + 1]`` of ``query_ids``, ``content`` flags). From the first and the
    last aligned passage token outward, a passage token with the id of a content token
    of the sentence that the alignment did not match (each such token once) moves the
    evidence's edge to it; ``reach`` tokens in a row without one stop the search (it
    never leaves the passage). Then tokens of the sentence glued to an edge (no character
    between: ``%`` after ``15``, ``$`` before ``2.4``) join it. Embedding-only pairs keep
    their whole passage.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> # sentence "revenue rose 15 % to 2.4" (ids 1 2 3 4 5 6); passage "revenue of
    >>> # 2.4 up 15 %" (ids 1 7 6 8 3 4), its alignment matched "2.4" only
    >>> facts = np.zeros((N_FACTS, 1), dtype=np.int64)
    >>> facts[FACT_BLOCK_HI, 0], facts[FACT_TOKEN_HI, 0] = 1, 6
    >>> facts[FACT_CHAR_START, 0], facts[FACT_CHAR_END, 0] = 11, 14
    >>> widen_evidence(
    ...     facts, i64(0), i64(0, 6), i64(1, 2, 3, 4, 5, 6),
    ...     np.array([1, 1, 1, 0, 0, 1], dtype=bool), i64(5, 2, 1).reshape(1, 3),
    ...     i64(1, 7, 6, 8, 3, 4), i64(0, 8, 11, 15, 18, 20), i64(7, 10, 14, 17, 20, 21),
    ...     np.zeros(1, dtype=bool), 5)
    >>> int(facts[FACT_CHAR_START, 0]), int(facts[FACT_CHAR_END, 0])
    (0, 21)
    """
    for i in range(facts.shape[1]):
        if embedding_only[i]:
            continue
        q = pair_query[i]
        lo, hi = query_offsets[q], query_offsets[q + 1]
        taken = np.zeros(hi - lo, dtype=np.bool_)
        first = -1
        last = -1
        for b in range(facts[FACT_BLOCK_LO, i], facts[FACT_BLOCK_HI, i]):
            length = blocks[b, 2]
            if length <= 0:
                continue
            if first < 0 or blocks[b, 1] < first:
                first = blocks[b, 1]
            last = max(last, blocks[b, 1] + length - 1)
            for k in range(length):
                if blocks[b, 0] + k < hi - lo:
                    taken[blocks[b, 0] + k] = True
        token_lo = facts[FACT_TOKEN_LO, i]
        n_passage = facts[FACT_TOKEN_HI, i] - token_lo
        if first < 0 or last >= n_passage:
            continue
        start = first
        gap = 0
        t = first - 1
        while t >= 0 and gap < reach:
            if _takes(token_ids[token_lo + t], query_ids, content, taken, lo, hi):
                start = t
                gap = 0
            else:
                gap += 1
            t -= 1
        end = last
        gap = 0
        t = last + 1
        while t < n_passage and gap < reach:
            if _takes(token_ids[token_lo + t], query_ids, content, taken, lo, hi):
                end = t
                gap = 0
            else:
                gap += 1
            t += 1
        while (
            start > 0
            and token_ends[token_lo + start - 1] == token_starts[token_lo + start]
            and _in_sentence(token_ids[token_lo + start - 1], query_ids, lo, hi)
        ):
            start -= 1
        while (
            end + 1 < n_passage
            and token_starts[token_lo + end + 1] == token_ends[token_lo + end]
            and _in_sentence(token_ids[token_lo + end + 1], query_ids, lo, hi)
        ):
            end += 1
        facts[FACT_CHAR_START, i] = min(facts[FACT_CHAR_START, i], token_starts[token_lo + start])
        facts[FACT_CHAR_END, i] = max(facts[FACT_CHAR_END, i], token_ends[token_lo + end])


@jit
def _evidence_set_kernel(
    covers,
    matched,
    n_pool,
    weights,
    content,
    row_source,
    by_score_rows,
    top_k,
    max_per_source,
    uncovered_ok,
    selected,
    shown,
):
    n_rows, n_tokens = covers.shape
    # a row may become a citation when it covers a content token of the sentence (or is
    # allowed to without: an embedding-only candidate)
    showable = np.zeros(n_rows, dtype=np.bool_)
    for row in range(n_rows):
        showable[row] = uncovered_ok[row]
        for token in range(n_tokens):
            if content[token] and covers[row, token]:
                showable[row] = True
                break
    union = np.zeros(n_tokens, dtype=np.bool_)
    n_selected = 0
    if top_k > 0:
        # the best showable citation by score anchors the set (so citations[0] stays
        # the best)
        for row in range(n_pool):
            if showable[row]:
                selected[row] = True
                n_selected = 1
                for token in range(n_tokens):
                    union[token] = covers[row, token]
                break
    # then the pool pair adding the most weight of uncovered content tokens (the first
    # best: the better ranked), while some pair adds anything (weights are 1 and 2, or
    # 0.25 and 0: exact sums, so ties are real ties)
    while n_selected < top_k:
        best = -1
        best_gain = 0.0
        for row in range(n_pool):
            if selected[row] or not showable[row]:
                continue
            gain = 0.0
            for token in range(n_tokens):
                if content[token] and covers[row, token] and not union[token]:
                    gain += weights[token]
            if best < 0 or gain > best_gain:
                best = row
                best_gain = gain
        if best < 0 or best_gain <= 0.0:
            break
        selected[best] = True
        n_selected += 1
        for token in range(n_tokens):
            union[token] = union[token] or covers[best, token]
    # shown: the evidence set in pool order, then the rest of the pool and the best by
    # score, each only when its
    # alignment matched a content token that the rows shown before it did not (a citation
    # adding nothing to the evidence shown is filler; covers alone would count the words
    # of the passages next to it, which its evidence does not show), at most
    # max_per_source per source and top_k in all
    n_shown = 0
    shown_union = np.zeros(n_tokens, dtype=np.bool_)
    for step in range(2 * n_pool + by_score_rows.shape[0]):
        if n_shown >= top_k:
            break
        if step < n_pool:  # the evidence set
            row = step
            if not selected[row]:
                continue
        elif step < 2 * n_pool:  # the rest of the pool, then the best by score
            row = step - n_pool
            if selected[row] or not showable[row]:
                continue
        else:
            row = by_score_rows[step - 2 * n_pool]
            if not showable[row]:
                continue
        adds = uncovered_ok[row]
        for token in range(n_tokens):
            if content[token] and matched[row, token] and not shown_union[token]:
                adds = True
                break
        if not adds:
            continue
        source_count = 0
        duplicate = False
        for i in range(n_shown):
            duplicate = duplicate or shown[i] == row
            if row_source[shown[i]] == row_source[row]:
                source_count += 1
        if not duplicate and source_count < max_per_source:
            shown[n_shown] = row
            n_shown += 1
            for token in range(n_tokens):
                shown_union[token] = shown_union[token] or matched[row, token]
    return n_shown


def evidence_set(
    covers: np.ndarray,
    n_pool: int,
    weights: np.ndarray,
    content: np.ndarray,
    row_source: np.ndarray,
    by_score_rows: np.ndarray,
    top_k: int,
    max_per_source: int,
    uncovered_ok: np.ndarray | None = None,
    matched: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The evidence set of a sentence and the citations shown for it.

    Rows are candidate citations: the evidence pool (rows ``0:n_pool``, best by score
    first), then any others ranked by score. Only rows covering a content token of the
    sentence can be chosen or shown (evidence that supports nothing of the sentence is
    no citation), and the rows of ``uncovered_ok`` without one. The evidence set starts
    with the first such pool row and greedily adds the pool row covering the largest
    ``weights`` of still uncovered content tokens (ties: the lower row), at most
    ``top_k`` rows, stopping when no row adds anything. Shown are the evidence set's
    rows in order, then the other pool rows and the rows of ``by_score_rows``, skipping
    repeats, rows that
    cannot be shown, rows that matched no content token (``matched``) that the rows
    shown before them did not (filler; rows of ``uncovered_ok`` excepted) and rows
    whose source already has ``max_per_source`` shown, at most ``top_k``.

    Parameters
    ----------
    covers : ndarray of bool, shape (n_rows, n_tokens)
        Which sentence tokens each row covers.
    n_pool : int
        Rows in the evidence pool (at most ``n_rows``).
    weights : ndarray of float64
        Each token's coverage weight.
    content : ndarray of bool
        Content tokens (only they count).
    row_source : ndarray of int64
        Source of each row.
    by_score_rows : ndarray of int64
        The rows of the best citations by score, best first.
    top_k, max_per_source : int
        The limits.
    uncovered_ok : ndarray of bool, optional
        Rows that may be chosen and shown although they cover no content token (the
        pipeline's embedding-only candidates). Default: none.
    matched : ndarray of bool, shape (n_rows, n_tokens), optional
        Which sentence tokens each row's alignment matched (what its evidence shows).
        Default: ``covers``.

    Returns
    -------
    selected : ndarray of bool
        The evidence set (``n_rows`` flags).
    shown : ndarray of int64
        The shown rows, in order.

    Examples
    --------
    >>> import numpy as np
    >>> covers = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1]], dtype=bool)
    >>> selected, shown = evidence_set(
    ...     covers, 3, np.ones(4), np.ones(4, dtype=bool), np.array([0, 0, 1]),
    ...     np.array([0, 1]), 3, 2)
    >>> selected.tolist(), shown.tolist()
    ([True, False, True], [0, 2])

    Row 1 covers nothing that row 0 does not: it is not shown.
    """
    covers = np.ascontiguousarray(covers, dtype=np.bool_)
    if covers.ndim != 2:
        raise ValueError(f"covers must be 2-dimensional, got shape {covers.shape}")
    n_rows, n_tokens = covers.shape
    if not 0 <= n_pool <= n_rows:
        raise ValueError(f"n_pool must be between 0 and {n_rows}, got {n_pool}")
    uncovered_ok = np.ascontiguousarray(
        np.zeros(n_rows, dtype=np.bool_) if uncovered_ok is None else uncovered_ok,
        dtype=np.bool_,
    )
    if uncovered_ok.shape != (n_rows,):
        raise ValueError(
            f"uncovered_ok must hold one flag per row ({n_rows}), got shape "
            f"{uncovered_ok.shape}"
        )
    matched = covers if matched is None else np.ascontiguousarray(matched, dtype=np.bool_)
    if matched.shape != covers.shape:
        raise ValueError(
            f"matched must have the shape of covers {covers.shape}, got {matched.shape}"
        )
    selected = np.zeros(n_rows, dtype=np.bool_)
    shown = np.zeros(max(int(top_k), 0), dtype=np.int64)
    n_shown = _evidence_set_kernel(
        covers,
        matched,
        int(n_pool),
        np.ascontiguousarray(weights, dtype=np.float64).reshape(n_tokens),
        np.ascontiguousarray(content, dtype=np.bool_).reshape(n_tokens),
        np.ascontiguousarray(row_source, dtype=np.int64).reshape(n_rows),
        np.ascontiguousarray(by_score_rows, dtype=np.int64).reshape(-1),
        int(top_k),
        int(max_per_source),
        uncovered_ok,
        selected,
        shown,
    )
    return selected, shown[:n_shown]


@jit
def _has_value_region(blocks, block_lo, block_hi, values, lo, n_answer, n_source):
    """Whether :func:`citekit._citations.conflicts.find_conflicts` has a region to look at for the
    alignment ``blocks[block_lo:block_hi]`` of answer tokens ``lo:lo + n_answer``
    (``values``: which tokens are values) and ``n_source`` passage tokens: a gap between
    two blocks, or one token before the first block or after the last, that holds a
    value of the answer. Where it has none, it returns no conflict."""
    first = True
    q_lo = 0
    t_lo = 0
    for b in range(block_lo, block_hi):
        q_hi, t_hi, length = blocks[b, 0], blocks[b, 1], blocks[b, 2]
        if length <= 0:
            continue
        if first:
            q_lo, t_lo, first = max(0, q_hi - 1), max(0, t_hi - 1), False
        if q_lo < q_hi and t_lo < t_hi:
            for i in range(q_lo, min(q_hi, n_answer)):
                if values[lo + i]:
                    return True
        q_lo, t_lo = q_hi + length, t_hi + length
    if first:
        return False
    return q_lo < n_answer and t_lo < n_source and values[lo + q_lo]


@jit
def _record_spans(facts, entry, blocks, token_starts, token_ends, merge_gap, max_spans,
                  out, n_out):
    """Write the evidence spans of judged entry ``entry`` (one per matched block, merged
    across gaps of at most ``merge_gap`` characters; the whole aligned range when that
    gives more than ``max_spans``) to ``out[n_out:]``; returns the new ``n_out``."""
    token_lo = facts[FACT_TOKEN_LO, entry]
    n_ranges = 0
    for b in range(facts[FACT_BLOCK_LO, entry], facts[FACT_BLOCK_HI, entry]):
        first = token_lo + blocks[b, 1]
        block_start = token_starts[first]
        block_end = token_ends[first + blocks[b, 2] - 1]
        if n_ranges and block_start - out[n_out + n_ranges - 1, 1] <= merge_gap:
            out[n_out + n_ranges - 1, 1] = max(out[n_out + n_ranges - 1, 1], block_end)
        else:
            out[n_out + n_ranges, 0] = block_start
            out[n_out + n_ranges, 1] = block_end
            n_ranges += 1
    if n_ranges > max_spans:
        out[n_out, 0] = facts[FACT_CHAR_START, entry]
        out[n_out, 1] = facts[FACT_CHAR_END, entry]
        return n_out + 1
    return n_out + n_ranges


@jit
def records_batch(covers, cover_offsets, judged_offsets, n_pool, chosen_rows, chosen_offsets,
                  query_offsets, query_starts, query_ends, weights, content, values, facts,
                  uncovered_ok, aligned_content, blocks, token_starts, token_ends, top_k,
                  max_per_source, multi_span, merge_gap, max_spans):
    """The records of every sentence of a batch, as far as numbers take them
    (the records stage lays the arrays out and reads the result).

    Sentence ``q`` has tokens ``query_offsets[q]:query_offsets[q + 1]`` (their characters
    ``query_starts``/``query_ends``, coverage ``weights``, ``content`` and ``values``
    flags) and judged rows ``judged_offsets[q]:judged_offsets[q + 1]`` (entries of
    ``facts``, :func:`judged_int_facts`' rows (``FACT_*``), whose row ``FACT_SOURCE`` is
    what ``max_per_source`` counts (the pipeline puts a chunk's document there), of
    ``uncovered_ok``: embedding-only, and of ``aligned_content``: content tokens the
    alignment matched), the first ``n_pool[q]`` its evidence pool, ``chosen_rows[
    chosen_offsets[q]:chosen_offsets[q + 1]]`` its citations by score; which tokens row
    ``r`` covers is ``covers[cover_offsets[q] + r * n_tokens:][:n_tokens]``. ``blocks``
    and ``token_starts``/``token_ends`` are the alignments' blocks and the corpus's tokens.

    Returns ``(rec_offsets, rec_rows, rec_flags, rec_answer, coverage, run_offsets, runs,
    span_offsets, spans)``: sentence ``q``'s evidence set and shown rows are
    ``rec_rows[rec_offsets[q]:rec_offsets[q + 1]]`` (ascending), each with flags
    ``RECORD_SHOWN`` (shown, :func:`evidence_set`) and ``RECORD_CHECK_VALUES`` (a real
    alignment, two content tokens matched or more,
    with a value of the sentence beside or between its matched blocks: to be read by
    :func:`citekit._citations.conflicts.find_conflicts`, which finds no conflict elsewhere) and the
    answer characters its alignment covers (from the start of its first aligned token,
    ``FACT_ANSWER_FIRST``, to the end of its last, ``FACT_ANSWER_LAST``; -1 for an
    embedding-only row), and, while fewer than ``top_k`` rows are shown, the other rows
    covering a content token of the sentence (not embedding-only), flagged
    ``RECORD_CANDIDATE``: the records stage shows one that carries a conflict the shown
    rows do not, and judges the sentence without them; the
    covered share of the sentence's weights (over the rows that are not candidates) and
    its runs of uncovered content tokens
    (character ranges ``runs[run_offsets[q]:run_offsets[q + 1]]``; a stop word between two
    joins them) when no evidence contradicts a value (else see
    :func:`contested_coverage`); row ``i``'s evidence spans ``spans[
    span_offsets[i]:span_offsets[i + 1]]``, character ranges in its source's text: one per
    matched block, merged across gaps of at most ``merge_gap`` characters, or the whole
    aligned range (``FACT_CHAR_START``, ``FACT_CHAR_END``) without ``multi_span``, with
    fewer than two blocks, for
    more than ``max_spans`` spans, or for an embedding-only row.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> facts = np.zeros((N_FACTS, 1), dtype=np.int64)
    >>> facts[FACT_BLOCK_HI, 0] = 1; facts[FACT_CHAR_END, 0] = 4
    >>> out = records_batch(
    ...     np.array([True, False]), i64(0), i64(0, 1), i64(1), i64(0), i64(0, 1), i64(0, 2),
    ...     i64(0, 5), i64(4, 9), np.ones(2), np.ones(2, dtype=bool), np.zeros(2, dtype=bool),
    ...     facts, np.zeros(1, dtype=bool), np.ones(1), i64(0, 0, 1).reshape(1, 3), i64(0),
    ...     i64(4), 3, 2, True, 0, 3)
    >>> rec_rows, rec_answer, coverage, runs, spans = out[1], out[3], out[4], out[6], out[8]
    >>> rec_rows.tolist(), rec_answer.tolist(), coverage.tolist()
    ([0], [[0, 4]], [0.5])
    >>> runs.tolist(), spans.tolist()
    ([[5, 9]], [[0, 4]])
    """
    n_queries = query_offsets.shape[0] - 1
    n_judged = uncovered_ok.shape[0]
    rec_offsets = np.zeros(n_queries + 1, dtype=np.int64)
    rec_rows = np.empty(n_judged, dtype=np.int64)
    rec_flags = np.zeros(n_judged, dtype=np.int64)
    rec_answer = np.full((n_judged, 2), -1, dtype=np.int64)
    coverage = np.zeros(n_queries, dtype=np.float64)
    run_offsets = np.zeros(n_queries + 1, dtype=np.int64)
    runs = np.empty((query_offsets[n_queries] - query_offsets[0], 2), dtype=np.int64)
    # a shown row has at most one span per block, and one without blocks
    capacity = n_judged
    for entry in range(n_judged):
        capacity += facts[FACT_BLOCK_HI, entry] - facts[FACT_BLOCK_LO, entry]
    spans = np.empty((capacity, 2), dtype=np.int64)
    span_offsets = np.zeros(n_judged + 1, dtype=np.int64)
    # (int64 counters from the start: with a literal 0, the type numba first infers
    # for them, the functions they are passed to would compile twice)
    n_rec = np.int64(0)
    n_runs = np.int64(0)
    n_spans = np.int64(0)
    for q in range(n_queries):
        lo, hi = query_offsets[q], query_offsets[q + 1]
        n_tokens = hi - lo
        first = judged_offsets[q]
        n_rows = judged_offsets[q + 1] - first
        row_covers = covers[cover_offsets[q]:cover_offsets[q] + n_rows * n_tokens].reshape(
            (n_rows, n_tokens)
        )
        # the tokens each row's alignment matched: what its evidence shows
        row_matched = np.zeros((n_rows, n_tokens), dtype=np.bool_)
        for row in range(n_rows):
            for b in range(facts[FACT_BLOCK_LO, first + row], facts[FACT_BLOCK_HI, first + row]):
                for k in range(max(blocks[b, 2], 0)):
                    if blocks[b, 0] + k < n_tokens:
                        row_matched[row, blocks[b, 0] + k] = True
        selected = np.zeros(n_rows, dtype=np.bool_)
        shown = np.zeros(max(top_k, 0), dtype=np.int64)
        n_shown = _evidence_set_kernel(
            row_covers, row_matched, n_pool[q], weights[lo:hi], content[lo:hi],
            facts[FACT_SOURCE, first:first + n_rows],
            chosen_rows[chosen_offsets[q]:chosen_offsets[q + 1]],
            top_k, max_per_source, uncovered_ok[first:first + n_rows], selected, shown,
        )
        is_shown = np.zeros(n_rows, dtype=np.bool_)
        for i in range(n_shown):
            is_shown[shown[i]] = True
        covered = np.zeros(n_tokens, dtype=np.bool_)
        for row in range(n_rows):
            entry = first + row
            candidate = False
            if not (selected[row] or is_shown[row]):
                # while a slot is free, an aligned row covering some content may still be
                # shown for a conflict the shown rows do not carry
                if n_shown >= top_k or uncovered_ok[entry]:
                    continue
                for t in range(n_tokens):
                    if content[lo + t] and row_covers[row, t]:
                        candidate = True
                        break
                if not candidate:
                    continue
            flags = RECORD_SHOWN if is_shown[row] else 0
            if candidate:
                flags = RECORD_CANDIDATE
            if (
                not uncovered_ok[entry]
                and aligned_content[entry] >= 2
                and _has_value_region(
                    blocks, facts[FACT_BLOCK_LO, entry], facts[FACT_BLOCK_HI, entry], values, lo,
                    n_tokens, facts[FACT_TOKEN_HI, entry] - facts[FACT_TOKEN_LO, entry],
                )
            ):
                flags |= RECORD_CHECK_VALUES
            rec_rows[n_rec] = row
            rec_flags[n_rec] = flags
            if not uncovered_ok[entry]:
                rec_answer[n_rec, 0] = query_starts[lo + facts[FACT_ANSWER_FIRST, entry]]
                rec_answer[n_rec, 1] = query_ends[lo + facts[FACT_ANSWER_LAST, entry]]
            # its evidence spans (a row not shown may be shown for a conflict)
            whole = uncovered_ok[entry] or not multi_span
            if whole or facts[FACT_BLOCK_HI, entry] - facts[FACT_BLOCK_LO, entry] < 2:
                spans[n_spans, 0] = facts[FACT_CHAR_START, entry]
                spans[n_spans, 1] = facts[FACT_CHAR_END, entry]
                n_spans += 1
            else:
                n_spans = _record_spans(
                    facts, entry, blocks, token_starts, token_ends, merge_gap, max_spans,
                    spans, n_spans,
                )
            n_rec += 1
            span_offsets[n_rec] = n_spans
            if not candidate:
                for t in range(n_tokens):
                    covered[t] = covered[t] or row_covers[row, t]
        rec_offsets[q + 1] = n_rec
        coverage[q] = _covered_share(covered, weights[lo:hi])
        n_runs = _uncovered_runs(
            covered, content[lo:hi], query_starts[lo:hi], query_ends[lo:hi], np.bool_(True), runs,
            n_runs,  # (a run-time True: the coverage kernel's call has the same types)
        )
        run_offsets[q + 1] = n_runs
    return (
        rec_offsets, rec_rows[:n_rec], rec_flags[:n_rec], rec_answer[:n_rec], coverage,
        run_offsets, runs[:n_runs], span_offsets[:n_rec + 1], spans[:n_spans],
    )
