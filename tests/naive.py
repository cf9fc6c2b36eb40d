"""Slow, obviously correct reference implementations that the numba kernels must match.

Nothing here is optimized: each function follows its definition literally (tuples for
the tie-breaking order, full matrices, Python lists).
"""

from __future__ import annotations

import difflib
from typing import Sequence


def naive_band(query: Sequence[int], target: Sequence[int], band_width: int):
    """The seeded band: ``(diag_lo, diag_hi)``, or None when no token is shared.

    The centre is the token diagonal ``c`` (``-(n-1) <= c <= m-1``) whose window
    ``[c - w, c + w]`` holds the most pairs ``query[i] == target[j]`` (by diagonal
    ``j - i``); ties go to the smallest ``c``.
    """
    n, m = len(query), len(target)
    diagonals = [j - i for i in range(n) for j in range(m) if query[i] == target[j]]
    if not diagonals:
        return None
    best_center, best_count = None, -1
    for center in range(-(n - 1), m):
        count = sum(1 for d in diagonals if center - band_width <= d <= center + band_width)
        if count > best_count:
            best_center, best_count = center, count
    return max(best_center - band_width, -n), min(best_center + band_width, m)


def naive_smith_waterman(
    query: Sequence[int],
    target: Sequence[int],
    match_score: int = 2,
    mismatch_score: int = -1,
    gap_score: int = -1,
    diag_lo: int | None = None,
    diag_hi: int | None = None,
):
    """Full-matrix Smith-Waterman with citekit's tie-breaking, restricted to a band.

    Returns ``(score, query_start, query_end, target_start, target_end, matches, blocks,
    path)`` where ``path`` lists the DP cells visited from start to end (empty for the
    empty alignment).

    Cell ``(i, j)`` (``i`` query tokens and ``j`` target tokens consumed) holds the best
    tuple ``(score, matches, -target_start, -query_start)`` over alignments ending there;
    only cells with ``diag_lo <= j - i <= diag_hi`` exist.
    """
    n, m = len(query), len(target)
    empty = (0, 0, 0, 0, 0, 0, (), [])
    if n == 0 or m == 0:
        return empty
    lo = -n if diag_lo is None else diag_lo
    hi = m if diag_hi is None else diag_hi

    def inside(i, j):
        return 0 <= i <= n and 0 <= j <= m and lo <= j - i <= hi

    def step(i, j):  # diagonal step into cell (i, j)
        if query[i - 1] == target[j - 1]:
            return (match_score, 1)
        return (mismatch_score, 0)

    def add(cell, delta):
        return (cell[0] + delta[0], cell[1] + delta[1], cell[2], cell[3])

    table = {}
    for i in range(n + 1):
        for j in range(m + 1):
            if not inside(i, j):
                continue
            candidates = [(0, 0, -j, -i)]
            if i > 0 and j > 0 and inside(i - 1, j - 1):
                candidates.append(add(table[i - 1, j - 1], step(i, j)))
            if i > 0 and inside(i - 1, j):
                candidates.append(add(table[i - 1, j], (gap_score, 0)))
            if j > 0 and inside(i, j - 1):
                candidates.append(add(table[i, j - 1], (gap_score, 0)))
            table[i, j] = max(candidates)

    def preference(cell):
        (i, j), (score, matches, neg_ts, neg_qs) = cell
        span = (i + neg_qs) + (j + neg_ts)
        return (score, matches, neg_ts, neg_qs, -span, -j, -i)

    (end_i, end_j), best = max(table.items(), key=preference)
    if best[0] <= 0:
        return empty
    start_j, start_i = -best[2], -best[3]
    i, j = end_i, end_j
    path = [(i, j)]
    matches = 0
    matched_pairs = []
    while (i, j) != (start_i, start_j):
        value = table[i, j]
        diagonal = i > 0 and j > 0 and inside(i - 1, j - 1)
        if diagonal and add(table[i - 1, j - 1], step(i, j)) == value:
            if query[i - 1] == target[j - 1]:
                matches += 1
                matched_pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i > 0 and inside(i - 1, j) and add(table[i - 1, j], (gap_score, 0)) == value:
            i -= 1
        elif j > 0 and inside(i, j - 1) and add(table[i, j - 1], (gap_score, 0)) == value:
            j -= 1
        else:
            raise AssertionError("reference traceback lost its path")
        path.append((i, j))
    path.reverse()
    assert matches == best[1]
    # runs of matched pairs that are consecutive on the path
    matched_pairs.reverse()
    blocks = []
    for qi, tj in matched_pairs:
        if blocks and blocks[-1][0] + blocks[-1][2] == qi and blocks[-1][1] + blocks[-1][2] == tj:
            blocks[-1][2] += 1
        else:
            blocks.append([qi, tj, 1])
    return (best[0], start_i, end_i, start_j, end_j, matches, tuple(map(tuple, blocks)), path)


def naive_lcs_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Textbook O(n * m) LCS dynamic programme."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def naive_matching_blocks(a: Sequence[int], b: Sequence[int]) -> list[tuple[int, int, int]]:
    """difflib itself: the behaviour ``matching_blocks`` must reproduce."""
    matcher = difflib.SequenceMatcher(None, list(a), list(b), autojunk=False)
    return [tuple(block) for block in matcher.get_matching_blocks()]


# =======================================================================================
# Sentence segmentation (reference of citekit._segment_kernel, owned with citekit.segment)
#
# The regex-and-Python implementation that citekit.segment.SentenceSegmenter used before
# its numba kernel, kept verbatim in behaviour: the kernel must give the same spans for
# every text and every option.
# =======================================================================================

import re  # noqa: E402

_NAIVE_DEFAULT_ABBREVIATIONS = frozenset("""
    dr mr mrs ms mx prof sr jr st rev hon gen col capt lt sgt maj cmdr adm gov sen rep pres
    fr sr mt ft vs cf e.g i.e viz al fig figs eq eqs no nos vol vols ch sec p pp ed eds
    approx ca est dept univ assn bros jan feb mar apr jun jul aug sep sept oct nov dec
    """.split())
_NAIVE_SENTENCE_FINAL_ABBREVIATIONS = frozenset("etc inc ltd co corp llc plc".split())
_NAIVE_LINE_BREAK = re.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]\n?")
_NAIVE_BLANK_LINES = re.compile(r"(?:[ \t]*(?:\r\n|[\n\r\u2029])){2,}")
_NAIVE_LIST_MARKER = re.compile(
    r"[ \t]*(?:[-*+•‣◦▪▫–—·]"
    r"|\(?(?:\d{1,3}|[a-z]|[A-Z](?=\))"
    r"|(?=[ivx])x{0,3}(?:ix|iv|v?i{0,3})|(?=[IVX])X{0,3}(?:IX|IV|V?I{0,3}))[.)])[ \t]+"
)
_NAIVE_CLOSERS = "\"'”’»)]}」』】〉》〕）］｝›"
_NAIVE_SPACED_TERMINATORS = ".?!…"
_NAIVE_UNSPACED_TERMINATORS = "。！？।॥؟۔"
_NAIVE_UNSPACED_TERMINATOR = re.compile("[" + _NAIVE_UNSPACED_TERMINATORS + "]")
_NAIVE_ALL = "[" + re.escape(_NAIVE_SPACED_TERMINATORS + _NAIVE_UNSPACED_TERMINATORS) + "]"
_NAIVE_SPACED = "[" + re.escape(_NAIVE_SPACED_TERMINATORS) + "]"
_NAIVE_UNSPACED = "[" + re.escape(_NAIVE_UNSPACED_TERMINATORS) + "]"
# closers, and reference markers ([1], [^2], [2, 3], [4-6]) right after the terminator
_NAIVE_MARKER = r"\[\^?[0-9]{1,4}(?:[ \t]*[,;\u2013-][ \t]*\^?[0-9]{1,4})*[ \t]*\]"
_NAIVE_CLOSER_RUN = "(?:[" + re.escape(_NAIVE_CLOSERS) + "]|" + _NAIVE_MARKER + ")*"
# group 1: terminators and the closers after them; group 2: the whitespace that follows.
# Only runs that can end a sentence: with an unspaced terminator, or followed by whitespace
# or the end of the block.
NAIVE_TERMINATOR_RUN = re.compile(
    f"({_NAIVE_ALL}"
    f"(?:(?<={_NAIVE_UNSPACED}){_NAIVE_ALL}*{_NAIVE_CLOSER_RUN}"
    f"|{_NAIVE_SPACED}*(?:{_NAIVE_UNSPACED}{_NAIVE_ALL}*{_NAIVE_CLOSER_RUN}"
    f"|{_NAIVE_CLOSER_RUN}(?=\\s|\\Z))))"
    r"(\s*)"
)
# letters, or dotted letter groups (U.S, e.g, Ph.D), before a period
_NAIVE_ABBREVIATION_SHAPE = re.compile(r"(?:[^\W\d_]+\.)*[^\W\d_]+")
_NAIVE_OPENERS = "\"'“‘«([{"


def naive_segment(
    text: str,
    abbreviations=None,
    extra_abbreviations=(),
    split_on_newlines: bool = True,
) -> list[tuple[int, int]]:
    """Sentence spans by the rules of ``citekit.segment`` with regular expressions and a
    Python decision per terminator run (abbreviation keys as ``SentenceSegmenter`` makes
    them: stripped, without the final period, lower case)."""
    base = _NAIVE_DEFAULT_ABBREVIATIONS if abbreviations is None else abbreviations
    keys = {word.strip().rstrip(".").lower() for word in base}
    keys |= {word.strip().rstrip(".").lower() for word in extra_abbreviations}
    spans: list[tuple[int, int]] = []
    block_pattern = _NAIVE_LINE_BREAK if split_on_newlines else _NAIVE_BLANK_LINES
    block_start = 0
    blocks = []
    for match in block_pattern.finditer(text):
        blocks.append((block_start, match.start()))
        block_start = match.end()
    blocks.append((block_start, len(text)))
    for block_start, block_end in blocks:
        marker = _NAIVE_LIST_MARKER.match(text, block_start, block_end)
        if marker is not None:
            block_start = marker.end()
        sentence_start = block_start
        for match in NAIVE_TERMINATOR_RUN.finditer(text, block_start, block_end):
            if _naive_is_boundary(text, match, block_end, keys):
                boundary = match.end(1)
                _naive_append_trimmed(text, sentence_start, boundary, spans)
                sentence_start = boundary
        _naive_append_trimmed(text, sentence_start, block_end, spans)
    return spans


def _naive_is_boundary(text: str, match, block_end: int, keys) -> bool:
    run = match.group(1)
    if not run.isascii() and _NAIVE_UNSPACED_TERMINATOR.search(run):
        return True
    after = match.end()
    next_char = text[after] if after < block_end else ""
    if next_char.islower():
        return False  # "approx. five", "wait… what", '"Really?" she asked'
    if run[0] != "." or run.startswith(".."):
        return True
    # a single period (possibly followed by closers): abbreviations and initials
    run_start = match.start()
    lookback = text[max(0, run_start - 64) : run_start]
    words = lookback.rsplit(None, 1)
    if not words or lookback[-1].isspace():
        return True
    before = words[-1].lstrip(_NAIVE_OPENERS)
    if _NAIVE_ABBREVIATION_SHAPE.fullmatch(before) is None:
        return True  # a number, or a word glued to other punctuation
    key = before.lower()
    if key in keys:
        return False
    if "." in before:  # U.S., e.g, Ph.D
        return False
    if len(before) == 1 and before.isupper():  # an initial: J. K. Rowling
        return False
    if key in _NAIVE_SENTENCE_FINAL_ABBREVIATIONS:
        return not next_char or next_char.isupper() or not next_char.isalpha()
    return True


def _naive_append_trimmed(text: str, start: int, end: int, spans: list) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start, end))


# =======================================================================================
# Inflection lookup (reference of citekit._forms_kernel)
# =======================================================================================


def naive_rows_hold(rows, word_forms, cells):
    """rows[p] = list of columns; word_forms[c] = set of forms of column c (its own and
    its parts'); cells = (passage, column, form): does the passage hold that column or a
    word with that form."""
    return [
        any(c == column or form in word_forms[c] for c in rows[passage])
        for passage, column, form in cells
    ]


# =======================================================================================
# Retrieval and index kernels (references of citekit._bag)
# =======================================================================================


def naive_pair_bag_counts(passage_sets, query_terms, pairs):
    """query_terms[q] = list of (column, count, is_content); passage_sets[p] = set of columns."""
    out = ([], [], [])
    for q, p in pairs:
        total = content = distinct = 0
        for column, count, is_content in query_terms[q]:
            if column >= 0 and column in passage_sets[p]:
                total += count
                if is_content:
                    content += count
                    distinct += 1
        out[0].append(total)
        out[1].append(content)
        out[2].append(distinct)
    return out


def naive_top_candidates(passage_sets, queries, k):
    """queries[q] = list of (column, weight, ranks); passage_sets[p] = set of columns.

    The k passages with the largest sum of RANKING weights (ties: lower passage), each
    with that sum and the sum over every term."""
    out = []
    for terms in queries:
        rank = {}
        for p, columns in enumerate(passage_sets):
            value = sum(w for c, w, r in terms if r and c in columns)
            if value > 0:
                rank[p] = value
        best = sorted(rank, key=lambda p: (-rank[p], p))[:k]
        full = [sum(w for c, w, _ in terms if c in passage_sets[p]) for p in best]
        out.append((best, [rank[p] for p in best], full))
    return out


def naive_range_rows(columns, starts, ends):
    """Row ``p``: the distinct values of ``columns[starts[p]:ends[p]]``, sorted."""
    return [sorted(set(columns[a:b])) for a, b in zip(starts, ends)]


def naive_transpose(rows, n_columns):
    """Column ``c``: the rows holding ``c``, ascending."""
    return [[p for p, row in enumerate(rows) if c in row] for c in range(n_columns)]


def naive_top_candidates_in_order(
    posting_pointers, posting_passages, rows, n_passages, term_columns, term_weights,
    term_ranks, term_offsets, k,
):
    """The algorithm of ``citekit._bag.top_candidates`` before pruning, step by step, to
    compare its arrays bit for bit.

    A passage's rank score is its ranking terms' weights added one at a time, in query
    order, to 0.0 (every posting list walked in full); its full score adds, in query
    order, the weights of the non-ranking terms its row holds. The ``k`` best by larger
    rank score, then lower passage. Returns ``(offsets, passages, rank_scores, scores)``.
    """
    import numpy as np

    row_pointers, row_columns = rows
    offsets, passages, rank_scores, scores = [0], [], [], []
    for query in range(len(term_offsets) - 1):
        terms = range(term_offsets[query], term_offsets[query + 1])
        totals = np.zeros(n_passages)
        for term in terms:
            column = term_columns[term]
            if column >= 0 and term_ranks[term]:
                lo, hi = posting_pointers[column], posting_pointers[column + 1]
                # a posting list names each passage once: one rounded addition each
                totals[posting_passages[lo:hi]] += term_weights[term]
        touched = np.flatnonzero(totals)
        best = touched[np.lexsort((touched, -totals[touched]))][: max(k, 0)]
        for passage in best.tolist():
            row = set(row_columns[row_pointers[passage] : row_pointers[passage + 1]].tolist())
            full = totals[passage]
            for term in terms:
                column = term_columns[term]
                if column >= 0 and not term_ranks[term] and column in row:
                    full += term_weights[term]
            passages.append(passage)
            rank_scores.append(totals[passage])
            scores.append(full)
        offsets.append(len(passages))
    return (
        np.array(offsets, dtype=np.int64),
        np.array(passages, dtype=np.int64),
        np.array(rank_scores, dtype=np.float64),
        np.array(scores, dtype=np.float64),
    )


# =======================================================================================
# Corpus building (references of citekit._corpus_kernel)
# =======================================================================================


def naive_index_arrays(ids, starts, ends):
    """Sorted distinct ids, where each first occurs, each range's sorted distinct columns,
    and each column's ranges (lists)."""
    ids = list(ids)
    vocabulary = sorted(set(ids))
    column = {value: j for j, value in enumerate(vocabulary)}
    first_positions = [ids.index(value) for value in vocabulary]
    rows = [sorted({column[value] for value in ids[a:b]}) for a, b in zip(starts, ends)]
    return vocabulary, first_positions, rows, naive_transpose(rows, len(vocabulary))


def naive_ascending_order(values):
    """Positions of ``values`` in ascending order, equal values in order of position."""
    return sorted(range(len(values)), key=lambda position: (values[position], position))


def naive_windows(n_sentences, size, stride):
    """Passage windows ``(first, last)`` over ``n_sentences`` sentences: starts 0, stride,
    2 * stride, ... up to the first window that reaches the last sentence; when the
    stride jumps past the last sentence, that window ends at the last sentence instead."""
    windows = []
    first = 0
    while n_sentences:
        if first >= n_sentences:
            first = max(n_sentences - size, 0)
        last = min(first + size, n_sentences)
        windows.append((first, last))
        if last >= n_sentences:
            break
        first += stride
    return windows


def naive_corpus_passages(sources, size, stride):
    """Passage rows of :func:`citekit._corpus_kernel.corpus_arrays` (7 lists).

    ``sources``: per source ``(token_spans, sentence_spans)``, lists of ``(start, end)``.
    A window's tokens are those lying wholly inside its characters, numbered across
    sources; with none, the empty range where the next token would start.
    """
    rows = [[] for _ in range(7)]
    token_base = 0
    for source, (token_spans, sentence_spans) in enumerate(sources):
        for first, last in naive_windows(len(sentence_spans), size, stride):
            char_start, char_end = sentence_spans[first][0], sentence_spans[last - 1][1]
            inside = [
                token_base + i
                for i, (start, end) in enumerate(token_spans)
                if start >= char_start and end <= char_end
            ]
            if inside:
                token_start, token_end = inside[0], inside[-1] + 1
            else:
                later = [i for i, (start, _) in enumerate(token_spans) if start >= char_start]
                token_start = token_end = token_base + (later[0] if later else len(token_spans))
            for row, value in zip(
                rows, (source, token_start, token_end, char_start, char_end, first, last)
            ):
                row.append(value)
        token_base += len(token_spans)
    return rows
